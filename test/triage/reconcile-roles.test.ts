/**
 * reconcileFindings on a small shop: an Ingress in front of frontend, which calls cart, which calls
 * redis; checkout calls cart too; every pod resolves through kube-dns. Findings are built by hand
 * (what the analyzers would say) so each reconcile rule is exercised on its own: victims' hypotheses
 * ruled out as consequences, open ones by time, two findings that explain each other, change-review
 * clearing an open twin, and the origin's scope reaching the callers of what its analyzer saw failing.
 * The change timeline comes from snapshotChanges (Helm writes, custom-kind edits) so clearances see the
 * citations the real timeline carries.
 */
import { describe, expect, it } from 'vitest';
import { snapshotChanges } from '../../src/changes/kubernetes.js';
import type { RankedChange } from '../../src/changes/types.js';
import type { ComponentRef } from '../../src/evidence/types.js';
import { buildTopology, nodeId } from '../../src/topology/graph.js';
import { emptySnapshot, type ClusterSnapshot, type CustomObject } from '../../src/topology/snapshot.js';
import type { Subject } from '../../src/topology/subjects.js';
import { walkFrom } from '../../src/topology/walk.js';
import { reconcileFindings, type ReconcileContext } from '../../src/triage/reconcile.js';
import type { Finding } from '../../src/triage/types.js';
import type { OtherAlert } from '../../src/triage/concurrent-alerts.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);
const iso = (min: number) => at(min).toISOString();

const meta = (name: string, namespace: string, extra: Record<string, unknown> = {}) => ({ name, namespace, uid: `uid-${namespace}-${name}`, ...extra });
const ref = (kind: string, name: string, namespace = 'shop'): ComponentRef => ({ kind, namespace, name });

function deployment(ns: string, name: string, env: Record<string, string> = {}, extraMeta: Record<string, unknown> = {}) {
  return {
    metadata: meta(name, ns, extraMeta),
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: `reg/${name}:1`, env: Object.entries(env).map(([k, value]) => ({ name: k, value })) }] } },
    },
  };
}
const service = (ns: string, name: string, app = name) => ({ metadata: meta(name, ns), spec: { selector: { app }, ports: [{ port: 8080 }] } });

