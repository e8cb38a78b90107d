/**
 * `resource-exhaustion`: a process (or its node) ran out of a kernel resource, read from the error
 * wordings the kernel, libc and the common runtimes print when a system call fails for it:
 *
 * - file descriptors (EMFILE 24 / ENFILE 23): `accept4: too many open files` (Go), `accept4() failed (24:
 *   Too many open files)` (nginx), `java.net.SocketException: Too many open files`, `EMFILE: too many open
 *   files` (Node.js), `[Errno 24] Too many open files` (Python), `Too many open files in system` (ENFILE);
 * - ephemeral ports (EADDRNOTAVAIL 99): `connect: cannot assign requested address` (Go), `connect
 *   EADDRNOTAVAIL` (Node.js), `[Errno 99] Cannot assign requested address` (Python),
 *   `NoRouteToHostException: Cannot assign requested address` (Java). A `bind`/`listen` failing with it is
 *   a wrong listen address, not exhaustion, and `address already in use` (EADDRINUSE) is a port clash:
 *   neither counts;
 * - conntrack: the kernel's `nf_conntrack: table full, dropping packet` (a node-wide table);
 * - PIDs / threads: `fork: Resource temporarily unavailable` (shells), `pthread_create failed`,
 *   `unable to create native thread` (Java), `runtime: failed to create new OS thread` (Go),
 *   `can't start new thread` (Python), EAGAIN on spawn/clone;
 * - /dev/shm: `could not resize shared memory segment … No space left on device` (PostgreSQL),
 *   `No space left on device` on a /dev/shm path, `insufficient shared memory (shm)` (PyTorch).
 *
 * Sources: the target's container logs read through the API (previous logs of restarting containers and
 * current logs of Running pods), its Loki templates, and kernel-monitor events (node-problem-detector)
 * on its pods' nodes. Corroborated, when present, by the target's `process_fds` summary (open fds /
 * limit, per pod; or `process_open_fds` / `process_max_fds`) and `node_conntrack` (entries / limit).
 *
 * Supported when the wording repeats (3+ lines) and began near the onset (from 30 min before to 15 min
 * after); open otherwise. Localised to the workload, except conntrack: the Node when the hits are on one
 * node (the table is the node's), the workload when its pods fill it on several nodes.
 *
 * Facts (camelCase): `resource` (`file_descriptors` | `ephemeral_ports` | `conntrack` | `pids` | `shm`),
 * `used` and `limit` (absolute, when a log line or metric says), `usedRatio` (used / limit, from metrics),
 * `container`, `logPattern`, `logCount`, `pods` (pods that logged it), `node` (conntrack), `firstSeen` (ISO);
 * when a rollout came before the first failure (up to 12 h: a leak fills the limit under load, later),
 * `revision`, `previousRevision`, `changedAt`.
 *
 * Mitigation: `rollout_undo` to the previous revision when the leak came with a rollout; otherwise
 * `rollout_restart` of the workload for file descriptors and ephemeral ports (it releases the leaked
 * handles and sockets while the leak is fixed); none for the others.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { MetricSummary, SeriesSummary } from '../../evidence/prometheus/types.js';
import type { Citation, ComponentRef, Evidence } from '../../evidence/types.js';
import { DELAYED_EFFECT_MS, type Analyzer, type TriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';
import { clip, eventAt, eventEvidence, eventFirst, revisionEvidence, revisions, servingScope, undoProposal } from './crash-loop.js';

const NAME = 'resource-exhaustion';
const NEAR_BEFORE_MS = 30 * 60_000;
const NEAR_AFTER_MS = 15 * 60_000;
const REPEATS = 3;

export type KernelResource = 'file_descriptors' | 'ephemeral_ports' | 'conntrack' | 'pids' | 'shm' | 'ip_addresses';

interface Wording {
  resource: KernelResource;
  re: RegExp;
  /** Lines that match `re` but mean something else. */
  not?: RegExp;
}

