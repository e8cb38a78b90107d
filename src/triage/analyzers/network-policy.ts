/**
 * `network-policy`: a NetworkPolicy selecting the target's pods no longer allows traffic the target
 * needs, and it was created or edited right before the onset. NetworkPolicies are additive: a pod
 * selected by any policy of a direction is isolated for it, and only the union of all those policies'
 * rules is allowed — so each needed peer is checked against every selecting policy, not just one.
 *
 * Needed egress: DNS (UDP 53 to kube-dns in kube-system) and the dependencies the target's env names
 * (`http://payments-api.payments.svc:8080`, also host names in its failing log lines). Needed ingress:
 * its callers (`kube.dependents`, pod labels from the namespace's pods) on its container ports.
 * A peer is judged `yes`/`no`/`unknown`: namespace selectors are decidable only on the automatic
 * `kubernetes.io/metadata.name` label, pod selectors only where pod labels are known (kube-dns' are
 * well known); anything else is `unknown` and never reported as blocked.
 *
 * Corroboration: target log templates with `i/o timeout`, `no such host`, `dial tcp`, connection timeouts.
 *
 * Facts (camelCase): `policy`, `direction` (`egress`|`ingress`), `blockedPeer` (`kube-system/kube-dns`,
 * `payments/payments-api`, `shop/storefront`), `port` (number), `protocol`, `blockedPeers` (all, comma-
 * separated `peer:port/proto`), `changedAt` (ISO), `editor` (field manager).
 * Mitigation: when the policy was edited and its previous spec is known (its last-applied-configuration
 * after a `kubectl edit`, or the deployed Helm revision after a later edit), `restore_object` puts that
 * spec back; when the policy was ADDED right before the onset (no earlier spec known, not Helm's),
 * `delete_network_policy` (both security decisions: the example policy wants two approvers for them).
 * Otherwise none: the mechanism says which rule is missing so a human can add it.
 */
import type { V1LabelSelector, V1NetworkPolicy, V1NetworkPolicyPeer, V1NetworkPolicyPort } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { deleteNetworkPolicyProposal, restoreObjectProposal } from '../../actions/objects/propose.js';
import { targetScope } from './deploy-regression.js';
import { nodeId, refOfId } from '../../topology/graph.js';

type Verdict = 'yes' | 'no' | 'unknown';

/** Traffic the target needs: to (egress) or from (ingress) a peer on a port. */
export interface NeededPeer {
  label: string;
  namespace: string;
  /** Pod labels when known (kube-dns, callers in the namespace). */
  labels?: Record<string, string>;
  port: number;
  protocol: 'TCP' | 'UDP';
}

