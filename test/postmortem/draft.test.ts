import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { draftPostmortem, renderPostmortemMarkdown, type Postmortem, type Source } from '../../src/postmortem/draft.js';
import { loadPostmortemRecord } from '../../src/postmortem/record.js';
import type { Db } from '../../src/store/db.js';
import { APPROVER, RESPONDER, runDemoIncident, type PostmortemWorld } from './fixture.js';

let pw: PostmortemWorld;
let db: Db;

async function draft(): Promise<Postmortem> {
  const record = await loadPostmortemRecord(db, pw.incidentId, new Date());
  if (!record) throw new Error('incident not found');
  return draftPostmortem(record);
}

/** Every source a statement cites must be a stored row. */
async function rowExists(s: Source): Promise<boolean> {
  const byId = { where: { id: s.id } } as const;
  switch (s.table) {
    case 'Incident': return !!(await db.incident.findUnique(byId));
    case 'Alert': return !!(await db.alert.findUnique(byId));
    case 'Investigation': return !!(await db.investigation.findUnique(byId));
    case 'Hypothesis': return !!(await db.hypothesis.findUnique(byId));
    case 'Evidence': return !!(await db.evidence.findUnique(byId));
    case 'SteeringMessage': return !!(await db.steeringMessage.findUnique(byId));
    case 'SlackPost': return !!(await db.slackPost.findUnique(byId));
    case 'AuditEvent': return !!(await db.auditEvent.findUnique({ where: { id: Number(s.id) } }));
    case 'ApprovalRequest': return !!(await db.approvalRequest.findUnique(byId));
    case 'ApprovalDecision': return !!(await db.approvalDecision.findUnique(byId));
  }
}

beforeAll(async () => {
  pw = await runDemoIncident();
  db = pw.world.vigil!.db.prisma;
}, 60_000);
afterAll(async () => {
  await pw?.world.close();
});

