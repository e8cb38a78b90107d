import type { KnownBlock } from '@slack/types';
import { formatDuration, utcStamp, utcTime } from '../../postmortem/format.js';
import type { ProseCredit } from '../../postmortem/prose.js';
import type { Postmortem } from '../../postmortem/types.js';
import { contextBlock, dividerBlock, headerBlock, sectionBlock, type RenderedMessage } from './elements.js';
import { fitBlocks, SLACK_LIMITS } from './limits.js';
import { fallbackText, mention, mrkdwnLink, mrkdwnText } from './mrkdwn.js';

/**
 * The postmortem draft as one thread message. Each section has its own text budget (the sum stays under
 * BLOCKS_TEXT_BUDGET), lists are cut at a whole line with "… N more", and the full draft lives in the
 * GitHub issue when one was opened.
 */

/** `integrity` is only spent when the record fails verification, and is then taken from the timeline's. */
const BUDGET = { integrity: 900, summary: 900, impact: 700, timeline: 2400, cause: 1400, ruledOut: 1000, actions: 1000, followUps: 1000 } as const;

/** Lines joined under `max` characters; the rest is replaced by one `… N more` line. */
export function linesWithin(lines: string[], max: number, noun = 'more'): string {
  const out: string[] = [];
  let length = 0;
  for (const [i, line] of lines.entries()) {
    const left = lines.length - i - 1;
    const tail = left > 0 ? `\n… ${left} ${noun}`.length : 0;
    if (length + line.length + 1 + tail > max) {
      out.push(`… ${lines.length - i} ${noun}`);
      return out.join('\n');
    }
    out.push(line);
    length += line.length + 1;
  }
  return out.join('\n');
}

const one = (s: string, max: number): string => mrkdwnText(s.replace(/\s*\n\s*/g, ' '), max);
const whoIs = (id: string): string => (id === 'vigil' ? 'Vigil' : mention(id));

/** Who wrote the narrative (cause, scope, mechanism); every other line is the record's. */
function proseLine(credit: ProseCredit): string {
  if (credit.by === 'model') return `✍️ Prose by the model \`${one(credit.model, 80)}\` (${one(credit.provider, 30)}) from the record's facts; its names, numbers, times and links were checked against the record`;
  return `✍️ Prose by rules${credit.note ? ` · ⚠️ ${one(credit.note, 400)}` : ''}`;
}

