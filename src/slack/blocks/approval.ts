/**
 * The approval card: what Vigil proposes to change and everything an approver needs to judge it —
 * risk and why, the exact change, pre-checks, the server-side dry run, success criteria, rollback,
 * what else to know (who sees new config when) and the follow-ups it will propose, who may approve, the decisions so far — and Approve / Reject buttons with confirmation dialogs.
 * Buttons carry only the request id (the payload lives in the DB; A5: values ≤ 2000). Once decided,
 * withdrawn, closed, or when policy refused the proposal, the card shows the final state and no buttons.
 * Only a command the planner built is shown as a command; a refused proposal shows none, and what the model
 * wrote (its rationale) is quoted and attributed, never presented as Vigil's word. Pure.
 */
import type { ActionsBlock, Button, KnownBlock } from '@slack/types';
import { describeRisk, renderChanges } from '../../actions/index.js';
import type { ApprovalView } from '../../approvals/types.js';
import { contextBlock, headerBlock, sectionBlock, type RenderedMessage } from './elements.js';
import { slackTime } from './format.js';
import { fitBlocks, SLACK_LIMITS } from './limits.js';
import { codeSpan, fallbackText, mention, mrkdwnText } from './mrkdwn.js';
import { truncateMrkdwn, truncatePlain } from './truncate.js';

/** Characters per plan section: with three of them (a fourth, notes, is short), the status and the approval part stay under Slack's text budget. */
const PLAN_SECTION_MAX = 1800;

export const APPROVE_ACTION_ID = 'approval_approve';
export const REJECT_ACTION_ID = 'approval_reject';

const BOUNDS = { command: 400, lines: 10, line: 240, note: 400, reason: 600, decisions: 10 } as const;

export interface ApprovalCardOptions {
  /**
   * Mention approver groups as `<!subteam^S…>` (notifies them once, when the card is posted; edits do
   * not notify again). Off: the group ids are shown without notifying anyone.
   */
  pingApprovers?: boolean;
  /**
   * Which deployment mode runs (src/approvals/mode.ts): "single-process mode (demo / small teams)" or
   * "split mode: executor <identity>", so an approver sees who will write before clicking.
   */
  mode?: string;
}

const CHECK_MARK = { pass: '✓', fail: '✗', warn: '⚠' } as const;

const STATUS_LINE: Record<ApprovalView['status'], string> = {
  pending: '⏳ *Waiting for approval*',
  approved: '✅ *Approved* — executing',
  executing: '⚙️ *Executing* under the executor identity…',
  executed: '✅ *Executed and verified*',
  failed: '❌ *Failed*',
  rejected: '🚫 *Rejected*',
  cancelled: '⏹ *Cancelled*',
  expired: '⌛ *Expired*',
  refused: '⛔ *Refused*',
  withdrawn: '↩️ *Withdrawn*',
  closed: '🔒 *Closed*',
};

const FINAL_HEAD = { withdrawn: '↩️ *Withdrawn:*', closed: '🔒 *Closed:*', expired: '⌛ *Expired:*' } as const;

/** `refused: x` → `x`, so the card can say "Refused by policy: x". */
function refusal(reason: string): string {
  return reason.replace(/^refused:\s*/i, '');
}

function bullets(lines: string[], max: number = BOUNDS.lines): string {
  const shown = lines.slice(0, max).map((l) => `• ${l}`);
  if (lines.length > max) shown.push(`_+${lines.length - max} more_`);
  return shown.join('\n');
}

function group(id: string, ping: boolean): string {
  return ping ? mention(id) : codeSpan(id, 40);
}

/**
 * What the change is, in Vigil's words: the planner's title, else the action and its target (never the
 * proposal's command string, which the model may have written).
 */
export function changeTitle(v: Pick<ApprovalView, 'plan' | 'proposal'>): string {
  if (v.plan) return v.plan.title;
  const t = v.proposal.target;
  return `${v.proposal.action} ${t.kind.toLowerCase()}/${t.name}${t.namespace ? ` in ${t.namespace}` : ''}`;
}

