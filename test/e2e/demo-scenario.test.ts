import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, ALERT_CHANNEL, type World } from '../support/world.js';
import { acceptedPosts, DEMO_SCENARIO, threadText } from './helpers.js';

/**
 * The failure other agents got wrong: deployment/checkout scaled to 0 with `kubectl scale`, a Helm
 * history that invites blaming a rollback, and a crash-looping pod elsewhere. The first card must get it right.
 */
describe('demo scenario end to end: alert post → first card', () => {
  let world: World;
  let alertTs: string;

  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
    ({ ts: alertTs } = await world.postAlert());
    await world.settle();
  });
  afterAll(async () => world?.close());

  it('answers in the alert thread with a header card and a hypothesis board, nothing rejected', () => {
    const replies = world.slack.threadOf(ALERT_CHANNEL, alertTs).slice(1);
    expect(replies.length).toBe(2);
    expect(world.slack.rejections).toEqual([]);
    const [header, board] = threadText(world.slack, alertTs);
    expect(header).toMatch(/shop\/checkout/);
    expect(board).toMatch(/H1/);
  });

  it('cites the team skill it followed on the board, with its "find who did it" checks filled in for the target', () => {
    const board = threadText(world.slack, alertTs)[1] ?? '';
    expect(board).toContain('📘 Procedure for H1: A workload has no replicas (desired replicas 0) (`skills/workload-scaled-to-zero.md`)');
    expect(board).toContain('Follow-ups from the procedure');
    expect(board).toContain('`kubectl get deployment checkout -n shop --show-managed-fields -o yaml`');
    expect(board).toContain('--field-selector involvedObject.name=checkout');
  });

  it('names deployment/checkout in shop as the faulty component, scaled to 0 by kubectl scale, with evidence', async () => {
    const db = world.vigil!.db.prisma;
    const hyps = await db.hypothesis.findMany({ include: { evidence: true }, orderBy: { ordinal: 'asc' } });
    const h1 = hyps.find((h) => h.label === 'H1')!;
    expect(h1.status).toBe('supported');
    expect({ kind: h1.componentKind, ns: h1.componentNs, name: h1.componentName }).toEqual({ kind: 'Deployment', ns: 'shop', name: 'checkout' });
    expect(h1.mechanism).toMatch(/spec\.replicas = 0/);
    expect(h1.mechanism).toMatch(/kubectl scale/);
    expect(h1.mechanism).toMatch(/field manager `kubectl`/);
    const kinds = h1.evidence.map((e) => e.kind);
    expect(kinds).toContain('managed_fields');
    expect(kinds).toContain('endpoints');
    const mf = h1.evidence.find((e) => e.kind === 'managed_fields')!;
    expect(mf.citationRef).toMatch(/^apis\/apps\/v1\/namespaces\/shop\/deployments\/checkout#metadata\.managedFields\[\d+\]$/);
    expect(JSON.parse(mf.detail!)).toMatchObject({ manager: 'kubectl', subresource: 'scale' });
    // The time of the scale is the managedFields time, 13 s before the onset.
    const scaledAt = new Date(JSON.parse(mf.detail!).time as string).getTime();
    expect(world.scenario.onset.getTime() - scaledAt).toBe(13_000);
    expect(h1.evidence.some((e) => /ReplicaSet checkout-\S+: 0\/0 ready/.test(e.summary))).toBe(true);
  });

  it('states the scope: no ready endpoints, requests fail, storefront affected', async () => {
    const h1 = await world.vigil!.db.prisma.hypothesis.findFirstOrThrow({ where: { label: 'H1' } });
    expect(h1.scope).toMatch(/no ready endpoints/);
    expect(h1.scope).toMatch(/every request to checkout fails/);
    expect(h1.scope).toMatch(/storefront/);
  });

  it('rules out the Helm rollback/upgrade with why, and marks the other namespace crash loop unrelated', async () => {
    const hyps = await world.vigil!.db.prisma.hypothesis.findMany({ include: { evidence: true } });
    const helm = hyps.find((h) => h.analyzer === 'helm-release')!;
    expect(helm.status).toBe('ruled_out');
    expect(helm.reason).toMatch(/last Helm change 3 days ago/);
    expect(helm.reason).toMatch(/replicaCount 3/);
    expect(helm.evidence.every((e) => e.stance === 'refutes')).toBe(true);
    const payments = hyps.find((h) => h.componentNs === 'payments')!;
    expect(payments.status).toBe('unrelated');
    expect(payments.reason).toMatch(/no path from deployment\/checkout to it \(namespace payments\)/);
    // Nothing blames the noise: the only supported hypothesis is the scale-down.
    expect(hyps.filter((h) => h.status === 'supported').map((h) => h.componentName)).toEqual(['checkout']);
    // The old warning event is listed as unrelated too, not ignored silently.
    expect(hyps.some((h) => h.key.startsWith('noise:event:') && h.status === 'unrelated')).toBe(true);
  });

  it('proposes, and does not execute, kubectl scale deployment/checkout --replicas=3', async () => {
    const h1 = await world.vigil!.db.prisma.hypothesis.findFirstOrThrow({ where: { label: 'H1' } });
    expect(JSON.parse(h1.mitigation!)).toMatchObject({ action: 'scale', params: { replicas: 3 }, command: 'kubectl scale deployment/checkout -n shop --replicas=3' });
    const board = threadText(world.slack, alertTs)[1]!;
    expect(board).toContain('kubectl scale deployment/checkout -n shop --replicas=3');
    // Read-only: the reader made no write to the cluster.
    expect(world.kube.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    // The cluster is read once: Endpoints come from one cluster-wide list, not a GET per Service.
    expect(world.kube.requests.filter((r) => /^\/api\/v1\/endpoints$/.test(r.path))).toHaveLength(1);
    expect(world.kube.requests.filter((r) => /\/endpoints\/./.test(r.path))).toEqual([]);
  });

  it('renders the board with the ruled-out and unrelated hypotheses visible', () => {
    const board = threadText(world.slack, alertTs)[1]!;
    expect(board).toMatch(/ruled out/i);
    expect(board).toMatch(/unrelated/i);
    expect(board).toMatch(/payments-worker/);
    expect(board).toMatch(/managedFields/);
  });

  it('keeps everything in the database, audit included', async () => {
    const db = world.vigil!.db.prisma;
    expect(await db.incident.count()).toBe(1);
    const audit = await db.auditEvent.findMany({ orderBy: { id: 'asc' } });
    expect(audit.map((a) => a.kind)).toEqual(expect.arrayContaining(['incident.opened', 'triage.completed']));
    expect(acceptedPosts(world.slack).length).toBe(2);
  });
});
