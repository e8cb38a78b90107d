/**
 * Acknowledgements as emoji reactions, the quiet signal Slack users read at a glance: 👀 on the alert post
 * once Vigil has taken it up, then one mark when the thread has its first answer (✅ triaged, 🙋 needs a
 * human, ⚠️ investigation stopped); ✅ on a steering reply once it is applied, 👀 on one the model will read.
 *
 * A reaction is a courtesy: a refusal (no `reactions:write`, a deleted post) is logged and never fails the
 * thread sync or the reply. Reactions on the alert post are recorded as SlackPost rows (`reaction:*`, no ts,
 * so no post count includes them): added once per incident even across restarts and replicas, and a refusal
 * that would repeat the same way is not tried again at every sync.
 */
import type { Logger } from 'pino';
import { isUniqueViolation, type Db } from '../store/db.js';
import { chatErrorCode, type ChatPort } from './chat.js';
import type { IncidentRecord } from './views.js';
import { phaseOf } from './views.js';
import type { InvestigationPhase } from '../slack/blocks/models.js';
import { renderSteeringNote } from '../slack/blocks/notes.js';
import type { SteeringCommand } from '../agent/steering.js';

export const REACTIONS = {
  /** On the alert post: Vigil is on it. */
  pickedUp: 'eyes',
  /** On a steering reply: applied to the board. */
  applied: 'white_check_mark',
  /** On a free-text steering reply: the investigation runs again with it. */
  read: 'eyes',
} as const;

/** The alert post's mark for the thread's first answer, by phase (none while investigating). */
const ANSWER: Partial<Record<InvestigationPhase, string>> = {
  triaged: 'white_check_mark',
  mitigating: 'white_check_mark',
  mitigated: 'white_check_mark',
  needs_human: 'raising_hand',
  failed: 'warning',
};

/** Refusals that will not change by trying again: recorded, so later syncs do not repeat the call. */
const FINAL_REFUSALS = new Set(['missing_scope', 'message_not_found', 'channel_not_found', 'not_in_channel', 'is_archived', 'invalid_name', 'too_many_reactions', 'not_reactable', 'thread_locked', 'bad_timestamp']);

export type ReactOutcome = 'added' | 'already_reacted' | { failed: string; final: boolean };

/** Add one reaction; never throws. Without `react` on the port (no chat workspace), nothing happens. */
export async function react(chat: ChatPort, log: Logger, channel: string, ts: string, name: string, context: Record<string, unknown> = {}): Promise<ReactOutcome> {
  if (!chat.react) return { failed: 'unsupported', final: true };
  try {
    return await chat.react(channel, ts, name);
  } catch (err) {
    const code = chatErrorCode(err) ?? (err instanceof Error ? err.message : String(err));
    const final = FINAL_REFUSALS.has(code);
    log.warn({ ...context, channel, ts, reaction: name, err: code }, final && code === 'missing_scope' ? 'could not add a reaction: the bot token lacks reactions:write (add it and reinstall the app); carrying on' : 'could not add a reaction; carrying on');
    return { failed: code, final };
  }
}

/** The reactions an incident's alert post should carry, by SlackPost purpose. */
function wanted(r: IncidentRecord): { purpose: string; name: string }[] {
  const answer = ANSWER[phaseOf(r)];
  return [{ purpose: 'reaction:picked_up', name: REACTIONS.pickedUp }, ...(answer ? [{ purpose: 'reaction:answer', name: answer }] : [])];
}

/**
 * Bring the alert post's reactions up to date with the incident (called after each thread sync). Only an
 * incident whose thread hangs off an alert post gets them: Vigil does not react to its own root posts.
 */
export async function acknowledgeAlertPost(db: Db, chat: ChatPort, log: Logger, r: IncidentRecord): Promise<void> {
  const root = r.threadTs;
  if (!root || !chat.react || !r.alerts.some((a) => a.messageTs === root && a.channelId === r.channelId)) return;
  const done = new Set(r.posts.filter((p) => p.purpose.startsWith('reaction:')).map((p) => p.purpose));
  for (const w of wanted(r)) {
    if (done.has(w.purpose)) continue;
    const outcome = await react(chat, log, r.channelId, root, w.name, { incidentId: r.id });
    // A refusal that may pass (rate limit, network) is tried again at the next sync.
    if (typeof outcome === 'object' && !outcome.final) continue;
    const mark = typeof outcome === 'object' ? `failed:${outcome.failed}` : `reaction:${w.name}`;
    await db.slackPost
      .create({ data: { incidentId: r.id, purpose: w.purpose, channelId: r.channelId, threadTs: root, contentHash: mark } })
      .catch((err: unknown) => {
        if (!isUniqueViolation(err)) log.warn({ incidentId: r.id, err: String(err) }, 'could not record a reaction; it may be tried again');
      });
  }
}

/** A steering reply and what became of it. */
export interface SteeringReply {
  channel: string;
  ts: string;
  threadTs: string;
  incidentId: string;
  userId: string;
  cmd: SteeringCommand;
  applied: 'applied' | 'unknown_label' | 'not_a_command';
  /** For free text: whether an investigation runs (again) with it. */
  again?: 'again' | 'running' | 'kept';
}

/**
 * Acknowledge a steering reply: ✅ and one short note when it changed the board (an edit in place notifies
 * nobody, so the note is what tells the thread), 👀 alone when the investigation runs again with it. A
 * reply that changed nothing gets neither (an unknown label is answered privately by the desk).
 */
export async function acknowledgeReply(chat: ChatPort, log: Logger, s: SteeringReply): Promise<void> {
  const context = { incidentId: s.incidentId };
  if (s.applied === 'applied' && 'label' in s.cmd) {
    await react(chat, log, s.channel, s.ts, REACTIONS.applied, context);
    await chat
      .post(s.channel, s.threadTs, renderSteeringNote({ userId: s.userId, cmd: s.cmd }), { incidentId: s.incidentId, purpose: `steered:${s.ts}` })
      .catch((err: unknown) => log.warn({ ...context, err: String(err) }, 'could not post the note that a reply changed the board'));
    return;
  }
  if (s.applied === 'not_a_command' && (s.again === 'again' || s.again === 'running')) await react(chat, log, s.channel, s.ts, REACTIONS.read, context);
}