/** The proposal's rationale: Vigil's own as is; the model's quoted and attributed, so it never reads as an instruction. */
function rationaleText(v: ApprovalView, max: number): string {
  return v.modelWritten ? `model wrote: “${mrkdwnText(v.proposal.rationale.replace(/\s*\n\s*/g, ' '), max)}”` : mrkdwnText(v.proposal.rationale, max);
}

function titleOf(v: ApprovalView): string {
  const what = changeTitle(v);
  if (v.status === 'refused') return `Refused: ${what}`;
  return `${v.parentId ? 'Proposed rollback' : 'Proposed fix'}: ${what}`;
}

function statusLine(v: ApprovalView): string {
  if (v.status === 'refused' && v.decision.kind === 'deny') return `⛔ *Refused by policy:* ${mrkdwnText(refusal(v.decision.reason), BOUNDS.reason)}`;
  if (v.status === 'refused') return `⛔ *Cannot run:* ${mrkdwnText((v.statusReason ?? 'the plan is not executable').replace(/^cannot run:\s*/i, ''), BOUNDS.reason)}`;
  if (v.status === 'withdrawn' || v.status === 'closed' || v.status === 'expired') {
    const why = (v.statusReason ?? (v.status === 'closed' ? 'closed: incident resolved' : v.status)).replace(/^(withdrawn|closed|expired):\s*/i, '');
    // A card that closed on its own says when, in the reader's time zone: nobody clicked anything.
    const when = v.status === 'withdrawn' ? '' : ` at ${slackTime(v.updatedAt)}`;
    return `${FINAL_HEAD[v.status]} ${mrkdwnText(why, BOUNDS.reason)}${when}`;
  }
  return STATUS_LINE[v.status] + (v.statusReason ? ` — ${mrkdwnText(v.statusReason, BOUNDS.reason)}` : '');
}

function statusSection(v: ApprovalView): string {
  const lines = [statusLine(v)];
  if (v.plan) lines.push(`*${mrkdwnText(describeRisk(v.plan.risk), 400)}*`);
  lines.push(`requested by ${v.requestedBy === 'vigil' ? 'Vigil' : mention(v.requestedBy)}${v.modelWritten ? ' on the model’s proposal' : ''} · ${rationaleText(v, 300)}`);
  return lines.join('\n');
}

