import type { KnownBlock } from '@slack/types';
import type { Citation } from '../../evidence/types.js';
import type { HypothesisStatus } from '../../triage/types.js';
import { contextBlock, sectionBlock } from './elements.js';
import { confidenceWords, slackDateTime, slackTime } from './format.js';
import { codeSpan, mention, mrkdwnLink, mrkdwnText } from './mrkdwn.js';
import type { BoardHypothesis, EvidenceLine } from './models.js';
import { truncateMrkdwn } from './truncate.js';

/** How each status reads on the board, and its display order (lower first). */
export const STATUS_DISPLAY: Record<HypothesisStatus, { marker: string; words: string; rank: number }> = {
  supported: { marker: '●', words: 'supported', rank: 0 },
  open: { marker: '◐', words: 'open', rank: 1 },
  inconclusive: { marker: '◌', words: 'not sure', rank: 2 },
  ruled_out: { marker: '○', words: 'ruled out', rank: 3 },
  unrelated: { marker: '⊘', words: 'unrelated', rank: 4 },
};

/** Per-hypothesis bounds, so one verbose hypothesis cannot crowd out the rest of the board. */
const BOUNDS = {
  title: 200,
  mechanism: { active: 500, settled: 200 },
  reason: 300,
  scope: 200,
  evidenceLines: { active: 4, settled: 2 },
  evidenceSummary: 200,
  citationRef: 120,
  citationUrl: 600,
  citationCommand: 200,
  evidenceText: 1500,
  settledTitle: 120,
  settledReason: 200,
} as const;

const isSettled = (s: HypothesisStatus): boolean => s === 'ruled_out' || s === 'unrelated';

const isCited = (c: Citation): boolean => c.source.trim().length > 0 && c.ref.trim().length > 0;

/**
 * The status the board shows. Defence in depth for the rule "never supported without cited evidence": a
 * `supported` hypothesis with no supporting evidence that has a citation is shown as not sure.
 */
export function displayStatus(h: BoardHypothesis): { status: HypothesisStatus; downgraded: boolean } {
  if (h.status === 'supported' && !h.evidence.some((e) => e.stance === 'supports' && isCited(e.citation))) {
    return { status: 'inconclusive', downgraded: true };
  }
  return { status: h.status, downgraded: false };
}

/** Display order: supported, open, not sure, ruled out, unrelated; input order kept within a status. */
export function orderForDisplay(hs: readonly BoardHypothesis[]): BoardHypothesis[] {
  return hs
    .map((h, i) => ({ h, i, rank: STATUS_DISPLAY[displayStatus(h).status].rank }))
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .map((x) => x.h);
}

/** `kubernetes <url|ref> (14:00–14:05)` or `kubernetes \`ref\`` — where a claim comes from. */
export function renderCitation(c: Citation): string {
  const source = `_${mrkdwnText(c.source || 'unknown source', 40)}_`;
  const ref = mrkdwnLink(c.url, c.ref, BOUNDS.citationRef, BOUNDS.citationUrl);
  const where = ref.startsWith('<') ? ref : c.command ? commandText(c) : codeSpan(c.ref || '(no ref)', BOUNDS.citationRef);
  const range = c.range ? ` (${slackDateTime(c.range.from)}–${slackTime(c.range.to, false)})` : '';
  return `${source} ${where}${range}`;
}

/** `\`kubectl get … -o yaml\`` and, when the ref names a field, ` field \`metadata.managedFields[1]\``. */
function commandText(c: Citation): string {
  const fragment = c.ref.includes('#') ? c.ref.slice(c.ref.indexOf('#') + 1) : '';
  return `${codeSpan(c.command ?? '', BOUNDS.citationCommand)}${fragment ? ` field ${codeSpan(fragment, 80)}` : ''}`;
}

const STANCE_WORD: Record<EvidenceLine['stance'], string> = { supports: 'for', refutes: 'against', context: 'context' };

