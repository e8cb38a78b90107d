/**
 * `dns-failure`: name resolution fails for the candidates. From their logs (`lookup x on
 * 10.96.0.10:53: server misbehaving | i/o timeout | no such host`, `Temporary failure in name
 * resolution`, `getaddrinfo EAI_AGAIN`, `SERVFAIL`, `UnknownHostException`) across several names, then
 * where the resolution breaks, most specific first:
 * - the workload's own pod DNS: its current ReplicaSet set `dnsPolicy: None`/`Default` or a `dnsConfig`
 *   the previous one did not have (localised to the workload; `rollout_undo`), or `hostAliases` pinning a
 *   name the logs fail to reach (the workload);
 * - the cluster DNS config: the CoreDNS ConfigMap (kube-system, `coredns`/`coredns-custom`…) edited
 *   shortly before the failures began (localised to the ConfigMap), corroborated by CoreDNS SERVFAIL
 *   answers (`coredns_errors`);
 * - CoreDNS itself down (its pods not ready / crashing: localised to its Deployment).
 * A single name that does not exist (NXDOMAIN for one Service) is `missing-object`'s, not this.
 * Facts: `configMap`, `key`, `dnsPolicy`, `hostAlias`, `failingLookup`, `manager`, `changedAt`.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { metricEvidence } from '../../evidence/prometheus/evidence.js';
import { nodeId } from '../../topology/graph.js';
import type { ClusterAnalyzer, ClusterTriageInput, TriageInput } from '../analyzer.js';
import { revisions, undoProposal } from '../analyzers/crash-loop.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';
import { changeEvidence, logEvidence, logHits, objectChanges, type LogHit } from './common.js';

/** Resolver failures (not a refused TCP connect): the wordings of Go, glibc, musl, Node, Java, Python, curl. */
const DNS_FAIL =
  /lookup [\w.-]+( on [\d.:\[\]a-f]+)?: (server misbehaving|i\/o timeout|no such host|read udp|dial udp)|Temporary failure in name resolution|getaddrinfo (EAI_AGAIN|ENOTFOUND)|EAI_AGAIN|SERVFAIL|UnknownHostException|Name or service not known|Could not resolve host|name resolution|dns.*(timeout|timed out|fail)|no such host|NXDOMAIN|could not translate host name|nodename nor servname|dns: A record lookup error|produced zero addresses|DNS resolution failed/i;
const LOOKUP_NAME = /(?:\b(?:lookup|resolve|host(?:name)?|translate host name)\s+|target is:?\s*|dns:\/\/\/)"?([a-z][a-z0-9.-]*[a-z0-9])(?::\d+)?"?/i;
const RECENT_MS = 3 * 3600_000;
/** Words the lookup pattern catches in prose that are not host names. */
const NOT_NAMES = new Set(['error', 'errors', 'failed', 'failure', 'timeout', 'for', 'of', 'the', 'with', 'on', 'record', 'is', 'name', 'host', 'failed.', 'resolving', 'resolve', 'lookup', 'address', 'server', 'dns']);

/** The cluster DNS server's workloads. */
const DNS_SERVER_NAME = /^(coredns|kube-dns|node-local-dns|nodelocaldns)$/;