export const WORDINGS: readonly Wording[] = [
  { resource: 'file_descriptors', re: /too many open files|\bEMFILE\b|\bENFILE\b|\berrno[ =:]*24\b|VFS: file-max limit \d+ reached/i },
  {
    resource: 'ephemeral_ports',
    re: /cannot assign requested address|\bEADDRNOTAVAIL\b|\[Errno 99\]/i,
    // bind/listen on an address the pod does not own is a configuration error; EADDRINUSE is a port clash.
    not: /\b(bind|listen)\b[^;]{0,80}cannot assign requested address|listen (tcp|udp)\S* [^ ]+: bind|address already in use|EADDRINUSE/i,
  },
  { resource: 'conntrack', re: /nf_conntrack: (?:nf_conntrack: )?(?:table full|dropping packet)|ip_conntrack: table full/i },
  {
    resource: 'pids',
    re: /fork: (?:retry: )?(?:Resource temporarily unavailable|Cannot allocate memory)|pthread_create(?:\(\))? failed|pthread_create: Resource temporarily unavailable|unable to create (?:new )?native thread|failed to create new OS thread|can't start new thread|failed to spawn thread|(?:spawn|fork|clone|thread)\w*[^\n]{0,40}\bEAGAIN\b|\bEAGAIN\b[^\n]{0,40}(?:thread|fork|spawn|clone)/i,
  },
  // Pod IPs: the CNI's IPAM has none left for the node (a subnet out of addresses, a full pod CIDR), so the
  // sandbox is never created (FailedCreatePodSandBox). aws-cni, host-local (kubenet/flannel/GKE), Calico, Cilium, Azure CNI.
  {
    resource: 'ip_addresses',
    re: /failed to assign an IP address to container|InsufficientFreeAddressesInSubnet|no IP addresses available in range set|failed to allocate for range \d+: no IP addresses|no more free affinity blocks|unable to allocate IP via local cilium agent|IPAM[^\n]{0,80}(?:exhausted|range is full|no available (?:IP|address))|Failed to allocate (?:address|pool)[^\n]{0,120}(?:No available addresses|exhausted)|ipamd[^\n]{0,80}(?:no available IP|failed to allocate)/i,
  },
  { resource: 'shm', re: /could not resize shared memory segment|\/dev\/shm[^\n]{0,120}No space left on device|No space left on device[^\n]{0,120}\/dev\/shm|insufficient shared memory \(shm\)/i },
];

/** Which kernel resource a log line says ran out, if any. */
export function exhaustedResource(text: string): KernelResource | undefined {
  for (const w of WORDINGS) if (w.re.test(text) && !w.not?.test(text)) return w.resource;
  return undefined;
}

/** The words of a line that say it (`accept4: too many open files`), for a title. */
function wordsOf(text: string, resource: KernelResource): string | undefined {
  const w = WORDINGS.find((x) => x.resource === resource)!;
  const m = w.re.exec(text);
  if (!m) return undefined;
  const before = text.slice(Math.max(0, m.index - 24), m.index);
  const lead = /[\w.()]+:\s*$/.exec(before)?.[0] ?? '';
  return `${lead}${m[0]}`.trim();
}

const LABEL: Record<KernelResource, string> = {
  file_descriptors: 'file descriptors',
  ephemeral_ports: 'ephemeral ports',
  conntrack: 'conntrack entries',
  pids: 'PIDs/threads',
  shm: '/dev/shm (shared memory)',
  ip_addresses: 'pod IP addresses',
};
const MEANING: Record<KernelResource, string> = {
  file_descriptors: 'every new socket or file fails with EMFILE, so it cannot accept connections or open files — the classic sign of a descriptor leak (connections or files never closed)',
  ephemeral_ports: 'outgoing connections fail with EADDRNOTAVAIL: every local port toward the destination is in use or in TIME_WAIT, the sign of connections opened per request and never reused',
  conntrack: "the node's connection-tracking table is full, so the kernel drops new connections' packets (timeouts, not refusals) for every pod on the node",
  pids: 'it cannot create processes or threads (fork/clone fail with EAGAIN): the pod or node PID limit is reached, typically by a thread or process leak',
  shm: 'shared memory allocations fail: /dev/shm (64 MiB by default in a container) is full',
  ip_addresses: "the CNI cannot give new pods an IP address (the node's subnet or pod CIDR is exhausted), so their sandboxes are never created and they stay Pending/ContainerCreating while the scheduler keeps placing pods there",
};

