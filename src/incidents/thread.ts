import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import { renderIncidentHeader } from '../slack/blocks/incident.js';
import { renderHypothesisBoard } from '../slack/blocks/board.js';
import { renderAlreadyTrackedNote, renderEscalation, renderManualRoot, renderRepeatNote, renderResolvedNote } from '../slack/blocks/notes.js';
import type { ChatMessage, ChatPort } from './chat.js';
import { boardModel, escalationModel, incidentCard, loadIncidentRecord, type IncidentRecord } from './views.js';

/** Repeats closer together than this share one thread note (the header's count still shows every one). */
export const REPEAT_NOTE_QUIET_MS = 15 * 60_000;

/** One post Vigil wants in Slack, identified by its purpose within the incident. */
interface DesiredPost {
  purpose: string;
  /** The thread it belongs to (the incident thread, or a duplicate alert post's own thread). */
  threadTs: string | undefined;
  message: ChatMessage;
  /** Notes are written once; cards are edited in place when their content changes. */
  editable: boolean;
}

/**
 * Reconciles an incident's Slack thread with the stored record: posts what is missing, edits cards
 * whose content changed, and never posts the same purpose twice — each post is recorded in SlackPost
 * before and after the call, and tagged with message metadata so a crash between Slack accepting a post
 * and the DB write is healed by finding the tagged post instead of posting again.
 */
export class ThreadSync {
  /** Per incident: the last sync in line, and the one queued (not started) that new requests join. */
  private readonly tails = new Map<string, Promise<void>>();
  private readonly queued = new Map<string, Promise<void>>();

  /** Called after every sync (App Home refresh). */
  onSynced?: (incidentId: string) => void;

  constructor(
    private readonly db: Db,
    private readonly chat: ChatPort,
    private readonly log: Logger,
  ) {}

  /**
   * Bring the thread up to date. Syncs of one incident never overlap, and requests that arrive while
   * one runs are coalesced into a single follow-up that reads the newest state — an alert storm of a
   * thousand repeats costs a handful of Slack calls, not a thousand.
   */
  sync(incidentId: string): Promise<void> {
    const waiting = this.queued.get(incidentId);
    if (waiting) return waiting;
    const prev = this.tails.get(incidentId) ?? Promise.resolve();
    const next = prev
      .catch(() => undefined)
      .then(() => {
        this.queued.delete(incidentId);
        return this.syncNow(incidentId);
      });
    this.queued.set(incidentId, next);
    this.tails.set(incidentId, next);
    void next
      .finally(() => {
        if (this.tails.get(incidentId) === next) this.tails.delete(incidentId);
      })
      .catch(() => undefined);
    return next;
  }

  private async syncNow(incidentId: string): Promise<void> {
    let record = await loadIncidentRecord(this.db, incidentId);
    if (!record.threadTs) {
      // `/sre investigate` has no alert post to hang the thread from: Vigil posts the root itself.
      const alert = record.alerts[0];
      const root: DesiredPost = {
        purpose: 'root',
        threadTs: undefined,
        message: renderManualRoot({ requestedBy: record.openedBy ?? 'unknown', text: alert ? (JSON.parse(alert.payload) as { text?: string }).text ?? record.title : record.title }),
        editable: false,
      };
      const ts = await this.reconcile(record, root);
      await this.db.incident.update({ where: { id: incidentId }, data: { threadTs: ts } });
      record = await loadIncidentRecord(this.db, incidentId);
    }
    const desired = await this.desiredPosts(record, record.threadTs!);
    for (const d of desired) await this.reconcile(record, d);
    this.onSynced?.(incidentId);
  }

  private async desiredPosts(r: IncidentRecord, threadTs: string): Promise<DesiredPost[]> {
    const posts: DesiredPost[] = [{ purpose: 'header', threadTs, message: renderIncidentHeader(incidentCard(r)), editable: true }];
    const board = boardModel(r);
    if (board) posts.push({ purpose: 'board', threadTs, message: renderHypothesisBoard(board), editable: true });
    const escalation = escalationModel(r);
    if (escalation) posts.push({ purpose: 'escalation', threadTs, message: renderEscalation(escalation), editable: true });

    // Notes are written once: those already in Slack need no content (and no permalink lookup) again.
    const posted = new Set(r.posts.filter((p) => p.ts).map((p) => p.purpose));
    let permalink: Promise<string | undefined> | undefined;
    let firing = 0;
    let noted = r.alerts[0]?.receivedAt.getTime() ?? 0;
    for (const [i, a] of r.alerts.entries()) {
      if (a.status === 'firing') firing++;
      if (i === 0) continue;
      // A burst of repeats updates the header's count; only a re-fire after a quiet spell gets its own note.
      const quiet = a.receivedAt.getTime() - noted >= REPEAT_NOTE_QUIET_MS || i === 1;
      if (a.status === 'firing' && !quiet) continue;
      noted = a.receivedAt.getTime();
      if (!posted.has(`alert:${a.id}`)) {
        const message = a.status === 'resolved' ? renderResolvedNote({ at: a.receivedAt, by: 'alert' }) : renderRepeatNote({ count: firing, at: a.receivedAt, link: undefined });
        posts.push({ purpose: `alert:${a.id}`, threadTs, message, editable: false });
      }
      // A repeat that Slack shows as its own top-level post gets a pointer to the incident thread.
      if (a.messageTs && a.messageTs !== threadTs && a.channelId === r.channelId && !posted.has(`tracked:${a.id}`)) {
        permalink ??= this.chat.permalink(r.channelId, threadTs);
        posts.push({ purpose: `tracked:${a.id}`, threadTs: a.messageTs, message: renderAlreadyTrackedNote({ permalink: (await permalink) ?? '' }), editable: false });
      }
    }
    return posts;
  }

  /** Make one desired post true in Slack; returns its ts. */
  private async reconcile(r: IncidentRecord, d: DesiredPost): Promise<string> {
    const hash = createHash('sha256').update(JSON.stringify(d.message)).digest('hex');
    const tag = { incidentId: r.id, purpose: d.purpose };
    let row = r.posts.find((p) => p.purpose === d.purpose);

    if (row?.ts) {
      if (d.editable && row.contentHash !== hash) {
        await this.chat.update(r.channelId, row.ts, d.message);
        await this.db.slackPost.update({ where: { id: row.id }, data: { contentHash: hash } });
      }
      return row.ts;
    }

    if (row) {
      // A previous attempt registered this post but never stored its ts: Slack may have it already.
      const found = await this.chat.findTagged(r.channelId, d.threadTs, tag);
      if (found) {
        this.log.info({ incidentId: r.id, purpose: d.purpose }, 'adopted a post made before a restart');
        await this.db.slackPost.update({ where: { id: row.id }, data: { ts: found } });
        if (d.editable) await this.chat.update(r.channelId, found, d.message);
        await this.db.slackPost.update({ where: { id: row.id }, data: { contentHash: hash } });
        return found;
      }
    } else {
      row = await this.db.slackPost.create({ data: { incidentId: r.id, purpose: d.purpose, channelId: r.channelId, threadTs: d.threadTs ?? null } });
    }
    const { ts } = await this.chat.post(r.channelId, d.threadTs, d.message, tag);
    await this.db.slackPost.update({ where: { id: row.id }, data: { ts, contentHash: hash } });
    return ts;
  }
}