function planSections(v: ApprovalView): string[] {
  const p = v.plan;
  // Refused before planning: nothing was read or dry-run, and the proposal's own command is not repeated.
  if (!p) return ['_No plan and no command: the proposal was refused before anything was read or dry-run._'];
  const changes = renderChanges(p.changes).map((l) => codeSpan(l, BOUNDS.line));
  const checks = p.preChecks.map((c) => `${CHECK_MARK[c.status]} ${mrkdwnText(c.name, 80)} — ${mrkdwnText(c.detail, BOUNDS.line)}`);
  const dry =
    p.dryRun.status === 'accepted'
      ? `✓ accepted by the API server as ${codeSpan(p.dryRun.identity, 80)} (${mrkdwnText(p.dryRun.requests.join('; '), BOUNDS.line)})`
      : p.dryRun.status === 'rejected'
        ? `✗ rejected${p.dryRun.code ? ` (HTTP ${p.dryRun.code})` : ''} as ${codeSpan(p.dryRun.identity, 80)}: ${mrkdwnText(p.dryRun.message, BOUNDS.line)}`
        : p.dryRun.status === 'unavailable'
          ? `– not available as ${codeSpan(p.dryRun.identity, 80)}: ${mrkdwnText(p.dryRun.message, BOUNDS.line)}`
          : `– skipped: ${mrkdwnText(p.dryRun.message, BOUNDS.line)}`;
  const criteria = p.successCriteria.map((c) => mrkdwnText(c.description, BOUNDS.line));
  const rollback = p.rollback ? `${codeSpan(p.rollback.command, BOUNDS.command)} _(needs its own approval)_` : mrkdwnText(p.rollbackNote ?? 'none', BOUNDS.line);
  const notes = (p.notes ?? []).map((n) => mrkdwnText(n, BOUNDS.note));
  const followUps = (p.followUps ?? []).map((f) => codeSpan(f.command, BOUNDS.command));
  // A refused plan keeps only why it cannot run: no command, change or rollback that reads as something to do.
  if (v.status === 'refused') return [`*Pre-checks*\n${bullets(checks)}\n*Dry run* (server-side)\n${dry}`];
  return [
    `*Command*\n${codeSpan(p.command, BOUNDS.command)}\n*Change*\n${changes.length ? bullets(changes) : '_nothing would change_'}`,
    `*Pre-checks*\n${bullets(checks)}\n*Dry run* (server-side)\n${dry}`,
    // The criteria list is cut before the rollback, which must always show.
    `*Success criteria*\n${criteria.length ? truncateMrkdwn(bullets(criteria), 1200) : '_none_'}\n*Rollback*\n${rollback}`,
    ...(notes.length || followUps.length
      ? [
          [
            ...(notes.length ? [`*Good to know*\n${bullets(notes, 6)}`] : []),
            ...(followUps.length ? [`*Follow-ups* _(each proposed on its own card once this is verified; none runs without its own approval)_\n${bullets(followUps, 6)}`] : []),
          ].join('\n'),
        ]
      : []),
  ];
}

function approvalSection(v: ApprovalView, ping: boolean): string {
  const d = v.decision;
  switch (d.kind) {
    case 'deny':
      return `_Nothing will run: no one can approve a proposal the policy refused${d.rule ? ` (policy rule ${codeSpan(d.rule, 80)})` : ''}._`;
    case 'require_approval': {
      if (v.status === 'withdrawn' || v.status === 'closed' || v.status === 'expired' || v.status === 'cancelled') return `_Nothing will run from this card: it was ${v.status}, and a click on it is refused._`;
      if (v.status === 'rejected') return '_Nothing will run from this card: it was rejected._';
      if (v.status === 'refused') return '_Nothing will run from this card: the plan cannot run as it stands._';
      // Once approved, what it needed is history: who approved it is what counts (and the rule it ran under).
      if (v.status !== 'pending') {
        const approvers = v.decisions.filter((x) => x.decision === 'approve').map((x) => mention(x.userId));
        return `_Approved${approvers.length ? ` by ${approvers.join(', ')}` : ''} under policy rule ${codeSpan(d.rule, 80)}._`;
      }
      const groups = d.approverGroups.map((g) => group(g, ping)).join(' or ');
      const self = d.selfApprove ? `the requester may approve it (risk below ${d.selfApproveMaxRisk})` : 'the requester may not approve it (four-eyes)';
      return `*Needs ${d.approvals} approval${d.approvals === 1 ? '' : 's'}* from ${groups} · ${self} · policy rule ${codeSpan(d.rule, 80)}`;
    }
  }
}

function decisionsSection(v: ApprovalView): string | undefined {
  if (v.decisions.length === 0) return undefined;
  const lines = v.decisions.map((d) => {
    const who = `${mention(d.userId)}${d.userName ? ` (${mrkdwnText(d.userName, 60)})` : ''}`;
    const what = d.decision === 'approve' ? '✅ approved' : '🚫 rejected';
    return `${what} by ${who} at ${slackTime(d.at)}${d.reason ? ` — “${mrkdwnText(d.reason, 300)}”` : ''}`;
  });
  return `*Decisions*\n${bullets(lines, BOUNDS.decisions)}`;
}