interface Hit {
  resource: KernelResource;
  template: string;
  example: string;
  count: number;
  first?: Date;
  last?: Date;
  pod?: string;
  container?: string;
  node?: string;
  /** Loki said the template is new since the onset. */
  newSinceOnset?: boolean;
  citation: Citation;
  evidence: Evidence;
}

function podLogCitation(ns: string, pod: string, container: string, previous: boolean): Citation {
  return { source: 'kubernetes', ref: `api/v1/namespaces/${ns}/pods/${pod}/log?container=${container}${previous ? '&previous=true' : ''}` };
}

function hits(input: TriageInput): Hit[] {
  const { kube } = input;
  const t = kube.target!;
  const out: Hit[] = [];
  const nodeOf = (pod: string | undefined) => kube.pods.find((p) => p.metadata?.name === pod)?.spec?.nodeName;
  for (const c of kube.containerLogs) {
    for (const p of c.patterns) {
      const resource = exhaustedResource(p.example) ?? exhaustedResource(p.template);
      if (!resource) continue;
      const citation = podLogCitation(t.namespace, c.pod, c.container, c.previous);
      out.push({
        resource,
        template: p.template,
        example: p.example,
        count: p.count,
        ...(p.first ? { first: p.first } : {}),
        ...(p.last ? { last: p.last } : {}),
        pod: c.pod,
        container: c.container,
        ...(nodeOf(c.pod) ? { node: nodeOf(c.pod)! } : {}),
        citation,
        evidence: {
          kind: 'log',
          summary: `${c.previous ? 'previous log' : 'log'} of ${c.pod}/${c.container}: "${clip(p.example || p.template, 200)}" ×${p.count}${p.first ? ` since ${clockTime(p.first)}` : ''}`,
          citation,
          ...(p.first ? { observedAt: p.first } : {}),
          detail: { template: p.template, count: p.count, first: p.first?.toISOString() ?? null, last: p.last?.toISOString() ?? null },
        },
      });
    }
  }
  for (const s of input.logs?.summaries ?? []) {
    if (s.status !== 'success') continue;
    const fresh = new Map(s.newSinceOnset.map((p) => [p.template, p]));
    const seen = new Set<string>();
    for (const p of [...s.newSinceOnset, ...s.errorPatterns, ...s.patterns]) {
      if (seen.has(p.template)) continue;
      seen.add(p.template);
      const resource = exhaustedResource(p.example) ?? exhaustedResource(p.template);
      if (!resource) continue;
      const changed = fresh.get(p.template);
      out.push({
        resource,
        template: p.template,
        example: p.example,
        count: p.count,
        ...(p.first ? { first: p.first } : {}),
        ...(p.last ? { last: p.last } : {}),
        ...(changed ? { newSinceOnset: true } : {}),
        citation: s.citation,
        evidence: {
          kind: 'log',
          summary: `${changed ? (changed.change.kind === 'new' ? 'new since the onset' : 'rate jumped at the onset') : 'Loki'} ${s.selector}: "${clip(p.example || p.template, 200)}" ×${p.count}${p.first ? ` since ${clockTime(p.first)}` : ''}`,
          citation: s.citation,
          ...(p.first ? { observedAt: p.first } : {}),
          detail: { template: p.template, count: p.count, ...(changed ? { change: changed.change } : {}) },
        },
      });
    }
  }
  return out;
}

