import type { KnownBlock } from '@slack/types';
import type { HypothesisStatus } from '../../triage/types.js';
import { contextBlock, dividerBlock, headerBlock, sectionBlock, type RenderedMessage } from './elements.js';
import { slackTime, utcClock } from './format.js';
import { displayStatus, isSettledHypothesis, orderForDisplay, renderHypothesis, settledLine, STATUS_DISPLAY } from './hypothesis.js';
import { BLOCKS_TEXT_BUDGET, blocksTextLength, fitBlocks, SLACK_LIMITS } from './limits.js';
import { codeSpan, fallbackText, mention, mrkdwnText } from './mrkdwn.js';
import type { BoardFix, BoardHypothesis, BoardModel, BoardProcedure } from './models.js';
import type { MitigationProposal } from '../../triage/types.js';

const BOUNDS = { scope: 500, command: 300, rationale: 500, steering: 5, steeringText: 200, gaps: 6, gapText: 150, procedureTitle: 150, procedureSteps: 4, procedureStep: 300 } as const;

const LEGEND = (Object.keys(STATUS_DISPLAY) as HypothesisStatus[]).map((s) => `${STATUS_DISPLAY[s].marker} ${STATUS_DISPLAY[s].words}`).join('  ');

/** Scope, suggested mitigation, steering, gaps and the "updated" line: always shown, each bounded. */
function footerBlocks(m: BoardModel): KnownBlock[] {
  const blocks: KnownBlock[] = [dividerBlock()];
  // The leading hypothesis shows its scope above (and the summary card as "Affected"): not a third time.
  if (m.scope && !m.hypotheses.some((h) => h.status === 'supported' && h.scope?.trim() === m.scope?.trim())) blocks.push(sectionBlock(`*Scope:* ${mrkdwnText(m.scope, BOUNDS.scope)}`));
  if (m.mitigation) blocks.push(sectionBlock(mitigationText(m.mitigation, m.fix)));
  if (m.procedure) blocks.push(...procedureBlocks(m.procedure));
  if (m.changes && m.changes.length > 0) {
    const lines = m.changes.slice(0, 3).map((c) => `• ${slackTime(c.at)} ${mrkdwnText(c.summary.replace(/\s*\n\s*/g, ' '), 160)} _(${mrkdwnText(c.why.join(' · '), 120)})_`);
    blocks.push(sectionBlock(`*What changed* (most related first)\n${lines.join('\n')}`));
  }
  if (m.steering.length > 0) {
    const recent = m.steering.slice(-BOUNDS.steering);
    const earlier = m.steering.length - recent.length;
    const lines = recent.map((s) => `• ${mention(s.userId)} “${mrkdwnText(s.text.replace(/\s*\n\s*/g, ' '), BOUNDS.steeringText)}” · ${slackTime(s.at)}`);
    if (earlier > 0) lines.unshift(`_${earlier} earlier not shown_`);
    blocks.push(sectionBlock(`*Steering received*\n${lines.join('\n')}`));
  }
  if (m.gaps.length > 0) {
    const shown = m.gaps.slice(0, BOUNDS.gaps).map((g) => `• ${mrkdwnText(g.replace(/\s*\n\s*/g, ' '), BOUNDS.gapText)}`);
    const more = m.gaps.length - shown.length;
    if (more > 0) shown.push(`+${more} more`);
    blocks.push(sectionBlock(`⚠️ *Could not check* (do not assume these passed):\n${shown.join('\n')}`));
  }
  blocks.push(contextBlock([`updated ${slackTime(m.updatedAt)}`, `incident ${mrkdwnText(m.incidentId, 60)}`, LEGEND]));
  return blocks;
}

/**
 * The team skill cited for the leading hypothesis: a context line naming it and its file, then its
 * follow-up checks ("find who did it") as the next steps, each one line. Skill text is the team's own
 * Markdown: `**bold**` becomes Slack's `*bold*`; everything is escaped and bounded.
 */
function procedureBlocks(p: BoardProcedure): KnownBlock[] {
  const cite = `📘 *Procedure${p.hypothesis ? ` for ${mrkdwnText(p.hypothesis, 10)}` : ''}:* ${mrkdwnText(p.title, BOUNDS.procedureTitle)} (${codeSpan(p.file, 120)})`;
  const blocks: KnownBlock[] = [contextBlock([cite])];
  const steps = p.steps.slice(0, BOUNDS.procedureSteps).map((s) => `• ${mrkdwnText(s.replace(/\*\*(.+?)\*\*/g, '*$1*').replace(/\s*\n\s*/g, ' '), BOUNDS.procedureStep)}`);
  if (steps.length > 0) blocks.push(sectionBlock(`*Follow-ups from the procedure*\n${steps.join('\n')}`));
  return blocks;
}

