import type { KnownBlock } from '@slack/types';
import { contextBlock, sectionBlock, type RenderedMessage } from './elements.js';
import { confidenceWords, shortDuration, slackTime } from './format.js';
import { codeSpan, fallbackText, mention, mrkdwnLink, mrkdwnText } from './mrkdwn.js';
import type { AnswerHypothesis, IncidentAnswer, IncidentCardModel, InvestigationPhase, NextStep } from './models.js';

const PHASE: Record<InvestigationPhase, { icon: string; words: string }> = {
  investigating: { icon: '🔎', words: 'Investigating' },
  triaged: { icon: '🧭', words: 'Triaged' },
  mitigating: { icon: '🛠️', words: 'Mitigating' },
  mitigated: { icon: '🩹', words: 'Mitigated' },
  needs_human: { icon: '🙋', words: 'Needs a human' },
  failed: { icon: '⚠️', words: 'Investigation failed' },
  resolved: { icon: '✅', words: 'Resolved' },
};

const BOUNDS = { title: 200, affected: 300, command: 300, status: 300, reason: 300 } as const;

function firedLine(m: IncidentCardModel): string {
  if (m.alertCount <= 1) return 'fired once';
  return `fired ${m.alertCount}×, last ${slackTime(m.lastAlertAt, false)}`;
}

function statusLine(m: IncidentCardModel): string {
  if (m.status === 'open') return '*Open*';
  return m.resolvedAt ? `*Resolved* at ${slackTime(m.resolvedAt)}` : '*Resolved*';
}

/** `*H1* checkout scaled to 0 · confidence high (0.92)`; the model's words quoted and attributed. */
function hypothesisText(h: AnswerHypothesis): string {
  const title = h.byModel ? `_the model says:_ “${mrkdwnText(h.title.replace(/\s*\n\s*/g, ' '), BOUNDS.title)}”` : mrkdwnText(h.title.replace(/\s*\n\s*/g, ' '), BOUNDS.title);
  return `*${mrkdwnText(h.label, 20)}* ${title} · confidence ${confidenceWords(h.confidence)}`;
}

/** Line 1 after the badge: what is wrong, or "not sure yet" with the best lead. */
function wrongText(m: IncidentCardModel, a: IncidentAnswer | undefined): string {
  if (a?.leading) return hypothesisText(a.leading);
  const lead = a?.lead ? ` — best lead ${hypothesisText(a.lead)}` : '';
  if (m.phase === 'investigating') return `not sure yet: collecting evidence${lead}`;
  if (a?.counts && a.counts.active === 0) return `not sure: every hypothesis was ruled out${lead}`;
  return `not sure yet${a?.counts ? ': no hypothesis is supported by cited evidence' : ''}${lead}`;
}

/** Line 2: what is affected: the target and severity, and the leading hypothesis' scope. */
function affectedText(m: IncidentCardModel, a: IncidentAnswer | undefined): string {
  const parts: string[] = [];
  if (m.target) parts.push(`\`${mrkdwnText(m.target, 120)}\``);
  if (m.severity) parts.push(mrkdwnText(m.severity, 60));
  const where = parts.join(' · ') || 'not known yet';
  return a?.affected ? `${where} — ${mrkdwnText(a.affected.replace(/\s*\n\s*/g, ' '), BOUNDS.affected)}` : where;
}

/** Model text stays the model's: quoted, attributed, never a code span that reads as Vigil's command. */
const modelQuote = (t: string) => `“${mrkdwnText(t.replace(/\s*\n\s*/g, ' '), BOUNDS.command)}”`;

