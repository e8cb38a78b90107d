// External anchors for the audit chain. The chain proves every row against the ones before it, but not
// that nothing came after: deleting the newest rows, or rewriting every hash from some row on, leaves a
// chain that verifies. An anchor, `vigil-audit:<row id>:<hash>`, is the head at one moment, kept where
// the database admin cannot silently edit it (the log pipeline, a ticket, a Git repo); `vigil audit
// verify --anchor` then proves the row is still there with that hash (see ./verify.ts).
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';

export type AuditAnchor = { rowId: number; hash: string };

const PREFIX = 'vigil-audit';
const SHAPE = `${PREFIX}:<row id>:<64 hex characters>`;

export function formatAnchor(a: AuditAnchor): string {
  return `${PREFIX}:${a.rowId}:${a.hash}`;
}

/** Parses one anchor as `vigil audit head` prints it; `reason` says what is wrong with it. */
export function parseAnchor(text: string): { ok: true; anchor: AuditAnchor } | { ok: false; reason: string } {
  const parts = text.trim().split(':');
  if (parts.length !== 3 || parts[0] !== PREFIX) return { ok: false, reason: `expected ${SHAPE}, as \`vigil audit head\` prints it` };
  const [, id, hash] = parts as [string, string, string];
  const rowId = Number(id);
  if (!/^[1-9][0-9]*$/.test(id) || !Number.isSafeInteger(rowId)) return { ok: false, reason: `row id "${id}" is not a positive whole number` };
  if (!/^[0-9a-fA-F]{64}$/.test(hash)) return { ok: false, reason: `hash "${hash}" is not 64 hex characters (a SHA-256)` };
  return { ok: true, anchor: { rowId, hash: hash.toLowerCase() } };
}

/**
 * The anchors in an anchors file: one per line, `#` starts a comment, blank lines are skipped.
 * Errors name the line (`line 3: …`).
 */
export function parseAnchorsFile(text: string): { ok: true; anchors: AuditAnchor[] } | { ok: false; reason: string } {
  const anchors: AuditAnchor[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/#.*/, '').trim();
    if (!line) continue;
    const parsed = parseAnchor(line);
    if (!parsed.ok) return { ok: false, reason: `line ${i + 1}: "${line}": ${parsed.reason}` };
    anchors.push(parsed.anchor);
  }
  return { ok: true, anchors };
}

/** The newest chained row, or null while nothing is chained. One indexed read, not a verification. */
async function readAuditHead(db: Db): Promise<(AuditAnchor & { at: Date }) | null> {
  const head = await db.auditEvent.findFirst({ where: { hash: { not: null } }, orderBy: { id: 'desc' }, select: { id: true, hash: true, at: true } });
  return head ? { rowId: head.id, hash: head.hash!, at: head.at } : null;
}

/** The fields of one `audit.anchor` log line. */
export type AnchorLine = { anchor: string; rowId: number; hash: string; at: string };

/** The `audit.anchor` log line for the current head, or null while the trail is empty. */
export async function anchorLine(db: Db): Promise<AnchorLine | null> {
  const head = await readAuditHead(db);
  return head ? { anchor: formatAnchor(head), rowId: head.rowId, hash: head.hash, at: head.at.toISOString() } : null;
}

export type AuditAnchorer = { stop(): Promise<void> };

/**
 * Logs `audit.anchor` with the head now and then every `intervalMs`, so the log pipeline keeps a trail
 * of heads the database admin cannot edit. Each read is scheduled when the previous one has finished
 * (no overlap on a slow database); the timer does not keep the process alive; a failed read is logged
 * and the next tick tries again. Every tick logs, also when the head has not moved: a quiet period
 * then still leaves recent anchors inside the log retention.
 */
export function startAuditAnchorer(db: Db, log: Logger, o: { intervalMs: number }): AuditAnchorer {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let inFlight: Promise<void> = Promise.resolve();
  const tick = async () => {
    try {
      const line = await anchorLine(db);
      if (line) log.info(line, 'audit.anchor');
    } catch (err) {
      log.warn({ err: String(err) }, 'audit anchor read failed');
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = tick().then(schedule);
    }, o.intervalMs);
    timer.unref();
  };
  inFlight = tick().then(schedule);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