const NET_TROUBLE = /i\/o timeout|no such host|dial tcp|connection timed out|context deadline exceeded|lookup \S+ on \S+:53|temporary failure in name resolution|EAI_AGAIN|ETIMEDOUT|ENOTFOUND|connect: connection refused/i;
const SVC_HOST = /\b([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc(?:\.cluster\.local)?(?::(\d+))?/g;
const DEFAULT_PORT: Record<string, number> = { http: 80, https: 443, postgres: 5432, postgresql: 5432, mysql: 3306, redis: 6379, amqp: 5672, grpc: 443 };
const DNS: NeededPeer = { label: 'kube-system/kube-dns', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' }, port: 53, protocol: 'UDP' };

/** Does a label selector match these labels? undefined labels → unknown unless the selector is empty. */
export function selectorMatches(sel: V1LabelSelector | undefined, labels: Record<string, string> | undefined): Verdict {
  const ml = sel?.matchLabels ?? {};
  const me = sel?.matchExpressions ?? [];
  if (Object.keys(ml).length === 0 && me.length === 0) return 'yes';
  if (!labels) return 'unknown';
  for (const [k, v] of Object.entries(ml)) if (labels[k] !== v) return 'no';
  for (const e of me) {
    const has = Object.hasOwn(labels, e.key);
    const v = labels[e.key];
    const ok =
      e.operator === 'In' ? has && (e.values ?? []).includes(v!) :
      e.operator === 'NotIn' ? !has || !(e.values ?? []).includes(v!) :
      e.operator === 'Exists' ? has :
      e.operator === 'DoesNotExist' ? !has : false;
    if (!ok) return 'no';
  }
  return 'yes';
}

/** Namespace labels we can know without reading Namespaces: the automatic name label. */
function namespaceMatches(sel: V1LabelSelector, ns: string): Verdict {
  const keys = [...Object.keys(sel.matchLabels ?? {}), ...(sel.matchExpressions ?? []).map((e) => e.key)];
  if (keys.some((k) => k !== 'kubernetes.io/metadata.name')) return 'unknown';
  return selectorMatches(sel, { 'kubernetes.io/metadata.name': ns });
}

function peerMatches(p: V1NetworkPolicyPeer, policyNs: string, peer: NeededPeer): Verdict {
  if (p.ipBlock) return p.ipBlock.cidr === '0.0.0.0/0' && !(p.ipBlock.except ?? []).length ? 'yes' : 'unknown';
  const ns: Verdict = p.namespaceSelector ? namespaceMatches(p.namespaceSelector, peer.namespace) : peer.namespace === policyNs ? 'yes' : 'no';
  if (ns === 'no') return 'no';
  const pod = selectorMatches(p.podSelector, peer.labels);
  if (pod === 'no') return 'no';
  return ns === 'yes' && pod === 'yes' ? 'yes' : 'unknown';
}

function portMatches(ports: V1NetworkPolicyPort[] | undefined, peer: NeededPeer): Verdict {
  if (!ports || ports.length === 0) return 'yes';
  let unknown = false;
  for (const p of ports) {
    if ((p.protocol ?? 'TCP') !== peer.protocol) continue;
    if (p.port === undefined) return 'yes';
    if (typeof p.port === 'string') {
      if (/^\d+$/.test(p.port) ? Number(p.port) === peer.port : false) return 'yes';
      if (!/^\d+$/.test(p.port)) unknown = true; // a named port: resolved on the peer pod, unknown here
      continue;
    }
    if (p.port === peer.port || (p.endPort !== undefined && peer.port >= p.port && peer.port <= p.endPort)) return 'yes';
  }
  return unknown ? 'unknown' : 'no';
}

const or = (vs: Verdict[]): Verdict => (vs.includes('yes') ? 'yes' : vs.includes('unknown') ? 'unknown' : 'no');
const and = (a: Verdict, b: Verdict): Verdict => (a === 'no' || b === 'no' ? 'no' : a === 'yes' && b === 'yes' ? 'yes' : 'unknown');

export function policyTypes(p: V1NetworkPolicy): ('Ingress' | 'Egress')[] {
  const types = p.spec?.policyTypes as ('Ingress' | 'Egress')[] | undefined;
  if (types?.length) return types;
  return p.spec?.egress ? ['Ingress', 'Egress'] : ['Ingress'];
}

/** Is traffic to/from `peer` allowed by the union of the selecting policies of that direction? */
export function allowed(policies: V1NetworkPolicy[], direction: 'Ingress' | 'Egress', peer: NeededPeer): Verdict {
  const verdicts: Verdict[] = [];
  for (const p of policies) {
    const rules = direction === 'Egress' ? (p.spec?.egress ?? []) : (p.spec?.ingress ?? []);
    for (const r of rules) {
      // The client deserialises `from` as `_from`; accept both (raw JSON has `from`).
      const raw = r as { to?: V1NetworkPolicyPeer[]; _from?: V1NetworkPolicyPeer[]; from?: V1NetworkPolicyPeer[] };
      const peers = direction === 'Egress' ? raw.to : (raw._from ?? raw.from);
      const who: Verdict = !peers || peers.length === 0 ? 'yes' : or(peers.map((x) => peerMatches(x, p.metadata?.namespace ?? '', peer)));
      verdicts.push(and(who, portMatches(r.ports, peer)));
    }
  }
  return or(verdicts);
}

/** Dependencies named by the target's env (`scheme://name.ns.svc:port`) and by its failing log lines. */
export function neededDependencies(input: TriageInput): NeededPeer[] {
  const out = new Map<string, NeededPeer>();
  const add = (text: string) => {
    for (const m of text.matchAll(SVC_HOST)) {
      const scheme = /([a-z]+):\/\/$/.exec(text.slice(Math.max(0, (m.index ?? 0) - 12), m.index))?.[1];
      const port = m[5] ? Number(m[5]) : scheme ? DEFAULT_PORT[scheme] : undefined;
      const key = `${m[3]}/${m[1]}`;
      if (!port) continue;
      if (!out.has(key)) out.set(key, { label: key, namespace: m[3]!, port, protocol: 'TCP' });
    }
  };
  for (const c of input.kube.workload?.spec?.template?.spec?.containers ?? []) for (const e of c.env ?? []) if (e.value) add(e.value);
  for (const s of input.logs?.summaries ?? []) for (const p of [...s.newSinceOnset, ...s.errorPatterns]) if (NET_TROUBLE.test(p.example)) add(p.example);
  for (const c of input.kube.containerLogs) for (const p of c.patterns) if (NET_TROUBLE.test(p.example)) add(p.example);
  return [...out.values()];
}

/**
 * Callers of the target, with the labels of their pods, on the port they reach it on: the env-named
 * dependents, and every workload the cluster's service graph says calls it or one of its Services (in
 * any namespace: a namespace selector is decidable on the automatic name label).
 */
function neededCallers(input: TriageInput): NeededPeer[] {
  const t = input.kube.target!;
  const containerPorts = (input.kube.workload?.spec?.template?.spec?.containers ?? []).flatMap((c) => (c.ports ?? []).map((p) => ({ port: p.containerPort, protocol: (p.protocol ?? 'TCP') as 'TCP' | 'UDP' })));
  // Without declared container ports, the Services' numeric target ports say where traffic lands.
  const servicePorts = input.kube.services.flatMap(({ service }) => (service.spec?.ports ?? []).map((p) => ({ port: typeof p.targetPort === 'number' ? p.targetPort : /^\d+$/.test(String(p.targetPort ?? '')) ? Number(p.targetPort) : p.port, protocol: (p.protocol ?? 'TCP') as 'TCP' | 'UDP' })));
  const ports = containerPorts.length ? containerPorts : servicePorts;
  if (!ports.length) return [];
  const out = new Map<string, NeededPeer>();
  const add = (namespace: string, name: string, labels: Record<string, string> | undefined) => {
    const label = `${namespace}/${name}`;
    if (!out.has(label)) out.set(label, { label, namespace, ...(labels ? { labels } : {}), port: ports[0]!.port, protocol: ports[0]!.protocol });
  };
  for (const d of input.kube.dependents) {
    const pod = input.kube.namespacePods.find((p) => p.metadata?.name?.startsWith(`${d.name}-`));
    add(t.namespace, d.name, pod?.metadata?.labels);
  }
  const c = input.cluster;
  if (c) {
    const me = nodeId({ kind: t.kind, namespace: t.namespace, name: t.name });
    const entries = [me, ...c.topology.incoming(me).filter((e) => e.kind === 'selects').map((e) => e.from)];
    for (const id of entries) {
      for (const e of c.topology.incoming(id).filter((x) => x.kind === 'calls')) {
        const caller = refOfId(e.from);
        if (!caller.namespace || e.from === me) continue;
        const w = [...c.snapshot.deployments, ...c.snapshot.statefulSets, ...c.snapshot.daemonSets].find((x) => x.metadata?.namespace === caller.namespace && x.metadata?.name === caller.name);
        add(caller.namespace, caller.name, w?.spec?.template?.metadata?.labels);
      }
    }
  }
  return [...out.values()];
}

/** When a policy was last created or written by someone (not a controller). */
function lastWrite(p: V1NetworkPolicy): { at?: Date; manager?: string; index?: number } {
  let best: { at?: Date; manager?: string; index?: number } = p.metadata?.creationTimestamp ? { at: new Date(p.metadata.creationTimestamp) } : {};
  (p.metadata?.managedFields ?? []).forEach((e, index) => {
    if (!e.time || e.subresource === 'status') return;
    const at = new Date(e.time);
    if (!best.at || at.getTime() >= best.at.getTime()) best = { at, manager: e.manager ?? 'unknown', index };
  });
  return best;
}

function netLogs(input: TriageInput): Evidence[] {
  const out: Evidence[] = [];
  const seen = new Set<string>();
  for (const s of input.logs?.summaries ?? []) {
    if (s.status !== 'success') continue;
    for (const p of [...s.newSinceOnset, ...s.errorPatterns]) {
      if (seen.has(p.template) || !(NET_TROUBLE.test(p.template) || NET_TROUBLE.test(p.example))) continue;
      seen.add(p.template);
      out.push({ kind: 'log', summary: `${p.level ? `[${p.level}] ` : ''}"${p.template.slice(0, 160)}" ×${p.count}`, citation: s.citation, ...(p.first ? { observedAt: p.first } : {}), detail: { template: p.template, example: p.example } });
    }
  }
  for (const c of input.kube.containerLogs) {
    for (const p of c.patterns) {
      if (seen.has(p.template) || !(NET_TROUBLE.test(p.template) || NET_TROUBLE.test(p.example))) continue;
      seen.add(p.template);
      out.push({ kind: 'log', summary: `"${p.template.slice(0, 160)}" ×${p.count} in ${c.pod}/${c.container}`, citation: { source: 'kubernetes', ref: `api/v1/namespaces/${input.kube.target?.namespace}/pods/${c.pod}/log?container=${c.container}` }, ...(p.first ? { observedAt: p.first } : {}) });
    }
  }
  return out;
}

const npCitation = (ns: string, name: string, fragment: string) => ({ source: 'kubernetes', ref: `apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/${name}#${fragment}` });

export const networkPolicy: Analyzer = {
  name: 'network-policy',
  analyze(input: TriageInput): Finding[] {
    const t = input.kube.target;
    const podLabels = input.kube.workload?.spec?.template?.metadata?.labels;
    if (!t || !podLabels) return [];
    const selecting = input.kube.networkPolicies.filter((p) => (p.metadata?.namespace ?? t.namespace) === t.namespace && selectorMatches(p.spec?.podSelector, podLabels) === 'yes');
    if (!selecting.length) return [];
    const onset = input.onset.getTime();
    const logs = netLogs(input);
    const out: Finding[] = [];

    for (const direction of ['Egress', 'Ingress'] as const) {
      const policies = selecting.filter((p) => policyTypes(p).includes(direction));
      if (!policies.length) continue;
      const needed = direction === 'Egress' ? [DNS, ...neededDependencies(input)] : neededCallers(input);
      const verdicts = needed.map((peer) => ({ peer, verdict: allowed(policies, direction, peer) }));
      const blocked = verdicts.filter((v) => v.verdict === 'no');
      // Blame the newest write among the policies isolating this direction.
      const dated = policies.map((p) => ({ p, w: lastWrite(p) })).sort((a, b) => (b.w.at?.getTime() ?? 0) - (a.w.at?.getTime() ?? 0));
      const { p: culprit, w } = dated[0]!;
      const name = culprit.metadata?.name ?? '?';
      const recent = !!w.at && onset - w.at.getTime() <= CHANGE_WINDOW_MS && w.at.getTime() <= onset + 2 * 60_000;
      const dir = direction.toLowerCase() as 'egress' | 'ingress';
      const component: ComponentRef = { kind: 'NetworkPolicy', namespace: t.namespace, name };
      const key = `network-policy:${t.namespace}/NetworkPolicy/${name}#${dir}`;
      const rules = direction === 'Egress' ? (culprit.spec?.egress ?? []) : (culprit.spec?.ingress ?? []);
      const writeEvidence: Evidence = {
        kind: w.index !== undefined ? 'managed_fields' : 'object',
        summary: `NetworkPolicy ${name} selects ${t.name}'s pods, policyTypes ${policyTypes(culprit).join('+')}, ${rules.length} ${dir} rule${rules.length === 1 ? '' : 's'}; ${w.at ? `last written ${clockTime(w.at)}${w.manager ? ` by \`${w.manager}\`` : ' (created)'}` : 'no write time'}`,
        citation: npCitation(t.namespace, name, w.index !== undefined ? `metadata.managedFields[${w.index}]` : 'metadata.creationTimestamp'),
        ...(w.at ? { observedAt: w.at } : {}),
        detail: { podSelector: culprit.spec?.podSelector ?? {}, policyTypes: policyTypes(culprit), rules: rules.length },
      };

      if (!blocked.length) {
        if (recent && verdicts.every((v) => v.verdict === 'yes') && verdicts.length) {
          out.push({
            key,
            analyzer: 'network-policy',
            status: 'ruled_out',
            confidence: 0.05,
            title: `NetworkPolicy ${name} (${relativeToOnset(w.at!, input.onset)}) blocks ${t.name}`,
            component,
            mechanism: `NetworkPolicy ${name} changed ${relativeToOnset(w.at!, input.onset)} and selects ${t.name}, but its ${dir} rules allow everything ${t.name} needs.`,
            reason: `${dir} to ${verdicts.map((v) => `${v.peer.label}:${v.peer.port}/${v.peer.protocol}`).join(', ')} is still allowed`,
            supporting: [],
            refuting: [writeEvidence],
          });
        }
        continue;
      }
      // The blocked peer the failing lines are about (its port or its name in them) leads: a default-deny
      // cuts every peer, the logs say which one the failures are.
      // Lookups failing mean DNS leads; otherwise the peer whose port the failing connections name.
      const lineText = (l: Evidence) => `${l.summary} ${String((l.detail as { example?: string } | undefined)?.example ?? '')}`;
      const lookupsFail = logs.some((l) => /lookup |:53\b|no such host|name resolution/i.test(lineText(l)));
      const dialled = (peer: NeededPeer) => logs.some((l) => new RegExp(`:${peer.port}\\b`).test(lineText(l)) || lineText(l).includes(`${peer.label.split('/').pop()}.`));
      const lead = blocked.find((b) => b.peer === DNS && lookupsFail) ?? blocked.find((b) => b.peer !== DNS && dialled(b.peer)) ?? blocked[0]!;
      const first = lead.peer;
      const peers = blocked.map((b) => `${b.peer.label}:${b.peer.port}/${b.peer.protocol}`);
      const facts = {
        policy: name,
        direction: dir,
        blockedPeer: first.label,
        port: first.port,
        protocol: first.protocol,
        blockedPeers: peers.join(','),
        ...(w.at ? { changedAt: w.at.toISOString() } : {}),
        ...(w.manager ? { editor: w.manager } : {}),
      };
      const blockEvidence: Evidence = {
        kind: 'object',
        summary: `${direction} from ${t.name} ${direction === 'Egress' ? 'to' : 'from'} ${peers.join(', ')} matches no rule of ${policies.map((p) => p.metadata?.name).join(', ')}${rules.length === 0 ? ` (${name} has no ${dir} rules: deny all)` : ''}`,
        citation: npCitation(t.namespace, name, `spec.${dir}`),
        detail: { blocked: peers, policies: policies.map((p) => p.metadata?.name) },
      };
      const dnsBlocked = blocked.some((b) => b.peer === DNS);
      const effect = dnsBlocked
        ? `DNS lookups (UDP 53 to kube-dns) time out, so every call to another service fails before it connects`
        : `connections ${direction === 'Egress' ? 'to' : 'from'} ${peers.join(', ')} are dropped (clients see timeouts)`;
      if (!recent) {
        out.push({
          key,
          analyzer: 'network-policy',
          status: 'inconclusive',
          confidence: 0.4,
          title: `NetworkPolicy ${name} blocks ${dir} ${direction === 'Egress' ? 'to' : 'from'} ${first.label}`,
          component,
          mechanism: `NetworkPolicy ${name} blocks ${peers.join(', ')}, but it was last written ${w.at ? `${humanDuration(onset - w.at.getTime())} before the alert` : 'at an unknown time'}: something else (labels, ports, a dependency move) must have changed for it to matter now.`,
          facts,
          supporting: [blockEvidence, ...logs.slice(0, 2)],
          refuting: [writeEvidence],
        });
        continue;
      }
      out.push({
        key,
        analyzer: 'network-policy',
        status: 'supported',
        confidence: logs.length ? 0.94 : 0.9,
        title: `NetworkPolicy ${name} blocks ${t.name}'s ${dir} ${direction === 'Egress' ? 'to' : 'from'} ${first.label}:${first.port} (${w.manager ? `\`${w.manager}\`, ` : ''}${relativeToOnset(w.at!, input.onset)})`,
        component,
        mechanism:
          `NetworkPolicy ${t.namespace}/${name} was ${w.manager ? `written by \`${w.manager}\`` : 'created'} at ${clockTime(w.at!)}, ${relativeToOnset(w.at!, input.onset)}; it selects ${t.name}'s pods for ${direction} and no rule of ${policies.length > 1 ? 'the selecting policies' : 'it'} allows ${peers.join(', ')}: ${effect}` +
          (logs[0] ? `; ${t.name} logs "${String(logs[0].detail?.['template'] ?? logs[0].summary).slice(0, 160)}"` : '') +
          `. Fix: add ${direction === 'Egress' ? 'egress' : 'ingress'} rules for ${peers.join(', ')} to ${name} (or remove it if it was not meant to select ${t.name}).`,
        scope: `${t.name}'s ${direction === 'Egress' ? 'outgoing calls' : 'incoming requests'} (${peers.join(', ')})${input.kube.dependents.length ? `; callers affected: ${input.kube.dependents.map((d) => d.name).join(', ')}` : ''}`,
        affected: targetScope(input),
        facts,
        supporting: [writeEvidence, blockEvidence, ...logs.slice(0, 3)],
        refuting: [],
        ...(() => {
          const mitigation =
            restoreObjectProposal('NetworkPolicy', culprit, `put back networkpolicy/${name}'s spec from before ${w.manager ? `\`${w.manager}\`'s` : 'the'} edit, which blocks ${peers.join(', ')}`) ??
            deleteNetworkPolicyProposal(culprit, input.onset, CHANGE_WINDOW_MS, `networkpolicy/${name} was added ${relativeToOnset(w.at!, input.onset)} and blocks ${peers.join(', ')}: deleting it undoes that security decision (two approvers)`);
          return mitigation ? { mitigation } : {};
        })(),
      });
    }
    return out;
  },
};
