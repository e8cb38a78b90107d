/** `npm run demo` itself: the README's command, and the approval click played by the on-call SRE or by someone else. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
const demo = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'harness/demo.ts', ...args], { cwd: root, env: { ...process.env, CI: '' }, encoding: 'utf8', timeout: 90_000 });

describe('npm run demo', () => {
  it('prints the thread with the diagnosis and ends with the approval card, exit 0', () => {
    const res = demo();
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/deterministic triage only/);
    expect(res.stdout).toMatch(/H1 ● supported — checkout scaled to 0 by `kubectl scale`/);
    expect(res.stdout).toMatch(/ruled out — Helm upgrade of release checkout/);
    expect(res.stdout).toMatch(/Proposed fix: scale deployment\/checkout to 3/);
    expect(res.stdout).toMatch(/\[Approve\] \[Reject\]/);
  });

  it('--click approve --as U0VIGILSRE executes through the executor identity and verifies', () => {
    const res = demo('--click', 'approve', '--as', 'U0VIGILSRE');
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/approval request executed/);
    expect(res.stdout).toMatch(/write: patch \/apis\/apps\/v1\/namespaces\/shop\/deployments\/checkout\/scale as system:serviceaccount:vigil:vigil-executor/);
    expect(res.stdout).toMatch(/"approved-by":\["U0VIGILSRE"\]/);
    expect(res.stdout).toMatch(/Verification ✓ passed/);
  });

  it('--postmortem ends the incident and prints the postmortem draft from the record', () => {
    const res = demo('--click', 'approve', '--as', 'U0VIGILSRE', '--postmortem');
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/\[RESOLVED\] KubeDeploymentReplicasMismatch/);
    expect(res.stdout).toMatch(/Postmortem draft/);
    expect(res.stdout).toMatch(/Ruled out and why/);
    expect(res.stdout).toMatch(/Fix approved by U0VIGILSRE/);
    expect(res.stdout).toMatch(/Follow-ups/);
  });

  it('--click approve --as someone else gets a clear refusal and nothing changes', () => {
    const res = demo('--click', 'approve', '--as', 'U0BOB');
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/Not accepted: you are not in a user group that may approve this action/);
    expect(res.stdout).toMatch(/no write reached the cluster/);
  });

  it('--via webhook delivers the alert through POST /webhooks/alertmanager and shows the same thread', () => {
    const res = demo('--via', 'webhook', '--click', 'approve', '--as', 'U0VIGILSRE', '--postmortem');
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/Alertmanager POSTs its webhook \(v4.*"deployment":"checkout","namespace":"shop"/);
    expect(res.stdout).toMatch(/\/webhooks\/alertmanager → HTTP 202 \{"ok":true,"status":"firing","alerts":1\}/);
    expect(res.stdout).not.toMatch(/#alerts {2}Alertmanager \(bot\) posts/);
    expect(res.stdout).toMatch(/Received from alertmanager by webhook/);
    expect(res.stdout).toMatch(/H1 ● supported — checkout scaled to 0 by `kubectl scale`/);
    expect(res.stdout).toMatch(/Verification ✓ passed/);
    expect(res.stdout).toMatch(/the group resolved → HTTP 202/);
    expect(res.stdout).toMatch(/Postmortem draft/);
  });

  it('--via anything else is a usage error (exit 2)', () => {
    const res = demo('--via', 'pigeon');
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/--via expects slack or webhook, got "pigeon"/);
  });
});
