/**
 * Two replicas on one database never run one investigation at the same time: the lease is renewed
 * while a slow step runs (so the other replica cannot claim it), and a replica that lost its lease
 * drops its step instead of writing over the one that took over. Two real Vigil instances share one
 * store (SQLite; PostgreSQL too when VIGIL_TEST_DATABASE_URL is set); Kubernetes answers slowly.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/redact/index.js';
import { startVigil, type Vigil } from '../../src/vigil.js';
import { DEMO_SCENARIO, eventually } from '../e2e/helpers.js';
import { createTestDatabase, testProviders, type TestDatabase } from '../store/test-databases.js';
import { startWorld, type World } from '../support/world.js';

let world: World | undefined;
let replica: Vigil | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await replica?.stop();
  await world?.close();
  await database?.drop();
  world = replica = database = undefined;
});

const LEASE_MS = 1000;

/** Replica A (the world's Vigil, which gets Slack's events) and replica B, on one store. */
async function twoReplicas(provider: (typeof testProviders)[number]) {
  database = await createTestDatabase(provider);
  world = await startWorld({ scenarioDir: DEMO_SCENARIO, databaseUrl: database.url, env: { VIGIL_LEASE_SECONDS: String(LEASE_MS / 1000) } });
  replica = await startVigil(world.config, pino({ level: 'warn' }), { redactor: createRedactor(), modelProvider: null });
  return { w: world, a: world.vigil!, b: replica };
}

/** Post the alert with a slow Kubernetes and wait until replica A is inside the slow triage step. */
async function slowTriageStarted(w: World, a: Vigil, latencyMs: number) {
  w.kube.setLatency(latencyMs);
  await w.postAlert();
  return eventually(async () => {
    const inv = await a.db.prisma.investigation.findFirst();
    return inv?.step === 'announced' && inv.state === 'running' ? inv : undefined;
  }, 'replica A to start triage');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(testProviders)('the investigation lease (%s)', (provider) => {
  it('is renewed during a step that outlasts it, so a second replica cannot claim the investigation', async () => {
    const { w, a, b } = await twoReplicas(provider);
    const inv = await slowTriageStarted(w, a, 1200);
    // Well past the lease's length, still inside the step: B tries to pick the investigation up.
    await sleep(LEASE_MS * 1.6);
    b.runner.enqueue(inv.id);
    await b.runner.idle();
    const during = await a.db.prisma.investigation.findUniqueOrThrow({ where: { id: inv.id } });
    expect(during).toMatchObject({ step: 'announced', state: 'running', attempts: 1, leaseOwner: a.runner.owner });
    expect(during.leaseUntil!.getTime()).toBeGreaterThan(Date.now());

    w.kube.setLatency(0);
    await w.settle();
    const done = await a.db.prisma.investigation.findUniqueOrThrow({ where: { id: inv.id } });
    expect(done).toMatchObject({ state: 'waiting', step: 'reported', attempts: 1 });
    expect(await a.db.prisma.auditEvent.count({ where: { kind: 'triage.completed' } })).toBe(1);
  });

  it('one process never runs one investigation twice at once, though its own lease would let it', async () => {
    const { w, a } = await twoReplicas(provider);
    const inv = await slowTriageStarted(w, a, 600);
    a.runner.enqueue(inv.id); // e.g. the alert fired again while the investigation runs
    w.kube.setLatency(0);
    await w.settle();
    const done = await a.db.prisma.investigation.findUniqueOrThrow({ where: { id: inv.id } });
    expect(done).toMatchObject({ state: 'waiting', step: 'reported', attempts: 1 });
    expect(await a.db.prisma.auditEvent.count({ where: { kind: 'triage.completed' } })).toBe(1);
  });

  it('a replica that lost its lease mid-step stops writing; the replica that took over finishes alone', async () => {
    const { w, a, b } = await twoReplicas(provider);
    const inv = await slowTriageStarted(w, a, 800);
    // A stalled past its lease (a long GC pause, a partition) and B claimed it meanwhile: B's lease in
    // the row, as B's claim writes it; B then runs the investigation (its claim accepts its own lease).
    await a.db.prisma.investigation.update({ where: { id: inv.id }, data: { leaseOwner: b.runner.owner, leaseUntil: new Date(Date.now() + LEASE_MS) } });
    b.runner.enqueue(inv.id);
    await Promise.all([a.runner.idle(), b.runner.idle()]);

    const done = await a.db.prisma.investigation.findUniqueOrThrow({ where: { id: inv.id } });
    expect(done).toMatchObject({ state: 'waiting', step: 'reported', attempts: 2, leaseOwner: null });
    // Triage was stored once, by B: A's finished triage was dropped, not written over B's.
    const triaged = await a.db.prisma.auditEvent.findMany({ where: { kind: 'triage.completed' } });
    expect(triaged).toHaveLength(1);
    expect(await a.db.prisma.hypothesis.count({ where: { label: 'H1' } })).toBe(1);
  });
});