describe('draftPostmortem from the stored demo incident', () => {
  it('summarises what broke, for how long, the cause in one sentence and the status', async () => {
    const pm = await draft();
    expect(pm.summary.whatBroke).toContain('Deployment shop/checkout');
    expect(pm.summary.whatBroke).toContain('KubeDeploymentReplicasMismatch');
    expect(pm.summary.cause).toMatch(/spec\.replicas = 0, set by `kubectl scale`/);
    expect(pm.summary.cause.split(/\.\s+\S/)).toHaveLength(1);
    expect(pm.summary.status).toBe('mitigated');
    expect(pm.summary.ongoing).toBe(true);
    expect(pm.summary.mitigatedAt).toBeInstanceOf(Date);
    expect(pm.summary.durationMs).toBeGreaterThanOrEqual(0);
    expect(pm.impact.scope).toContain('storefront');
    // The origin workload is affected too: its pods are the ones at 0.
    expect(pm.impact.affected).toEqual(['Service shop/checkout', 'Deployment shop/storefront', 'Deployment shop/checkout', 'Service shop/storefront']);
    expect(pm.impact.alertCount).toBe(1);
  });

  it('names H1 (scaled to 0 by kubectl) as the root cause with every evidence line cited', async () => {
    const pm = await draft();
    const rc = pm.rootCause!;
    expect(rc.label).toBe('H1');
    expect(rc.title).toContain('kubectl scale');
    expect(rc.component).toBe('Deployment shop/checkout');
    expect(rc.facts).toMatchObject({ replicas: 0, previousReplicas: 3, manager: 'kubectl', subresource: 'scale' });
    const stored = await db.evidence.findMany({ where: { hypothesisId: rc.source.id } });
    expect(rc.evidence.map((e) => e.source.id).sort()).toEqual(stored.map((e) => e.id).sort());
    const mf = rc.evidence.find((e) => e.kind === 'managed_fields')!;
    expect(mf.citation.ref).toBe('apis/apps/v1/namespaces/shop/deployments/checkout#metadata.managedFields[3]');
    expect(mf.stance).toBe('supports');
  });

  it('lists what was ruled out and why: Helm with its reason, the payments crash loop as unrelated, H3 by the responder', async () => {
    const pm = await draft();
    const helm = pm.ruledOut.find((h) => h.title.startsWith('Helm'))!;
    expect(helm).toMatchObject({ label: 'H2', status: 'ruled_out' });
    expect(helm.reason).toBeTruthy();
    expect(helm.evidence.some((e) => e.summary.includes('owned by `kubectl`, not helm'))).toBe(true);
    const payments = pm.ruledOut.find((h) => h.title.includes('payments-worker'))!;
    expect(payments.status).toBe('unrelated');
    expect(payments.reason).toContain('no path from deployment/checkout to it (namespace payments)');
    const h3 = pm.ruledOut.find((h) => h.label === 'H3')!;
    expect(h3.steeredBy).toBe(RESPONDER);
    expect(h3.reason).toContain('the rollout is 3 days old');
  });

  it('builds a sorted timeline: alert, change with why, investigation, first card, hypotheses, steering by whom, approval, execution identity, verification', async () => {
    const pm = await draft();
    const times = pm.timeline.map((e) => e.at.getTime());
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const find = (re: RegExp) => pm.timeline.find((e) => re.test(e.text));
    expect(find(/^Alert fired: \[FIRING:1\] KubeDeploymentReplicasMismatch/)?.kind).toBe('alert');
    const change = find(/^Change: kubectl scale updated deployment\/checkout/)!;
    expect(change.text).toContain('same workload');
    expect(change.at.getTime()).toBeLessThan(find(/^Alert fired/)!.at.getTime());
    expect(find(/^Vigil started investigating/)).toBeDefined();
    expect(find(/^First triage card posted/)?.kind).toBe('card');
    expect(find(/^H1 supported by triage/)).toBeDefined();
    expect(find(/^H2 ruled out by triage/)).toBeDefined();
    expect(find(/^H3 \(.*\) ruled out by Bob Responder \(U0BOB\): the rollout is 3 days old/)?.actor).toBe(RESPONDER);
    expect(find(/^Bob Responder \(U0BOB\) in the thread: “check the database too”/)?.kind).toBe('steering');
    expect(find(/^Fix proposed by Vigil: scale deployment\/checkout to 3/)?.text).toContain('risk 35/100');
    expect(find(/^Fix approved by/)?.actor).toBe(APPROVER);
    const exec = find(/^Fix executed as system:serviceaccount:vigil:vigil-executor/)!;
    expect(exec.actor).toBe('system:serviceaccount:vigil:vigil-executor');
    expect(find(/^Verification passed: ✓ readyReplicas ≥ 3/)).toBeDefined();
    // Only the top ranked changes, not the whole Helm history.
    expect(pm.timeline.filter((e) => e.kind === 'change').length).toBeLessThanOrEqual(3);
  });

  it('records actions and by whom, and derives follow-ups from the cause and the fix', async () => {
    const pm = await draft();
    const [a] = pm.actions;
    expect(a).toMatchObject({ action: 'scale', target: 'deployment/checkout in shop', status: 'executed', requestedBy: 'vigil' });
    expect(a!.decisions).toMatchObject([{ userId: APPROVER, decision: 'approve' }]);
    expect(a!.execution).toMatchObject({ identity: 'system:serviceaccount:vigil:vigil-executor', writes: 2 });
    expect(a!.verification?.ok).toBe(true);
    const texts = pm.followUps.map((f) => f.text);
    expect(texts.some((t) => t.startsWith('Find out who ran `kubectl scale` on deployment/checkout in shop at'))).toBe(true);
    expect(texts.some((t) => t.includes('admission policy') && t.includes('replicas=0'))).toBe(true);
    expect(texts.some((t) => t.includes('kubectl scale deployment/checkout -n shop --replicas=0'))).toBe(true);
    expect(texts.some((t) => t.includes('prometheus: not configured'))).toBe(true);
  });

  it('cites only rows that exist in the store', async () => {
    const pm = await draft();
    const sources: Source[] = [
      ...pm.summary.sources,
      ...pm.impact.sources,
      ...pm.timeline.flatMap((e) => e.sources),
      pm.rootCause!.source,
      ...pm.rootCause!.evidence.map((e) => e.source),
      ...pm.ruledOut.flatMap((h) => [h.source, ...h.evidence.map((e) => e.source)]),
      ...pm.actions.flatMap((a) => [...a.sources, ...a.decisions.map((d) => d.source)]),
      ...pm.followUps.flatMap((f) => f.sources),
    ];
    expect(sources.length).toBeGreaterThan(30);
    for (const s of sources) expect(await rowExists(s), `${s.table}:${s.id}`).toBe(true);
    expect(pm.timeline.every((e) => e.sources.length > 0)).toBe(true);
  });

  it('follows the store: a changed hypothesis reason and steering text change the draft', async () => {
    const before = await draft();
    const helm = before.ruledOut.find((h) => h.label === 'H2')!;
    const steering = await db.steeringMessage.findFirstOrThrow({ where: { text: 'check the database too' } });
    await db.hypothesis.update({ where: { id: helm.source.id }, data: { reason: 'Helm last changed 3 days ago with replicaCount 3 (edited)' } });
    await db.steeringMessage.update({ where: { id: steering.id }, data: { text: 'look at payments-db connections' } });
    try {
      const after = await draft();
      expect(after.ruledOut.find((h) => h.label === 'H2')!.reason).toBe('Helm last changed 3 days ago with replicaCount 3 (edited)');
      expect(after.timeline.some((e) => e.text.includes('“look at payments-db connections”'))).toBe(true);
      expect(after.timeline.some((e) => e.text.includes('check the database too'))).toBe(false);
      const md = renderPostmortemMarkdown(after);
      expect(md).toContain('Helm last changed 3 days ago with replicaCount 3 (edited)');
      // Edited behind Vigil's back: the draft says so first, quoting what the audit chain recorded.
      expect(after.integrity?.problems.join('\n')).toMatch(/SteeringMessage .*: text is "look at payments-db connections" but the chain recorded "check the database too"/);
      expect(after.integrity?.problems.join('\n')).toMatch(/Hypothesis .*\(H2, .*: reason is "Helm last changed 3 days ago with replicaCount 3 \(edited\)" but the chain recorded/);
      expect(md).toContain('This record fails verification against Vigil\'s audit chain');
      expect(md.slice(md.indexOf('## Summary'))).not.toContain('check the database too');
    } finally {
      await db.hypothesis.update({ where: { id: helm.source.id }, data: { reason: helm.reason ?? null } });
      await db.steeringMessage.update({ where: { id: steering.id }, data: { text: steering.text } });
    }
  });

  it('renders GitHub Markdown with every section, citations and no planted secret', async () => {
    const pm = await draft();
    const md = renderPostmortemMarkdown(pm);
    for (const h of ['# Postmortem: ', '## Summary', '## Impact and scope', '## Timeline (UTC)', '## Root cause', '## Ruled out and why', '## Actions taken and by whom', '## Follow-ups']) expect(md).toContain(h);
    expect(md).toContain('`apis/apps/v1/namespaces/shop/deployments/checkout#metadata.managedFields[3]`');
    expect(md).toContain(`\`Hypothesis:${pm.rootCause!.source.id}\``);
    expect(md).toContain('Executed as `system:serviceaccount:vigil:vigil-executor`');
    expect(md).toMatch(/- \[ \] Find out who ran `kubectl scale`/);
    const json = JSON.stringify(pm);
    for (const secret of pw.world.scenario.plantedSecrets) {
      expect(md).not.toContain(secret);
      expect(json).not.toContain(secret);
    }
  });
});
