import { describe, expect, it } from 'vitest';
import { renderHelp, renderStatus } from '../../../src/slack/blocks/commands.js';
import { renderIncidentHeader } from '../../../src/slack/blocks/incident.js';
import { renderAlreadyTrackedNote, renderErrorNote, renderManualRoot, renderRepeatNote, renderResolvedNote } from '../../../src/slack/blocks/notes.js';
import { renderBlocksAsText } from '../../../src/slack/blocks/text.js';
import { at, demoIncident } from './demo-board.js';
import { allTexts, expectValidMessage } from './valid.js';

const joined = (m: { blocks: unknown[] }): string => allTexts(m.blocks).join('\n');

describe('renderIncidentHeader', () => {
  it('renders the mission sketch line, status, alert count and link', () => {
    const m = renderIncidentHeader(demoIncident);
    expectValidMessage(m);
    const lines = renderBlocksAsText(m).split('\n');
    expect(lines[0]).toBe('🔎 Investigating · SEV2/critical · `shop/checkout` · owner @S0TEAMCHK · started 14:02:11 UTC (+3 s)');
    expect(lines[1]).toBe('KubeDeploymentReplicasMismatch (checkout shop critical)');
    expect(lines[2]).toContain('Open · fired 3×, last 14:05 UTC · View alert (https://alertmanager.example.com/#/alerts?filter={alertname="KubeDeploymentReplicasMismatch"}&silenced=false)');
    expect(joined(m)).toContain('owner <!subteam^S0TEAMCHK>');
    expect(m.text).toBe('🔎 Investigating · KubeDeploymentReplicasMismatch (checkout shop critical) · shop/checkout · SEV2/critical');
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
