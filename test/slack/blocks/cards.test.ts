import { describe, expect, it } from 'vitest';
import { renderHelp, renderStatus } from '../../../src/slack/blocks/commands.js';
import { renderIncidentHeader } from '../../../src/slack/blocks/incident.js';
import { renderAlreadyTrackedNote, renderErrorNote, renderManualRoot, renderRepeatNote, renderResolvedNote } from '../../../src/slack/blocks/notes.js';
import { renderBlocksAsText } from '../../../src/slack/blocks/text.js';
import { at, demoIncident } from './demo-board.js';
import type { IncidentAnswer, IncidentCardModel } from '../../../src/slack/blocks/models.js';
import { allTexts, expectValidMessage } from './valid.js';

const joined = (m: { blocks: unknown[] }): string => allTexts(m.blocks).join('\n');

describe('renderIncidentHeader: the summary card, answer first', () => {
  it('says in its first three lines what is wrong, what is affected and what to do next; the details after', () => {
    const m = renderIncidentHeader(demoIncident);
    expectValidMessage(m);
    const lines = renderBlocksAsText(m).split('\n');
    expect(lines[0]).toBe('🔎 Investigating — not sure yet: collecting evidence');
    expect(lines[1]).toBe('Affected: `shop/checkout` · SEV2/critical');
    expect(lines[2]).toBe('Next: nothing yet: Vigil posts its findings below as it checks; reply in this thread to steer it');
    expect(lines[3]).toContain('KubeDeploymentReplicasMismatch (checkout shop critical) · owner @S0TEAMCHK · started 14:02:11 UTC (+3 s)');
    expect(lines[3]).toContain('Open · fired 3×, last 14:05 UTC · View alert (https://alertmanager.example.com/#/alerts?filter={alertname="KubeDeploymentReplicasMismatch"}&silenced=false)');
    expect(joined(m)).toContain('owner <!subteam^S0TEAMCHK>');
    expect(m.text).toBe('🔎 Investigating · KubeDeploymentReplicasMismatch (checkout shop critical) · shop/checkout · SEV2/critical');
  });

  const answered = (phase: IncidentCardModel['phase'], answer: IncidentAnswer, over: Partial<IncidentCardModel> = {}) => {
    const m = renderIncidentHeader({ ...demoIncident, phase, answer, ...over });
    expectValidMessage(m);
    return renderBlocksAsText(m).split('\n');
  };
  const h1 = { label: 'H1', title: 'checkout scaled to 0 by `kubectl scale`', confidence: 0.92 };
  const planned = (request: string) => ({ kind: 'fix' as const, action: 'scale', risk: 20, fix: { author: 'vigil' as const, state: 'planned' as const, command: 'kubectl scale deployment/checkout -n shop --replicas=3', request, status: 'x' } });

  it('Triaged: the leading hypothesis with its confidence, its scope, and the fix to approve with its risk', () => {
    const lines = answered('triaged', { leading: h1, affected: 'all /checkout requests fail', counts: { active: 1, settled: 2 }, next: planned('pending') });
    expect(lines.slice(0, 3)).toEqual([
      '🧭 Triaged — H1 checkout scaled to 0 by `kubectl scale` · confidence high (0.92)',
      'Affected: `shop/checkout` · SEV2/critical — all /checkout requests fail',
      'Next: approve or reject the fix on its card in this thread ⤵ `kubectl scale deployment/checkout -n shop --replicas=3` · risk 20/100',
    ]);
    expect(lines[3]).toContain('board below: 1 active, 2 ruled out or unrelated');
  });

  it('moves Triaged → Mitigating → Mitigated → Resolved with the next step following the fix', () => {
    expect(answered('mitigating', { leading: h1, next: planned('executing') })[0]).toBe('🛠️ Mitigating — H1 checkout scaled to 0 by `kubectl scale` · confidence high (0.92)');
    expect(answered('mitigating', { leading: h1, next: planned('approved') })[2]).toBe('Next: nothing: Vigil is running the approved fix `kubectl scale deployment/checkout -n shop --replicas=3` · risk 20/100, then verifies it');
    const mitigated = answered('mitigated', { leading: h1, next: planned('executed') });
    expect(mitigated[0]).toMatch(/^🩹 Mitigated — H1/);
    expect(mitigated[2]).toBe('Next: watch the alert clear: the fix `kubectl scale deployment/checkout -n shop --replicas=3` ran and was verified');
    const resolved = answered('resolved', { leading: h1, next: { kind: 'done' } }, { status: 'resolved', resolvedAt: at('14:30:00') });
    expect(resolved[0]).toMatch(/^✅ Resolved — H1/);
    expect(resolved[2]).toBe('Next: nothing: resolved at 14:30:00 UTC; `/sre postmortem` drafts the write-up');
  });

  it('Needs a human: not sure, the best lead, and who takes over (and who was paged)', () => {
    const lines = answered('needs_human', {
      lead: { label: 'H2', title: 'database slow', confidence: 0.4 },
      counts: { active: 1, settled: 1 },
      next: { kind: 'page', owner: 'S0TEAMCHK', reason: 'no hypothesis reached the confidence threshold', paged: ['PagerDuty'] },
    });
    expect(lines[0]).toBe('🙋 Needs a human — not sure yet: no hypothesis is supported by cited evidence — best lead H2 database slow · confidence low (0.40)');
    expect(lines[2]).toBe('Next: @S0TEAMCHK take over: no hypothesis reached the confidence threshold · paged via PagerDuty (handover below)');
  });

  it('shows a read-only suggestion as a suggestion, and a model’s as quoted model text', () => {
    const vigil = { kind: 'fix' as const, action: 'scale', suggested: 'kubectl scale deployment/checkout -n shop --replicas=3', fix: { author: 'vigil' as const, state: 'suggested' as const } };
    expect(answered('triaged', { leading: h1, next: vigil })[2]).toBe('Next: run the suggested fix by hand if you agree: `kubectl scale deployment/checkout -n shop --replicas=3` (a suggestion only, not executed)');
    const model = answered('triaged', { leading: { ...h1, byModel: true }, next: { ...vigil, fix: { author: 'model', state: 'suggested' } } });
    expect(model[0]).toContain('the model says: “checkout scaled to 0');
    expect(model[2]).toBe('Next: check the model’s suggested fix before running anything: model wrote “kubectl scale deployment/checkout -n shop --replicas=3” (not checked by Vigil, not executed)');
    const refused = answered('triaged', { leading: h1, next: { kind: 'fix', action: 'scale', fix: { author: 'model', state: 'refused', status: 'refused by policy: never in kube-system (rule r1)' } } });
    expect(refused[2]).toBe('Next: fix by hand or page the owner: the proposed fix was refused by policy: never in kube-system (rule r1)');
    expect(answered('triaged', { leading: h1, next: { kind: 'fix', action: 'scale', fix: { author: 'vigil', state: 'checking' } } })[2]).toBe('Next: wait for the fix card: Vigil is checking the proposed `scale` against the write policy');
  });

  it('shows resolution, a notice, and survives hostile input', () => {
    const m = renderIncidentHeader({
      ...demoIncident,
      status: 'resolved',
      phase: 'resolved',
      resolvedAt: at('14:30:00'),
      alertCount: 1,
      owner: '@team-checkout',
      title: `<!here> ${'t'.repeat(10_000)}`,
      notice: 'Kubernetes API unreachable: connect ECONNREFUSED 127.0.0.1:6443; retrying',
      alertLink: 'javascript:alert(1)',
    });
    expectValidMessage(m);
    const text = joined(m);
    expect(text).toContain('*Resolved* at <!date^1741098600^{time_secs}|14:30:00 UTC>');
    expect(text).toContain('fired once');
    expect(text).toContain('⚠️ Kubernetes API unreachable');
    expect(text).toContain('owner @team-checkout');
    expect(text).not.toContain('<!here>');
    expect(text).not.toContain('javascript:');
    expect(m.text.length).toBeLessThanOrEqual(310);
  });
});

