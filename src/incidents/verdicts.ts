/**
 * Verdicts given with the board's buttons (Refute, Confirm, Pin, Add evidence) as the steering the model
 * reads. A thread reply reaches the model as its text; a click changes the board but leaves no reply, so
 * without this the model would argue again for a hypothesis a responder refuted with a button. Each
 * verdict becomes the steering command a reply would have been ("rule out H2 because …"), read from the
 * audit trail (the record of who did what, hash-chained), and folded with the replies by time.
 */
import type { SteeringMessage } from '../agent/steering.js';
import { parseSteering } from '../agent/steering.js';
import type { Db } from '../store/db.js';

const VERDICT_KINDS = ['hypothesis.rule_out', 'hypothesis.confirm', 'hypothesis.pin', 'hypothesis.evidence_added'];
/** A verdict this close to a reply by the same person saying the same thing is that reply, applied. */
const SAME_REPLY_MS = 5_000;

export interface BoardVerdicts {
  messages: SteeringMessage[];
  /** The last audit row read, to poll only newer ones. */
  lastId: number;
}

/**
 * Verdicts on `incidentId`'s board recorded after audit row `afterId`, minus those that a thread reply in
 * `replies` already carries (a typed "rule out H2" is recorded as a verdict too).
 */
export async function boardVerdicts(db: Db, incidentId: string, replies: SteeringMessage[], afterId = 0): Promise<BoardVerdicts> {
  const rows = await db.auditEvent.findMany({
    where: { incidentId, kind: { in: VERDICT_KINDS }, id: { gt: afterId } },
    orderBy: { id: 'asc' },
    select: { id: true, actor: true, kind: true, data: true, at: true },
  });
  const messages: SteeringMessage[] = [];
  for (const r of rows) {
    const text = verdictText(r.kind, parse(r.data));
    if (!text) continue;
    const said = parseSteering(text);
    const typed = replies.some((m) => {
      if (m.userId !== r.actor || Math.abs(m.at.getTime() - r.at.getTime()) > SAME_REPLY_MS) return false;
      const c = parseSteering(m.text);
      return c.kind === said.kind && 'label' in c && 'label' in said && c.label === said.label;
    });
    if (!typed) messages.push({ userId: r.actor, text, at: r.at });
  }
  return { messages, lastId: rows.at(-1)?.id ?? afterId };
}

function parse(data: string): Record<string, unknown> {
  try {
    const v = JSON.parse(data) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The steering command a reply would have carried; the data was redacted when it was recorded. */
function verdictText(kind: string, d: Record<string, unknown>): string | undefined {
  const label = typeof d['label'] === 'string' ? d['label'] : undefined;
  if (!label) return undefined;
  const reason = typeof d['reason'] === 'string' && d['reason'].trim() ? d['reason'].trim().replace(/\s+/g, ' ').slice(0, 240) : undefined;
  switch (kind) {
    case 'hypothesis.rule_out':
      return `rule out ${label}${reason ? ` because ${reason}` : ''}`;
    case 'hypothesis.confirm':
      return `confirm ${label}${reason ? ` because ${reason}` : ''}`;
    case 'hypothesis.pin':
      return `pin ${label}`;
    case 'hypothesis.evidence_added': {
      const what = [d['note'], d['link']].filter((x): x is string => typeof x === 'string' && x.length > 0).join(' — ');
      return what ? `Evidence added to ${label} on the board: ${what.slice(0, 600)}` : undefined;
    }
    default:
      return undefined;
  }
}
