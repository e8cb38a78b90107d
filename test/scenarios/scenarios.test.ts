/**
 * The scenario corpora are well formed: every scenario of test/scenarios (ours) and test/scenarios-blind
 * (written by authors who never read src/) loads, has a structured expected diagnosis in the grader's
 * schema, and carries at least two pieces of noise.
 *
 * Running them is `npm run eval -- --strict` (part of `npm test`): each scenario runs once, through the
 * real app, graded on the nine questions and checked for leaked planted secrets and rejected Slack calls.
 * Running them here as well would run every scenario twice.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { expectedSchema } from '../../src/eval/questions.js';
import { listScenarios, loadScenario } from './load.js';

const here = dirname(fileURLToPath(import.meta.url));
const corpora = [
  ['ours', here],
  ['blind', join(here, '..', 'scenarios-blind')],
] as const;

for (const [corpus, root] of corpora) {
  const dirs = await listScenarios(root);
  describe(`${corpus} corpus`, () => {
    it('has scenarios', () => expect(dirs.length).toBeGreaterThan(corpus === 'blind' ? 29 : 10));
    describe.each(dirs.map((d) => [d.split('/').pop()!, d]))('scenario %s', (_id, dir) => {
      const raw = parse(readFileSync(join(dir, 'scenario.yaml'), 'utf8')) as { expected?: unknown; noise?: unknown[] };
      it('has a structured expected diagnosis and at least two pieces of noise', () => {
        const expected = expectedSchema.safeParse(raw.expected ?? {});
        expect(expected.success, expected.success ? '' : JSON.stringify(expected.error.issues)).toBe(true);
        expect((raw.noise ?? []).length).toBeGreaterThanOrEqual(2);
      });
      it('loads (times resolve, objects parse, planted secrets are declared)', async () => {
        const s = await loadScenario(dir, { onset: new Date('2026-12-01T12:00:00Z') });
        expect(s.objects.length).toBeGreaterThan(0);
        expect(Array.isArray(s.plantedSecrets)).toBe(true);
      });
    });
  });
}