describe('thread notes', () => {
  it('says how often the alert fired again', () => {
    const m = renderRepeatNote({ count: 3, at: at('14:05:00'), link: 'https://am.example.com/a' });
    expectValidMessage(m);
    expect(renderBlocksAsText(m)).toBe('🔁 Alert fired again (3rd time) at 14:05:00 UTC · View alert (https://am.example.com/a)');
    expect(m.text).toBe('Alert fired again (3rd time) at 14:05:00 UTC');
    expect(renderRepeatNote({ count: 12, at: at('14:05:00') }).text).toContain('(12th time)');
  });

  it('says who or what resolved it', () => {
    expect(renderBlocksAsText(renderResolvedNote({ at: at('14:30:00'), by: 'alert' }))).toBe('✅ Resolved at 14:30:00 UTC — the alert cleared');
    const byUser = renderResolvedNote({ at: at('14:30:00'), by: 'U0BOB' });
    expectValidMessage(byUser);
    expect(joined(byUser)).toContain('resolved by <@U0BOB>');
  });

  it('points a duplicate post to the incident thread', () => {
    const m = renderAlreadyTrackedNote({ permalink: 'https://acme.slack.com/archives/C1/p1700000000000100' });
    expectValidMessage(m);
    expect(joined(m)).toContain('<https://acme.slack.com/archives/C1/p1700000000000100|the incident thread>');
    expect(joined(renderAlreadyTrackedNote({ permalink: '' }))).toContain('the incident thread in this channel');
  });

  it('renders the manual root post with the request quoted and escaped', () => {
    const m = renderManualRoot({ requestedBy: 'U0ALICE', text: 'checkout 5xx > 50% & rising\nsince 14:00' });
    expectValidMessage(m);
    expect(joined(m)).toContain('🔍 *Investigation requested* by <@U0ALICE>\n>checkout 5xx &gt; 50% &amp; rising\n>since 14:00');
    expectValidMessage(renderManualRoot({ requestedBy: 'U0ALICE', text: '😀'.repeat(5000) }));
  });

  it('renders an error with what happened and what to do', () => {
    const m = renderErrorNote({ what: 'Could not start the investigation', detail: 'database is locked', next: 'Try again in a minute; if it persists, tell #sre-platform.' });
    expectValidMessage(m);
    expect(renderBlocksAsText(m).split('\n')).toEqual([
      '⚠️ Could not start the investigation',
      'database is locked',
      'What to do: Try again in a minute; if it persists, tell #sre-platform.',
    ]);
  });
});