/** Kernel-monitor events (node-problem-detector and the like) on the target's pods or their nodes. */
function eventHits(input: TriageInput): Hit[] {
  const { kube, onset } = input;
  const pods = new Set(kube.pods.map((p) => p.metadata?.name));
  const nodes = new Set(kube.pods.map((p) => p.spec?.nodeName).filter(Boolean));
  const seen = new Set<string>();
  const out: Hit[] = [];
  for (const e of [...kube.events, ...kube.warningEvents]) {
    const id = `${e.metadata?.namespace}/${e.metadata?.name}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const kind = e.involvedObject?.kind;
    const name = e.involvedObject?.name ?? '';
    if (!((kind === 'Pod' && pods.has(name)) || (kind === 'Node' && nodes.has(name)))) continue;
    const resource = exhaustedResource(e.message ?? '');
    if (!resource) continue;
    const last = eventAt(e);
    if (last && onset.getTime() - last.getTime() > 2 * 60 * 60_000) continue;
    const first = eventFirst(e);
    const ev = eventEvidence(e, `event ${e.reason} ×${e.count ?? 1} on ${kind?.toLowerCase()}/${name}: "${clip(e.message ?? '', 200)}"${last ? ` (last ${clockTime(last)})` : ''}`);
    out.push({
      resource,
      template: e.message ?? '',
      example: e.message ?? '',
      count: e.count ?? 1,
      ...(first ? { first } : {}),
      ...(last ? { last } : {}),
      ...(kind === 'Pod' ? { pod: name, ...(kube.pods.find((p) => p.metadata?.name === name)?.spec?.nodeName ? { node: kube.pods.find((p) => p.metadata?.name === name)!.spec!.nodeName! } : {}) } : { node: name }),
      citation: ev.citation,
      evidence: ev,
    });
  }
  return out;
}

/** Numbers some runtimes print with the failure: Go's `have 1024 already`, `ulimit -n 1024`, `limit 1024`. */
function numbersIn(text: string): { used?: number; limit?: number } {
  const used = /have (\d+) already|(\d+) open files|open files[:=]\s*(\d+)|threads?[:=]\s*(\d+)/i.exec(text);
  const limit = /(?:ulimit(?: -[nu])?|RLIMIT_NOFILE|RLIMIT_NPROC|max(?:imum)? (?:open files|user processes|fds|pids)|nofile|pids\.max|file-max limit|limit(?: of| is|:|=)?)\s*(\d+)/i.exec(text);
  const n = (m: RegExpExecArray | null) => (m ? Number(m.slice(1).find((x) => x !== undefined)) : undefined);
  return { ...(n(used) !== undefined ? { used: n(used)! } : {}), ...(n(limit) !== undefined ? { limit: n(limit)! } : {}) };
}

function seriesOfPods(summary: MetricSummary | undefined, pods: Set<string>, workload: string): SeriesSummary[] {
  if (!summary || summary.status !== 'success') return [];
  return summary.series.filter((s) => {
    const pod = s.metric['pod'] ?? s.metric['k8s_pod_name'];
    return !pod || pods.has(pod) || pod.startsWith(`${workload}-`);
  });
}

interface Corroboration {
  evidence: Evidence;
  ratio?: number;
  used?: number;
  limit?: number;
  high: boolean;
}

/** What the metrics say about the resource: fds per pod, conntrack per node. */
function corroborate(input: TriageInput, resource: KernelResource, nodes: string[]): Corroboration | undefined {
  const t = input.kube.target!;
  const summaries = input.metrics?.summaries ?? [];
  const pods = new Set(input.kube.pods.map((p) => p.metadata?.name ?? ''));
  // The workload's own queries first, then the cluster catalog's (read before triage, per namespace and pod).
  const find = (id: string) => summaries.find((s) => s.id === id && s.status === 'success') ?? (input.cluster?.metrics ?? []).find((s) => s.id === id && s.status === 'success');
  if (resource === 'file_descriptors') {
    const ratio = find('process_fds');
    const series = seriesOfPods(ratio, pods, t.name).filter((s) => s.max !== null).sort((a, b) => (b.max ?? 0) - (a.max ?? 0));
    const open = seriesOfPods(find('process_open_fds'), pods, t.name).sort((a, b) => (b.max ?? 0) - (a.max ?? 0))[0];
    const max = seriesOfPods(find('process_max_fds'), pods, t.name).find((s) => !open || s.metric['pod'] === open.metric['pod']);
    if (ratio && series[0]) {
      const top = series[0];
      const r = top.max ?? 0;
      // The absolute numbers of the same pod, when both sides were read.
      const pod = top.metric['pod'];
      const used = seriesOfPods(find('process_open_fds'), pods, t.name).find((s) => s.metric['pod'] === pod)?.max ?? undefined;
      const lim = seriesOfPods(find('process_max_fds'), pods, t.name).find((s) => s.metric['pod'] === pod)?.last ?? undefined;
      return {
        ...(used !== undefined && used !== null ? { used } : {}),
        ...(lim !== undefined && lim !== null ? { limit: lim } : {}),
        ratio: r,
        high: r >= (ratio.threshold ?? 0.9),
        evidence: {
          kind: 'metric',
          summary: `${ratio.title}: ${Math.round(r * 100)}% in ${top.metric['pod'] ?? t.name}${top.baseline ? ` (baseline ${Math.round(top.baseline.median * 100)}%)` : ''}${top.deviationStart ? `, rising since ${clockTime(top.deviationStart)}` : ''}`,
          citation: ratio.citation,
          ...(top.deviationStart ? { observedAt: top.deviationStart } : {}),
          detail: { pods: series.map((s) => s.metric['pod']), max: series.map((s) => s.max) },
        },
      };
    }
    if (open?.max !== null && open?.max !== undefined) {
      const limit = max?.last ?? max?.max ?? undefined;
      const r = limit ? open.max / limit : undefined;
      const summary = find('process_open_fds')!;
      return {
        used: open.max,
        ...(limit ? { limit } : {}),
        ...(r !== undefined ? { ratio: r } : {}),
        high: r !== undefined && r >= 0.9,
        evidence: { kind: 'metric', summary: `process_open_fds reached ${open.max}${limit ? ` of process_max_fds ${limit}` : ''} in ${open.metric['pod'] ?? t.name}`, citation: summary.citation, detail: { used: open.max, limit: limit ?? null } },
      };
    }
  }
  if (resource === 'conntrack') {
    // Node-exporter's series are the cluster's (read before triage), labelled by the node's address or name.
    const cluster = input.cluster?.metrics ?? [];
    const pick = (id: string) => find(id) ?? cluster.find((s) => s.id === id && s.status === 'success');
    const names = new Map<string, string>();
    for (const n of input.cluster?.snapshot.nodes ?? []) for (const a of [n.metadata?.name ?? '', ...(n.status?.addresses ?? []).map((x) => x.address)]) if (a) names.set(a, n.metadata?.name ?? a);
    const nodeOf = (s: SeriesSummary) => {
      const inst = (s.metric['node'] ?? s.metric['instance'] ?? '').replace(/:\d+$/, '');
      return names.get(inst) ?? inst;
    };
    const onNodes = (m: MetricSummary | undefined) => (m?.series ?? []).filter((s) => s.max !== null && (!nodes.length || nodes.includes(nodeOf(s)))).sort((a, b) => (b.max ?? 0) - (a.max ?? 0));
    const ct = pick('node_conntrack');
    const series = onNodes(ct);
    const top = series[0];
    if (ct && top) {
      const node = nodeOf(top);
      const used = onNodes(pick('node_conntrack_entries')).find((s) => nodeOf(s) === node)?.max ?? undefined;
      const limit = onNodes(pick('node_conntrack_limit')).find((s) => nodeOf(s) === node)?.last ?? undefined;
      const r = top.max ?? 0;
      return {
        ratio: r,
        ...(used !== undefined && used !== null ? { used } : {}),
        ...(limit !== undefined && limit !== null ? { limit } : {}),
        high: r >= (ct.threshold ?? 0.9),
        evidence: {
          kind: 'metric',
          summary: `${ct.title}: ${Math.round(r * 100)}% on ${node}${used !== undefined && used !== null && limit ? ` (${used} of ${limit})` : ''}${top.deviationStart ? `, rising since ${clockTime(top.deviationStart)}` : ''}`,
          citation: ct.citation,
          ...(top.deviationStart ? { observedAt: top.deviationStart } : {}),
          detail: { node, max: r, used: used ?? null, limit: limit ?? null },
        },
      };
    }
  }
  return undefined;
}

/** Resources a process leaks (descriptors, sockets, threads): what a bad release exhausts over time. */
const LEAKS = new Set<KernelResource>(['file_descriptors', 'ephemeral_ports', 'pids']);

const APP_SIDECARS = new Set(['istio-proxy', 'linkerd-proxy', 'envoy', 'vault-agent', 'cloud-sql-proxy', 'fluent-bit', 'otel-collector', 'datadog-agent']);

function appContainerOf(pods: V1Pod[], template: { name: string }[] | undefined): string | undefined {
  const names = (template ?? pods[0]?.spec?.containers ?? []).map((c) => c.name);
  return names.find((n) => !APP_SIDECARS.has(n)) ?? names[0];
}

export const resourceExhaustion: Analyzer = {
  name: NAME,
  analyze(input: TriageInput): Finding[] {
    const { kube, onset } = input;
    const t = kube.target;
    if (!t) return [];
    const all = [...hits(input), ...eventHits(input)];
    if (!all.length) return [];

    // The resource the most lines name (pod logs first: they say which container).
    const byResource = new Map<KernelResource, Hit[]>();
    for (const h of all) byResource.set(h.resource, [...(byResource.get(h.resource) ?? []), h]);
    const total = (hs: Hit[]) => {
      const pod = hs.filter((h) => h.pod && h.citation.ref.includes('/log?')).reduce((n, h) => n + h.count, 0);
      const other = hs.filter((h) => !(h.pod && h.citation.ref.includes('/log?'))).reduce((n, h) => Math.max(n, h.count), 0);
      return Math.max(pod, other);
    };
    const [resource, mine] = [...byResource.entries()].sort((a, b) => total(b[1]) - total(a[1]))[0]!;
    mine.sort((a, b) => b.count - a.count);
    const count = total(mine);
    const main = mine[0]!;
    const firsts = mine.map((h) => h.first).filter((d): d is Date => !!d);
    const first = firsts.length ? new Date(Math.min(...firsts.map((d) => d.getTime()))) : undefined;
    const pods = [...new Set(mine.map((h) => h.pod).filter((p): p is string => !!p))];
    const nodes = [...new Set(mine.map((h) => h.node).filter((n): n is string => !!n))];
    const container = mine.find((h) => h.container)?.container ?? appContainerOf(kube.pods, kube.workload?.spec?.template?.spec?.containers);
    const near = first ? first.getTime() >= onset.getTime() - NEAR_BEFORE_MS && first.getTime() <= onset.getTime() + NEAR_AFTER_MS : mine.some((h) => h.newSinceOnset);
    const predates = !!first && first.getTime() < onset.getTime() - NEAR_BEFORE_MS && !mine.some((h) => h.newSinceOnset);
    const repeats = count >= REPEATS;

    // Where it localises: the workload; the Node for conntrack unless the workload fills it on several nodes.
    const workload: ComponentRef = { kind: t.kind, namespace: t.namespace, name: t.name };
    // Node-scoped tables: conntrack and the node's pod IPs (its subnet / pod CIDR).
    const nodeWide = (resource === 'conntrack' || resource === 'ip_addresses') && nodes.length === 1;
    const component: ComponentRef = nodeWide ? { kind: 'Node', name: nodes[0]! } : workload;

    const metric = corroborate(input, resource, nodes);
    const fromText = numbersIn(mine.map((h) => h.example).join('\n'));
    const facts: Record<string, string | number | boolean> = { resource };
    const used = fromText.used ?? metric?.used;
    const limit = fromText.limit ?? metric?.limit;
    if (used !== undefined) facts['used'] = used;
    if (limit !== undefined) facts['limit'] = limit;
    if (metric?.ratio !== undefined) facts['usedRatio'] = Math.round(metric.ratio * 100) / 100;
    if (container) facts['container'] = container;
    facts['logPattern'] = clip(main.template, 200);
    facts['logCount'] = count;
    if (pods.length) facts['pods'] = pods.length;
    if ((resource === 'conntrack' || resource === 'ip_addresses') && nodes.length) facts['node'] = nodes.join(',');
    if (first) facts['firstSeen'] = first.toISOString();

    const supporting: Evidence[] = mine.slice(0, 3).map((h) => h.evidence);
    if (nodeWide) {
      // The node itself, so the board cites what it blames: where the pods sit and whether it is still schedulable.
      const n = (input.cluster?.snapshot.nodes ?? []).find((x) => x.metadata?.name === nodes[0]);
      const ready = n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      const onNode = (input.cluster?.snapshot.pods ?? kube.pods).filter((p) => p.spec?.nodeName === nodes[0]);
      supporting.push({
        kind: 'object',
        summary: `node ${nodes[0]}${n ? `: ${ready ? 'Ready' : 'not Ready'}${n.spec?.unschedulable ? ', cordoned' : ', schedulable'}` : ''}; ${onNode.length} pod(s) bound there${pods.length ? `, ${pods.length} of ${t.name}'s affected` : ''}`,
        citation: objectCitation('Node', undefined, nodes[0]!, 'status.conditions'),
      });
    }
    const refuting: Evidence[] = [];
    if (metric?.high) supporting.push(metric.evidence);
    else if (metric && resource === 'file_descriptors' && metric.ratio !== undefined && metric.ratio < 0.5) refuting.push(metric.evidence);
    else if (metric) supporting.push(metric.evidence);

    const problem = resource === 'conntrack' && nodes.length === 1
      ? `the conntrack table of node ${nodes[0]} is full: new connections of ${t.name}'s pods there are dropped`
      : resource === 'ip_addresses' && nodes.length === 1
      ? `node ${nodes[0]} has no pod IP addresses left: ${pods.length || 'the'} ${t.name} pod(s) bound there never start`
      : `${t.name} runs out of ${LABEL[resource]}${pods.length ? ` in ${pods.length} pod${pods.length === 1 ? '' : 's'}` : ''}`;
    const { scope, affected } = servingScope(kube, problem);
    const others = nodeWide ? (input.cluster?.snapshot.pods ?? kube.namespacePods).filter((p) => p.spec?.nodeName === nodes[0] && !kube.pods.includes(p)) : [];
    const othersNote = nodeWide && others.length ? `; ${others.length} other pod${others.length === 1 ? ` on ${nodes[0]} shares` : `s on ${nodes[0]} share`} the table` : '';

    let status: Finding['status'];
    let confidence: number;
    if (refuting.length) {
      status = 'inconclusive';
      confidence = 0.4;
    } else if (repeats && near) {
      status = 'supported';
      confidence = metric?.high ? 0.9 : nodeWide || pods.length > 1 ? 0.86 : 0.84;
    } else if (repeats && !first && metric?.high) {
      status = 'supported';
      confidence = 0.8;
    } else {
      status = 'open';
      confidence = predates ? 0.3 : 0.5;
    }

    // A leak that began after a rollout came with it: the release that stopped closing descriptors
    // (or reusing connections, or reaping threads) fills the limit some time later, under load. The fix
    // is that release's undo; a restart only buys time.
    const leak = !nodeWide && LEAKS.has(resource) && (t.kind === 'Deployment' || t.kind === 'StatefulSet');
    const { current, previous } = revisions(kube);
    const release =
      leak && first && current?.createdAt && previous && first.getTime() >= current.createdAt.getTime() && first.getTime() - current.createdAt.getTime() <= DELAYED_EFFECT_MS ? { current, previous } : undefined;
    if (release) {
      Object.assign(facts, { revision: release.current.revision, previousRevision: release.previous.revision, changedAt: release.current.createdAt!.toISOString() });
      supporting.push(revisionEvidence(kube, release.current, onset, `${humanDuration(first!.getTime() - release.current.createdAt!.getTime())} before the first "${LABEL[resource]}" failure`));
    }
    const node = nodeWide ? (input.cluster?.snapshot.nodes ?? []).find((n) => n.metadata?.name === nodes[0]) : undefined;
    const mitigation: MitigationProposal | undefined =
      release && status === 'supported'
        ? undoProposal(kube, release.previous, `revision ${release.current.revision} came ${humanDuration(first!.getTime() - release.current.createdAt!.getTime())} before ${t.name} first ran out of ${LABEL[resource]} and nothing ran out before it: the leak came with it; undo to revision ${release.previous.revision} (a restart would only buy time until it fills again)`)
        :
      nodeWide && resource === 'ip_addresses' && status === 'supported' && node?.spec?.unschedulable !== true
        ? {
            action: 'cordon_node',
            // A Node has no namespace: the proposal carries the workload's, which the policy judges it by.
            target: { kind: 'Node', namespace: t.namespace, name: nodes[0]! },
            params: {},
            command: `kubectl cordon ${nodes[0]}`,
            rationale: `stop the scheduler placing more pods on ${nodes[0]}, which cannot give them an IP; the pods stuck there still need deleting so they land elsewhere (a human call), and the subnet needs addresses (prefix delegation, a larger or secondary subnet)`,
          }
        : !nodeWide && (resource === 'file_descriptors' || resource === 'ephemeral_ports') && (t.kind === 'Deployment' || t.kind === 'StatefulSet') && status === 'supported'
        ? {
            action: 'rollout_restart',
            target: workload,
            params: {},
            command: `kubectl rollout restart ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace}`,
            rationale: `new pods start with no ${resource === 'file_descriptors' ? 'open descriptors' : 'sockets in use'}: a restart releases the leaked ${resource === 'file_descriptors' ? 'file descriptors' : 'ports'} and buys time while the leak is fixed (it will fill again)`,
          }
        : undefined;

    const words = wordsOf(main.example, resource) ?? wordsOf(main.template, resource);
    const where = nodeWide ? `node ${nodes[0]}` : `${t.kind.toLowerCase()}/${t.name}${container ? ` (container ${container})` : ''}`;
    const mechanism =
      `${where[0]!.toUpperCase()}${where.slice(1)} ran out of ${LABEL[resource]}: "${clip(main.example || main.template, 180)}" ×${count}` +
      `${pods.length ? ` in ${pods.length} pod${pods.length === 1 ? '' : 's'}` : ''}${first ? ` since ${clockTime(first)} (${relativeToOnset(first, onset)})` : ''}` +
      (used !== undefined ? `, ${used} in use${limit !== undefined ? ` of ${limit}` : ''}` : limit !== undefined ? `, limit ${limit}` : '') +
      (metric?.ratio !== undefined && !refuting.length ? `; metrics show ${Math.round(metric.ratio * 100)}% of the limit in use` : '') +
      `. ${MEANING[resource][0]!.toUpperCase()}${MEANING[resource].slice(1)}` +
      (resource === 'conntrack' && !nodeWide && nodes.length > 1 ? `; it happens on ${nodes.length} nodes (${nodes.join(', ')}), so ${t.name}'s own connection churn fills the table` : '') +
      othersNote +
      (refuting.length ? `. But ${metric!.evidence.summary}, far from the limit, so the process that logs it may not be the one exporting the metric` : '') +
      (predates ? `. The errors began well before the alert, so they may be background` : '') +
      (!repeats ? `. Only ${count} line${count === 1 ? '' : 's'} so far` : '') +
      '.';

    return [
      {
        key: `${NAME}:${component.namespace ? `${component.namespace}/` : ''}${component.kind}/${component.name}`,
        analyzer: NAME,
        family: 'resource-exhaustion',
        status,
        confidence,
        title: `${nodeWide ? `node ${nodes[0]}` : t.name} out of ${LABEL[resource]}${words ? ` ("${clip(words, 70)}")` : ''}`,
        component,
        mechanism,
        scope: `${scope}${othersNote}`,
        affected: [workload, ...affected],
        facts,
        supporting,
        refuting,
        ...(mitigation ? { mitigation } : {}),
      },
    ];
  },
};