const byResponder = (e: EvidenceLine): boolean => e.citation.source === 'responder';

function evidenceOrder(status: HypothesisStatus): EvidenceLine['stance'][] {
  return isSettled(status) ? ['refutes', 'supports', 'context'] : ['supports', 'refutes', 'context'];
}

/** Bounded evidence lines, most relevant stance first, then `+k more evidence`. */
function evidenceText(h: BoardHypothesis, status: HypothesisStatus): string {
  if (h.evidence.length === 0) return '_no cited evidence yet_';
  const order = evidenceOrder(status);
  // Responder-added evidence first and never cut for Vigil's own: the team's word is always on the board.
  const rank = (e: EvidenceLine) => (byResponder(e) ? -1 : order.indexOf(e.stance));
  const sorted = [...h.evidence].sort((a, b) => rank(a) - rank(b));
  const maxLines = (isSettled(status) ? BOUNDS.evidenceLines.settled : BOUNDS.evidenceLines.active) + sorted.filter(byResponder).length;
  const lines: string[] = [];
  let length = 0;
  for (const e of sorted) {
    if (lines.length >= maxLines) break;
    const line = `• _${STANCE_WORD[e.stance]}_ ${mrkdwnText(e.summary.replace(/\s*\n\s*/g, ' '), BOUNDS.evidenceSummary)} — ${renderCitation(e.citation)}`;
    if (lines.length > 0 && length + line.length + 1 > BOUNDS.evidenceText) break;
    lines.push(line);
    length += line.length + 1;
  }
  const more = sorted.length - lines.length;
  if (more > 0) lines.push(`+${more} more evidence`);
  return truncateMrkdwn(lines.join('\n'), BOUNDS.evidenceText + 40);
}

function componentText(h: BoardHypothesis): string | undefined {
  const c = h.component;
  if (!c) return undefined;
  const what = codeSpan(`${c.kind.toLowerCase()}/${c.name}`, 120);
  return c.namespace ? `${what} in ${codeSpan(c.namespace, 80)}` : what;
}

/**
 * One hypothesis in full: a section (label, marker, status, confidence, title, component, mechanism, reason)
 * with its controls in one overflow menu (⋯) as the section's accessory, then its evidence. `controls: false`
 * renders it without them.
 */
export function renderHypothesis(h: BoardHypothesis, opts: { controls?: boolean } = {}): KnownBlock[] {
  const { status, downgraded } = displayStatus(h);
  const show = STATUS_DISPLAY[status];
  const settled = isSettled(status);
  const facts = [`confidence ${confidenceWords(h.confidence)}`];
  const component = componentText(h);
  if (component) facts.push(component);

  // Model-written words are quoted and attributed: the model's claim, never Vigil's statement or instruction.
  const title = h.byModel ? `_the model says:_ “${mrkdwnText(h.title, BOUNDS.title)}”` : `*${mrkdwnText(h.title, BOUNDS.title)}*`;
  const lines = [`*${mrkdwnText(h.label, 20)}* ${show.marker} *${show.words}* — ${title}`, facts.join(' · ')];
  if (downgraded) lines.push('_Marked supported, but no cited evidence supports it yet, so it is shown as not sure._');
  const mechanism = h.mechanism.trim();
  if (mechanism) {
    const text = mrkdwnText(mechanism, settled ? BOUNDS.mechanism.settled : BOUNDS.mechanism.active);
    lines.push(h.byModel ? text.split('\n').map((l) => `> ${l}`).join('\n') : text);
  }
  if (h.scope && !settled) lines.push(`_Scope:_ ${mrkdwnText(h.scope, BOUNDS.scope)}`);
  if (h.reason && (settled || status === 'inconclusive')) {
    lines.push(`_${status === 'unrelated' ? 'Unrelated' : status === 'ruled_out' ? 'Ruled out' : 'Why not sure'}:_ ${mrkdwnText(h.reason, BOUNDS.reason)}`);
  }
  if (h.steeredBy) lines.push(`_steered by_ ${mention(h.steeredBy)}`);
  const section = sectionBlock(lines.join('\n'));
  const menu = opts.controls !== false && h.id && status !== 'unrelated' ? hypothesisMenu(h.id, h.label, status) : undefined;
  return [menu ? { ...section, block_id: `hyp:${h.id}`.slice(0, 255), accessory: menu } : section, contextBlock([evidenceText(h, status)])];
}

