import type { KnownBlock } from '@slack/types';
import { contextBlock, sectionBlock, type RenderedMessage } from './elements.js';
import { shortDuration, slackTime } from './format.js';
import { codeSpan, fallbackText, mention, mrkdwnLink, mrkdwnText } from './mrkdwn.js';
import type { IncidentCardModel, InvestigationPhase } from './models.js';

const PHASE: Record<InvestigationPhase, { icon: string; words: string }> = {
  investigating: { icon: '🔎', words: 'Investigating' },
  triaged: { icon: '🧭', words: 'Triaged' },
  needs_human: { icon: '🙋', words: 'Needs a human' },
  failed: { icon: '⚠️', words: 'Investigation failed' },
  resolved: { icon: '✅', words: 'Resolved' },
};

function firedLine(m: IncidentCardModel): string {
  if (m.alertCount <= 1) return 'fired once';
  return `fired ${m.alertCount}×, last ${slackTime(m.lastAlertAt, false)}`;
}

function statusLine(m: IncidentCardModel): string {
  if (m.status === 'open') return '*Open*';
  return m.resolvedAt ? `*Resolved* at ${slackTime(m.resolvedAt)}` : '*Resolved*';
}

/**
 * The thread's first card: `🔎 Investigating · SEV2/critical · shop/checkout · owner … · started 14:02:11 (+3 s)`,
 * the incident title, then status, how often the alert fired, a link to the alert and any notice.
 */
export function renderIncidentHeader(m: IncidentCardModel): RenderedMessage {
  const phase = PHASE[m.phase];
  const lead = [`${phase.icon} *${phase.words}*`];
  if (m.severity) lead.push(mrkdwnText(m.severity, 60));
  if (m.target) lead.push(`\`${mrkdwnText(m.target, 120)}\``);
  if (m.owner) lead.push(`owner ${mention(m.owner)}`);
  const after = m.firstCardAfterSec !== undefined ? ` (+${shortDuration(m.firstCardAfterSec)})` : '';
  lead.push(`started ${slackTime(m.openedAt)}${after}`);

  let title = `*${mrkdwnText(m.title, 300)}*`;
  if (m.alertName && !m.title.includes(m.alertName)) title += ` — ${mrkdwnText(m.alertName, 150)}`;

  const facts = [statusLine(m), firedLine(m)];
  if (m.alertLink) facts.push(mrkdwnLink(m.alertLink, 'View alert'));
  facts.push(`via ${mrkdwnText(m.source, 60)}`, `incident ${mrkdwnText(m.incidentId, 60)}`);
  if (m.traceId) facts.push(`trace ${codeSpan(m.traceId, 40)}`);

  const blocks: KnownBlock[] = [sectionBlock(`${lead.join(' · ')}\n${title}`), contextBlock([facts.join(' · ')])];
  if (m.notice) blocks.push(sectionBlock(`⚠️ ${mrkdwnText(m.notice, 1000)}`));

  const summary = [m.status === 'resolved' ? 'Resolved' : phase.words, m.title, m.target, m.severity].filter(Boolean).join(' · ');
  return { text: `${phase.icon} ${fallbackText(summary, 300)}`, blocks };
}
