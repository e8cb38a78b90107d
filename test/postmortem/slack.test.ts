import { describe, expect, it } from 'vitest';
import type { Postmortem, TimelineEntry } from '../../src/postmortem/types.js';
import { linesWithin, renderPostmortem } from '../../src/slack/blocks/postmortem.js';
import { BLOCKS_TEXT_BUDGET, blocksTextLength, SLACK_LIMITS } from '../../src/slack/blocks/limits.js';
import { validateBlocks } from '../fakes/slack/blockkit.js';

const at = (s: number) => new Date(Date.UTC(2026, 10, 29, 14, 0, s));
const hostile = 'a <script> & *bold* `code` <!channel> <@U0BOB> ```fence``` _it_ ~s~ ';

function bigPostmortem(n: number): Postmortem {
  const timeline: TimelineEntry[] = Array.from({ length: n }, (_, i) => ({ at: at(i), kind: 'steering', text: `${hostile} entry ${i} ${'x'.repeat(150)}`, actor: 'U0BOB', sources: [{ table: 'SteeringMessage', id: `s${i}` }] }));
  const ev = Array.from({ length: 40 }, (_, i) => ({ summary: `${hostile} evidence ${i}`, stance: 'supports' as const, kind: 'object', citation: { source: 'kubernetes', ref: `apis/x/${i}|<bad>`, ...(i % 2 ? { url: 'https://grafana.example.com/d/x?a=1&b=<2>' } : {}) }, source: { table: 'Evidence' as const, id: `e${i}` } }));
  return {
    incidentId: 'cmx25h8cx0000rl7de7i3c6p9',
    title: `${hostile}${'T'.repeat(400)}`,
    alertName: 'KubeDeploymentReplicasMismatch',
    target: 'shop/checkout',
    owner: 'S0TEAMCHECKOUT',
    generatedAt: at(9999),
    summary: { whatBroke: hostile.repeat(20), cause: hostile.repeat(40), status: 'open', startedAt: at(0), endedAt: at(9999), ongoing: true, durationMs: 9_999_000, sources: [] },
    impact: { scope: hostile.repeat(30), affected: Array.from({ length: 50 }, (_, i) => `Deployment shop/svc-${i}`), alertCount: 12, durationMs: 9_999_000, sources: [] },
    timeline,
    rootCause: { label: 'H1', title: hostile.repeat(10), component: 'Deployment shop/checkout', mechanism: hostile.repeat(40), facts: { replicas: 0 }, confidence: 0.95, evidence: ev, source: { table: 'Hypothesis', id: 'h1' } },
    ruledOut: Array.from({ length: 30 }, (_, i) => ({ label: `H${i + 2}`, title: hostile, status: i % 2 ? 'unrelated' : 'ruled_out', reason: hostile.repeat(3), steeredBy: 'U0BOB', evidence: [], source: { table: 'Hypothesis', id: `h${i + 2}` } })),
    actions: Array.from({ length: 12 }, (_, i) => ({ requestId: `r${i}`, action: 'scale', target: 'deployment/checkout in shop', title: hostile, status: 'executed', requestedBy: 'vigil', requestedAt: at(i), decisions: [{ userId: 'U0VIGILSRE', decision: 'approve', at: at(i), source: { table: 'ApprovalDecision', id: `d${i}` } }], execution: { identity: 'system:serviceaccount:vigil:vigil-executor', writes: 1 }, verification: { ok: true, checks: ['✓ ready'] }, sources: [] })),
    followUps: Array.from({ length: 20 }, (_, i) => ({ text: `${hostile} follow-up ${i}`, why: 'x', sources: [] })),
    gaps: [],
    people: { U0BOB: 'Bob Responder' },
  };
}

describe('renderPostmortem (Slack)', () => {
  it('stays within Slack limits and Block Kit rules for a very long record, cutting lists with "… N more"', () => {
    const m = renderPostmortem(bigPostmortem(500), { issueUrl: 'https://github.com/acme/incidents/issues/7' });
    expect(validateBlocks(m.blocks)).toEqual([]);
    expect(m.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocksPerMessage);
    expect(blocksTextLength(m.blocks)).toBeLessThanOrEqual(BLOCKS_TEXT_BUDGET);
    for (const b of m.blocks) if (b.type === 'section') expect(b.text!.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
    const json = JSON.stringify(m.blocks);
    const mrkdwn = JSON.stringify(m.blocks.filter((b) => b.type !== 'header'));
    expect(json).toMatch(/… \d+ more entries/);
    expect(json).toMatch(/… \d+ more evidence/);
    // Record text cannot ping the channel or inject a link.
    expect(mrkdwn).not.toContain('<!channel>');
    expect(mrkdwn).not.toContain('<script>');
    expect(mrkdwn).toContain('&lt;!channel&gt;');
    expect(json).toContain('<https://github.com/acme/incidents/issues/7|Full draft as a GitHub issue>');
    expect(m.text.length).toBeLessThanOrEqual(SLACK_LIMITS.messageTextRecommended);
  });

  it('opens with the integrity warning when the record fails verification, still within Slack limits', () => {
    const problems = Array.from({ length: 60 }, (_, i) => `ApprovalDecision d${i} (approval r${i}): approver (userId) is "U0MALLORY" but the chain recorded "U0ALICE" ${hostile}`);
    const m = renderPostmortem({ ...bigPostmortem(500), integrity: { ok: false, problems } });
    expect(validateBlocks(m.blocks)).toEqual([]);
    expect(blocksTextLength(m.blocks)).toBeLessThanOrEqual(BLOCKS_TEXT_BUDGET);
    const warning = JSON.stringify(m.blocks[1]);
    expect(warning).toContain('This record fails verification against the audit chain:* 60 stored rows were edited, inserted or removed outside Vigil');
    expect(warning).toContain('approver (userId) is \\"U0MALLORY\\" but the chain recorded \\"U0ALICE\\"');
    expect(warning).toMatch(/… \d+ more problems/);
    expect(warning).not.toContain('<!channel>');
    // Nothing else was pushed out for it: follow-ups and the footer are still there.
    expect(JSON.stringify(m.blocks)).toContain('*Follow-ups*');
    expect(JSON.stringify(m.blocks.at(-1))).toContain('Draft from the stored record');
  });

  it('shows every entry of a short record without omission notes', () => {
    const pm = bigPostmortem(3);
    const m = renderPostmortem({ ...pm, rootCause: { ...pm.rootCause!, evidence: pm.rootCause!.evidence.slice(0, 2) }, ruledOut: pm.ruledOut.slice(0, 2), actions: pm.actions.slice(0, 1), followUps: pm.followUps.slice(0, 2) });
    expect(validateBlocks(m.blocks)).toEqual([]);
    const json = JSON.stringify(m.blocks);
    expect(json).not.toContain('more entries');
    expect(json).toContain('entry 2');
    expect(json).toContain('approved by <@U0VIGILSRE>');
    expect(json).toContain('ruled out by <@U0BOB>');
  });

  it('linesWithin keeps whole lines and says how many were left out', () => {
    expect(linesWithin(['aaaa', 'bbbb', 'cccc'], 100)).toBe('aaaa\nbbbb\ncccc');
    const cut = linesWithin(['aaaa', 'bbbb', 'cccc', 'dddd'], 20);
    expect(cut.length).toBeLessThanOrEqual(20);
    expect(cut).toBe('aaaa\nbbbb\n… 2 more');
  });
});