/**
 * A ruled-out or unrelated hypothesis in one line with its reason: `○ H2 ruled out — Helm rollback: last Helm
 * change 3 days ago`. Its evidence and controls are in the "Show all" dialog.
 */
export function settledLine(h: BoardHypothesis): string {
  const { status } = displayStatus(h);
  const show = STATUS_DISPLAY[status];
  const title = h.byModel ? `the model says: “${mrkdwnText(h.title.replace(/\s*\n\s*/g, ' '), BOUNDS.settledTitle)}”` : mrkdwnText(h.title.replace(/\s*\n\s*/g, ' '), BOUNDS.settledTitle);
  const reason = h.reason?.trim() ? `: ${mrkdwnText(h.reason.replace(/\s*\n\s*/g, ' '), BOUNDS.settledReason)}` : '';
  const by = h.steeredBy ? ` · _steered by_ ${mention(h.steeredBy)}` : '';
  const line = `${show.marker} *${mrkdwnText(h.label, 20)}* ${show.words} — ${title}${reason}${by}`;
  // Evidence a responder added stays visible even on a settled hypothesis.
  const added = h.evidence.filter(byResponder).slice(-2).map((e) => `      ↳ _${STANCE_WORD[e.stance]}_ ${mrkdwnText(e.summary.replace(/\s*\n\s*/g, ' '), BOUNDS.evidenceSummary)} — ${renderCitation(e.citation)}`);
  return [line, ...added].join('\n');
}

export const isSettledHypothesis = (h: BoardHypothesis): boolean => isSettled(displayStatus(h).status);

/** Action ids of the per-hypothesis controls; the button value is the hypothesis id (never a payload). */
export const HYPOTHESIS_ACTIONS = { confirm: 'hyp_confirm', refute: 'hyp_refute', pin: 'hyp_pin', evidence: 'hyp_evidence' } as const;

/** The overflow menu carrying a hypothesis's controls; each option's value is `<control>:<hypothesis id>`. */
export const HYPOTHESIS_MENU = 'hyp_menu';

export type HypothesisControl = keyof typeof HYPOTHESIS_ACTIONS;

/** `refute:c123` → { control: 'refute', hypothesisId: 'c123' }; undefined for anything else. */
export function parseMenuValue(value: string | undefined): { control: HypothesisControl; hypothesisId: string } | undefined {
  const m = /^(confirm|refute|pin|evidence):(.+)$/.exec(value ?? '');
  return m ? { control: m[1] as HypothesisControl, hypothesisId: m[2]! } : undefined;
}

/**
 * Confirm, Refute… (asks for a reason), Pin and Add evidence… (a link or a note) in one overflow menu instead
 * of four buttons under every hypothesis: steering without a sentence, one ⋯ per hypothesis. A ruled-out
 * hypothesis has no Refute.
 */
function hypothesisMenu(id: string, label: string, status: HypothesisStatus) {
  const value = (control: HypothesisControl) => `${control}:${id}`.slice(0, 150);
  const option = (text: string, control: HypothesisControl) => ({ text: { type: 'plain_text' as const, text: text.slice(0, 75) }, value: value(control) });
  const options = [
    option(`Confirm ${label}`, 'confirm'),
    ...(status === 'ruled_out' ? [] : [option('Refute…', 'refute')]),
    option('Pin', 'pin'),
    option('Add evidence…', 'evidence'),
  ];
  return { type: 'overflow' as const, action_id: HYPOTHESIS_MENU, options };
}
