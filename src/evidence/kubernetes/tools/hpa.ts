import type { V2HorizontalPodAutoscaler } from '@kubernetes/client-node';
import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { hpaSummary } from '../describe.js';
import { apiPath, KubeObjects } from '../objects.js';
import { failure, kubeCitation, noData, success } from './result.js';

const parameters = z.object({
  namespace: z.string().min(1).describe('Namespace.'),
  name: z.string().optional().describe('Omit for every HPA in the namespace.'),
});

export function k8sHpaTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_hpa',
    description:
      'HorizontalPodAutoscalers: target, min/max/current/desired replicas (pinned at max?), each metric against its target, and conditions with reasons.',
    onDemand: 'autoscalers: replicas, metrics against targets',
    parameters,
    effect: 'read',
    async execute(p, ctx) {
      const info = KubeObjects.kind('HorizontalPodAutoscaler');
      const citation = kubeCitation(apiPath(info, p.namespace, p.name));
      const objects = new KubeObjects(reader);
      try {
        const hpas = p.name ? [await objects.get<V2HorizontalPodAutoscaler>(info, p.namespace, p.name)] : (await objects.list<V2HorizontalPodAutoscaler>(info, { namespace: p.namespace, limit: 200 })).items;
        if (hpas.length === 0) return noData(citation, `no HorizontalPodAutoscalers in ${p.namespace}`);
        const rows = hpas.map((h) => ({ name: h.metadata?.name, ...hpaSummary(h) }));
        const evidence = rows.map((r) => ({
          kind: 'object' as const,
          summary: `HPA ${p.namespace}/${String(r.name)} → ${r.target}: ${r.currentReplicas} current, ${r.desiredReplicas} desired, range ${r.minReplicas}-${r.maxReplicas ?? '?'}${r.atMax ? ' (at max)' : ''}`,
          citation: kubeCitation(apiPath(info, p.namespace, String(r.name))),
          observedAt: ctx.now,
        }));
        return success(citation, { hpas: rows }, ctx, evidence);
      } catch (err) {
        return failure(citation, err, ctx, p.name ? 'get' : 'list', 'horizontalpodautoscalers.autoscaling', p.namespace);
      }
    },
  };
}
