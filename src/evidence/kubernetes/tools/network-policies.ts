import type { V1NetworkPolicy, V1Pod } from '@kubernetes/client-node';
import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { networkPolicySummary } from '../describe.js';
import { apiPath, KubeObjects, labelSelectorMatches, toFailure } from '../objects.js';
import { failure, kubeCitation, noData, success } from './result.js';

const parameters = z.object({
  namespace: z.string().min(1).describe('Namespace.'),
});

export function k8sNetworkPoliciesTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_network_policies',
    description:
      'A namespace\'s NetworkPolicies as sentences (who may reach which pods on which ports, deny-all) and the pods each selects. For refused or timing-out traffic.',
    onDemand: 'who may reach which pods',
    parameters,
    effect: 'read',
    async execute(p, ctx) {
      const objects = new KubeObjects(reader);
      const info = KubeObjects.kind('NetworkPolicy');
      const citation = kubeCitation(apiPath(info, p.namespace));
      let policies: V1NetworkPolicy[];
      try {
        policies = (await objects.list<V1NetworkPolicy>(info, { namespace: p.namespace, limit: 500 })).items;
      } catch (err) {
        return failure(citation, err, ctx, 'list', 'networkpolicies.networking.k8s.io', p.namespace);
      }
      if (policies.length === 0) return noData(citation, `no NetworkPolicies in ${p.namespace}: all traffic is allowed unless a cluster-wide policy engine says otherwise`);
      const gaps: string[] = [];
      let pods: V1Pod[] = [];
      try {
        pods = (await objects.list<V1Pod>(KubeObjects.kind('Pod'), { namespace: p.namespace, limit: 1000 })).items;
      } catch (err) {
        gaps.push(`pods: ${toFailure(err, 'list', 'pods', p.namespace).message}`);
      }
      const rows = policies.map((np) => {
        const selected = pods.filter((pod) => labelSelectorMatches(np.spec?.podSelector ?? {}, pod.metadata?.labels)).map((pod) => pod.metadata?.name ?? '?');
        return { name: np.metadata?.name, ...networkPolicySummary(np), selectedPods: selected.slice(0, 50), selectedCount: selected.length };
      });
      return success(citation, { policies: rows, podsInNamespace: pods.length, ...(gaps.length ? { gaps } : {}) }, ctx, [
        { kind: 'object', summary: `${rows.length} NetworkPolicy(ies) in ${p.namespace}: ${rows.map((r) => `${String(r.name)} selects ${r.selectedCount} pod(s)`).join('; ')}`, citation, observedAt: ctx.now },
      ]);
    },
  };
}
