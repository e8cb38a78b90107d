/**
 * `pod-creation-blocked`: the API server refuses to create the pods a controller asks for. The
 * controllers say why in `FailedCreate` events on the ReplicaSet/StatefulSet/Job/DaemonSet:
 * - `exceeded quota: <quota>, requested: limits.memory=2Gi, used: limits.memory=7Gi, limited: limits.memory=8Gi`
 *   → family `quota-exceeded`, localised to the ResourceQuota;
 * - `maximum memory usage per Container is 512Mi, but limit is 1Gi` (a LimitRange) → `quota-exceeded`,
 *   localised to the namespace's LimitRange;
 * - `admission webhook "<name>" denied the request: …` and `failed calling webhook "<name>": … connection
 *   refused | context deadline exceeded | x509: …` → `admission-denied`, localised to the
 *   Validating/MutatingWebhookConfiguration that holds the webhook (its backing Service is checked for
 *   ready endpoints: a webhook with failurePolicy Fail and no backend blocks everything it matches);
 * - `violates PodSecurity "restricted:latest": …` → `admission-denied` (reason `pod_security`),
 *   localised to the Namespace whose `pod-security.kubernetes.io/enforce` label refuses them.
 *
 * Facts: quota → `quota`, `resource`, `requested`, `used`, `hard`, `podsBlocked`, `manager`, `changedAt`;
 * webhook → `webhook`, `configuration`, `reason` (`denied` | `webhook_unavailable` | `webhook_timeout` |
 * `webhook_tls` | `pod_security`), `message`, `podsBlocked`, `manager`, `changedAt`.
 * No mitigation: quotas and admission policy are decisions for people.
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';
import { allEvents, changeEvidence, clip, eventEvidenceOf, eventFirstTime, eventTime, lastChangeBefore } from './common.js';

const RECENT_MS = 3 * 3600_000;
const QUOTA = /exceeded quota:\s*([\w.-]+),\s*requested:\s*([^,]+?),\s*used:\s*([^,]+?),\s*limited:\s*(.+)$/i;
const LIMIT_RANGE = /(maximum|minimum) (cpu|memory|ephemeral-storage) usage per (Container|Pod) is ([\w.]+)(?:, but (?:limit|request) is ([\w.]+))?/i;
const WEBHOOK_DENIED = /admission webhook "([^"]+)" denied the request:?\s*(.*)$/i;
const WEBHOOK_FAILED = /failed calling webhook "([^"]+)":\s*(.*)$/i;
const KYVERNO_POLICY = /blocked due to the following policies:?\s*([a-z0-9][a-z0-9.-]*):/i;
const PSA = /violates PodSecurity "([\w-]+)(?::[\w.-]+)?":\s*(.*)$/i;

interface Block {
  family: 'quota-exceeded' | 'admission-denied';
  component: ComponentRef;
  facts: Record<string, string | number | boolean>;
  what: string;
  events: CoreV1Event[];
  owners: ComponentRef[];
}

export const podCreationBlocked: ClusterAnalyzer = {
  name: 'pod-creation-blocked',
  analyze(input: ClusterTriageInput): Finding[] {
    const s = input.cluster.snapshot;
    const t = input.cluster.topology;
    const blocks = new Map<string, Block>();
    for (const e of allEvents(input)) {
      if (e.reason !== 'FailedCreate' && e.reason !== 'FailedCreatePodSandBox' && !/Failed(Create)?/.test(e.reason ?? '')) continue;
      const at = eventTime(e);
      if (!at || Math.abs(input.onset.getTime() - at.getTime()) > RECENT_MS) continue;
      const ns = e.involvedObject?.namespace ?? e.metadata?.namespace ?? '';
      // Policy engines write multi-line messages (Kyverno: "denied the request: \n\nresource … blocked due
      // to the following policies \n\nrequire-pod-limits:\n  check-limits: …"): read them as one line.
      const msg = (e.message ?? '').replace(/\s+/g, ' ').trim();
      const owner = ownerOf(t, e);
      let block: Omit<Block, 'events' | 'owners'> | undefined;
      let m: RegExpExecArray | null;
      if ((m = QUOTA.exec(msg))) {
        const [resource, requested] = splitPair(m[2]!);
        block = { family: 'quota-exceeded', component: { kind: 'ResourceQuota', namespace: ns, name: m[1]! }, facts: { quota: m[1]!, resource, requested, used: splitPair(m[3]!)[1], hard: splitPair(m[4]!)[1] }, what: `ResourceQuota ${ns}/${m[1]} is exhausted (${resource}: used ${splitPair(m[3]!)[1]} of ${splitPair(m[4]!)[1]}, a pod asks ${requested})` };
      } else if ((m = LIMIT_RANGE.exec(msg))) {
        const lr = s.limitRanges.find((l) => l.metadata?.namespace === ns);
        block = { family: 'quota-exceeded', component: { kind: 'LimitRange', namespace: ns, name: lr?.metadata?.name ?? 'limits' }, facts: { quota: lr?.metadata?.name ?? 'limits', resource: `${m[2]!.toLowerCase()}`, hard: m[4]!, ...(m[5] ? { requested: m[5] } : {}) }, what: `LimitRange ${ns}/${lr?.metadata?.name ?? '?'} refuses the pods (${m[1]!.toLowerCase()} ${m[2]} per ${m[3]!.toLowerCase()} is ${m[4]}${m[5] ? `, the pod asks ${m[5]}` : ''})` };
      } else if ((m = WEBHOOK_DENIED.exec(msg)) || (m = WEBHOOK_FAILED.exec(msg))) {
        const webhook = m[1]!;
        const detail = m[2] ?? '';
        const config = webhookConfiguration(input, webhook);
        const reason = /denied the request/i.test(msg) ? 'denied' : /x509|certificate/i.test(detail) ? 'webhook_tls' : /deadline exceeded|timeout|timed out/i.test(detail) ? 'webhook_timeout' : 'webhook_unavailable';
        // A policy engine's denial names the policy that changed, which is what to look at and fix:
        // Kyverno "blocked due to the following policies <name>:", Gatekeeper "[<constraint>] …".
        const policy = KYVERNO_POLICY.exec(detail)?.[1];
        const policyRef = policy ? kyvernoPolicy(input, policy, ns) : undefined;
        block = {
          family: 'admission-denied',
          component: policyRef ?? config ?? { kind: 'ValidatingWebhookConfiguration', name: webhook },
          facts: { webhook, ...(config ? { configuration: config.name } : {}), ...(policy ? { policy } : {}), reason, message: clip(msg, 300) },
          what: `admission webhook ${webhook}${config ? ` (${config.kind} ${config.name})` : ''} ${reason === 'denied' ? 'denies the pods' : `cannot be reached (${reason.replace('webhook_', '')}) and fails closed`}`,
        };
      } else if ((m = PSA.exec(msg))) {
        block = { family: 'admission-denied', component: { kind: 'Namespace', name: ns }, facts: { reason: 'pod_security', webhook: `PodSecurity ${m[1]}`, message: clip(msg, 300) }, what: `Pod Security level "${m[1]}" enforced on namespace ${ns} refuses the pods (${clip(m[2]!, 120)})` };
      }
      if (!block) continue;
      const key = `${block.component.kind}/${block.component.namespace ?? ''}/${block.component.name}`;
      const cur = blocks.get(key) ?? { ...block, events: [], owners: [] };
      cur.events.push(e);
      if (owner && !cur.owners.some((o) => o.name === owner.name && o.namespace === owner.namespace)) cur.owners.push(owner);
      blocks.set(key, cur);
    }

    const out: Finding[] = [];
    for (const b of blocks.values()) {
      const first = b.events.map(eventFirstTime).filter((d): d is Date => !!d).sort((a, c) => a.getTime() - c.getTime())[0];
      // Pods that could not be created: what each refused ReplicaSet still lacks (spec against status);
      // the events' counts are retries of the same pods, so they are the fallback only.
      const lacking = missingPods(input, b.events);
      const podsBlocked = lacking ?? b.events.reduce((n, e) => n + (e.count ?? 1), 0);
      const supporting: Evidence[] = b.events.sort((a, c) => (c.count ?? 1) - (a.count ?? 1)).slice(0, 3).map(eventEvidenceOf);
      const facts: Record<string, string | number | boolean> = { ...b.facts, podsBlocked };
      // Who changed the quota (or the webhook configuration, or the namespace label) and when.
      const meta =
        b.component.kind === 'ResourceQuota'
          ? input.cluster.snapshot.resourceQuotas.find((q) => q.metadata?.namespace === b.component.namespace && q.metadata?.name === b.component.name)?.metadata
          : b.component.kind === 'LimitRange'
            ? input.cluster.snapshot.limitRanges.find((q) => q.metadata?.namespace === b.component.namespace && q.metadata?.name === b.component.name)?.metadata
            : b.component.kind === 'Namespace'
              ? input.cluster.snapshot.namespaces.find((n) => n.metadata?.name === b.component.name)?.metadata
              : b.component.kind === 'ClusterPolicy' || b.component.kind === 'Policy'
                ? (input.cluster.snapshot.custom[b.component.kind] ?? []).find((o) => o.metadata.name === b.component.name && (b.component.kind === 'ClusterPolicy' || o.metadata.namespace === b.component.namespace))?.metadata
                : [...input.cluster.snapshot.validatingWebhooks, ...input.cluster.snapshot.mutatingWebhooks].find((w) => w.metadata?.name === b.component.name)?.metadata;
      const change = lastChangeBefore(b.component.kind, meta, first ?? input.onset);
      if (change) {
        facts['manager'] = change.actor;
        facts['changedAt'] = change.at.toISOString();
        supporting.push(changeEvidence(change, input.onset));
      }
      if (b.family === 'quota-exceeded' && b.component.kind === 'ResourceQuota') {
        const q = input.cluster.snapshot.resourceQuotas.find((x) => x.metadata?.namespace === b.component.namespace && x.metadata?.name === b.component.name);
        if (q) supporting.push({ kind: 'object', summary: `ResourceQuota ${b.component.name}: hard ${fmt(q.status?.hard ?? q.spec?.hard)}, used ${fmt(q.status?.used)}`, citation: objectCitation('ResourceQuota', b.component.namespace, b.component.name, 'status') });
      }
      if (b.family === 'admission-denied' && b.component.kind.endsWith('WebhookConfiguration')) supporting.push(...backendEvidence(input, b.component, String(b.facts['webhook'])));
      if (meta && (b.component.kind === 'ClusterPolicy' || b.component.kind === 'Policy')) {
        supporting.push({ kind: 'object', summary: `Kyverno ${b.component.kind} ${b.component.name}${meta.creationTimestamp ? ` (created ${clockTime(new Date(meta.creationTimestamp))})` : ''} denies the pods at admission`, citation: objectCitation(b.component.kind, b.component.namespace, b.component.name, 'spec.rules') });
      }
      out.push({
        key: `pod-creation-blocked:${b.component.kind}/${b.component.namespace ?? ''}/${b.component.name}`,
        analyzer: 'pod-creation-blocked',
        family: b.family,
        status: 'supported',
        confidence: 0.9,
        title: `${b.what}: ${b.owners.map((o) => o.name).join(', ') || 'pods'} cannot create pods`,
        component: b.component,
        mechanism: `The API server refuses new pods for ${b.owners.map((o) => `${o.kind.toLowerCase()}/${o.name}`).join(', ') || 'the workload'}: ${b.what}. FailedCreate ×${podsBlocked}${first ? ` since ${clockTime(first)}, ${humanDuration(Math.abs(input.onset.getTime() - first.getTime()))} ${first <= input.onset ? 'before' : 'after'} the alert` : ''}${change ? `; ${change.summary} at ${clockTime(change.at)}` : ''}.`,
        scope: `${b.owners.map((o) => `${o.namespace}/${o.name}`).join(', ')} run short of replicas; any pod they lose is not replaced`,
        affected: b.owners,
        facts,
        supporting,
        refuting: [],
      });
    }
    return out;
  },
};

/** The workload behind the event's object: a ReplicaSet's Deployment, a Job's CronJob, the object itself. */
function ownerOf(t: ClusterTriageInput['cluster']['topology'], e: CoreV1Event): ComponentRef | undefined {
  const io = e.involvedObject;
  if (!io?.name) return undefined;
  const ns = io.namespace ?? e.metadata?.namespace;
  if (io.kind === 'ReplicaSet') {
    const rs = t.snapshot.replicaSets.find((r) => r.metadata?.namespace === ns && r.metadata?.name === io.name);
    const owner = rs?.metadata?.ownerReferences?.find((o) => o.controller) ?? rs?.metadata?.ownerReferences?.[0];
    return owner ? { kind: owner.kind, namespace: ns, name: owner.name } : { kind: 'Deployment', namespace: ns, name: io.name.replace(/-[a-z0-9]{6,10}$/, '') };
  }
  if (io.kind === 'Job') {
    const job = t.snapshot.jobs.find((j) => j.metadata?.namespace === ns && j.metadata?.name === io.name);
    const owner = job?.metadata?.ownerReferences?.find((o) => o.kind === 'CronJob');
    return owner ? { kind: 'CronJob', namespace: ns, name: owner.name } : { kind: 'Job', namespace: ns, name: io.name };
  }
  return { kind: io.kind ?? 'Deployment', namespace: ns, name: io.name };
}

