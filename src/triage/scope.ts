import type { KubeEvidence } from '../evidence/kubernetes/gather.js';
import type { ComponentRef } from '../evidence/types.js';

/**
 * Who is affected when the target fails: its Services, then the workloads that call it, then the
 * Ingresses in front of those Services. Analyzers start their `affected` list from here.
 */
export function scopeRefs(kube: KubeEvidence): ComponentRef[] {
  const ns = kube.target?.namespace;
  const services = kube.services.map(({ service }) => service.metadata?.name ?? '?');
  return [
    ...services.map((name) => ({ kind: 'Service', namespace: ns, name })),
    ...kube.dependents.map((d) => ({ kind: d.kind, namespace: ns, name: d.name })),
    ...kube.ingresses
      .filter((i) => (i.spec?.rules ?? []).some((r) => (r.http?.paths ?? []).some((p) => services.includes(p.backend?.service?.name ?? ''))))
      .map((i) => ({ kind: 'Ingress', namespace: ns, name: i.metadata?.name ?? '?' })),
  ];
}