export const dnsFailure: ClusterAnalyzer = {
  name: 'dns-failure',
  analyze(input: ClusterTriageInput): Finding[] {
    const hits = logHits(input.inputs, DNS_FAIL).filter((h) => !h.last || input.onset.getTime() - h.last.getTime() < RECENT_MS);
    if (!hits.length) return [];
    const byWorkload = new Map<string, LogHit[]>();
    for (const h of hits) byWorkload.set(nodeId(h.workload), [...(byWorkload.get(nodeId(h.workload)) ?? []), h]);
    const names = new Set(hits.flatMap((h) => [...`${h.example} ${h.template}`.matchAll(new RegExp(LOOKUP_NAME, 'gi'))].map((m) => m[1]!)).filter((n) => !n.includes('<') && n === n.toLowerCase() && !NOT_NAMES.has(n)));
    const first = hits.map((h) => h.first).filter((d): d is Date => !!d).sort((a, b) => a.getTime() - b.getTime())[0];
    const failingLookup = [...names][0];
    const out: Finding[] = [];

    // 1. A workload's own pod DNS settings changed by its rollout.
    for (const i of input.inputs) {
      const t = i.kube.target;
      if (!t || !byWorkload.has(nodeId(t))) continue;
      const { current, previous } = revisions(i.kube);
      const spec = current?.replicaSet.spec?.template?.spec ?? i.kube.workload?.spec?.template?.spec;
      const prevSpec = previous?.replicaSet.spec?.template?.spec;
      const policy = spec?.dnsPolicy ?? 'ClusterFirst';
      const prevPolicy = prevSpec?.dnsPolicy ?? 'ClusterFirst';
      const dnsChanged = prevSpec && (policy !== prevPolicy || JSON.stringify(spec?.dnsConfig ?? null) !== JSON.stringify(prevSpec.dnsConfig ?? null));
      const aliases = (spec?.hostAliases ?? []).flatMap((a) => (a.hostnames ?? []).map((h) => ({ ip: a.ip, host: h })));
      const aliasHit = aliases.find((a) => byWorkload.get(nodeId(t))!.some((h) => h.example.includes(a.host)));
      if (!dnsChanged && !(policy === 'None' || policy === 'Default') && !aliasHit) continue;
      const component: ComponentRef = { kind: t.kind, namespace: t.namespace, name: t.name };
      const facts: Record<string, string | number | boolean> = { dnsPolicy: policy, ...(failingLookup ? { failingLookup } : {}) };
      const supporting: Evidence[] = byWorkload.get(nodeId(t))!.slice(0, 2).map((h) => logEvidence(h, 'resolution fails'));
      if (dnsChanged && current) {
        if (current.createdAt) facts['changedAt'] = current.createdAt.toISOString();
        facts['revision'] = current.revision;
        supporting.push({ kind: 'change', summary: `revision ${current.revision} changed the pod DNS: dnsPolicy ${prevPolicy} → ${policy}${spec?.dnsConfig?.nameservers?.length ? `, nameservers ${spec.dnsConfig.nameservers.join(', ')}` : ''}${current.createdAt ? ` at ${clockTime(current.createdAt)}` : ''}`, citation: objectCitation('ReplicaSet', t.namespace, current.name, 'spec.template.spec.dnsPolicy'), ...(current.createdAt ? { observedAt: current.createdAt } : {}) });
      }
      if (aliasHit) {
        facts['hostAlias'] = `${aliasHit.host}=${aliasHit.ip}`;
        supporting.push({ kind: 'object', summary: `pod template pins ${aliasHit.host} to ${aliasHit.ip} (hostAliases), bypassing DNS`, citation: objectCitation(t.kind, t.namespace, t.name, 'spec.template.spec.hostAliases') });
      }
      out.push({
        key: `dns-failure:${t.namespace}/${t.kind}/${t.name}`,
        analyzer: 'dns-failure',
        family: 'dns-failure',
        status: 'supported',
        confidence: dnsChanged ? 0.9 : 0.8,
        title: aliasHit ? `${t.name} pins ${aliasHit.host} to a stale address (hostAliases)` : `${t.name} resolves names outside the cluster DNS (dnsPolicy ${policy})`,
        component,
        mechanism: aliasHit
          ? `${t.name}'s pods resolve ${aliasHit.host} from hostAliases (${aliasHit.ip}) instead of DNS; calls to it fail.`
          : `${t.name}'s pods use dnsPolicy ${policy}${spec?.dnsConfig?.nameservers?.length ? ` with nameservers ${spec.dnsConfig.nameservers.join(', ')}` : ''}, so cluster names (${failingLookup ?? 'its dependencies'}) no longer resolve${dnsChanged && current?.createdAt ? `; revision ${current.revision} made the change at ${clockTime(current.createdAt)}` : ''}.`,
        scope: `${t.name} and whoever calls it`,
        affected: [component, ...i.kube.services.map((s) => ({ kind: 'Service', namespace: t.namespace, name: s.service.metadata?.name ?? '?' })), ...i.kube.dependents.map((d) => ({ kind: d.kind, namespace: t.namespace, name: d.name }))],
        facts,
        supporting,
        refuting: [],
        ...(dnsChanged && previous ? { mitigation: undoProposal(i.kube, previous, `revision ${previous.revision} resolved through the cluster DNS (dnsPolicy ${prevPolicy})`) } : {}),
      });
    }
    if (out.length) return out;

    const s = input.cluster.snapshot;
    // Only names that no Service has fail: DNS answers, the names are wrong (missing-object or a bad
    // setting). Raised and ruled out, because DNS is what a responder suspects first.
    // A name the cluster itself should answer (`orders`, `orders.shop`, `orders.shop.svc…`) with no such
    // Service is a wrong name; an outside name (`api.stripe.com`) failing is CoreDNS's upstream, not a typo.
    const clusterName = (n: string) => {
      const h = n.replace(/\.cluster\.local$/, '').split('.');
      return h.length === 1 || h[h.length - 1] === 'svc' || (h.length === 2 && s.namespaces.some((x) => x.metadata?.name === h[1]));
    };
    const missingNames = [...names].filter((n) => {
      if (!clusterName(n)) return false;
      const host = n.replace(/\.cluster\.local$/, '').split('.');
      return !s.services.some((x) => x.metadata?.name === host[0] && (host.length < 2 || x.metadata?.namespace === host[1]));
    });
    const corednsRef = { kind: 'Deployment', namespace: 'kube-system', name: 'coredns' };
    if ((names.size > 0 && missingNames.length === names.size) || (byWorkload.size === 1 && names.size <= 1 && hits.every((h) => /NXDOMAIN|no such host|not found|zero addresses|lookup error/i.test(h.example)))) {
      return [
        {
          key: 'dns-failure:kube-system/Deployment/coredns',
          analyzer: 'dns-failure',
          family: 'dns-failure',
          status: 'ruled_out',
          confidence: 0.05,
          title: `cluster DNS failing for ${[...byWorkload.keys()].map((k) => k.split('/').pop()).join(', ')}`,
          component: corednsRef,
          mechanism: `Lookups fail${failingLookup ? ` for ${[...names].join(', ')}` : ''}, but only for names no Service has: DNS answers, the name is wrong.`,
          reason: `only ${missingNames.length ? missingNames.join(', ') : 'one name'} fails to resolve, and no Service of that name exists; other lookups succeed`,
          facts: { ...(failingLookup ? { failingLookup } : {}) },
          supporting: [],
          refuting: hits.slice(0, 2).map((h) => logEvidence(h, 'the failing lookup')),
        },
      ];
    }
    const confined = nodeConfined(input, hits, corednsRef);
    if (confined) return [confined];
    const coreCms = s.configMaps.filter((c) => c.metadata.namespace === 'kube-system' && /coredns|kube-dns/.test(c.metadata.name ?? ''));
    const from = first ?? input.onset;
    const edit = coreCms
      .flatMap((c) => objectChanges('ConfigMap', c.metadata).map((ch) => ({ c, ch })))
      .filter(({ ch }) => ch.at.getTime() <= from.getTime() + 120_000 && from.getTime() - ch.at.getTime() <= 6 * 3600_000)
      .sort((a, b) => b.ch.at.getTime() - a.ch.at.getTime())[0];
    // One name (one zone) failing is still the Corefile's doing when the edit came right before it and
    // CoreDNS itself logs its upstream failing for that name: a stub zone or forward to a dead resolver.
    const serverSide = edit ? logHits(input.inputs, /plugin\/errors|i\/o timeout|SERVFAIL/i).filter((h) => DNS_SERVER_NAME.test(h.workload.name) && [...names].some((n) => h.example.includes(n))) : [];
    // Cluster-wide: several workloads (or several names) fail to resolve.
    if (byWorkload.size < 2 && names.size < 2 && !serverSide.length) return [];
    const servfail = input.metrics.find((m) => m.id === 'coredns_errors' && m.status === 'success');
    const servfailEv = servfail ? metricEvidence(servfail)[0] : undefined;
    const affected = [...byWorkload.keys()].map((id) => input.inputs.find((i) => i.kube.target && nodeId(i.kube.target) === id)!.kube.target!).map((t) => ({ kind: t.kind, namespace: t.namespace, name: t.name }));
    const supporting: Evidence[] = [...byWorkload.values()].map((hs) => logEvidence(hs[0]!, 'resolution fails')).slice(0, 4);
    if (serverSide[0]) supporting.push(logEvidence(serverSide[0], 'CoreDNS cannot get an answer for it upstream'));
    if (servfailEv) supporting.push(servfailEv);
    if (edit) {
      const name = edit.c.metadata.name ?? 'coredns';
      supporting.push(changeEvidence(edit.ch, input.onset));
      return [
        {
          key: `dns-failure:kube-system/ConfigMap/${name}`,
          analyzer: 'dns-failure',
          family: 'dns-failure',
          status: 'supported',
          confidence: 0.9,
          title: `CoreDNS config ${name} edited by ${edit.ch.actor} ${humanDuration(input.onset.getTime() - edit.ch.at.getTime())} before the alert; ${byWorkload.size < 2 && names.size < 2 ? `lookups of ${[...names][0] ?? 'one name'} fail` : 'lookups fail cluster-wide'}`,
          component: { kind: 'ConfigMap', namespace: 'kube-system', name },
          mechanism: `ConfigMap kube-system/${name} (the CoreDNS Corefile) was changed by ${edit.ch.actor} at ${clockTime(edit.ch.at)}; from ${clockTime(from)} ${affected.length} workload(s) fail to resolve names${failingLookup ? ` (e.g. ${failingLookup})` : ''}${servfail ? ', and CoreDNS answers SERVFAIL' : ''}.`,
          scope: `every pod that resolves through the cluster DNS; seen failing: ${affected.map((a) => a.name).join(', ')}`,
          affected: [{ kind: 'Deployment', namespace: 'kube-system', name: 'coredns' }, ...affected],
          facts: { configMap: name, key: edit.c.keys.includes('Corefile') ? 'Corefile' : (edit.c.keys[0] ?? 'Corefile'), manager: edit.ch.actor, changedAt: edit.ch.at.toISOString(), ...(failingLookup ? { failingLookup } : {}) },
          supporting,
          refuting: [],
        },
      ];
    }
    const coredns = s.pods.filter((p) => p.metadata?.namespace === 'kube-system' && /^(coredns|kube-dns)-/.test(p.metadata?.name ?? ''));
    const down = coredns.length > 0 && coredns.every((p: V1Pod) => !(p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'));
    return [
      {
        key: 'dns-failure:kube-system/Deployment/coredns',
        analyzer: 'dns-failure',
        family: 'dns-failure',
        status: down || servfail ? 'supported' : 'open',
        confidence: down ? 0.85 : servfail ? 0.75 : 0.5,
        title: down ? 'CoreDNS has no ready pod: lookups fail cluster-wide' : `name resolution fails in ${affected.length} workloads`,
        component: { kind: 'Deployment', namespace: 'kube-system', name: 'coredns' },
        mechanism: `${affected.length} workload(s) fail to resolve names since ${clockTime(from)}${failingLookup ? ` (e.g. ${failingLookup})` : ''}${down ? '; no CoreDNS pod is ready' : ''}; no CoreDNS config change was found.`,
        scope: `pods resolving through the cluster DNS; seen failing: ${affected.map((a) => a.name).join(', ')}`,
        affected,
        facts: { ...(failingLookup ? { failingLookup } : {}) },
        supporting: [...supporting, ...(down ? [{ kind: 'object' as const, summary: `CoreDNS pods not ready: ${coredns.map((p) => p.metadata?.name).join(', ')}`, citation: objectCitation('Pod', 'kube-system', coredns[0]!.metadata?.name ?? '?', 'status.conditions') }] : [])],
        refuting: [],
      },
    ];
  },
};

/**
 * Lookups that fail only from pods on one node, while CoreDNS is ready and the same workloads' pods on
 * other nodes resolve: the node's own network drops the queries (a full conntrack table, a broken CNI),
 * not DNS. Raised and ruled out: "is it DNS?" is the first question such errors raise.
 */
function nodeConfined(input: ClusterTriageInput, hits: LogHit[], corednsRef: ComponentRef): Finding | undefined {
  const s = input.cluster.snapshot;
  const nodeOfPod = new Map(s.pods.map((p) => [`${p.metadata?.namespace}/${p.metadata?.name}`, p.spec?.nodeName]));
  const withPod = hits.filter((h) => h.pod);
  if (withPod.length < 1 || withPod.length < hits.length / 2) return undefined;
  const nodes = new Set(withPod.map((h) => nodeOfPod.get(`${h.workload.namespace}/${h.pod}`)));
  if (nodes.size !== 1) return undefined;
  const node = [...nodes][0];
  if (!node) return undefined;
  // The same workloads run elsewhere too, and those pods do not fail: the node, not the resolver.
  const workloads = new Set(withPod.map((h) => nodeId(h.workload)));
  const elsewhere = input.inputs.filter((i) => i.kube.target && workloads.has(nodeId(i.kube.target))).flatMap((i) => i.kube.pods).filter((p) => p.spec?.nodeName && p.spec.nodeName !== node);
  if (!elsewhere.length) return undefined;
  const coredns = s.pods.filter((p) => p.metadata?.namespace === 'kube-system' && /^(coredns|kube-dns)-/.test(p.metadata?.name ?? ''));
  if (coredns.length && !coredns.some((p) => (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'))) return undefined;
  const conntrack = input.metrics.find((m) => m.id === 'node_conntrack' && m.status === 'success')?.series.find((x) => (x.max ?? 0) >= 0.9);
  return {
    key: 'dns-failure:kube-system/Deployment/coredns',
    analyzer: 'dns-failure',
    family: 'dns-failure',
    status: 'ruled_out',
    confidence: 0.05,
    title: `cluster DNS failing for pods on ${node}`,
    component: corednsRef,
    mechanism: `Lookups fail in ${[...workloads].map((w) => w.split('/').pop()).join(', ')}, but only from pods on node ${node}.`,
    reason: `only pods on ${node} fail to resolve (${withPod.map((h) => h.pod).slice(0, 3).join(', ')}); their pods on other nodes (${elsewhere.slice(0, 2).map((p) => p.metadata?.name).join(', ')}) and CoreDNS are fine, so the node drops the queries${conntrack ? ' (its conntrack table is full)' : ''}: DNS itself is not failing`,
    facts: { node },
    supporting: [],
    refuting: withPod.slice(0, 2).map((h) => logEvidence(h, `resolution fails on ${node}`)),
  };
}

export type { TriageInput };