function webhookConfiguration(input: ClusterTriageInput, webhook: string): ComponentRef | undefined {
  const v = input.cluster.snapshot.validatingWebhooks.find((c) => (c.webhooks ?? []).some((w) => w.name === webhook));
  if (v) return { kind: 'ValidatingWebhookConfiguration', name: v.metadata?.name ?? '?' };
  const m = input.cluster.snapshot.mutatingWebhooks.find((c) => (c.webhooks ?? []).some((w) => w.name === webhook));
  return m ? { kind: 'MutatingWebhookConfiguration', name: m.metadata?.name ?? '?' } : undefined;
}

/** The webhook's backing Service: no ready endpoints means every call fails (and failurePolicy decides what that blocks). */
function backendEvidence(input: ClusterTriageInput, config: ComponentRef, webhook: string): Evidence[] {
  const s = input.cluster.snapshot;
  const all = [...s.validatingWebhooks, ...s.mutatingWebhooks].find((c) => c.metadata?.name === config.name);
  const hook = all?.webhooks?.find((w) => w.name === webhook);
  const svc = hook?.clientConfig?.service;
  const out: Evidence[] = [];
  if (hook) out.push({ kind: 'object', summary: `${config.kind} ${config.name}: webhook ${webhook} failurePolicy ${hook.failurePolicy ?? 'Fail'}${svc ? `, backend service ${svc.namespace}/${svc.name}` : ''}${hook.timeoutSeconds ? `, timeout ${hook.timeoutSeconds}s` : ''}`, citation: objectCitation(config.kind, undefined, config.name, 'webhooks') });
  if (svc) {
    const ep = s.endpoints.find((e) => e.metadata?.namespace === svc.namespace && e.metadata?.name === svc.name);
    const ready = (ep?.subsets ?? []).reduce((n, x) => n + (x.addresses ?? []).length, 0);
    out.push({ kind: 'endpoints', summary: `Endpoints ${svc.namespace}/${svc.name}: ${ready} ready`, citation: objectCitation('Endpoints', svc.namespace, svc.name ?? '?', 'subsets'), detail: { ready } });
  }
  return out;
}

