import type { V1Endpoints, V1Pod, V1Service } from '@kubernetes/client-node';
import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { apiPath, KubeObjects, toFailure } from '../objects.js';
import { failure, kubeCitation, success } from './result.js';

const parameters = z.object({
  namespace: z.string().min(1).describe('Namespace.'),
  service: z.string().min(1).describe('Service.'),
});

function podReady(p: V1Pod): boolean {
  return (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Pods that match some but not all of the selector: the usual sign of a label typo or a relabelled rollout. */
export function nearMisses(selector: Record<string, string>, pods: V1Pod[]): { pod: string; mismatched: string[] }[] {
  const keys = Object.entries(selector);
  return pods
    .map((p) => {
      const labels = p.metadata?.labels ?? {};
      const mismatched = keys.filter(([k, v]) => labels[k] !== v).map(([k, v]) => `${k}: wants "${v}", pod has ${labels[k] === undefined ? 'none' : `"${labels[k]}"`}`);
      return { pod: p.metadata?.name ?? '?', mismatched, matched: keys.length - mismatched.length };
    })
    .filter((m) => m.matched > 0 && m.mismatched.length > 0)
    .slice(0, 10)
    .map(({ pod, mismatched }) => ({ pod, mismatched }));
}

export function k8sEndpointsTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_endpoints',
    description:
      'Whether a Service has backends: selector, ports, ready and not-ready endpoints, the pods it selects, and near-miss pods whose labels differ. For connection refused or 503.',
    onDemand: 'a Service\'s backends and selector near-misses',
    parameters,
    effect: 'read',
    async execute(p, ctx) {
      const objects = new KubeObjects(reader);
      const svcInfo = KubeObjects.kind('Service');
      const citation = kubeCitation(apiPath(svcInfo, p.namespace, p.service));
      let svc: V1Service;
      try {
        svc = await objects.get<V1Service>(svcInfo, p.namespace, p.service);
      } catch (err) {
        return failure(citation, err, ctx, 'get', 'services', p.namespace);
      }
      const gaps: string[] = [];
      const epInfo = KubeObjects.kind('Endpoints');
      let endpoints: V1Endpoints | undefined;
      try {
        endpoints = await objects.get<V1Endpoints>(epInfo, p.namespace, p.service);
      } catch (err) {
        const f = toFailure(err, 'get', 'endpoints', p.namespace);
        if (f.status !== 404) gaps.push(`endpoints: ${f.message}`);
      }
      let pods: V1Pod[] = [];
      try {
        pods = (await objects.list<V1Pod>(KubeObjects.kind('Pod'), { namespace: p.namespace, limit: 1000 })).items;
      } catch (err) {
        gaps.push(`pods: ${toFailure(err, 'list', 'pods', p.namespace).message}`);
      }
      const selector = svc.spec?.selector;
      const matching = selector && Object.keys(selector).length ? pods.filter((pod) => Object.entries(selector).every(([k, v]) => pod.metadata?.labels?.[k] === v)) : [];
      const addr = (a: { ip: string; nodeName?: string; targetRef?: { kind?: string; name?: string } }) => ({ ip: a.ip, ...(a.targetRef?.name ? { target: `${a.targetRef.kind ?? 'Pod'}/${a.targetRef.name}` } : {}), ...(a.nodeName ? { node: a.nodeName } : {}) });
      const subsets = endpoints?.subsets ?? [];
      const ready = subsets.flatMap((s) => (s.addresses ?? []).map(addr));
      const notReady = subsets.flatMap((s) => (s.notReadyAddresses ?? []).map(addr));
      const data = {
        service: p.service,
        type: svc.spec?.type ?? 'ClusterIP',
        clusterIP: svc.spec?.clusterIP,
        selector: selector ?? null,
        ports: (svc.spec?.ports ?? []).map((x) => `${x.name ? `${x.name} ` : ''}${x.port}→${x.targetPort ?? x.port}/${x.protocol ?? 'TCP'}`),
        endpointsObject: endpoints ? 'present' : 'absent',
        readyAddresses: ready,
        notReadyAddresses: notReady,
        endpointPorts: [...new Set(subsets.flatMap((s) => (s.ports ?? []).map((x) => `${x.name ? `${x.name} ` : ''}${x.port}/${x.protocol ?? 'TCP'}`)))],
        matchingPods: matching.map((pod) => ({ name: pod.metadata?.name, phase: pod.status?.phase, ready: podReady(pod), ip: pod.status?.podIP })),
        selectorMatchesPods: matching.length > 0,
        ...(selector && Object.keys(selector).length && matching.length === 0 ? { nearMisses: nearMisses(selector, pods) } : {}),
        ...(!selector || Object.keys(selector).length === 0 ? { note: 'Service has no selector: endpoints are managed by hand or by another controller' } : {}),
        ...(gaps.length ? { gaps } : {}),
      };
      const summary = `Service ${p.namespace}/${p.service}: ${ready.length} ready, ${notReady.length} not-ready endpoint(s); ${matching.length} pod(s) match its selector`;
      return success(citation, data, ctx, [{ kind: 'endpoints', summary, citation: kubeCitation(apiPath(epInfo, p.namespace, p.service)), observedAt: ctx.now }]);
    },
  };
}
