import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import { renderIncidentHeader } from '../slack/blocks/incident.js';
import { renderHypothesisBoard } from '../slack/blocks/board.js';
import { renderAlreadyTrackedNote, renderEscalation, renderManualRoot, renderRepeatNote, renderResolvedNote, renderResolvedPointer } from '../slack/blocks/notes.js';
import { acknowledgeAlertPost } from './acknowledge.js';
import { SLACK_LIMITS, truncateMrkdwn } from '../slack/blocks/limits.js';
import { chatErrorCode, type ChatMessage, type ChatPort } from './chat.js';
import { boardModel, escalationModel, incidentCard, loadIncidentRecord, type BoardOptions, type IncidentRecord } from './views.js';
import type { BoardModel } from '../slack/blocks/models.js';
import type { LinkSettings } from '../slack/blocks/links.js';
import type { IncidentPaging, PageStatus } from '../paging/index.js';
import type { SkillLibrary } from '../knowledge/skills.js';
import { contextBlock } from '../slack/blocks/elements.js';
import { fallbackText, mrkdwnLink, mrkdwnText } from '../slack/blocks/mrkdwn.js';
import { readContext } from './context.js';

/** Repeats closer together than this share one thread note (the header's count still shows every one). */
export const REPEAT_NOTE_QUIET_MS = 15 * 60_000;

/** Whether a failure came from Slack (refused, rate limited, unreachable) rather than from Vigil's own store. */
function isChatFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('slack_');
}

/**
 * Slack refused to bring some thread posts up to date. Each post was still tried (one refusal stops no
 * other), and the next sync tries the failed ones again; callers that only show progress log it and go on.
 */
export class ThreadSyncError extends Error {
  override readonly name = 'ThreadSyncError';
  constructor(
    readonly incidentId: string,
    readonly failures: { purpose: string; error: string }[],
    options?: { cause?: unknown },
  ) {
    super(`Slack refused ${failures.length} thread post(s) of incident ${incidentId}: ${failures.map((f) => `${f.purpose} (${f.error})`).join(', ')}`, options);
  }
}

/** Slack refuses the content itself: the same post as text alone (its fallback text) goes through. */
const CONTENT_REFUSALS = new Set(['invalid_blocks', 'invalid_blocks_format', 'msg_too_long', 'msg_blocks_too_long']);

/**
 * Stored in `contentHash` (with no ts) for a post Slack can never take — the message it replies to was
 * deleted — so later syncs skip it instead of failing on it forever.
 */
const ABANDONED = 'abandoned:thread_not_found';
const isAbandoned = (p: { ts: string | null; contentHash: string | null }): boolean => !p.ts && p.contentHash === ABANDONED;

/** One post Vigil wants in Slack, identified by its purpose within the incident. */
interface DesiredPost {
  purpose: string;
  /** The thread it belongs to (the incident thread, or a duplicate alert post's own thread). */
  threadTs: string | undefined;
  message: ChatMessage;
  /** Notes are written once; cards are edited in place when their content changes. */
  editable: boolean;
  /**
   * The summary card without its alert count: when only the count changed (a repeat), the edit may wait
   * (see ThreadSync.countEditGapMs).
   */
  substance?: string;
  /** Posted as a thread reply also sent to the channel (reply_broadcast); edits then show there too. */
  broadcast?: boolean;
}