describe('/sre responses', () => {
  it('lists subcommands with examples', () => {
    const m = renderHelp();
    expectValidMessage(m);
    const text = renderBlocksAsText(m);
    expect(text).toContain('• `/sre investigate <text or alert link>` — start an investigation thread');
    expect(text).toContain('e.g. `/sre investigate checkout returns 503 since 14:00`');
    expect(text).toContain('`/sre status`');
    expect(text).toContain('`/sre help`');
  });

  it('shows an unknown subcommand error first', () => {
    const m = renderHelp({ error: 'Unknown subcommand “frobnicate”.' });
    expectValidMessage(m);
    expect(renderBlocksAsText(m).split('\n')[0]).toBe('⚠️ Unknown subcommand “frobnicate”.');
    expect(m.text).toContain('Unknown subcommand');
  });

  it('renders status for none, some and very many open incidents', () => {
    const none = renderStatus({ open: [], resolvedRecently: 2 });
    expectValidMessage(none);
    expect(renderBlocksAsText(none)).toContain('No open incidents.');

    const one = renderStatus({
      open: [{ incidentId: 'inc_1', title: 'checkout down', target: 'shop/checkout', phase: 'triaged', openedAt: at('14:02:11'), permalink: 'https://acme.slack.com/archives/C1/p1', leading: 'H1 checkout scaled to 0' }],
      resolvedRecently: 0,
    });
    expectValidMessage(one);
    const lines = renderBlocksAsText(one).split('\n');
    expect(lines).toContain('checkout down (https://acme.slack.com/archives/C1/p1) · `shop/checkout` · triaged · since 14:02 UTC');
    expect(lines).toContain('leading: H1 checkout scaled to 0');

    const many = renderStatus({
      open: Array.from({ length: 200 }, (_, i) => ({ incidentId: `inc_${i}`, title: 'x'.repeat(5000), phase: 'investigating' as const, openedAt: at('14:00:00'), leading: 'y'.repeat(5000) })),
      resolvedRecently: 5,
    });
    expectValidMessage(many);
    expect(joined(many)).toContain('more open');
  });
});