/** Model text as the model's: quoted and attributed, one line, never a code span that reads as Vigil's command. */
function modelWrote(text: string, max: number): string {
  return `model wrote: “${mrkdwnText(text.replace(/\s*\n\s*/g, ' '), max)}”`;
}

/**
 * The leading fix. A command is shown only when Vigil stands behind it: its own analyzers' suggestion when
 * Vigil is read-only, or the planner's command once the policy accepted it. A refused proposal shows its
 * refusal and nothing it wrote; the model's words are always quoted and attributed.
 */
function mitigationText(p: MitigationProposal, fix: BoardFix | undefined): string {
  const model = fix?.author === 'model';
  const rationale = model ? modelWrote(p.rationale, BOUNDS.rationale) : mrkdwnText(p.rationale, BOUNDS.rationale);
  switch (fix?.state ?? 'suggested') {
    case 'suggested':
      return model
        ? ['*Suggested mitigation* _(the model’s suggestion, not checked by Vigil and not executed)_', modelWrote(p.command, BOUNDS.command), rationale].join('\n')
        : ['*Suggested mitigation* _(a suggestion only, not executed)_', codeSpan(p.command, BOUNDS.command), rationale].join('\n');
    case 'checking':
      return ['*Proposed fix* _(being planned and checked against the write policy; its command shows once they accept it)_', rationale].join('\n');
    case 'planned':
      return [`*Proposed fix* — ${mrkdwnText(fix!.status ?? 'planned', BOUNDS.rationale)}`, ...(fix!.command ? [codeSpan(fix!.command, BOUNDS.command)] : []), rationale].join('\n');
    case 'refused':
      return `*Proposed fix* — ⛔ ${mrkdwnText(fix!.status ?? 'refused', BOUNDS.rationale)}`;
    case 'over':
      return `*Proposed fix* — ${mrkdwnText(fix!.status ?? 'no longer proposed', BOUNDS.rationale)}`;
  }
}