function outcomeSection(v: ApprovalView): string | undefined {
  const o = v.outcome;
  if (!o?.execution) return undefined;
  const e = o.execution;
  const lines: string[] = [];
  if (e.status === 'refused') lines.push(`Not executed: ${mrkdwnText(e.message, BOUNDS.reason)}`);
  else {
    const how =
      e.identity.mode === 'token'
        ? `short-lived token until ${mrkdwnText(e.identity.expiresAt ?? '?', 40)}`
        : e.identity.mode === 'api-token'
          ? "the provider's writer token"
          : e.identity.mode === 'own'
            ? "the executor process's own ServiceAccount"
            : 'impersonation';
    const unclear = e.status === 'rejected' && e.writes.some((w) => w.uncertain);
    lines.push(`Executed as ${codeSpan(e.identity.user, 80)} (${how}): ${unclear ? 'no clear answer, the change may have been applied' : e.status}`);
    lines.push(...e.writes.filter((w) => !w.dryRun).slice(0, 5).map((w) => `${w.status === 'ok' ? '✓' : w.uncertain ? '?' : '✗'} ${mrkdwnText(w.request, BOUNDS.line)}${w.message ? ` — ${mrkdwnText(w.message, 200)}` : ''}`));
  }
  if (o.verification) {
    lines.push(`*Verification* ${o.verification.ok ? '✓ passed' : '✗ failed'} after ${Math.round(o.verification.elapsedMs / 1000)} s`);
    lines.push(...o.verification.checks.map((c) => `${c.ok ? '✓' : '✗'} ${mrkdwnText(c.description, 160)} — ${mrkdwnText(c.observed, 160)}`));
  }
  if (o.rollbackRequestId) lines.push('Rollback proposed below; it needs its own approval.');
  return `*Outcome*\n${lines.join('\n')}`;
}

function buttons(v: ApprovalView): ActionsBlock {
  const command = v.plan?.command ?? changeTitle(v);
  const identity = v.plan?.dryRun.status === 'accepted' || v.plan?.dryRun.status === 'unavailable' ? v.plan.dryRun.identity : 'the executor identity';
  const risk = v.plan ? `risk ${v.plan.risk.score}/100` : 'risk unknown';
  const plain = (text: string, max: number) => ({ type: 'plain_text' as const, text: truncatePlain(text, max) });
  const approve: Button = {
    type: 'button',
    action_id: APPROVE_ACTION_ID,
    text: plain('Approve', SLACK_LIMITS.buttonText),
    style: 'primary',
    value: v.id,
    confirm: {
      title: plain('Approve this change?', SLACK_LIMITS.confirmTitle),
      text: { type: 'mrkdwn', text: mrkdwnText(`Vigil will run ${command} as ${identity} (${risk}), then verify it.`, SLACK_LIMITS.confirmText) },
      confirm: plain('Approve and run', SLACK_LIMITS.confirmButton),
      deny: plain('Cancel', SLACK_LIMITS.denyButton),
      style: 'primary',
    },
  };
  const reject: Button = {
    type: 'button',
    action_id: REJECT_ACTION_ID,
    text: plain('Reject', SLACK_LIMITS.buttonText),
    style: 'danger',
    value: v.id,
    confirm: {
      title: plain('Reject this change?', SLACK_LIMITS.confirmTitle),
      text: { type: 'mrkdwn', text: mrkdwnText(`Nothing will run: ${command}`, SLACK_LIMITS.confirmText) },
      confirm: plain('Reject', SLACK_LIMITS.confirmButton),
      deny: plain('Cancel', SLACK_LIMITS.denyButton),
      style: 'danger',
    },
  };
  return { type: 'actions', block_id: truncatePlain(`approval:${v.id}`, SLACK_LIMITS.blockId), elements: [approve, reject] };
}