/** Line 3: what to do next, by how far the leading fix went, or who to page. */
function nextText(m: IncidentCardModel, next: NextStep): string {
  switch (next.kind) {
    case 'wait':
      return 'nothing yet: Vigil posts its findings below as it checks; reply in this thread to steer it';
    case 'done':
      return m.resolvedAt ? `nothing: resolved at ${slackTime(m.resolvedAt)}; \`/sre postmortem\` drafts the write-up` : 'nothing: resolved; `/sre postmortem` drafts the write-up';
    case 'retry':
      return 'investigate by hand, or try again (see below)';
    case 'no_fix':
      return 'no fix proposed: check the evidence on the board below and fix by hand, or page the owner';
    case 'page': {
      const who = next.owner ? `${mention(next.owner)} take over` : 'a human takes over';
      const paged = next.paged?.length ? ` · paged via ${next.paged.map((p) => mrkdwnText(p, 40)).join(', ')}` : '';
      return `${who}: ${mrkdwnText(next.reason, BOUNDS.reason)}${paged} (handover below)`;
    }
    case 'fix': {
      const f = next.fix;
      const cmd = f.command ? ` ${codeSpan(f.command, BOUNDS.command)}` : '';
      const risk = next.risk !== undefined ? ` · risk ${next.risk}/100` : '';
      const action = codeSpan(next.action, 60);
      switch (f.state) {
        case 'suggested':
          return f.author === 'model'
            ? `check the model’s suggested fix before running anything: model wrote ${modelQuote(next.suggested ?? next.action)} (not checked by Vigil, not executed)`
            : `run the suggested fix by hand if you agree: ${next.suggested ? codeSpan(next.suggested, BOUNDS.command) : action} (a suggestion only, not executed)`;
        case 'checking':
          return `wait for the fix card: Vigil is checking the proposed ${action} against the write policy`;
        case 'refused':
          return `fix by hand or page the owner: the proposed fix was ${mrkdwnText(f.status ?? 'refused', BOUNDS.status)}`;
        case 'over':
          return `the proposed fix is ${mrkdwnText(f.status ?? 'no longer proposed', BOUNDS.status)}; see the board below`;
        case 'planned':
          if (f.request === 'pending') return `approve or reject the fix on its card in this thread ⤵${cmd}${risk}`;
          if (f.request === 'approved' || f.request === 'executing') return `nothing: Vigil is running the approved fix${cmd}${risk}, then verifies it`;
          if (f.request === 'executed') return `watch the alert clear: the fix${cmd} ran and was verified`;
          return `the fix ${mrkdwnText(f.status ?? 'did not run', BOUNDS.status)}: see its card in this thread; fix by hand or page the owner`;
      }
    }
  }
}

/**
 * The thread's first message: the answer first, edited in place as the investigation moves. Its first three
 * lines say what is wrong (with the state badge), what is affected and what to do next; the details follow
 * in small print (the alert, owner, when it started, how often it fired, links), then any notice. The
 * hypothesis board is the next message, the fix's approval card after it.
 *
 *   🧭 Triaged — H1 checkout scaled to 0 · confidence high (0.92)
 *   Affected: `shop/checkout` · SEV2/critical — all /checkout requests fail
 *   Next: approve or reject the fix on its card in this thread ⤵ `kubectl scale …` · risk 20/100
 */
export function renderIncidentHeader(m: IncidentCardModel): RenderedMessage {
  const phase = PHASE[m.phase];
  const a = m.answer;
  const answer = [
    `${phase.icon} *${phase.words}* — ${wrongText(m, a)}`,
    `*Affected:* ${affectedText(m, a)}`,
    `*Next:* ${nextText(m, a?.next ?? { kind: m.phase === 'resolved' ? 'done' : 'wait' })}`,
  ];

  let title = `*${mrkdwnText(m.title, 300)}*`;
  if (m.alertName && !m.title.includes(m.alertName)) title += ` — ${mrkdwnText(m.alertName, 150)}`;
  const about = [title];
  if (m.owner) about.push(`owner ${mention(m.owner)}`);
  const after = m.firstCardAfterSec !== undefined ? ` (+${shortDuration(m.firstCardAfterSec)})` : '';
  about.push(`started ${slackTime(m.openedAt)}${after}`);

  const facts = [statusLine(m), firedLine(m)];
  if (m.alertLink) facts.push(mrkdwnLink(m.alertLink, 'View alert'));
  facts.push(`via ${mrkdwnText(m.source, 60)}`, `incident ${mrkdwnText(m.incidentId, 60)}`);
  if (m.traceId) facts.push(`trace ${codeSpan(m.traceId, 40)}`);
  if (a?.counts) facts.push(`board below: ${a.counts.active} active, ${a.counts.settled} ruled out or unrelated`);

  const t = m.modelTokens;
  const tokens = t ? [`model tokens ${t.incident.toLocaleString('en-US')} of ${t.incidentCap.toLocaleString('en-US')} for this incident · ${t.day.toLocaleString('en-US')} of ${t.dayCap.toLocaleString('en-US')} today${t.exhausted ? ` · *${t.exhausted === 'incident' ? 'incident' : 'daily'} cap reached: model stopped*` : ''}`] : [];
  const blocks: KnownBlock[] = [sectionBlock(answer.join('\n')), contextBlock([about.join(' · '), facts.join(' · '), ...tokens])];
  if (m.notice) blocks.push(sectionBlock(`⚠️ ${mrkdwnText(m.notice, 1000)}`));

  const what = a?.leading ? `${a.leading.label} ${a.leading.title}` : undefined;
  const summary = [m.status === 'resolved' ? 'Resolved' : phase.words, what, m.title, m.target, m.severity].filter(Boolean).join(' · ');
  return { text: `${phase.icon} ${fallbackText(summary, 300)}`, blocks };
}

/** The same card under the name the issue gives it. */
export const renderSummaryCard = renderIncidentHeader;
