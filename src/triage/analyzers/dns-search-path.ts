/**
 * `dns-search-path` (family `dns-failure`): a rollout that raised the pods' effective `ndots` (a chart
 * dropping `dnsConfig.options: ndots`, so the cluster default 5 applies). Every name with fewer dots than
 * ndots is first tried against each search domain (`<ns>.svc.cluster.local`, `svc.cluster.local`,
 * `cluster.local`, the node's own), A and AAAA each, all NXDOMAIN, before the name itself: an external
 * API called hundreds of times a second becomes thousands of cluster DNS queries, CoreDNS saturates
 * (throttled, slow), and the workload's lookups time out (`EAI_AGAIN`, `Timeout awaiting 'lookup'`,
 * `i/o timeout`). The external host and CoreDNS look guilty; neither changed.
 *
 * Decided from the ReplicaSets (the new template's dnsConfig against the previous one), the external
 * hosts the workload calls (topology), and symptoms starting after the rollout. Localised to the
 * workload; facts `failingLookup`, `ndots`, `previousNdots`, `manager`, `changedAt`, `revision`,
 * `previousRevision`. Mitigation: `rollout_undo` to the previous revision; the lasting fix is
 * `dnsConfig.options: [{name: ndots, value: "2"}]` (or FQDNs with a trailing dot).
 */
import type { V1PodSpec } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, refOfId } from '../../topology/graph.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';
import { metricLabel, targetScope, targetSymptoms } from './deploy-regression.js';
import { revisions, undoProposal } from './crash-loop.js';

/** Kubernetes' default for ClusterFirst pods. */
const DEFAULT_NDOTS = 5;
const LOOKUP_FAILURE = /EAI_AGAIN|ENOTFOUND|getaddrinfo|Timeout awaiting 'lookup'|lookup [\w.-]+.*(?:i\/o timeout|no such host|server misbehaving)|UnknownHostException|Temporary failure in name resolution|NXDOMAIN/i;
/** A rollout this old can still be the cause: the storm grows with traffic. */
const LOOKBACK_MS = 6 * 3600_000;

/** The ndots a pod spec resolves with, or undefined when it does not use the cluster search path. */
function ndotsOf(spec: V1PodSpec | undefined): number | undefined {
  const policy = spec?.dnsPolicy ?? 'ClusterFirst';
  if (policy === 'Default') return undefined; // the node's resolv.conf, not the cluster's search path
  const opt = spec?.dnsConfig?.options?.find((o) => o.name === 'ndots');
  const n = opt?.value !== undefined ? Number(opt.value) : NaN;
  return Number.isFinite(n) ? n : policy === 'None' ? 1 : DEFAULT_NDOTS;
}

const dots = (host: string) => host.replace(/\.$/, '').split('.').length - 1;

