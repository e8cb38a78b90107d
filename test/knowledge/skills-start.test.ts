/**
 * Skills at start-up, through the real app: a bad skill file is logged with its file and field, the good
 * ones load, Vigil starts and investigates anyway, and App Home shows the load error.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationStream } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createRedactor } from '../../src/redact/index.js';
import { appHomeOpenedEnvelope } from '../fakes/slack/index.js';
import { startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO } from '../e2e/helpers.js';

describe('skills at start-up', () => {
  let world: World;
  let dir: string;
  const lines: Record<string, unknown>[] = [];
  const destination: DestinationStream = { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-skills-start-'));
    copyFileSync('skills/workload-scaled-to-zero.md', join(dir, 'workload-scaled-to-zero.md'));
    writeFileSync(join(dir, 'dns.md'), '---\nname: dns\ntitle: DNS\napplies_to:\n  families: [dns]\n---\n## Checks\n- dig\n');
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, logger: createLogger('info', createRedactor(), destination), env: { VIGIL_SKILLS_DIR: dir } });
    await world.postAlert();
    await world.settle();
  });
  afterAll(async () => {
    await world?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs the bad file with its field, loads the others and starts', async () => {
    const error = lines.find((l) => l['msg'] === `skill not loaded: ${join(dir, 'dns.md')} (applies_to.families.0): unknown fault family "dns" (see docs/fault-families.md)`);
    expect(error).toMatchObject({ level: 50, file: join(dir, 'dns.md'), field: 'applies_to.families.0' });
    expect(lines.find((l) => l['msg'] === 'skills loaded')).toMatchObject({ skills: 1, errors: 1 });
    // Started and investigated: the board cites the skill that did load.
    const h1 = await world.vigil!.db.prisma.hypothesis.findFirstOrThrow({ where: { label: 'H1' } });
    expect(h1.status).toBe('supported');
    const board = world.slack.callsTo('chat.update').concat(world.slack.callsTo('chat.postMessage')).map((c) => JSON.stringify(c.body['blocks'] ?? ''));
    expect(board.some((b) => b.includes('Procedure for H1'))).toBe(true);
  });

  it('shows the load error on App Home', async () => {
    await world.slack.sendEvent(appHomeOpenedEnvelope('U0BOB'));
    const published = () => world.slack.callsTo('views.publish').filter((c) => c.body['user_id'] === 'U0BOB' && c.response?.body.ok);
    await world.slack.waitFor(() => published().length > 0 || undefined, { timeoutMs: 10_000 });
    const view = JSON.stringify(published().at(-1)!.body['view']);
    expect(view).toContain('*1 skill in use*');
    expect(view).toContain('1 skill file not loaded');
    expect(view).toContain('dns.md` field `applies_to.families.0`');
  });
});
