/**
 * `npm run demo -- --steps FILE --json OUT` (issue 12 point 8, "try it all offline"): the example step files
 * in harness/steps/ played on the demo world, each step delivered signed to the real Bolt receiver (a
 * thread reply as an Events API message, a click as block_actions, a slash command), and the report they
 * leave: the writes with the identity that made them, Vigil's posts, and the refusals and who got them.
 * One world per file; approve.yaml goes through `npm run` itself, as a person types it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadStepsFile, parseSteps, playDeploymentController, playSteps, Recorder, StepsFileError, type DemoReport } from '../../harness/steps.js';
import { startWorld } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const POLICY = join(root, 'deploy', 'policy.example.yaml');
const EXECUTOR = 'system:serviceaccount:vigil:vigil-executor';
const tmp = mkdtempSync(join(tmpdir(), 'vigil-demo-steps-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** What `npm run demo -- --steps harness/steps/<file>` does, in this process. */
async function play(file: string): Promise<DemoReport> {
  const steps = loadStepsFile(join(root, 'harness', 'steps', file));
  const world = await startWorld({ scenarioDir: DEMO_SCENARIO, policyFile: POLICY });
  try {
    const recorder = new Recorder(world);
    playDeploymentController(world);
    const { ts } = await world.postAlert();
    await world.settle();
    await playSteps(world, steps, { threadTs: ts, recorder });
    await world.settle();
    return await recorder.report();
  } finally {
    await world.close();
  }
}

/** The texts Vigil posted or edited during one step. */
const postedAt = (r: DemoReport, step: number) => r.posts.filter((p) => p.step === step).map((p) => p.text);
/** The newest text of every card: the state the thread ends in. */
const cardsNow = (r: DemoReport) => [...new Map(r.posts.map((p) => [p.ts, p.text])).values()].filter((t) => t.startsWith('# Proposed fix'));

/** The demo as a person runs it: `npm run -s demo -- …`, no model key (deterministic triage). */
function npmDemo(...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: '' };
  for (const k of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'VIGIL_MODEL_PROVIDER', 'INIT_CWD']) delete env[k];
  const npmCli = process.env['npm_execpath'];
  const [cmd, pre] = npmCli && /npm-cli\.[cm]?js$/.test(npmCli) ? [process.execPath, [npmCli]] : ['npm', []];
  return spawnSync(cmd, [...pre, 'run', '-s', 'demo', '--', ...args], { cwd: root, env, encoding: 'utf8', timeout: 90_000 });
}