export const dnsSearchPath: Analyzer = {
  name: 'dns-search-path',
  analyze(input: TriageInput): Finding[] {
    const t = input.kube.target;
    const c = input.cluster;
    if (!t || !c) return [];
    const { current: cur, previous: prev } = revisions(input.kube);
    if (!cur || !prev) return [];
    const before = ndotsOf(prev.replicaSet.spec?.template?.spec);
    const after = ndotsOf(cur.replicaSet.spec?.template?.spec);
    if (before === undefined || after === undefined || after <= before) return [];
    const at = cur.replicaSet.metadata?.creationTimestamp ? new Date(cur.replicaSet.metadata.creationTimestamp) : undefined;
    if (!at || input.onset.getTime() - at.getTime() > LOOKBACK_MS || at.getTime() > input.onset.getTime() + 60_000) return [];

    // External names the workload calls that now take the search path first (fewer dots than ndots) and did not before.
    const me = nodeId({ kind: t.kind, namespace: t.namespace, name: t.name });
    const hosts = c.topology
      .outgoing(me)
      .filter((e) => e.kind === 'calls' && e.to.startsWith('ExternalService/'))
      .map((e) => refOfId(e.to).name)
      .filter((h) => dots(h) < after && dots(h) >= before);
    if (!hosts.length) return [];
    const symptoms = targetSymptoms(input);
    const lookupLogs = symptoms.logs.filter((l) => LOOKUP_FAILURE.test(l.template) || LOOKUP_FAILURE.test(l.example));
    const metricsAfter = symptoms.metrics.filter((m) => m.start.getTime() >= at.getTime() - 60_000);
    if (!lookupLogs.length && !metricsAfter.length) return [];
    const failing = hosts.find((h) => lookupLogs.some((l) => l.example.includes(h) || l.template.includes(h))) ?? hosts[0]!;

    const entry = (input.kube.workload?.metadata?.managedFields ?? [])
      .filter((m) => m.time && !m.subresource && Math.abs(new Date(m.time).getTime() - at.getTime()) <= 5 * 60_000)
      .sort((a, b) => new Date(b.time!).getTime() - new Date(a.time!).getTime())[0];
    const manager = entry?.manager ?? 'unknown';
    const queries = (n: number) => `${n + 1} names (A and AAAA each)`;
    const searchDomains = 4;
    const supporting: Evidence[] = [
      {
        kind: 'change',
        summary: `rollout to revision ${cur.revision} at ${clockTime(at)} by ${manager}: pod dnsConfig ndots ${before} → ${after}${after === DEFAULT_NDOTS ? ' (the cluster default: the option was dropped)' : ''}`,
        citation: objectCitation('ReplicaSet', t.namespace, cur.replicaSet.metadata?.name ?? '?', 'spec.template.spec.dnsConfig'),
        observedAt: at,
      },
      { kind: 'object', summary: `revision ${prev.revision} (${prev.replicaSet.metadata?.name}) resolved with ndots ${before}`, citation: objectCitation('ReplicaSet', t.namespace, prev.replicaSet.metadata?.name ?? '?', 'spec.template.spec.dnsConfig') },
      ...lookupLogs.slice(0, 2).map((l) => l.evidence),
      ...metricsAfter.slice(0, 2).map((m) => m.evidence),
    ];
    const coredns = c.snapshot.deployments.find((d) => d.metadata?.namespace === 'kube-system' && /^(coredns|kube-dns)$/.test(d.metadata?.name ?? ''));
    const dnsRef: ComponentRef | undefined = coredns ? { kind: 'Deployment', namespace: 'kube-system', name: coredns.metadata?.name ?? 'coredns' } : undefined;
    const external: ComponentRef = { kind: 'ExternalService', name: failing };
    const delay = humanDuration((metricsAfter[0]?.start ?? lookupLogs[0]?.first ?? input.onset).getTime() - at.getTime());
    const origin: Finding = {
      key: `dns-failure:${t.namespace}/${t.kind}/${t.name}/ndots`,
      analyzer: 'dns-search-path',
      family: 'dns-failure',
      status: 'supported',
      confidence: lookupLogs.length ? 0.9 : 0.78,
      title: `${t.name} revision ${cur.revision} resolves with ndots ${after} (was ${before}): every lookup of ${failing} walks the cluster search domains first`,
      component: { kind: t.kind, namespace: t.namespace, name: t.name },
      mechanism: `The rollout to revision ${cur.revision} at ${clockTime(at)} (${manager}) changed the pods' ndots from ${before} to ${after}. ${failing} has ${dots(failing)} dots, fewer than ${after}, so each lookup tries ${searchDomains} search domains before the name itself — ${queries(searchDomains)} instead of 1, all NXDOMAIN but the last — and the cluster DNS takes several times the load. Lookups queue and time out${lookupLogs[0] ? ` ("${lookupLogs[0].example.slice(0, 120)}")` : ''}${metricsAfter[0] ? `; ${t.name}'s ${metricLabel(metricsAfter[0].metric)} rose ${delay} after the rollout` : ''}. Fix: roll back, then set dnsConfig ndots (or call ${failing}. with a trailing dot).`,
      scope: `${t.name}'s calls to ${hosts.join(', ')}, and everything else resolving through the cluster DNS while it is saturated`,
      affected: targetScope(input),
      ...(dnsRef ? { consequences: [dnsRef] } : {}),
      facts: { failingLookup: failing, ndots: after, previousNdots: before, manager, changedAt: at.toISOString(), revision: cur.revision, previousRevision: prev.revision },
      supporting,
      refuting: [],
      mitigation: undoProposal(input.kube, prev, `revision ${prev.revision} resolved with ndots ${before}: external names go straight to the upstream resolver`),
    };
    const clearedHost: Finding = {
      key: `cleared:external-dependency:${nodeId(external)}`,
      analyzer: 'dns-search-path',
      family: 'external-dependency',
      status: 'ruled_out',
      confidence: 0.05,
      title: `${failing} is slow or down`,
      component: external,
      mechanism: `${t.name}'s calls to ${failing} time out, which reads like an outage of ${failing}.`,
      reason: `the time goes to resolving the name through the cluster search domains (ndots ${after} since revision ${cur.revision}), not to ${failing} answering`,
      facts: { host: failing },
      supporting: [],
      refuting: supporting.slice(0, 1),
    };
    const clearedDns: Finding[] = dnsRef
      ? [
          {
            key: `cleared:dns-failure:${nodeId(dnsRef)}`,
            analyzer: 'dns-search-path',
            family: 'dns-failure',
            status: 'ruled_out',
            confidence: 0.05,
            title: `The cluster DNS (${dnsRef.name}) is failing`,
            component: dnsRef,
            mechanism: `${dnsRef.name} is slow or throttled, which reads like a DNS outage.`,
            reason: `it is overloaded by the NXDOMAIN queries ${t.name}'s revision ${cur.revision} multiplies; scaling or raising its limits would only treat the symptom`,
            facts: {},
            supporting: [],
            refuting: supporting.slice(0, 1),
          },
        ]
      : [];
    return [origin, clearedHost, ...clearedDns];
  },
};
