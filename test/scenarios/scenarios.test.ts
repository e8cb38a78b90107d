/**
 * Every scenario in test/scenarios/, end to end through the app (fake Slack, fake Kubernetes, the real
 * Prometheus, fake Loki and GitHub as the scenario needs): the first card must name the right component,
 * mechanism and scope, and mark the noise unrelated. Scenarios whose cause needs the model are skipped here.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/log.js';
import { createRedactor } from '../../src/redact/index.js';
import { startWorld } from '../support/world.js';
import { expectedSchema, gradeFirstCard } from './grade.js';
import { listScenarios } from './load.js';

const root = dirname(fileURLToPath(import.meta.url));
const dirs = await listScenarios(root);

describe.each(dirs.map((d) => [d.split('/').pop()!, d]))('scenario %s', (_id, dir) => {
  const raw = parse(readFileSync(join(dir, 'scenario.yaml'), 'utf8')) as { expected?: unknown; noise?: unknown[] };
  const expected = expectedSchema.safeParse(raw.expected ?? {});

  it('has a structured expected diagnosis and at least two pieces of noise', () => {
    expect(expected.success, expected.success ? '' : JSON.stringify(expected.error.issues)).toBe(true);
    expect((raw.noise ?? []).length).toBeGreaterThanOrEqual(2);
  });

  it.skipIf(!expected.success || expected.data.model_needed)('first card reaches the expected diagnosis (deterministic triage)', async () => {
    const logLines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) });
    const world = await startWorld({ scenarioDir: dir, logger: createLogger('debug', createRedactor(), sink) });
    try {
      if (world.skipped.length) throw new Error(`scenario needs: ${world.skipped.join('; ')}`);
      const posted = await world.postAlert();
      await world.settle();
      const db = world.vigil!.db.prisma;
      const row = await db.alert.findFirst({ where: { messageTs: posted.ts } });
      const incident = row ? await db.incident.findUniqueOrThrow({ where: { id: row.incidentId } }) : await db.incident.findFirstOrThrow({ orderBy: { openedAt: 'desc' } });
      // Graded against the loaded scenario, whose `@` times are shifted to this run's onset.
      const grade = await gradeFirstCard(db, incident.id, expectedSchema.parse(world.scenario.expected));
      expect(grade.failures, `leading: ${JSON.stringify(grade.leading)}`).toEqual([]);
      expect(world.slack.rejections).toEqual([]);

      // The world's planted secrets reach no Slack call, log line or database row.
      const outbound = JSON.stringify(world.slack.calls.map((c) => c.body)) + logLines.join('');
      const stored = JSON.stringify(await Promise.all([db.incident.findMany(), db.alert.findMany(), db.investigation.findMany(), db.hypothesis.findMany(), db.evidence.findMany(), db.auditEvent.findMany(), db.changeEvent.findMany()]));
      for (const secret of world.scenario.plantedSecrets) {
        expect(outbound, `planted secret ${secret.slice(0, 6)}… left Vigil`).not.toContain(secret);
        expect(stored, `planted secret ${secret.slice(0, 6)}… stored`).not.toContain(secret);
      }
    } finally {
      await world.close();
    }
  });
});
