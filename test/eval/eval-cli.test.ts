/** `npm run eval` end to end: the table, the JSON report, a broken scenario reported without stopping the run, and --model. */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/models/anthropic.js';

const root = new URL('../..', import.meta.url).pathname;
const run = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'harness/eval.ts', ...args], { cwd: root, env: { ...process.env, CI: '', ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', VIGIL_REPORT_DIR: '', ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (err += String(d)));
    child.on('exit', (code) => resolve({ code, out, err }));
  });

describe('npm run eval', () => {
  let dir: string;
  let model: FakeAnthropic;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-eval-'));
    cpSync(join(root, 'test/scenarios/demo-checkout-scaled-to-zero'), join(dir, 'demo-checkout-scaled-to-zero'), { recursive: true });
    cpSync(join(root, 'test/scenarios/demo-checkout-scaled-to-zero'), join(dir, 'broken-one'), { recursive: true });
    writeFileSync(join(dir, 'broken-one', 'scenario.yaml'), 'id: broken-one\ntitle: x\n');
    // A model that answers in prose and never submits: the run records its tokens and keeps triage.
    model = await startFakeAnthropic({ script: Array.from({ length: 6 }, () => ({ text: 'I think it is the database.', stopReason: 'end_turn' as const })), apiKey: 'sk-ant-eval-fake' });
  });
  afterAll(async () => {
    await model?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('grades each scenario in child processes (--jobs), reports a broken one and carries on, and writes the merged JSON report', async () => {
    const json = join(dir, 'report.json');
    const res = await run(['--dir', dir, '--json', json, '--no-noise', '--jobs', '2']);
    expect(res.code, res.err).toBe(0);
    expect(res.out).toMatch(/2 scenario\(s\) in 2 processes/);
    expect(res.out).toMatch(/demo-checkout-scaled-to-zero\s+yes\s+✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓\s+9\/9\s+yes\s+right/);
    expect(res.out).toMatch(/broken-one\s+yes\s+ERROR .*scenario\.yaml/);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    expect(report.summary).toMatchObject({ total: 2, passed: 1, passRate: 0.5, withoutNoise: { total: 2 } });
    expect(report.scenarios.map((s: { id: string; noise: boolean }) => `${s.id}:${s.noise}`)).toEqual(['broken-one:true', 'broken-one:false', 'demo-checkout-scaled-to-zero:true', 'demo-checkout-scaled-to-zero:false']);
    const demo = report.scenarios.find((s: { id: string; noise: boolean }) => s.id === 'demo-checkout-scaled-to-zero' && s.noise);
    expect(demo).toMatchObject({ score: 9, pass: true, answers: { 'loc.kind': true }, inputTokens: 0, costUsd: 0 });
    expect(typeof demo.firstCardMs).toBe('number');
    expect(report.scenarios.find((s: { id: string }) => s.id === 'broken-one').error).toMatch(/scenario\.yaml/);
  }, 120_000);

  it('--model runs the model loop and reports its tokens', async () => {
    const res = await run(['--dir', dir, '--only', 'demo-checkout-scaled-to-zero', '--model'], { ANTHROPIC_API_KEY: 'sk-ant-eval-fake', ANTHROPIC_BASE_URL: model.url });
    expect(res.code, res.err).toBe(0);
    expect(res.out).toMatch(/model anthropic/);
    const row = res.out.split('\n').find((l) => l.startsWith('demo-checkout-scaled-to-zero'))!;
    const tokens = Number(row.trim().split(/\s+/).at(-2));
    expect(tokens).toBeGreaterThan(0);
    expect(model.requests.length).toBeGreaterThan(0);
  }, 120_000);
});
