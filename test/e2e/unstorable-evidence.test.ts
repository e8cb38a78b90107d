/**
 * A NUL byte in a pod log line or a Kubernetes event, or a lone UTF-16 surrogate in a log line, is text
 * PostgreSQL (NUL) or Prisma (surrogates) cannot store; one of them used to fail the whole investigation.
 * Planted into the crash-loop scenario's world, the investigation still runs to a board on every store,
 * with the characters stored as U+FFFD.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { createTestDatabase, testProviders, type TestDatabase } from '../store/test-databases.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';

const SCENARIO = 'crashloop-bad-release';
const source = join(dirname(fileURLToPath(import.meta.url)), '..', 'scenarios', SCENARIO, 'scenario.yaml');

type Doc = { alert: { attachments: { text?: string }[] }; kubernetes: { objects: Record<string, unknown>[]; logs: Record<string, { current?: string; previous?: string }> } };

/**
 * The scenario with a NUL at the end of every panic line and every shop Event message, a lone surrogate in
 * each log's first line, and both in the alert post's text.
 */
function plantedScenario(dir: string): string {
  const doc = parse(readFileSync(source, 'utf8'), { merge: true, maxAliasCount: -1 }) as Doc;
  doc.alert.attachments[0]!.text = 'cart pods restart \u0000 \uDC00';
  let logs = 0;
  let events = 0;
  for (const stream of Object.values(doc.kubernetes.logs)) {
    for (const part of ['current', 'previous'] as const) {
      const text = stream[part];
      if (!text) continue;
      const lines = text.split('\n').map((l) => (/panic: runtime error/.test(l) ? `${l}\u0000` : l));
      lines[0] = `${lines[0]} \uD800`;
      stream[part] = lines.join('\n');
      logs += 1;
    }
  }
  for (const o of doc.kubernetes.objects) {
    if (o['kind'] !== 'Event' || (o['metadata'] as { namespace?: string }).namespace !== 'shop') continue;
    o['message'] = `${String(o['message'])}\u0000 (truncated)`;
    events += 1;
  }
  if (logs === 0 || events === 0) throw new Error(`nothing planted (${logs} logs, ${events} events)`);
  const folder = join(dir, SCENARIO);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'scenario.yaml'), stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 }));
  return folder;
}

describe.each(testProviders)('evidence with NUL bytes and lone surrogates on %s', (provider) => {
  let world: World;
  let db: TestDatabase;
  let tmp: string;
  let alertTs: string;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'vigil-unstorable-'));
    db = await createTestDatabase(provider);
    world = await startWorld({ scenarioDir: plantedScenario(tmp), databaseUrl: db.url });
    ({ ts: alertTs } = await world.postAlert());
    await world.settle();
  }, 60_000);
  afterAll(async () => {
    await world?.close();
    await db?.drop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('the fake cluster really serves the planted characters', async () => {
    const pods = world.scenario.logs;
    expect(Object.values(pods).some((l) => l.current?.includes('\u0000'))).toBe(true);
    expect(world.scenario.objects.some((o) => o.kind === 'Event' && String((o as { message?: string }).message).includes('\u0000'))).toBe(true);
  });

  it('runs the investigation to the end and posts the board', async () => {
    const prisma = world.vigil!.db.prisma;
    const inv = await prisma.investigation.findFirstOrThrow();
    expect(inv.lastError).toBeNull();
    // Every step completed: the investigation now waits for steering, repeats and the resolution.
    expect({ state: inv.state, step: inv.step }).toEqual({ state: 'waiting', step: 'reported' });
    const replies = world.slack.threadOf(ALERT_CHANNEL, alertTs).slice(1);
    const purposes = replies.map((m) => (m.metadata as { event_payload?: { purpose?: string } } | undefined)?.event_payload?.purpose);
    expect(purposes).toContain('board');
    expect(world.slack.rejections).toEqual([]);
  });

  it('still finds the crash loop of deployment/cart, with the planted text stored as U+FFFD', async () => {
    const prisma = world.vigil!.db.prisma;
    const h1 = await prisma.hypothesis.findFirstOrThrow({ where: { label: 'H1' }, include: { evidence: true } });
    expect(h1.analyzer).toBe('crash-loop');
    expect({ kind: h1.componentKind, ns: h1.componentNs, name: h1.componentName }).toEqual({ kind: 'Deployment', ns: 'shop', name: 'cart' });
    const evidence = await prisma.evidence.findMany();
    const stored = JSON.stringify(evidence.map((e) => [e.summary, e.detail]));
    // The panic line (a log pattern) and the BackOff event are both cited, each with its planted character.
    expect(evidence.some((e) => /panic: runtime error: invalid memory address or nil pointer dereference\uFFFD/.test(e.summary))).toBe(true);
    expect(evidence.some((e) => /^event BackOff .*\uFFFD \(truncated\)/.test(e.summary))).toBe(true);
    expect(stored).not.toMatch(/\u0000/);
  });

  it('cleans the alert post at intake: its stored payload (JSON text) holds U+FFFD, not the escapes', async () => {
    const alert = await world.vigil!.db.prisma.alert.findFirstOrThrow();
    expect(alert.payload).toContain('cart pods restart \uFFFD \uFFFD');
    expect(alert.payload).not.toMatch(/\\u0000|\\udc00/i);
  });
});
