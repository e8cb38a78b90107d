/**
 * An Ingress is served by the controller of its class: its config (a global ConfigMap named by a flag)
 * applies to every Ingress it serves, so the walk from an Ingress alert must reach it.
 */
import { describe, expect, it } from 'vitest';
import { configMapFlags } from '../../src/evidence/kubernetes/related.js';
import { buildTopology, ingressControllers, nodeId } from '../../src/topology/graph.js';
import { emptySnapshot } from '../../src/topology/snapshot.js';
import { walkFrom } from '../../src/topology/walk.js';

const controller = (name: string, ns: string, args: string[]) => ({
  metadata: { name, namespace: ns },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'controller', image: 'registry.k8s.io/ingress-nginx/controller:v1.11.2', args }] } } },
});
const NGINX_ARGS = ['/nginx-ingress-controller', '--controller-class=k8s.io/ingress-nginx', '--ingress-class=nginx', '--configmap=$(POD_NAMESPACE)/ingress-nginx-controller', '--tcp-services-configmap=$(POD_NAMESPACE)/tcp-services'];

function snapshot(ingressClass: string | undefined, deployments = [controller('ingress-nginx-controller', 'ingress-nginx', NGINX_ARGS)]) {
  const s = emptySnapshot();
  s.deployments = [...deployments, controller('media-api', 'media', [])] as never;
  s.services = [{ metadata: { name: 'media-api', namespace: 'media' }, spec: { selector: { app: 'media-api' } } }] as never;
  s.ingresses = [{ metadata: { name: 'uploads', namespace: 'media' }, spec: { ...(ingressClass ? { ingressClassName: ingressClass } : {}), rules: [{ host: 'up.example.com', http: { paths: [{ path: '/', backend: { service: { name: 'media-api' } } }] } }] } }] as never;
  return s;
}

describe('Ingress → the controller of its class', () => {
  it('reads the ConfigMaps a controller names by flag, in its own namespace only', () => {
    expect(configMapFlags({ args: NGINX_ARGS })).toEqual([
      { flag: '--configmap', name: 'ingress-nginx-controller' },
      { flag: '--tcp-services-configmap', name: 'tcp-services' },
    ]);
    expect(configMapFlags({ args: ['--configmap=other-ns/x', '--config=/etc/x'] })).toEqual([]);
  });

  it('links the Ingress to its controller and the controller to its ConfigMap, so the walk reaches both', () => {
    const t = buildTopology(snapshot('nginx'));
    const ctl = { kind: 'Deployment', namespace: 'ingress-nginx', name: 'ingress-nginx-controller' };
    expect(t.outgoing(nodeId({ kind: 'Ingress', namespace: 'media', name: 'uploads' })).find((e) => e.kind === 'served-by')?.to).toBe(nodeId(ctl));
    expect(t.outgoing(nodeId(ctl)).find((e) => e.kind === 'reads')).toMatchObject({ to: 'ConfigMap/ingress-nginx/ingress-nginx-controller', via: 'arg --configmap' });
    const walk = walkFrom([{ ref: { kind: 'Ingress', namespace: 'media', name: 'uploads' }, how: 'label ingress=uploads' }], t);
    expect(walk.reached.has(nodeId(ctl))).toBe(true);
    expect(walk.reached.has('ConfigMap/ingress-nginx/ingress-nginx-controller')).toBe(true);
  });

  it('matches by class flag; without a class only a single nginx controller; another class by its flag or not at all', () => {
    expect(ingressControllers(snapshot(undefined), undefined)).toEqual([{ kind: 'Deployment', namespace: 'ingress-nginx', name: 'ingress-nginx-controller' }]);
    const two = [controller('public', 'ingress-nginx', [...NGINX_ARGS.slice(0, 2), '--ingress-class=public']), controller('internal', 'ingress-nginx', [...NGINX_ARGS.slice(0, 2), '--ingress-class=internal'])];
    expect(ingressControllers(snapshot('internal', two), 'internal').map((r) => r.name)).toEqual(['internal']);
    expect(ingressControllers(snapshot(undefined, two), undefined)).toEqual([]);
    const traefik = [controller('traefik', 'traefik', ['--providers.kubernetesingress.ingressclass=traefik'])];
    expect(ingressControllers(snapshot('traefik', traefik), 'traefik').map((r) => r.name)).toEqual(['traefik']);
    expect(ingressControllers(snapshot('haproxy'), 'haproxy')).toEqual([]);
  });
});