describe('npm run demo -- --steps', () => {
  it('approve.yaml (via npm run): the on-call approves; the change is written once, as the executor, and verified', () => {
    const out = join(tmp, 'approve.json');
    const res = npmDemo('--steps', 'harness/steps/approve.yaml', '--json', out);
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/Demo finished: 1 step played, 2 writes reached the cluster\./);
    const r = JSON.parse(readFileSync(out, 'utf8')) as DemoReport;
    // One change: the scale, and the annotation on the Deployment recording it (a Scale carries none).
    expect(r.writes.map(({ verb, resource, namespace, name, identity }) => ({ verb, resource, namespace, name, identity }))).toEqual([
      { verb: 'patch', resource: 'deployments/scale', namespace: 'shop', name: 'checkout', identity: EXECUTOR },
      { verb: 'patch', resource: 'deployments', namespace: 'shop', name: 'checkout', identity: EXECUTOR },
    ]);
    for (const w of r.writes) expect(w).toMatchObject({ step: 0, status: 200, extra: { 'approved-by': ['U0VIGILSRE'], incident: [r.incident] } });
    expect(r.refusals).toEqual([]);
    expect(r.steps).toEqual([expect.objectContaining({ index: 0, as: 'U0VIGILSRE', click: 'approve', card: expect.objectContaining({ status: 'pending', action: 'scale', target: 'deployment/checkout' }), outcome: 'request executed' })]);
    expect(cardsNow(r)).toEqual([expect.stringMatching(/✅ Executed and verified[\s\S]*approved by @U0VIGILSRE[\s\S]*Verification ✓ passed/)]);
    expect(postedAt(r, 0)).toContainEqual(expect.stringMatching(/^✅ Done: scale deployment\/checkout to 3 \(from 0\) as `system:serviceaccount:vigil:vigil-executor`, approved by @U0VIGILSRE; verified\./));
    // The summary card answers first and follows the fix: Triaged with the fix to approve and its risk, then Mitigated.
    const summaries = r.posts.map((p) => p.text).filter((t) => /^(🔎|🧭|🛠️|🩹|✅ Resolved|🙋)/u.test(t));
    expect(summaries).toContainEqual(expect.stringMatching(/^🧭 Triaged — H1 checkout scaled to 0 .* · confidence high \(0\.\d+\)\nAffected: `shop\/checkout` · critical — .*\nNext: approve or reject the fix on its card in this thread ⤵ `kubectl scale deployment\/checkout -n shop --replicas=3` · risk \d+\/100\n/));
    expect(summaries.at(-1)).toMatch(/^🩹 Mitigated — H1 checkout scaled to 0 .*\nAffected: .*\nNext: watch the alert clear: the fix `kubectl scale deployment\/checkout -n shop --replicas=3` ran and was verified\n/);
  });

  it('rule-out-then-approve.yaml: a reply rules out H1, its fix is withdrawn, and the click on it is refused; nothing is written', async () => {
    const r = await play('rule-out-then-approve.yaml');
    expect(r.error).toBeUndefined();
    expect(r.writes).toEqual([]);
    expect(r.refusals).toEqual([
      { step: 1, user: 'U0VIGILSRE', text: expect.stringMatching(/^⛔ Not accepted: this fix was withdrawn \(H1 \(checkout scaled to 0 by `kubectl scale`.*\) was ruled out by a responder: the scale-down was planned maintenance, keep it at 0\); nothing changed and nothing will run from it\.$/) },
    ]);
    // On the compact board H1 is now one line with the responder's reason; the summary card says a human takes over.
    expect(postedAt(r, 0)).toContainEqual(expect.stringMatching(/^# Hypothesis board\n(?:.*\n)?  ┊ ○ H1 ruled out — checkout scaled to 0.*: ruled out by a responder: the scale-down was planned maintenance/));
    expect(postedAt(r, 0)).toContainEqual(expect.stringMatching(/^🙋 Needs a human — not sure: every hypothesis was ruled out\n/));
    expect(postedAt(r, 0)).toContainEqual(expect.stringMatching(/^# Proposed fix: scale deployment\/checkout to 3 \(from 0\)\n↩️ Withdrawn: H1 /));
    expect(r.steps[1]).toMatchObject({ as: 'U0VIGILSRE', click: 'approve', card: { status: 'withdrawn' }, outcome: expect.stringMatching(/^click refused; request withdrawn/) });
    // No card but the withdrawn one, and it stays so: the click changed nothing.
    expect(cardsNow(r)).toEqual([expect.stringMatching(/↩️ Withdrawn[\s\S]*Nothing will run from this card/)]);
    expect(postedAt(r, 1)).toEqual([]);
  });

  it('self-approval.yaml: whoever confirmed H1 requests its fix and cannot approve it alone (four-eyes)', async () => {
    const r = await play('self-approval.yaml');
    expect(r.error).toBeUndefined();
    expect(r.writes).toEqual([]);
    expect(r.refusals).toEqual([{ step: 2, user: 'U0VIGILSRE', text: '⛔ Not accepted: you asked for this action, so someone else must approve it (four-eyes rule).\nWho can approve: members of @S0SREONCALL' }]);
    // Bob's rule-out withdrew Vigil's card; Alice's confirm proposed it afresh, in her name.
    expect(postedAt(r, 0)).toContainEqual(expect.stringMatching(/^# Proposed fix: scale deployment\/checkout to 3 \(from 0\)\n↩️ Withdrawn: H1 .*ruled out by a responder: checking by hand/));
    expect(postedAt(r, 1)).toContainEqual(expect.stringMatching(/^# Proposed fix: scale deployment\/checkout to 3 \(from 0\)\n⏳ Waiting for approval\n.*\nrequested by @U0VIGILSRE · /));
    expect(r.steps[2]).toMatchObject({ as: 'U0VIGILSRE', click: 'approve', card: { status: 'pending' }, outcome: 'click refused; request pending' });
    expect(cardsNow(r)).toEqual([expect.stringMatching(/↩️ Withdrawn/), expect.stringMatching(/⏳ Waiting for approval[\s\S]*\[Approve\] \[Reject\]/)]);
  });

  it('stop-then-resume-by-stranger.yaml: the on-call stops Vigil, a stranger cannot resume it, the cancelled card cannot be approved', async () => {
    const r = await play('stop-then-resume-by-stranger.yaml');
    expect(r.error).toBeUndefined();
    expect(r.writes).toEqual([]);
    expect(r.steps[0]!.outcome).toBe(`⏹ Vigil is stopped for incident \`${r.incident}\`: 1 pending approval cancelled. Nothing will be proposed or executed until \`/sre resume\`.`);
    expect(r.refusals).toEqual([
      { step: 1, user: 'U0BOB', text: 'Not done: only @U0VIGILSRE, who stopped it, or a policy admin may resume Vigil for this incident.' },
      { step: 2, user: 'U0VIGILSRE', text: '⛔ Not accepted: this request is already cancelled; nothing changed.' },
    ]);
    expect(postedAt(r, 0)).toContainEqual(expect.stringMatching(/^# Proposed fix: scale deployment\/checkout to 3 \(from 0\)\n⏹ Cancelled — cancelled: Vigil was stopped by U0VIGILSRE/));
    expect(postedAt(r, 0)).toContainEqual(expect.stringMatching(/^⏹ Vigil is stopped for this incident: 1 pending approval cancelled/));
    // The refused resume said nothing in the thread, and nothing was proposed again.
    expect(postedAt(r, 1)).toEqual([]);
    expect(postedAt(r, 2)).toEqual([]);
    expect(cardsNow(r)).toEqual([expect.stringMatching(/⏹ Cancelled/)]);
  });

  it('a bad steps file names the step, its line and the field, exits 2 and runs nothing', () => {
    const bad = join(tmp, 'bad.yaml');
    const out = join(tmp, 'bad.json');
    writeFileSync(bad, '- { as: U0VIGILSRE, reply: "rule out H1" }\n- { as: U0VIGILSRE, click: aprove }\n');
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'harness/demo.ts', '--steps', bad, '--json', out], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('step 1 (line 2), field click: must be approve or reject, not "aprove"');
    expect(res.stdout).not.toMatch(/Vigil demo/);
    expect(existsSync(out)).toBe(false);

    const help = spawnSync(process.execPath, ['--import', 'tsx', 'harness/demo.ts', '--help'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/--steps <file\.yaml>/);
    expect(help.stdout).toMatch(/--json <out\.json>/);
  });

  it('parseSteps: every problem of every step, and the examples are valid', () => {
    const problems = (text: string) => {
      try {
        parseSteps(text, 'f.yaml');
      } catch (err) {
        expect(err).toBeInstanceOf(StepsFileError);
        return (err as Error).message;
      }
      throw new Error('expected the steps to be refused');
    };
    const msg = problems(['- { reply: hi }', '- { as: U0BOB, reply: hi, click: approve }', '- { as: U0BOB, comand: "/sre stop" }', '- { as: U0BOB, command: "/deploy now" }', '- just text'].join('\n'));
    expect(msg).toContain('step 0 (line 1), field as: is required');
    expect(msg).toContain('step 1 (line 2), field click: a step does one thing: reply and click given together');
    expect(msg).toContain('step 2 (line 3): unknown field comand');
    expect(msg).toContain('step 3 (line 4), field command: must be an /sre command');
    expect(msg).toContain('step 4 (line 5): must be a mapping');
    expect(problems('as: U0BOB\nclick: approve\n')).toMatch(/expected a YAML list of steps/);
    expect(problems('[]')).toMatch(/the list of steps is empty/);
    expect(problems('- { as: U0BOB, reply: "unclosed }\n')).toMatch(/not valid YAML \(line \d+, column \d+\): Missing closing "quote/);
    for (const f of ['approve.yaml', 'rule-out-then-approve.yaml', 'self-approval.yaml', 'stop-then-resume-by-stranger.yaml']) expect(loadStepsFile(join(root, 'harness', 'steps', f)).length).toBeGreaterThan(0);
  });
});