function omittedSummary(rest: readonly BoardHypothesis[]): string {
  const counts = new Map<HypothesisStatus, number>();
  for (const h of rest) {
    const s = displayStatus(h).status;
    counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  const parts = (Object.keys(STATUS_DISPLAY) as HypothesisStatus[])
    .filter((s) => counts.has(s))
    .map((s) => `${counts.get(s)} ${STATUS_DISPLAY[s].words}`);
  return `… ${rest.length} more ${rest.length === 1 ? 'hypothesis' : 'hypotheses'} not shown: ${parts.join(', ')}`;
}

function fallback(m: BoardModel, ordered: readonly BoardHypothesis[]): string {
  const top = ordered[0];
  const when = `updated ${utcClock(m.updatedAt)} UTC`;
  if (!top) return fallbackText(`Hypothesis board: no hypotheses yet · ${when}`, 300);
  const others = ordered.length > 1 ? ` (+${ordered.length - 1} more)` : '';
  const status = STATUS_DISPLAY[displayStatus(top).status].words;
  return fallbackText(`Hypothesis board: ${top.label} ${status}: ${top.title}${others} · ${when}`, 300);
}

/** The "Show all N" button: opens a dialog with every hypothesis in full; its value is the incident id. */
export const BOARD_SHOW_ALL = 'board_show_all';

/** Ruled-out and unrelated hypotheses listed one line each on the board; the rest are counted. */
const SETTLED_LINES = 8;

/**
 * Ruled-out and unrelated hypotheses, one line each with the reason (`○ H2 ruled out — Helm rollback: last
 * Helm change 3 days ago`) as far as `textBudget` allows, the rest and the active hypotheses that did not fit
 * counted in one line; then the "Show all N" button. With no budget it is the worst case (everything counted).
 */
function settledBlocks(m: BoardModel, settled: readonly BoardHypothesis[], omitted: readonly BoardHypothesis[], total: number, textBudget = 0): KnownBlock[] {
  if (settled.length === 0 && omitted.length === 0) return [];
  const lines: string[] = [];
  let used = 0;
  for (const h of settled.slice(0, SETTLED_LINES)) {
    const line = settledLine(h);
    if (used + line.length + 1 > Math.min(textBudget, SLACK_LIMITS.textObject)) break;
    lines.push(line);
    used += line.length + 1;
  }
  const rest = [...omitted, ...settled.slice(lines.length)];
  const blocks: KnownBlock[] = [];
  if (lines.length > 0) blocks.push(contextBlock([lines.join('\n')]));
  if (rest.length > 0) blocks.push(contextBlock([omittedSummary(rest)]));
  const button = { type: 'button' as const, action_id: BOARD_SHOW_ALL, text: { type: 'plain_text' as const, text: `Show all ${total} with evidence` }, value: m.incidentId.slice(0, 200) };
  blocks.push({ type: 'actions', block_id: 'board:show_all', elements: [button] } as KnownBlock);
  return blocks;
}

/**
 * The hypothesis board, edited in place as the investigation moves. Compact: supported, open and not-sure
 * hypotheses in full with their evidence and one ⋯ menu each (Confirm / Refute… / Pin / Add evidence…);
 * ruled-out and unrelated ones one line each with the reason, and "Show all N" opens them in full; then
 * scope, the suggested mitigation, steering received (always shown), gaps and when it was updated. Whatever
 * the input size it stays within one message's limits: what does not fit is counted by status.
 */
export function renderHypothesisBoard(m: BoardModel): RenderedMessage {
  const ordered = orderForDisplay(m.hypotheses);
  const active = ordered.filter((h) => !isSettledHypothesis(h));
  const settled = ordered.filter((h) => isSettledHypothesis(h));
  const head: KnownBlock[] = [headerBlock('Hypothesis board')];
  const footer = footerBlocks(m);
  // Worst case of the settled part: every hypothesis counted, plus the block its one-line list takes.
  const reserve = [...settledBlocks(m, settled, ordered, ordered.length), ...(settled.length ? [contextBlock(['—'])] : [])];
  const maxBlocks = SLACK_LIMITS.blocksPerMessage - head.length - footer.length - reserve.length - 1;
  const maxText = BLOCKS_TEXT_BUDGET - blocksTextLength(head) - blocksTextLength(footer) - blocksTextLength(reserve);

  const body: KnownBlock[] = [];
  let text = 0;
  let shown = 0;
  for (const h of active) {
    const blocks = renderHypothesis(h);
    const size = blocksTextLength(blocks);
    if (body.length + blocks.length > maxBlocks || text + size > maxText) break;
    body.push(...blocks);
    text += size;
    shown++;
  }
  if (ordered.length === 0) body.push(sectionBlock('_No hypotheses yet — still collecting evidence._'));
  else if (active.length === 0) body.push(sectionBlock('_No hypothesis stands: every one is ruled out or unrelated._'));
  // Settled lines get what text the active hypotheses left.
  body.push(...settledBlocks(m, settled, active.slice(shown), ordered.length, maxText - text));

  // Safety net only: the budget above already keeps the board within one message.
  const blocks = fitBlocks([...head, ...body, ...footer], SLACK_LIMITS.blocksPerMessage, { keepTail: footer.length });
  return { text: fallback(m, ordered), blocks };
}

/** Blocks a modal may hold (Slack: 100). */
const MODAL_BLOCKS = 100;

/**
 * The "Show all" dialog: every hypothesis in full, in board order, with its evidence and (except unrelated
 * ones) its ⋯ menu, so a ruled-out hypothesis can be confirmed again from here.
 */
export function renderAllHypothesesView(m: BoardModel): { type: 'modal'; title: { type: 'plain_text'; text: string }; close: { type: 'plain_text'; text: string }; blocks: KnownBlock[]; private_metadata: string } {
  const ordered = orderForDisplay(m.hypotheses);
  const blocks: KnownBlock[] = [contextBlock([`${ordered.length} ${ordered.length === 1 ? 'hypothesis' : 'hypotheses'} · updated ${slackTime(m.updatedAt)} · incident ${mrkdwnText(m.incidentId, 60)}`, LEGEND])];
  let shown = 0;
  for (const h of ordered) {
    const next = renderHypothesis(h);
    if (blocks.length + next.length + 1 > MODAL_BLOCKS || blocksTextLength([...blocks, ...next]) > BLOCKS_TEXT_BUDGET) break;
    blocks.push(...next);
    shown++;
  }
  if (ordered.length === 0) blocks.push(sectionBlock('_No hypotheses yet — still collecting evidence._'));
  if (shown < ordered.length) blocks.push(contextBlock([omittedSummary(ordered.slice(shown))]));
  return {
    type: 'modal',
    title: { type: 'plain_text', text: 'All hypotheses' },
    close: { type: 'plain_text', text: 'Close' },
    private_metadata: JSON.stringify({ incidentId: m.incidentId }),
    blocks,
  };
}
