/**
 * The shared model token caps (per incident, per UTC day) are enforced in the model loop and kept in the store:
 * once the next call would pass a cap the model is not called again, the card says so with the tokens used and
 * the cap, deterministic triage stands, and a second replica (or a restart) sees the same totals and makes no
 * call for that incident either. Real app, real Anthropic SDK against the scripted fake, SQLite and PostgreSQL.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/redact/index.js';
import { readSpend } from '../../src/incidents/spend.js';
import { startVigil, type Vigil } from '../../src/vigil.js';
import { DEMO_SCENARIO } from '../e2e/helpers.js';
import { createTestDatabase, testProviders, type TestDatabase } from '../store/test-databases.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { AnthropicProvider } from '../../src/agent/providers/anthropic.js';

let world: World | undefined;
let replica: Vigil | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await replica?.stop();
  await world?.close();
  await database?.drop();
  world = replica = database = undefined;
});

/** Each model call reports 3,000 input + 100 output tokens: after one, a second would pass a 5,000-token cap. */
const CALL = { toolCalls: [{ name: 'topology', input: {} }], stopReason: 'tool_use' as const, usage: { input_tokens: 3000, output_tokens: 100 } };

describe.each(testProviders)('model token caps (%s)', (provider) => {
  it('stop the model at the incident cap, show it on the card, and hold across replicas', async () => {
    database = await createTestDatabase(provider);
    world = await startWorld({
      scenarioDir: DEMO_SCENARIO,
      databaseUrl: database.url,
      model: { script: [CALL, CALL, CALL, CALL] },
      env: { VIGIL_AGENT_INCIDENT_MAX_TOKENS: '5000', VIGIL_AGENT_DAILY_MAX_TOKENS: '1000000' },
    });
    const { ts } = await world.postAlert();
    await world.settle();
    const db = world.vigil!.db.prisma;

    // One call, then no more: the next would not fit under the cap.
    expect(world.model!.requests).toHaveLength(1);
    const inv = await db.investigation.findFirstOrThrow({ include: { hypotheses: true } });
    const ctx = JSON.parse(inv.context);
    expect(ctx.model).toMatchObject({ status: 'budget_exhausted', steps: 1, spend: { incidentTokens: 3100, incidentCap: 5000, dayTokens: 3100, dayCap: 1_000_000, exhausted: 'incident' } });
    // Deterministic triage stands: the board keeps the analyzers' hypotheses, nothing from the model.
    expect(inv.hypotheses.length).toBeGreaterThan(0);
    expect(inv.hypotheses.every((h) => h.analyzer !== 'model')).toBe(true);
    // The card as Slack holds it (its mrkdwn, not wrapped for reading).
    const thread = JSON.stringify(world.slack.threadOf(ALERT_CHANNEL, ts).slice(1).map((m) => m.blocks));
    expect(thread).toContain('Model token budget for this incident reached: 3,100 of 5,000 tokens used');
    expect(thread).toContain('deterministic triage stands');
    expect(thread).toContain('model tokens 3,100 of 5,000 for this incident · 3,100 of 1,000,000 today');
    expect(thread).toContain('incident cap reached: model stopped');

    // A second replica on the same store (or this one after a restart) sees the same totals…
    const caps = { incidentTokens: 5000, dayTokens: 1_000_000 };
    replica = await startVigil(world.config, pino({ level: 'warn' }), { redactor: createRedactor(), modelProvider: new AnthropicProvider({ apiKey: 'test-anthropic-key', baseURL: world.model!.url, maxRetries: 0 }) });
    const seen = await readSpend(replica.db.prisma, inv.incidentId, caps, new Date());
    expect(seen).toEqual([
      { scope: 'incident', used: 3100, cap: 5000 },
      { scope: 'day', used: 3100, cap: 1_000_000 },
    ]);
    // …and a re-run there, asked for by a responder, makes no model call for this incident at all.
    await world.vigil!.stop();
    world.vigil = undefined;
    expect(await replica.runner.reinvestigate(inv.id, 'U0BOB')).toBe(true);
    await replica.runner.idle();
    expect(world.model!.requests).toHaveLength(1);
    const after = JSON.parse((await replica.db.prisma.investigation.findFirstOrThrow()).context);
    expect(after.model).toMatchObject({ status: 'budget_exhausted', steps: 0, spend: { incidentTokens: 3100, exhausted: 'incident' } });
    expect(after.notice).toContain('3,100 of 5,000 tokens used');
  });

  it('the daily cap is shared by every incident', async () => {
    database = await createTestDatabase(provider);
    world = await startWorld({
      scenarioDir: DEMO_SCENARIO,
      databaseUrl: database.url,
      model: { script: [CALL, CALL, CALL, CALL] },
      env: { VIGIL_AGENT_INCIDENT_MAX_TOKENS: '1000000', VIGIL_AGENT_DAILY_MAX_TOKENS: '6000' },
    });
    const db = world.vigil!.db.prisma;
    // Spent earlier today by another incident (another replica, before a restart).
    await db.modelTokenSpend.create({ data: { scope: `day:${new Date().toISOString().slice(0, 10)}`, tokens: 6000 } });
    await world.postAlert();
    await world.settle();
    // Spent already: not one call, and the board is deterministic triage's.
    expect(world.model!.requests).toHaveLength(0);
    const ctx = JSON.parse((await db.investigation.findFirstOrThrow()).context);
    expect(ctx.model).toMatchObject({ status: 'budget_exhausted', steps: 0, spend: { incidentTokens: 0, dayTokens: 6000, dayCap: 6000, exhausted: 'day' } });
    expect(ctx.notice).toContain('Model token budget for today (UTC, all incidents) reached: 6,000 of 6,000 tokens used, so the model was not called again; deterministic triage stands');
    expect(await db.hypothesis.count()).toBeGreaterThan(0);
  });
});