export function renderPostmortem(pm: Postmortem & { prose?: ProseCredit }, opts: { issueUrl?: string } = {}): RenderedMessage {
  const s = pm.summary;
  const blocks: KnownBlock[] = [headerBlock(`📝 Postmortem draft: ${pm.title}`)];
  const timelineBudget = BUDGET.timeline - (pm.integrity ? BUDGET.integrity : 0);
  if (pm.integrity) {
    // First, before any name or time: the record was edited outside Vigil (src/audit/integrity.ts).
    const n = pm.integrity.problems.length;
    const head = `⚠️ *This record fails verification against the audit chain:* ${n} stored row${n === 1 ? ' was' : 's were'} edited, inserted or removed outside Vigil. Do not rely on the names, times or statuses below until \`vigil audit verify\` has been looked into.`;
    blocks.push(sectionBlock(linesWithin([head, ...pm.integrity.problems.map((p) => `• ${one(p, 300)}`)], BUDGET.integrity, 'more problems')));
  }

  const duration = `${formatDuration(s.durationMs)} (${utcStamp(s.startedAt)} → ${s.ongoing ? 'still open' : utcStamp(s.endedAt)})${s.mitigatedAt ? ` · mitigated ${utcStamp(s.mitigatedAt)}` : ''}`;
  blocks.push(
    sectionBlock(
      linesWithin(
        [`*What broke:* ${one(s.whatBroke, 200)}`, `*Cause:* ${one(s.cause, 400)}`, `*Duration:* ${one(duration, 150)}`, `*Status:* ${s.status}${pm.owner ? ` · owner ${mention(pm.owner)}` : ''}`],
        BUDGET.summary,
      ),
    ),
  );
  const impact = [
    `*Impact and scope:* ${pm.impact.scope ? one(pm.impact.scope, 400) : '_not established_'}`,
    ...(pm.impact.affected.length ? [`*Affected:* ${one(pm.impact.affected.join(', '), 200)}`] : []),
    `*Alerts:* ${pm.impact.alertCount} firing over ${formatDuration(pm.impact.durationMs)}`,
  ];
  blocks.push(sectionBlock(linesWithin(impact, BUDGET.impact)), dividerBlock());

  const sameDay = (d: Date): boolean => d.toISOString().slice(0, 10) === s.startedAt.toISOString().slice(0, 10);
  const timeline = pm.timeline.map((e) => `\`${sameDay(e.at) ? utcTime(e.at) : utcStamp(e.at).slice(0, 16)}\` ${one(e.text, 220)}`);
  blocks.push(sectionBlock(`*Timeline (UTC)*\n${linesWithin(timeline, timelineBudget - 20, 'more entries')}`));

  if (pm.rootCause) {
    const rc = pm.rootCause;
    const evidence = rc.evidence.map((e) => `• ${one(e.summary, 200)} — ${e.citation.url ? mrkdwnLink(e.citation.url, e.citation.ref, 120) : `\`${one(e.citation.ref.replace(/`/g, "'"), 120)}\``}`);
    const head = [
      `*Root cause — ${one(rc.label, 10)} ${one(rc.title, 200)}* (${Math.round(rc.confidence * 100)}%${rc.steeredBy ? `, confirmed by ${whoIs(rc.steeredBy)}` : ''})`,
      ...(rc.component ? [`Component: ${one(rc.component, 150)}`] : []),
      one(rc.mechanism, 500),
    ];
    blocks.push(sectionBlock(linesWithin([...head, ...evidence], BUDGET.cause, 'more evidence')));
  } else {
    blocks.push(sectionBlock(`*Root cause:* _${one(s.cause, 600)}_`));
  }

  const ruled = pm.ruledOut.map((h) => `• *${one(h.label, 10)}* ${one(h.title, 160)} — ${h.status === 'unrelated' ? 'marked unrelated' : 'ruled out'}${h.steeredBy ? ` by ${whoIs(h.steeredBy)}` : ''}: ${h.reason ? one(h.reason, 240) : '_no reason recorded_'}`);
  blocks.push(sectionBlock(`*Ruled out and why*\n${ruled.length ? linesWithin(ruled, BUDGET.ruledOut - 30) : '_nothing_'}`));

  const actions = pm.actions.map((a) => {
    const decided = a.decisions.map((d) => `${d.decision === 'approve' ? 'approved' : 'rejected'} by ${whoIs(d.userId)}`).join(', ');
    const ran = a.execution ? ` · ran as \`${one(a.execution.identity ?? 'executor', 80)}\`` : '';
    const ver = a.verification ? ` · verification ${a.verification.ok ? '✓' : '✗'}` : '';
    return `• ${one(a.title, 160)} — ${a.status}${decided ? ` (${decided})` : ''}${ran}${ver}`;
  });
  blocks.push(sectionBlock(`*Actions taken and by whom*\n${actions.length ? linesWithin(actions, BUDGET.actions - 30) : '_no action went through Vigil_'}`));

  const follow = pm.followUps.map((f) => `• ${one(f.text, 300)}`);
  blocks.push(sectionBlock(`*Follow-ups*\n${follow.length ? linesWithin(follow, BUDGET.followUps - 20) : '_none_'}`));

  const foot = [`Draft from the stored record of incident \`${one(pm.incidentId, 40)}\`, ${utcStamp(pm.generatedAt)}`, proseLine(pm.prose ?? { by: 'rules' })];
  if (opts.issueUrl) foot.push(mrkdwnLink(opts.issueUrl, 'Full draft as a GitHub issue'));
  blocks.push(contextBlock(foot));

  return {
    text: fallbackText(`Postmortem draft: ${pm.title} — ${s.cause}`, SLACK_LIMITS.messageTextRecommended - 100),
    blocks: fitBlocks(blocks, SLACK_LIMITS.blocksPerMessage, { keepTail: 1, noun: 'sections' }),
  };
}