/** The card for one request, in its current state; buttons only while it is pending. */
export function renderApprovalCard(v: ApprovalView, opts: ApprovalCardOptions = {}): RenderedMessage {
  const ping = opts.pingApprovers ?? true;
  // Each plan section is bounded so a long diff or many pre-checks cannot push out what follows; who may
  // approve sits with the buttons, in the part of the card that is never dropped.
  const blocks: KnownBlock[] = [headerBlock(titleOf(v)), sectionBlock(statusSection(v)), ...planSections(v).map((s) => sectionBlock(truncateMrkdwn(s, PLAN_SECTION_MAX)))];
  const decisions = decisionsSection(v);
  if (decisions) blocks.push(sectionBlock(truncateMrkdwn(decisions, PLAN_SECTION_MAX)));
  const outcome = outcomeSection(v);
  if (outcome) blocks.push(sectionBlock(truncateMrkdwn(outcome, PLAN_SECTION_MAX)));
  const tail: KnownBlock[] = [sectionBlock(approvalSection(v, ping))];
  if (v.status === 'pending' && v.decision.kind === 'require_approval') tail.push(buttons(v));
  tail.push(contextBlock([`request ${mrkdwnText(v.id, 40)}`, `incident ${mrkdwnText(v.incidentId, 40)}`, `updated ${slackTime(v.updatedAt)}`, ...(opts.mode ? [mrkdwnText(opts.mode, 150)] : [])]));
  return {
    text: fallbackText(`${titleOf(v)} — ${v.status}${v.plan ? `, risk ${v.plan.risk.score}/100` : ''}`, 300),
    blocks: fitBlocks([...blocks, ...tail], SLACK_LIMITS.blocksPerMessage, { keepTail: tail.length, noun: 'sections' }),
  };
}

/**
 * A one-section note about approvals (a refusal to a clicker, a stop or resume), with who did it. `after`
 * is mrkdwn Vigil wrote (mentions), appended on its own line.
 */
export function renderApprovalNote(icon: string, text: string, by?: string, after?: string): RenderedMessage {
  // The notification text names the groups too (mentions render in it as in blocks).
  return { text: `${fallbackText(text, 300)}${after ? ` ${after.replace(/\*/g, '')}` : ''}`, blocks: [sectionBlock(`${icon} ${mrkdwnText(text, 2000)}${by ? ` — ${mention(by)}` : ''}${after ? `\n${after}` : ''}`)] };
}

/** "Who can approve: members of @sre-oncall or @platform", the groups as mentions (their names, not ids). */
export function whoCanApprove(groups: readonly string[]): string {
  return `*Who can approve:* members of ${groups.slice(0, 10).map((g) => mention(g)).join(' or ')}`;
}

/** The thread note once a request has run: what ran, as whom, and whether it verified. */
export function renderExecutionNote(v: ApprovalView): RenderedMessage {
  const title = changeTitle(v);
  const e = v.outcome?.execution;
  const who = e && e.status !== 'refused' ? ` as ${codeSpan(e.identity.user, 80)}` : '';
  const approvers = v.decisions.filter((d) => d.decision === 'approve').map((d) => mention(d.userId)).join(', ');
  const why = mrkdwnText(v.statusReason ?? 'see the card', BOUNDS.reason);
  const verdict =
    v.status === 'executed'
      ? `✅ *Done:* ${mrkdwnText(title, 200)}${who}, approved by ${approvers || 'nobody'}; verified.`
      : v.status === 'refused' || v.status === 'withdrawn'
        ? `⛔ *Not executed:* ${mrkdwnText(title, 200)} — ${why}`
        : `❌ *Failed:* ${mrkdwnText(title, 200)}${who} — ${why}`;
  const checks = (v.outcome?.verification?.checks ?? []).map((c) => `${c.ok ? '✓' : '✗'} ${mrkdwnText(c.description, 160)} — ${mrkdwnText(c.observed, 160)}`);
  const word = v.status === 'executed' ? 'Done' : v.status === 'refused' || v.status === 'withdrawn' ? 'Not executed' : 'Failed';
  return { text: fallbackText(`${word}: ${title}`, 300), blocks: [sectionBlock([verdict, ...checks].join('\n'))] };
}
