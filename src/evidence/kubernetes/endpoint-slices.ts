import type * as k8s from '@kubernetes/client-node';

/**
 * Endpoints, completed from EndpointSlices: since Kubernetes 1.33 the v1 Endpoints API is deprecated and
 * clusters (or their mirroring settings) may serve only slices. A Service with slices and no Endpoints
 * object gets one built from them (ready → addresses, the rest → notReadyAddresses), so every reader of
 * `endpoints` sees the same backends the proxies do.
 */
export function withSlices(endpoints: k8s.V1Endpoints[], slices: k8s.V1EndpointSlice[]): k8s.V1Endpoints[] {
  const have = new Set(endpoints.map((e) => `${e.metadata?.namespace}/${e.metadata?.name}`));
  const bySvc = new Map<string, k8s.V1EndpointSlice[]>();
  for (const sl of slices) {
    const svc = sl.metadata?.labels?.['kubernetes.io/service-name'];
    const key = `${sl.metadata?.namespace}/${svc}`;
    if (!svc || have.has(key)) continue;
    bySvc.set(key, [...(bySvc.get(key) ?? []), sl]);
  }
  const built = [...bySvc.entries()].map(([key, group]): k8s.V1Endpoints => {
    const [namespace, name] = key.split('/') as [string, string];
    const address = (e: k8s.V1Endpoint) => (e.addresses ?? []).map((ip) => ({ ip, ...(e.nodeName ? { nodeName: e.nodeName } : {}), ...(e.targetRef ? { targetRef: e.targetRef } : {}) }));
    return {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { namespace, name },
      subsets: group.map((sl) => ({
        addresses: (sl.endpoints ?? []).filter((e) => e.conditions?.ready !== false).flatMap(address),
        notReadyAddresses: (sl.endpoints ?? []).filter((e) => e.conditions?.ready === false).flatMap(address),
        ports: (sl.ports ?? []).map((p) => ({ port: p.port ?? 0, ...(p.name ? { name: p.name } : {}), ...(p.protocol ? { protocol: p.protocol } : {}) })),
      })),
    };
  });
  return [...endpoints, ...built];
}