function splitPair(s: string): [string, string] {
  const [k, v] = s.trim().split('=');
  return [k?.trim() ?? s, v?.trim() ?? ''];
}

function fmt(r: Record<string, string> | undefined): string {
  return Object.entries(r ?? {}).map(([k, v]) => `${k}=${v}`).join(', ') || 'n/a';
}

/** The Kyverno policy of that name: a namespaced Policy when the namespace has one, else the ClusterPolicy. */
function kyvernoPolicy(input: ClusterTriageInput, name: string, ns: string): ComponentRef {
  const custom = input.cluster.snapshot.custom;
  if ((custom['Policy'] ?? []).some((o) => o.metadata.name === name && o.metadata.namespace === ns)) return { kind: 'Policy', namespace: ns, name };
  return { kind: 'ClusterPolicy', name };
}

/** Pods the refused ReplicaSets still lack (desired minus created), when every event is about one. */
function missingPods(input: ClusterTriageInput, events: { involvedObject?: { kind?: string; name?: string; namespace?: string } }[]): number | undefined {
  const seen = new Set<string>();
  let total = 0;
  for (const e of events) {
    const io = e.involvedObject;
    if (io?.kind !== 'ReplicaSet' || !io.name) return undefined;
    const id = `${io.namespace}/${io.name}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const rs = input.cluster.snapshot.replicaSets.find((r) => r.metadata?.namespace === io.namespace && r.metadata?.name === io.name);
    if (!rs || rs.spec?.replicas === undefined) return undefined;
    total += Math.max(0, rs.spec.replicas - (rs.status?.replicas ?? 0));
  }
  return seen.size ? total : undefined;
}
