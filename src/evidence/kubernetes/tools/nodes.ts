import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { apiPath, isoTime, KubeObjects, toFailure } from '../objects.js';
import { formatBytes, formatCpu, parseQuantity } from './quantity.js';
import { failure, kubeCitation, noData, success } from './result.js';

const parameters = z.object({
  labelSelector: z.string().optional().describe('e.g. topology.kubernetes.io/zone=eu-west-1a'),
});

const CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];

/** Sum of container requests (max of init containers, like the scheduler) per node, for pods still holding resources. */
export function requestsByNode(pods: V1Pod[]): Map<string, { cpu: number; memory: number; pods: number }> {
  const out = new Map<string, { cpu: number; memory: number; pods: number }>();
  for (const p of pods) {
    const node = p.spec?.nodeName;
    if (!node || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
    const sum = (key: 'cpu' | 'memory') => {
      const main = (p.spec?.containers ?? []).reduce((n, c) => n + (parseQuantity(c.resources?.requests?.[key] as string | undefined) ?? 0), 0);
      const init = Math.max(0, ...(p.spec?.initContainers ?? []).map((c) => parseQuantity(c.resources?.requests?.[key] as string | undefined) ?? 0));
      return Math.max(main, init);
    };
    const cur = out.get(node) ?? { cpu: 0, memory: 0, pods: 0 };
    cur.cpu += sum('cpu');
    cur.memory += sum('memory');
    cur.pods += 1;
    out.set(node, cur);
  }
  return out;
}

export function k8sNodesTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_nodes',
    description:
      'Nodes: Ready and pressure conditions with reasons, taints, cordons, kubelet version, allocatable against requested CPU/memory/pods.',
    onDemand: 'node conditions, taints, capacity against requests',
    parameters,
    effect: 'read',
    async execute(p, ctx) {
      const objects = new KubeObjects(reader);
      const info = KubeObjects.kind('Node');
      const citation = kubeCitation(`${apiPath(info)}${p.labelSelector ? `?labelSelector=${p.labelSelector}` : ''}`);
      let nodes: V1Node[];
      try {
        nodes = (await objects.list<V1Node>(info, { ...(p.labelSelector ? { labelSelector: p.labelSelector } : {}), limit: 1000 })).items;
      } catch (err) {
        return failure(citation, err, ctx, 'list', 'nodes');
      }
      if (nodes.length === 0) return noData(citation, 'no nodes');
      const gaps: string[] = [];
      let requests = new Map<string, { cpu: number; memory: number; pods: number }>();
      try {
        requests = requestsByNode((await objects.list<V1Pod>(KubeObjects.kind('Pod'), { limit: 5000 })).items);
      } catch (err) {
        gaps.push(`pod requests not summed: ${toFailure(err, 'list', 'pods').message}`);
      }
      const rows = nodes.map((n) => {
        const name = n.metadata?.name ?? '?';
        const alloc = n.status?.allocatable ?? {};
        const req = requests.get(name);
        const cpuA = parseQuantity(alloc['cpu'] as string | undefined);
        const memA = parseQuantity(alloc['memory'] as string | undefined);
        const pct = (a: number, b: number | undefined) => (b ? `${Math.round((a / b) * 100)}%` : '?');
        const conditions = (n.status?.conditions ?? [])
          .filter((c) => CONDITIONS.includes(c.type))
          .map((c) => ({ type: c.type, status: c.status, ...(c.reason ? { reason: c.reason } : {}), ...(isoTime(c.lastTransitionTime) ? { since: isoTime(c.lastTransitionTime) } : {}) }));
        const ready = conditions.find((c) => c.type === 'Ready');
        const problems = conditions.filter((c) => (c.type === 'Ready' ? c.status !== 'True' : c.status === 'True')).map((c) => `${c.type}=${c.status}`);
        return {
          name,
          ready: ready?.status ?? 'Unknown',
          ...(problems.length ? { problems } : {}),
          conditions,
          unschedulable: n.spec?.unschedulable ?? false,
          taints: (n.spec?.taints ?? []).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`),
          kubelet: n.status?.nodeInfo?.kubeletVersion,
          allocatable: { cpu: cpuA !== undefined ? formatCpu(cpuA) : undefined, memory: memA !== undefined ? formatBytes(memA) : undefined, pods: alloc['pods'] !== undefined ? String(alloc['pods']) : undefined },
          ...(req ? { requested: { cpu: `${formatCpu(req.cpu)} (${pct(req.cpu, cpuA)})`, memory: `${formatBytes(req.memory)} (${pct(req.memory, memA)})`, pods: req.pods } } : {}),
        };
      });
      const bad = rows.filter((r) => r.problems?.length || r.unschedulable);
      return success(citation, { nodes: rows, ...(gaps.length ? { gaps } : {}) }, ctx, [
        {
          kind: 'object',
          summary: `${rows.length} node(s); ${bad.length ? bad.map((r) => `${r.name}: ${[...(r.problems ?? []), ...(r.unschedulable ? ['cordoned'] : [])].join(', ')}`).join('; ') : 'all Ready, no pressure'}`,
          citation,
          observedAt: ctx.now,
        },
      ]);
    },
  };
}