/** Severities a team means by "critical" (src/alerts/parse/severity.ts spells them as alerting tools do). */
const CRITICAL = new Set(['critical', 'crit', 'fatal', 'emergency', 'p1', 'sev1', 'sev-1']);

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

  /**
   * Set when a write policy is configured: the board then shows a fix's command only once the planner and
   * the policy accepted it (its approval card), never the proposal's own text before that.
   */
  fixesNeedApproval = false;

  /** Where citations on the board link to (config `links`); unset: the citations' own URLs only. */
  links: LinkSettings | undefined;

  /**
   * Config `VIGIL_BROADCAST_CRITICAL`: the summary card of a critical incident is also sent to the channel
   * (Slack's "Also send to #channel"), so those not following the thread see what is wrong. Off by default.
   */
  broadcastCritical = false;

  /** Set when a pager is configured (src/paging): a handover pages a person, the resolve resolves the page. */
  paging: IncidentPaging | undefined;

  /** The team's skills (VIGIL_SKILLS_DIR): the board cites the one for the leading hypothesis. */
  skills: SkillLibrary | undefined;

  /**
   * Edits of the summary card that only change its count (`fired 12×, last 14:05`) go out at most this often
   * per incident; the newest count follows once the gap is over. Anything else on the card (the answer, the
   * state, a notice) is edited at once. An alert storm thus costs a few edits per incident, not one per repeat.
   */
  countEditGapMs = 20_000;
  /** Per incident: the summary card's substance as Slack shows it, and when its count was last edited alone. */
  private readonly shown = new Map<string, { substance: string; countAt: number }>();
  private readonly trailing = new Map<string, NodeJS.Timeout>();
  private stopped = false;

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

  /** No more deferred count edits (shutdown): pending ones are dropped; the next sync after a restart shows the count. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.trailing.values()) clearTimeout(t);
    this.trailing.clear();
    // A deferred count edit may have started just before: let it finish before the database closes.
    await Promise.allSettled([...this.tails.values()]);
  }

  /** Whether this header edit changes only the count and comes too soon after the last such edit; if so, one follows later. */
  private deferCountEdit(incidentId: string, d: DesiredPost): boolean {
    const shown = this.shown.get(incidentId);
    if (!d.substance || !shown || shown.substance !== d.substance) return false;
    const wait = shown.countAt + this.countEditGapMs - Date.now();
    if (wait <= 0) return false;
    if (!this.trailing.has(incidentId) && !this.stopped) {
      const t = setTimeout(() => {
        this.trailing.delete(incidentId);
        if (!this.stopped) this.sync(incidentId).catch((err: unknown) => this.log.warn({ incidentId, err: String(err) }, 'could not bring the summary card’s count up to date; the next sync tries again'));
      }, wait);
      t.unref?.();
      this.trailing.set(incidentId, t);
    }
    return true;
  }

  /** After the summary card went out: remember what it shows (and when its count alone was edited). */
  private noteShown(incidentId: string, d: DesiredPost, edit: boolean): void {
    if (!d.substance) return;
    const prev = this.shown.get(incidentId);
    const countOnly = edit && prev?.substance === d.substance;
    this.shown.set(incidentId, { substance: d.substance, countAt: countOnly ? Date.now() : prev?.countAt ?? 0 });
  }

  private async syncNow(incidentId: string): Promise<void> {
    let record = await loadIncidentRecord(this.db, incidentId);
    if (!record.threadTs) {
      // `/sre investigate` has no alert post to hang the thread from: Vigil posts the root itself.
      const alert = record.alerts[0];
      const root: DesiredPost = {
        purpose: 'root',
        threadTs: undefined,
        message: renderManualRoot({
          ...(record.openedBy ? { requestedBy: record.openedBy } : { source: record.source, title: record.title }),
          text: alert ? (JSON.parse(alert.payload) as { text?: string }).text ?? record.title : record.title,
        }),
        editable: false,
      };
      let ts: string | undefined;
      try {
        ts = await this.reconcile(record, root);
      } catch (err) {
        // Without the root there is no thread to post in: nothing else can go out this time.
        if (isChatFailure(err)) throw new ThreadSyncError(incidentId, [{ purpose: 'root', error: chatErrorCode(err) ?? String(err) }], { cause: err });
        throw err;
      }
      if (!ts) throw new Error(`incident ${incidentId} has no thread root in Slack`);
      await this.db.incident.update({ where: { id: incidentId }, data: { threadTs: ts } });
      record = await loadIncidentRecord(this.db, incidentId);
    }
    const pages = await this.followPaging(record);
    const desired = await this.desiredPosts(record, record.threadTs!, pages);
    // Each post on its own: a deleted message or a refused card must not keep every later post stale.
    const refused: { purpose: string; error: string }[] = [];
    let firstRefusal: unknown;
    let storeError: unknown;
    for (const d of desired) {
      try {
        await this.reconcile(record, d);
      } catch (err) {
        this.log.warn({ incidentId, purpose: d.purpose, err: String(err) }, 'could not bring a thread post up to date; the next sync tries again');
        if (!isChatFailure(err)) storeError ??= err;
        else {
          firstRefusal ??= err;
          refused.push({ purpose: d.purpose, error: chatErrorCode(err) ?? String(err) });
        }
      }
    }
    // Reactions on the alert post follow the thread; they never fail the sync (acknowledge.ts).
    await acknowledgeAlertPost(this.db, this.chat, this.log, record).catch((err: unknown) => this.log.warn({ incidentId, err: String(err) }, 'could not bring the alert post’s reactions up to date'));
    this.onSynced?.(incidentId);
    if (storeError) throw storeError;
    if (refused.length) throw new ThreadSyncError(incidentId, refused, { cause: firstRefusal });
  }

  /** Page (or resolve the page) before the handover card goes out, so the card says who was paged. Never throws. */
  private async followPaging(r: IncidentRecord): Promise<PageStatus[]> {
    if (!this.paging) return [];
    const escalation = escalationModel(r);
    const card = incidentCard(r);
    try {
      return await this.paging.follow({
        incidentId: r.id,
        status: r.status,
        title: r.title,
        severity: r.severity,
        ...(card.target ? { target: card.target } : {}),
        ...(escalation ? { escalation } : {}),
        threadLink: () => this.chat.permalink(r.channelId, r.threadTs!),
      });
    } catch (err) {
      this.log.error({ incidentId: r.id, err: String(err) }, 'could not bring the pages up to date; the next sync tries again');
      return [];
    }
  }

  private boardOptions(): BoardOptions {
    return { fixesNeedApproval: this.fixesNeedApproval, links: this.links, ...(this.skills ? { skills: this.skills } : {}) };
  }

  /** The board as the thread shows it, for the "Show all" dialog (undefined: no board yet). */
  async boardFor(incidentId: string): Promise<BoardModel | undefined> {
    return boardModel(await loadIncidentRecord(this.db, incidentId), this.boardOptions());
  }

  private async desiredPosts(r: IncidentRecord, threadTs: string, pages: PageStatus[] = []): Promise<DesiredPost[]> {
    const opts = this.boardOptions();
    // The first post is the summary card (purpose `header`, as threads made before it hold): the answer first.
    const card = incidentCard(r, { ...opts, pages });
    const substance = createHash('sha256').update(JSON.stringify(renderIncidentHeader({ ...card, alertCount: 0, lastAlertAt: card.openedAt }))).digest('hex');
    const broadcast = this.broadcastCritical && CRITICAL.has((r.severity ?? '').trim().toLowerCase());
    const posts: DesiredPost[] = [{ purpose: 'header', threadTs, message: renderIncidentHeader(card), editable: true, substance, ...(broadcast ? { broadcast } : {}) }];
    const board = boardModel(r, opts);
    if (board) posts.push({ purpose: 'board', threadTs, message: renderHypothesisBoard(board), editable: true });
    const escalation = escalationModel(r);
    if (escalation) posts.push({ purpose: 'escalation', threadTs, message: renderEscalation({ ...escalation, ...(pages.length ? { pages } : {}) }), editable: true });

    // Notes are written once: those already in Slack (or given up on) need no content (and no permalink lookup) again.
    const posted = new Set(r.posts.filter((p) => p.ts || isAbandoned(p)).map((p) => p.purpose));
    // Held back by the throttle: a note links to the investigation that covers this rule and service.
    const throttled = r.investigations[0] ? readContext(r.investigations[0].context).throttled : undefined;
    if (throttled && !posted.has(`throttled:${throttled.since}`)) posts.push({ purpose: `throttled:${throttled.since}`, threadTs, message: await this.throttledNote(throttled), editable: false });
    let permalink: Promise<string | undefined> | undefined;
    let firing = 0;
    let noted = r.alerts[0]?.receivedAt.getTime() ?? 0;
    for (const [i, a] of r.alerts.entries()) {
      if (a.status === 'firing') firing++;
      if (i === 0) continue;
      // A burst of repeats updates the summary card's count (`fired 40×, last 14:05`); only a re-fire after a
      // quiet spell, or the resolve, gets its own note in the thread. The first repeat of a burst still gets
      // a pointer under its own post, so the channel sees the alert is tracked. A storm thus costs each
      // incident thread two posts (the summary card and the board), not three.
      const quiet = a.receivedAt.getTime() - noted >= REPEAT_NOTE_QUIET_MS;
      if (a.status === 'firing' && !quiet && i !== 1) continue;
      if (quiet || a.status !== 'firing') noted = a.receivedAt.getTime();
      if ((quiet || a.status !== 'firing') && !posted.has(`alert:${a.id}`)) {
        const message = a.status === 'resolved' ? renderResolvedNote({ at: a.receivedAt, by: 'alert' }) : renderRepeatNote({ count: firing, at: a.receivedAt, link: undefined });
        posts.push({ purpose: `alert:${a.id}`, threadTs, message, editable: false });
      }
      // A repeat that Slack shows as its own top-level post gets a pointer to the incident thread; a
      // `[RESOLVED]` post is told the incident resolved, not that it "belongs to an open incident".
      if (a.messageTs && a.messageTs !== threadTs && a.channelId === r.channelId && !posted.has(`tracked:${a.id}`)) {
        permalink ??= this.chat.permalink(r.channelId, threadTs);
        const link = (await permalink) ?? '';
        const message = a.status === 'resolved' ? renderResolvedPointer({ permalink: link }) : renderAlreadyTrackedNote({ permalink: link });
        posts.push({ purpose: `tracked:${a.id}`, threadTs: a.messageTs, message, editable: false });
      }
    }
    return posts;
  }

  /** `⏸ Not investigated separately: covered by <that thread>`, linked when its thread is in Slack. */
  private async throttledNote(t: NonNullable<ReturnType<typeof readContext>['throttled']>): Promise<ChatMessage> {
    const by = await this.db.incident.findUnique({ where: { id: t.byIncidentId }, select: { title: true, channelId: true, threadTs: true } });
    const link = by?.threadTs ? await this.chat.permalink(by.channelId, by.threadTs).catch(() => undefined) : undefined;
    const title = by?.title ?? `incident ${t.byIncidentId}`;
    const where = link ? mrkdwnLink(link, title, 160) : `*${mrkdwnText(title, 160)}* (incident ${mrkdwnText(t.byIncidentId, 40)})`;
    const what = `${t.rule}${t.service ? ` on ${t.service}` : ''}`;
    const text = `⏸️ Not investigated separately: ${mrkdwnText(what, 200)} is covered by ${where}, whose automatic investigation started ${new Date(t.since).toISOString().slice(11, 16)} UTC (limit ${t.limit} per rule and service per ${Math.round(t.windowMs / 60_000)} min). Reply here to investigate this one too.`;
    return { text: fallbackText(text, 500), blocks: [contextBlock([text])] };
  }

  /**
   * Make one desired post true in Slack; returns its ts, or undefined for a post given up on. A card
   * deleted in Slack is posted again; a post whose thread was deleted is given up on for good.
   */
  private async reconcile(r: IncidentRecord, d: DesiredPost): Promise<string | undefined> {
    const hash = createHash('sha256').update(JSON.stringify(d.message)).digest('hex');
    const tag = { incidentId: r.id, purpose: d.purpose };
    let row = r.posts.find((p) => p.purpose === d.purpose);
    if (row && isAbandoned(row)) return undefined;

    try {
      if (row?.ts) {
        if (d.editable && row.contentHash !== hash) {
          if (this.deferCountEdit(r.id, d)) return row.ts;
          if (await this.edit(r.channelId, row.ts, d.message)) {
            await this.db.slackPost.update({ where: { id: row.id }, data: { contentHash: hash } });
            this.noteShown(r.id, d, true);
            return row.ts;
          }
          // Someone deleted the card: forget its ts and post it anew.
          this.log.info({ incidentId: r.id, purpose: d.purpose }, 'a card was deleted in Slack; posting it again');
          row = await this.db.slackPost.update({ where: { id: row.id }, data: { ts: null, contentHash: null } });
          return await this.postNew(r, d, row.id, hash);
        }
        return row.ts;
      }

      if (row) {
        // A previous attempt registered this post but never stored its ts: Slack may have it already.
        const found = await this.chat.findTagged(r.channelId, d.threadTs, tag);
        if (found) {
          this.log.info({ incidentId: r.id, purpose: d.purpose }, 'adopted a post made before a restart');
          await this.db.slackPost.update({ where: { id: row.id }, data: { ts: found } });
          if (d.editable && !(await this.edit(r.channelId, found, d.message))) return await this.postNew(r, d, row.id, hash);
          await this.db.slackPost.update({ where: { id: row.id }, data: { contentHash: hash } });
          return found;
        }
      } else {
        row = await this.db.slackPost.create({ data: { incidentId: r.id, purpose: d.purpose, channelId: r.channelId, threadTs: d.threadTs ?? null } });
      }
      return await this.postNew(r, d, row.id, hash);
    } catch (err) {
      if (chatErrorCode(err) !== 'thread_not_found') throw err;
      // The message this post replies to is gone (e.g. a duplicate alert post deleted by hand); Slack will
      // never take it, so it is marked and not tried again.
      this.log.info({ incidentId: r.id, purpose: d.purpose }, 'the thread of a post was deleted in Slack; giving up on that post');
      await this.db.slackPost.upsert({
        where: { incidentId_purpose: { incidentId: r.id, purpose: d.purpose } },
        create: { incidentId: r.id, purpose: d.purpose, channelId: r.channelId, threadTs: d.threadTs ?? null, contentHash: ABANDONED },
        update: { ts: null, contentHash: ABANDONED },
      });
      return undefined;
    }
  }

  private async postNew(r: IncidentRecord, d: DesiredPost, rowId: string, hash: string): Promise<string> {
    const tag = { incidentId: r.id, purpose: d.purpose };
    const { ts } = await this.sendable(d.message, (m) => this.chat.post(r.channelId, d.threadTs, m, tag, d.broadcast ? { broadcast: true } : {}));
    await this.db.slackPost.update({ where: { id: rowId }, data: { ts, contentHash: hash } });
    this.noteShown(r.id, d, false);
    return ts;
  }

  /** Edit a post in place; false when Slack no longer has it (message_not_found). */
  private async edit(channel: string, ts: string, message: ChatMessage): Promise<boolean> {
    try {
      await this.sendable(message, (m) => this.chat.update(channel, ts, m));
      return true;
    } catch (err) {
      if (chatErrorCode(err) === 'message_not_found') return false;
      throw err;
    }
  }

  /**
   * Send a message; when Slack refuses its content (blocks it deems invalid, or too long), send its
   * fallback text alone, so the thread still says what changed. `blocks: []` makes an edit drop the old blocks.
   */
  private async sendable<T>(message: ChatMessage, send: (m: ChatMessage) => Promise<T>): Promise<T> {
    try {
      return await send(message);
    } catch (err) {
      const code = chatErrorCode(err);
      if (!code || !CONTENT_REFUSALS.has(code)) throw err;
      const text = truncateMrkdwn(message.text, SLACK_LIMITS.messageTextRecommended);
      if (!message.blocks?.length && text === message.text) throw err;
      this.log.warn({ err: code }, 'Slack refused a message; sending its text alone');
      return await send({ text, blocks: [] });
    }
  }
}