function shop(over: (s: ClusterSnapshot) => void = () => {}): ClusterSnapshot {
  const s = emptySnapshot();
  s.readAt = at(1);
  s.namespaces = ['shop', 'kube-system'].map((n) => ({ metadata: { name: n } }));
  s.deployments = [
    deployment('shop', 'frontend', { CART_URL: 'http://cart:8080' }),
    deployment('shop', 'cart', { REDIS_ADDR: 'redis:6379' }),
    deployment('shop', 'redis'),
    deployment('shop', 'checkout', { CART_URL: 'http://cart.shop.svc:8080' }),
    deployment('kube-system', 'coredns'),
  ] as never;
  s.services = [service('shop', 'frontend'), service('shop', 'cart'), service('shop', 'redis'), service('shop', 'checkout'), service('kube-system', 'kube-dns', 'coredns')] as never;
  s.ingresses = [
    {
      metadata: meta('edge', 'shop'),
      spec: { rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/', backend: { service: { name: 'frontend', port: { number: 8080 } } } }] } }], tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] },
    },
  ] as never;
  over(s);
  return s;
}

const EDGE: Subject = { ref: ref('Ingress', 'edge'), how: 'probe URL https://shop.example.com/' };

function ctx(s: ClusterSnapshot, o: { subjects?: Subject[]; changes?: RankedChange[] } = {}): ReconcileContext {
  const topology = buildTopology(s);
  const subjects = o.subjects ?? [EDGE];
  return { topology, walk: walkFrom(subjects, topology), subjects, onset: ONSET, inputs: [], changes: o.changes ?? [] };
}

let n = 0;
function finding(analyzer: string, component: ComponentRef, o: Partial<Finding> = {}): Finding {
  n++;
  return {
    key: `${analyzer}:${component.namespace ?? ''}/${component.kind}/${component.name}`,
    analyzer,
    family: analyzer,
    status: 'supported',
    confidence: 0.85,
    title: `${component.name}: ${analyzer}`,
    component,
    mechanism: `${analyzer} on ${component.name}`,
    supporting: [{ kind: 'note', summary: `evidence ${n} for ${analyzer}`, citation: { source: 'kubernetes', ref: `ref-${analyzer}-${component.name}` } }],
    refuting: [],
    ...o,
  };
}

const byKey = (out: Finding[], key: string) => {
  const f = out.find((x) => x.key === key);
  if (!f) throw new Error(`no finding ${key} in ${out.map((x) => x.key).join(', ')}`);
  return f;
};

/** The origin of most cases: redis, OOM-killed since 11:50. */
const redisOom = () => finding('oom-killed', ref('Deployment', 'redis'), { confidence: 0.9, title: 'redis is OOM-killed', facts: { since: iso(-10) }, affected: [ref('Deployment', 'redis')] });

describe('reconcileFindings: victims of a deeper origin', () => {
  it('rules a victim\'s supported symptom out as a consequence, with the origin as refuting evidence, and keeps the origin', () => {
    const pool = finding('connection-pool', ref('Deployment', 'cart'), { confidence: 0.8, facts: { symptomStart: iso(-8) } });
    const out = reconcileFindings([redisOom(), pool], ctx(shop()));
    expect(out).toHaveLength(2);
    const origin = byKey(out, 'oom-killed:shop/Deployment/redis');
    expect(origin).toMatchObject({ status: 'supported', role: 'origin', confidence: 0.9 });
    const victim = byKey(out, pool.key);
    expect(victim.status).toBe('ruled_out');
    expect(victim.role).toBe('victim');
    expect(victim.reason!.startsWith('a consequence, not the cause: explained further down the path: redis is OOM-killed')).toBe(true);
    expect(victim.reason).toContain('(edge → frontend → cart → redis)');
    expect(victim.confidence).toBeLessThanOrEqual(0.25);
    expect(victim.refuting).toContainEqual({ kind: 'note', summary: 'deployment/redis: redis is OOM-killed', citation: { source: 'kubernetes', ref: 'ref-oom-killed-redis' } });
    expect(victim.path).toBe('edge → frontend → cart');
  });

  it('lets a workload that names its victims (a preemptor) explain their own findings, off the call path', () => {
    const batch = finding('preemption', ref('Job', 'backfill', 'batch'), { family: 'unschedulable', confidence: 0.95, facts: { victims: 'cart,checkout', changedAt: iso(-9) }, affected: [ref('Deployment', 'cart'), ref('Deployment', 'checkout')] });
    const cart = finding('unschedulable', ref('Deployment', 'cart'), { confidence: 0.93 });
    const out = reconcileFindings([cart, batch], ctx(shop((s) => (s.jobs = [{ metadata: meta('backfill', 'batch') }] as never))));
    expect(byKey(out, batch.key)).toMatchObject({ status: 'supported', role: 'origin' });
    expect(byKey(out, cart.key).status).toBe('ruled_out');
    // Naming is not enough: the victim must be in the cause's scope too.
    const loose = finding('preemption', ref('Job', 'backfill', 'batch'), { confidence: 0.95, facts: { victims: 'cart' }, affected: [] });
    expect(byKey(reconcileFindings([cart, loose], ctx(shop())), cart.key).status).toBe('supported');
  });

  it.each(['deploy-regression', 'config-change', 'helm-release', 'flag-flip'])('refutes a victim\'s change-blaming %s hypothesis (not "a consequence"), citing the deepest origin', (analyzer) => {
    // cart's own pool symptom is explained too: frontend's deploy is refuted by redis, the deepest cause, not by cart.
    const pool = finding('connection-pool', ref('Deployment', 'cart'), { confidence: 0.8, facts: { symptomStart: iso(-8) } });
    const deploy = finding(analyzer, ref('Deployment', 'frontend'), { confidence: 0.88, facts: { deployedAt: iso(-9), symptomStart: iso(-7) } });
    const out = reconcileFindings([deploy, pool, redisOom()], ctx(shop()));
    const f = byKey(out, deploy.key);
    expect(f).toMatchObject({ status: 'ruled_out', role: 'victim' });
    expect(f.confidence).toBeLessThanOrEqual(0.2);
    expect(f.reason).toMatch(/^explained further down the path: redis is OOM-killed/);
    expect(f.reason).not.toMatch(/consequence/);
    expect(f.refuting.map((e) => e.summary)).toEqual(['deployment/redis: redis is OOM-killed']);
    expect(byKey(out, 'oom-killed:shop/Deployment/redis')).toMatchObject({ status: 'supported', role: 'origin' });
    expect(out.filter((x) => x.role === 'origin').map((x) => x.key)).toEqual(['oom-killed:shop/Deployment/redis']);
  });

  it('does not explain a victim whose finding began well before the origin (it is its own origin)', () => {
    // frontend's deploy broke it at 11:30, twenty minutes before redis fell over: not redis's consequence.
    const deploy = finding('deploy-regression', ref('Deployment', 'frontend'), { facts: { deployedAt: iso(-30), symptomStart: iso(-29) } });
    const out = reconcileFindings([deploy, redisOom()], ctx(shop()));
    expect(byKey(out, deploy.key)).toMatchObject({ status: 'supported', role: 'origin' });
    expect(byKey(out, deploy.key).reason).toBeUndefined();
  });

  it('rules out an OPEN hypothesis on a victim that began after the origin, and leaves one that began earlier open', () => {
    const later = finding('load-spike', ref('Deployment', 'cart'), { status: 'open', confidence: 0.5, facts: { since: iso(-5) } });
    const earlier = finding('cpu-throttling', ref('Deployment', 'checkout'), { status: 'open', confidence: 0.5, facts: { limitedSince: iso(-40) } });
    const undated = finding('hpa-at-max', ref('Deployment', 'frontend'), { status: 'open', confidence: 0.5 });
    const out = reconcileFindings([redisOom(), later, earlier, undated], ctx(shop()));
    const l = byKey(out, later.key);
    expect(l.status).toBe('ruled_out');
    expect(l.reason).toMatch(/^a consequence, not the cause: explained further down the path: redis is OOM-killed/);
    expect(l.refuting.map((e) => e.summary)).toEqual(['deployment/redis: redis is OOM-killed']);
    expect(l.role).toBe('victim');
    const e = byKey(out, earlier.key);
    expect(e.status).toBe('open');
    expect(e.reason).toBeUndefined();
    expect(e.refuting).toEqual([]);
    expect(e.confidence).toBe(0.5);
    // Without a time of its own an open hypothesis is not dated after anything: it stays open.
    expect(byKey(out, undated.key)).toMatchObject({ status: 'open', confidence: 0.5 });
  });

  it('does not rule out an open hypothesis on a component that does not depend on the origin', () => {
    const s = shop((x) => {
      x.deployments.push(deployment('shop', 'reports') as never);
    });
    const unrelated = finding('load-spike', ref('Deployment', 'reports'), { status: 'open', confidence: 0.5, facts: { since: iso(-5) } });
    const out = reconcileFindings([redisOom(), unrelated], ctx(s));
    expect(byKey(out, unrelated.key)).toMatchObject({ status: 'open', confidence: 0.5 });
  });
});

describe('reconcileFindings: two findings that explain each other', () => {
  it('a Service finding beats the finding on the workload it selects, even when the workload\'s is stronger', () => {
    const svc = finding('endpoints-mismatch', ref('Service', 'cart'), { confidence: 0.7, facts: { changedAt: iso(-5) }, affected: [ref('Service', 'cart'), ref('Deployment', 'cart'), ref('Deployment', 'frontend')] });
    const probe = finding('failing-probe', ref('Deployment', 'cart'), { confidence: 0.95, facts: { since: iso(-4) } });
    const out = reconcileFindings([probe, svc], ctx(shop()));
    const s = byKey(out, svc.key);
    const p = byKey(out, probe.key);
    expect(s).toMatchObject({ status: 'supported', role: 'origin', confidence: 0.7 });
    expect(p.status).toBe('ruled_out');
    expect(p.reason).toMatch(/^a consequence, not the cause: explained further down the path: cart: endpoints-mismatch/);
    expect(out.filter((f) => f.status === 'ruled_out')).toHaveLength(1);
  });

  it('between two workloads that call each other, the higher confidence wins; never both ruled out', () => {
    const s = shop((x) => {
      x.deployments.push(deployment('shop', 'alpha', { BETA_URL: 'http://beta:8080' }) as never, deployment('shop', 'beta', { ALPHA_URL: 'http://alpha:8080' }) as never);
      x.services.push(service('shop', 'alpha') as never, service('shop', 'beta') as never);
    });
    const subjects: Subject[] = [{ ref: ref('Deployment', 'alpha'), how: 'label deployment=alpha' }];
    const run = (ca: number, cb: number) => {
      const a = finding('resource-exhaustion', ref('Deployment', 'alpha'), { confidence: ca });
      const b = finding('resource-exhaustion', ref('Deployment', 'beta'), { confidence: cb });
      const out = reconcileFindings([a, b], ctx(s, { subjects }));
      return { a: byKey(out, a.key), b: byKey(out, b.key) };
    };
    const one = run(0.8, 0.9);
    expect(one.b).toMatchObject({ status: 'supported', role: 'origin' });
    expect(one.a.status).toBe('ruled_out');
    expect(one.a.reason).toMatch(/^a consequence, not the cause: explained further down the path: beta: resource-exhaustion/);
    const two = run(0.9, 0.8);
    expect(two.a).toMatchObject({ status: 'supported', role: 'origin' });
    expect(two.b.status).toBe('ruled_out');
    // A tie is broken by key, deterministically: still exactly one origin.
    const tie = run(0.85, 0.85);
    expect([tie.a.status, tie.b.status].sort()).toEqual(['ruled_out', 'supported']);
    expect(tie.a.status).toBe('supported');
  });
});

const ranked = (s: ClusterSnapshot): RankedChange[] => snapshotChanges(s, at(-180)).map((c) => ({ ...c, score: 1, why: [] }));
const rollout = (name: string, min: number): RankedChange => ({
  at: at(min),
  actor: 'deployment-controller',
  kind: 'rollout',
  target: ref('Deployment', name),
  source: 'kubernetes',
  summary: `rollout of ${name} to revision 7 (pod template changed)`,
  citation: { source: 'kubernetes', ref: `apis/apps/v1/namespaces/shop/replicasets/${name}-7c9d` },
  score: 0.9,
  why: [],
});

describe('reconcileFindings: change-review and open twins', () => {
  it('clears an open change-blaming twin of a cleared change instead of adding a duplicate (both twins)', () => {
    const deploy = finding('deploy-regression', ref('Deployment', 'frontend'), { family: 'deploy-regression', status: 'open', confidence: 0.5 });
    const helm = finding('helm-release', ref('Deployment', 'frontend'), { family: 'deploy-regression', status: 'open', confidence: 0.45, key: 'helm-release:shop/frontend' });
    const out = reconcileFindings([redisOom(), deploy, helm], ctx(shop(), { changes: [rollout('frontend', -12)] }));
    expect(out).toHaveLength(3);
    expect(out.some((f) => f.analyzer === 'change-review')).toBe(false);
    for (const key of [deploy.key, helm.key]) {
      const f = byKey(out, key);
      expect(f.status).toBe('ruled_out');
      expect(f.confidence).toBeLessThanOrEqual(0.1);
      expect(f.reason).toBe('the cause is elsewhere: redis is OOM-killed');
      expect(f.refuting[0]).toMatchObject({ kind: 'change', citation: { ref: 'apis/apps/v1/namespaces/shop/replicasets/frontend-7c9d' } });
      expect(f.refuting.some((e) => e.summary.startsWith('the origin: '))).toBe(true);
    }
  });

  it('adds a change-review finding when no open twin exists, and leaves a twin of another family alone', () => {
    const flag = finding('flag-flip', ref('Deployment', 'frontend'), { family: 'flag-flip', status: 'open', confidence: 0.5 });
    const out = reconcileFindings([redisOom(), flag], ctx(shop(), { changes: [rollout('frontend', -12)] }));
    expect(byKey(out, flag.key)).toMatchObject({ status: 'open', confidence: 0.5 });
    expect(byKey(out, 'cleared:deploy-regression:Deployment/shop/frontend')).toMatchObject({
      analyzer: 'change-review',
      family: 'deploy-regression',
      status: 'ruled_out',
      component: ref('Deployment', 'frontend'),
      reason: 'the cause is elsewhere: redis is OOM-killed',
      facts: { changedAt: iso(-12), change: 'rollout' },
    });
  });

  it('says a change came after the fault when it did', () => {
    const out = reconcileFindings([redisOom()], ctx(shop(), { changes: [rollout('frontend', -3)] }));
    expect(byKey(out, 'cleared:deploy-regression:Deployment/shop/frontend').reason).toBe('it came at 11:57:00, after the fault had begun (11:50:00)');
  });
});

describe('clearances: which object a change is about', () => {
  const helmWrite = (min: number) => ({ manager: 'helm', operation: 'Update', time: at(min), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:template': {} } } });
  const release = { annotations: { 'meta.helm.sh/release-name': 'shop-stack' } };

  it('a Helm write that cites deployments/<name> clears that workload, not the release\'s first Deployment', () => {
    const s = shop((x) => {
      // One upgrade wrote both frontend (the release's first Deployment) and cart.
      x.deployments[0] = deployment('shop', 'frontend', { CART_URL: 'http://cart:8080' }, { ...release, managedFields: [helmWrite(-20)] }) as never;
      x.deployments[1] = deployment('shop', 'cart', { REDIS_ADDR: 'redis:6379' }, { ...release, managedFields: [helmWrite(-20)] }) as never;
    });
    const changes = ranked(s);
    expect(changes.map((c) => [c.kind, c.target.kind, c.target.name, c.citation.ref])).toEqual([
      ['helm_upgrade', 'HelmRelease', 'shop-stack', 'apis/apps/v1/namespaces/shop/deployments/frontend#metadata.managedFields'],
      ['helm_upgrade', 'HelmRelease', 'shop-stack', 'apis/apps/v1/namespaces/shop/deployments/cart#metadata.managedFields'],
    ]);
    const out = reconcileFindings([redisOom()], ctx(s, { changes }));
    const cleared = out.filter((f) => f.analyzer === 'change-review');
    expect(cleared.map((f) => f.key).sort()).toEqual(['cleared:deploy-regression:Deployment/shop/cart', 'cleared:deploy-regression:Deployment/shop/frontend']);
    expect(byKey(out, 'cleared:deploy-regression:Deployment/shop/cart')).toMatchObject({ component: ref('Deployment', 'cart'), status: 'ruled_out', facts: { change: 'helm_upgrade', manager: 'helm' } });
  });

  it('a Helm write of only the second Deployment clears that one', () => {
    const s = shop((x) => {
      x.deployments[0] = deployment('shop', 'frontend', { CART_URL: 'http://cart:8080' }, { ...release, managedFields: [helmWrite(-400)] }) as never;
      x.deployments[1] = deployment('shop', 'cart', { REDIS_ADDR: 'redis:6379' }, { ...release, managedFields: [helmWrite(-20)] }) as never;
    });
    const out = reconcileFindings([redisOom()], ctx(s, { changes: ranked(s) }));
    expect(out.filter((f) => f.analyzer === 'change-review').map((f) => f.key)).toEqual(['cleared:deploy-regression:Deployment/shop/cart']);
  });

  it('edits of VirtualServices, DestinationRules and Certificates are cleared as mesh-misconfig and tls-certificate', () => {
    const edit = (min: number) => [{ manager: 'kubectl-edit', operation: 'Update', time: at(min), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:http': {} } } }];
    const custom = (kind: string, apiVersion: string, name: string, spec: Record<string, unknown>, min: number): CustomObject => ({ apiVersion, kind, metadata: { name, namespace: 'shop', managedFields: edit(min) as never }, spec });
    const s = shop((x) => {
      x.custom = {
        VirtualService: [custom('VirtualService', 'networking.istio.io/v1', 'cart', { hosts: ['cart'], http: [{ route: [{ destination: { host: 'cart' } }] }] }, -30)],
        DestinationRule: [custom('DestinationRule', 'networking.istio.io/v1', 'redis', { host: 'redis' }, -35)],
        Certificate: [custom('Certificate', 'cert-manager.io/v1', 'shop-tls', { secretName: 'shop-tls', issuerRef: { name: 'letsencrypt', kind: 'ClusterIssuer' } }, -40)],
      };
    });
    const changes = ranked(s);
    expect(changes.map((c) => `${c.kind} ${c.target.kind}/${c.target.name}`).sort()).toEqual(['edit Certificate/shop-tls', 'edit DestinationRule/redis', 'edit VirtualService/cart']);
    const out = reconcileFindings([redisOom()], ctx(s, { changes }));
    const cleared = Object.fromEntries(out.filter((f) => f.analyzer === 'change-review').map((f) => [nodeId(f.component!), [f.family, f.key, f.status]]));
    expect(cleared).toEqual({
      'VirtualService/shop/cart': ['mesh-misconfig', 'cleared:mesh-misconfig:VirtualService/shop/cart', 'ruled_out'],
      'DestinationRule/shop/redis': ['mesh-misconfig', 'cleared:mesh-misconfig:DestinationRule/shop/redis', 'ruled_out'],
      'Certificate/shop/shop-tls': ['tls-certificate', 'cleared:tls-certificate:Certificate/shop/shop-tls', 'ruled_out'],
    });
  });
});

describe('reconcileFindings: the origin\'s scope', () => {
  // CoreDNS failing: the graph says nothing depends on kube-dns for scope (DNS is everyone's), so the
  // scope comes from the workloads the analyzer saw failing, and reaches their callers and front door.
  const dns = (affected: ComponentRef[]) =>
    finding('dns-failure', ref('Deployment', 'coredns', 'kube-system'), { confidence: 0.9, title: 'CoreDNS cannot reach its upstream', facts: { since: iso(-6) }, affected });

  it('includes the callers and front doors of the workloads in the analyzer\'s own affected list', () => {
    const [f] = reconcileFindings([dns([ref('Deployment', 'cart')])], ctx(shop()));
    expect(f).toMatchObject({ status: 'supported', role: 'origin' });
    const ids = f!.affected!.map(nodeId);
    expect(ids[0]).toBe('Deployment/shop/cart');
    expect(ids).toEqual(expect.arrayContaining(['Service/shop/cart', 'Deployment/shop/frontend', 'Deployment/shop/checkout', 'Service/shop/frontend', 'Service/shop/checkout', 'Ingress/shop/edge']));
    // redis is what cart calls, not what depends on it.
    expect(ids).not.toContain('Deployment/shop/redis');
  });

  it('without a failing workload in the analyzer\'s list, the callers of cart are not in scope', () => {
    const [f] = reconcileFindings([dns([])], ctx(shop()));
    const ids = f!.affected!.map(nodeId);
    expect(ids).not.toContain('Deployment/shop/checkout');
    expect(ids).not.toContain('Service/shop/cart');
  });
});

describe('reconcileFindings: a full connection pool is explained only by what is behind it', () => {
  it('keeps cart\'s pool an origin when only an HTTP callee erred first, and lets the store behind it explain it', () => {
    // cart calls redis (a store) and, here, checkout over HTTP; checkout's small error rise started first.
    const s = shop((x) => {
      (x.deployments as unknown as ReturnType<typeof deployment>[])[1] = deployment('shop', 'cart', { REDIS_ADDR: 'redis:6379', CHECKOUT_URL: 'http://checkout:8080' });
    });
    const pool = finding('dependency-degraded', ref('Deployment', 'cart'), { confidence: 0.9, family: 'connection-pool-exhaustion', facts: { metric: 'db_pool_saturation', since: iso(-5) } });
    const callee = finding('deploy-regression', ref('Deployment', 'checkout'), { confidence: 0.84, facts: { deployedAt: iso(-11), symptomStart: iso(-7) } });
    const out = reconcileFindings([pool, callee], ctx(s));
    expect(byKey(out, pool.key)).toMatchObject({ status: 'supported', role: 'origin' });
    // The store behind the pool does explain it.
    const slowRedis = finding('database-degraded', ref('Deployment', 'redis'), { confidence: 0.8, family: 'database-degraded', facts: { since: iso(-9) } });
    const out2 = reconcileFindings([pool, slowRedis], ctx(s));
    expect(byKey(out2, pool.key)).toMatchObject({ status: 'ruled_out', role: 'victim' });
    expect(byKey(out2, slowRedis.key)).toMatchObject({ status: 'supported', role: 'origin' });
  });
});

describe('reconcileFindings: other alerts near the onset', () => {
  const alertOn = (labels: Record<string, string>, minutes: number): OtherAlert => ({
    alert: { source: 'alertmanager', status: 'firing', title: `[FIRING:1] ${labels['alertname']}`, alertName: labels['alertname']!, labels, labelValues: [], annotations: {}, count: 1, text: '' },
    firedAt: at(minutes),
    citation: { source: 'slack', ref: `slack:C0WARN/${minutes}` },
  });
  const withRecs = () =>
    shop((x) => {
      (x.deployments as unknown as ReturnType<typeof deployment>[])[0] = deployment('shop', 'frontend', { CART_URL: 'http://cart:8080', RECS_URL: 'http://recs:8080' });
      (x.deployments as unknown as ReturnType<typeof deployment>[]).push(deployment('shop', 'recs'), deployment('ops', 'batch'));
      (x.services as unknown as ReturnType<typeof service>[]).push(service('shop', 'recs'));
    });

  it('raises each one it can place and clears it: off the origin\'s path, or with no path at all', () => {
    const others = [
      alertOn({ alertname: 'MemcachedEvictionsHigh', namespace: 'shop', pod: 'recs-7c9d8f6b5-x2x9z' }, -22),
      alertOn({ alertname: 'JobFailed', namespace: 'ops', deployment: 'batch' }, -40),
      alertOn({ alertname: 'CartLatencyHigh', namespace: 'shop', service: 'cart' }, -2), // a victim of redis: not a separate problem
      alertOn({ alertname: 'DnsErrors', namespace: 'kube-system', deployment: 'coredns' }, -5), // redis depends on it: may be the cause
      alertOn({ alertname: 'TooOld', namespace: 'shop', service: 'recs' }, -400), // outside the window
    ];
    const out = reconcileFindings([redisOom()], { ...ctx(withRecs()), otherAlerts: others });
    const cleared = out.filter((f) => f.analyzer === 'alert-review');
    expect(cleared.map((f) => [f.component!.name, f.status])).toEqual([
      ['recs', 'ruled_out'],
      ['batch', 'unrelated'],
    ]);
    expect(cleared[0]!.reason).toBe('deployment/redis (the origin) does not depend on deployment/recs; its alert is a separate problem');
    expect(cleared[0]!.refuting[0]).toMatchObject({ summary: 'MemcachedEvictionsHigh fired at 11:38:00 (22 min before this alert)', citation: { ref: 'slack:C0WARN/-22' } });
    expect(cleared[1]!.reason).toBe('no path from edge to deployment/batch');
    expect(byKey(out, 'oom-killed:shop/Deployment/redis')).toMatchObject({ status: 'supported', role: 'origin' });
  });

  it('clears nothing while no origin is found: another alert may be the cause', () => {
    const open = finding('oom-killed', ref('Deployment', 'redis'), { status: 'open', confidence: 0.4 });
    const out = reconcileFindings([open], { ...ctx(withRecs()), otherAlerts: [alertOn({ alertname: 'X', namespace: 'ops', deployment: 'batch' }, -10)] });
    expect(out.filter((f) => f.analyzer === 'alert-review')).toEqual([]);
  });
});

describe('reconcileFindings: consequences an origin names', () => {
  it('rules out the shared infrastructure an origin overloads (the cluster DNS a lookup storm throttles), though it does not depend on it', () => {
    const storm = finding('dns-search-path', ref('Deployment', 'cart'), { confidence: 0.9, facts: { changedAt: iso(-20) }, consequences: [ref('Deployment', 'coredns', 'kube-system')] });
    const throttled = finding('cpu-throttling', ref('Deployment', 'coredns', 'kube-system'), { status: 'open', confidence: 0.6 });
    const out = reconcileFindings([storm, throttled], ctx(shop()));
    expect(byKey(out, storm.key)).toMatchObject({ status: 'supported', role: 'origin' });
    expect(byKey(out, throttled.key)).toMatchObject({ status: 'ruled_out' });
    expect(byKey(out, throttled.key).reason).toMatch(/^a consequence, not the cause: explained further down the path: cart: dns-search-path/);
  });
});

describe('reconcileFindings: an edge fault reaches the Services behind the Ingresses it serves', () => {
  it('a controller-wide ConfigMap edit has the Ingresses it serves and their backend Services in scope', () => {
    const s = shop((x) => {
      x.namespaces.push({ metadata: { name: 'ingress-nginx' } });
      x.deployments.push({
        metadata: meta('ingress-nginx-controller', 'ingress-nginx'),
        spec: { selector: { matchLabels: { app: 'ingress-nginx' } }, template: { metadata: { labels: { app: 'ingress-nginx' } }, spec: { containers: [{ name: 'controller', args: ['/nginx-ingress-controller', '--configmap=$(POD_NAMESPACE)/ingress-nginx-controller'], volumeMounts: [] }], volumes: [{ name: 'cfg', configMap: { name: 'ingress-nginx-controller' } }] } } },
      } as never);
    });
    const controller = ref('Deployment', 'ingress-nginx-controller', 'ingress-nginx');
    const edit = finding('config-change', ref('ConfigMap', 'ingress-nginx-controller', 'ingress-nginx'), { facts: { changedAt: iso(-14) }, affected: [controller] });
    const [out] = reconcileFindings([edit], ctx(s));
    expect(out!.affected).toContainEqual(ref('Ingress', 'edge'));
    expect(out!.affected).toEqual(expect.arrayContaining([ref('Ingress', 'edge'), ref('Service', 'frontend')]));
  });
});

describe('reconcileFindings: the culprit\'s own failing pods are never noise', () => {
  const podNoise = (since: Date) =>
    finding('background-noise', ref('Pod', 'redis-7d9f-abcde'), {
      key: 'noise:pod:shop/redis-7d9f-abcde',
      status: 'unrelated',
      confidence: 0.02,
      reason: 'failing since …, 17 min before the alert',
      supporting: [],
      refuting: [{ kind: 'object', summary: 'Pod shop/redis-7d9f-abcde is CrashLoopBackOff', citation: { source: 'kubernetes', ref: 'p' }, observedAt: since }],
    });
  it('drops an "unrelated" pod of the origin that began failing near the onset, keeps one failing for hours', () => {
    const s = shop((x) => {
      x.replicaSets = [{ metadata: { name: 'redis-7d9f', namespace: 'shop', ownerReferences: [{ kind: 'Deployment', name: 'redis', controller: true }] } }] as never;
      x.pods = [{ metadata: { name: 'redis-7d9f-abcde', namespace: 'shop', labels: { app: 'redis' }, ownerReferences: [{ kind: 'ReplicaSet', name: 'redis-7d9f', controller: true }] }, spec: { containers: [{ name: 'redis' }] } }] as never;
    });
    expect(reconcileFindings([redisOom(), podNoise(at(-17))], ctx(s)).map((f) => f.key)).toEqual(['oom-killed:shop/Deployment/redis']);
    expect(reconcileFindings([redisOom(), podNoise(at(-180))], ctx(s)).map((f) => f.key)).toContain('noise:pod:shop/redis-7d9f-abcde');
  });
});

describe('reconcileFindings: what the origin cites as its evidence is not noise', () => {
  it('drops an "unrelated" Job the origin names as holding the lock, keeps an unrelated one it does not cite', () => {
    const jobRef = 'apis/batch/v1/namespaces/shop/jobs/migrate-7d41c9e#status';
    const db = finding('database-degraded', ref('Deployment', 'redis'), {
      facts: { since: iso(-12) },
      supporting: [
        { kind: 'log', summary: 'still waiting for AccessShareLock', citation: { source: 'kubernetes', ref: 'api/v1/namespaces/shop/pods/redis-0#log?container=redis' } },
        { kind: 'object', summary: 'job migrate-7d41c9e is running', citation: { source: 'kubernetes', ref: jobRef } },
      ],
    });
    const jobNoise = (name: string, cite: string) =>
      finding('background-noise', ref('Job', name), { key: `noise:job:shop/${name}`, status: 'unrelated', confidence: 0.05, reason: 'no path', supporting: [], refuting: [{ kind: 'object', summary: `job ${name} running`, citation: { source: 'kubernetes', ref: cite } }] });
    const out = reconcileFindings([db, jobNoise('migrate-7d41c9e', jobRef.replace('#status', '')), jobNoise('report-1', 'apis/batch/v1/namespaces/shop/jobs/report-1#status')], ctx(shop()));
    expect(out.map((f) => f.key)).toEqual(['database-degraded:shop/Deployment/redis', 'noise:job:shop/report-1']);
  });
});

describe('reconcileFindings: a victim\'s deploy is judged by when it began to hurt', () => {
  it('a deploy 20 min old whose errors began 6 min ago is explained by a cause that changed 14 min ago', () => {
    const cause = finding('oom-killed', ref('Deployment', 'redis'), { facts: { changedAt: iso(-14) } });
    const deploy = finding('deploy-regression', ref('Deployment', 'cart'), { facts: { deployedAt: iso(-20), symptomStart: iso(-6) } });
    const out = reconcileFindings([cause, deploy], ctx(shop()));
    expect(byKey(out, deploy.key)).toMatchObject({ status: 'ruled_out', role: 'victim' });
    // Without a symptom time, the deploy's own time decides: it came first, so it is not explained.
    const early = finding('deploy-regression', ref('Deployment', 'cart'), { key: 'early', facts: { deployedAt: iso(-20) } });
    expect(byKey(reconcileFindings([cause, early], ctx(shop())), 'early').status).toBe('supported');
  });
});

describe('reconcileFindings: load on the origin\'s own workload is its consequence', () => {
  it('rules out an unsure CPU-throttling finding on the workload whose readiness probe is the origin', () => {
    const probe = finding('failing-probe', ref('Deployment', 'cart'), { facts: { changedAt: iso(-24) } });
    const throttled = finding('cpu-throttling', ref('Deployment', 'cart'), { status: 'inconclusive', confidence: 0.45 });
    const out = reconcileFindings([probe, throttled], ctx(shop()));
    expect(byKey(out, throttled.key)).toMatchObject({ status: 'ruled_out' });
    expect(byKey(out, throttled.key).reason).toContain('a consequence, not the cause');
    // Throttling that plainly began long before the origin stays as it was.
    const older = finding('cpu-throttling', ref('Deployment', 'cart'), { key: 'older', status: 'inconclusive', confidence: 0.45, facts: { since: iso(-300) } });
    expect(byKey(reconcileFindings([probe, older], ctx(shop())), 'older').status).toBe('inconclusive');
  });
});
