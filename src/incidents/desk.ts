import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { parseAlertMessage } from '../alerts/parse/index.js';
import { parseInvestigateText } from '../alerts/manual.js';
import { parseSteering } from '../agent/steering.js';
import type { ApprovalService } from '../approvals/index.js';
import { runPostmortemCommand } from '../postmortem/command.js';
import type { PostmortemService } from '../postmortem/service.js';
import { runStopCommand } from '../approvals/index.js';
import type { Alert, AlertMessage } from '../alerts/types.js';
import { renderHelp, renderStatus } from '../slack/blocks/commands.js';
import { renderErrorNote } from '../slack/blocks/notes.js';
import { renderHome } from '../slack/blocks/home.js';
import { fallbackText } from '../slack/blocks/mrkdwn.js';
import { decodeSlackText, mentionedUsers } from '../slack/blocks/plain.js';
import type { BoardModel, StatusModel } from '../slack/blocks/models.js';
import type { Db } from '../store/db.js';
import { isUniqueViolation } from '../store/db.js';
import type { ChatMessage, ChatPort } from './chat.js';
import { cutRedacted, type Redactor } from '../redact/index.js';
import { parseAnnouncement } from '../changes/announcements.js';
import { recordChange } from '../changes/store.js';
import type { Clock } from './clock.js';
import { phaseOf, loadIncidentRecord } from './views.js';
import { readContext } from './context.js';
import type { InvestigationRunner } from './runner.js';
import { PRIORITY, priorityOf } from './priority.js';
import type { SkillLibrary } from '../knowledge/skills.js';
import { HomeRefresher } from './home-refresh.js';
import { acknowledgeReply } from './acknowledge.js';
import type { SetupPanel } from './setup.js';
import type { AlertDelivery, IncidentService, ReceiveResult } from './service.js';
import { ThreadSyncError, type ThreadSync } from './thread.js';

/** A channel message as the Slack layer hands it over (already translated from the event). */
export interface ChannelMessage {
  channel: string;
  ts: string;
  /** Set for replies in a thread. */
  threadTs?: string;
  /** Human author, if any. */
  user?: string;
  /** Set when an app/integration posted it. */
  botId?: string;
  subtype?: string;
  /** Set for an edit made by its author (`message.edited.ts` of a message_changed event); unfurls have none. */
  editedTs?: string;
  message: AlertMessage;
}

export interface SreCommand {
  text: string;
  userId: string;
  channelId: string;
  /** Unique per invocation; a resubmission of the same command is ignored. */
  triggerId: string;
}

/** A failed alert intake is tried this many times in all, pausing 0.5 s, 1 s, 2 s between (3.5 s in all). */
const INTAKE_RETRY = { attempts: 4, firstDelayMs: 500 };
/** An investigation that ended with no hypothesis runs again on a repeat alert or a reply, at most this often. */
const EMPTY_RERUN_MS = 120_000;

/**
 * The entry points the Slack listeners call. It decides what a message or command means and hands the
 * work to the incident service, the runner and the thread sync; the Slack layer only translates.
 */
export class IncidentDesk {
  /** Work started by listeners after Slack's ack; drained on shutdown and awaited by tests. */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly deps: {
      db: Db;
      service: IncidentService;
      runner: InvestigationRunner;
      thread: ThreadSync;
      chat: ChatPort;
      clock: Clock;
      redactor: Redactor;
      alertChannels: string[];
      /** Channels where deploy bots, CD and flag tools announce changes. */
      changeChannels: string[];
      /** `/sre postmortem`: the draft from the stored record. */
      postmortem: PostmortemService;
      /** The approval flow, when a write policy is configured (`/sre stop|resume`). */
      approvals?: ApprovalService;
      /** The team's skills: App Home lists how many are in use, when they were loaded and any load errors. */
      skills?: SkillLibrary;
      /** App Home's setup panel (watched channels, sources, policy, model, the start-up check). */
      setup?: SetupPanel;
      log: Logger;
    },
  ) {
    this.home = new HomeRefresher(
      (users) => this.publishHome(users),
      (p) => this.track(p),
      deps.log,
    );
  }

  onChannelMessage(m: ChannelMessage): Promise<void> {
    return this.track(this.handleChannelMessage(m));
  }

  onCommand(cmd: SreCommand): Promise<ChatMessage> {
    return this.track(this.handleCommand(cmd));
  }

  /**
   * An alert that came on a webhook (POST /webhooks/alertmanager), with no Slack post: the same intake as an
   * alert post. When it opens the incident, the thread sync posts the thread root in `channelId` itself.
   */
  onWebhookAlert(d: Omit<AlertDelivery, 'messageTs'>): Promise<void> {
    return this.track(this.acceptAlert(d));
  }

  /**
   * A click on a hypothesis's own controls: Confirm, Pin, or Refute with the reason from its dialog.
   * `channelId`/`threadTs` say where the board is, so a click on a hypothesis that no longer exists
   * gets an answer there.
   */
  onHypothesisControl(c: { hypothesisId: string; userId: string; action: 'confirm' | 'pin' | 'refute'; reason?: string; channelId?: string; threadTs?: string }): Promise<void> {
    return this.track(
      (async () => {
        const ref = await this.deps.service.hypothesisRef(c.hypothesisId);
        const where = c.channelId ? { channel: c.channelId, threadTs: c.threadTs, user: c.userId } : undefined;
        if (!ref) {
          const incident = c.channelId && c.threadTs ? await this.deps.service.findByThread(c.channelId, c.threadTs) : null;
          if (where) await this.answerUnknownHypothesis(where, incident?.id, 'That hypothesis is no longer on the board, so nothing changed.');
          return;
        }
        const cmd =
          c.action === 'refute'
            ? ({ kind: 'rule_out', label: ref.label, ...(c.reason ? { reason: c.reason } : {}) } as const)
            : c.action === 'confirm'
              ? ({ kind: 'confirm', label: ref.label } as const)
              : ({ kind: 'pin', label: ref.label } as const);
        const applied = await this.deps.service.applySteering(ref.incidentId, c.userId, cmd);
        if (applied === 'unknown_label' && where) {
          await this.answerUnknownHypothesis(where, ref.incidentId, `${ref.label} is not on the current board (the investigation ran again), so nothing changed.`);
        }
        if (applied === 'applied') await this.followBoard(ref.incidentId, c.userId);
        await this.showInThread(ref.incidentId);
      })(),
    );
  }

  /** Which hypothesis a dialog acts on, so it can say so (undefined: no longer on the board). */
  hypothesis(hypothesisId: string): Promise<{ label: string; title: string; status: string; confidence: number } | undefined> {
    return this.deps.service.hypothesisRef(hypothesisId);
  }

  /** The board as the thread shows it, for the "Show all" dialog. */
  boardFor(incidentId: string): Promise<BoardModel | undefined> {
    return this.deps.thread.boardFor(incidentId);
  }

  /** "Add evidence" from a hypothesis's dialog: a link and/or a note. */
  onResponderEvidence(e: { hypothesisId: string; userId: string; link?: string; note?: string }): Promise<void> {
    return this.track(
      (async () => {
        const incidentId = await this.deps.service.addResponderEvidence(e.hypothesisId, e.userId, e);
        if (incidentId) await this.showInThread(incidentId);
      })(),
    );
  }

  private readonly home: HomeRefresher;

  /** App Home opened: publish the shared incident view for this user. */
  onHomeOpened(userId: string): Promise<void> {
    return this.track(this.home.opened(userId));
  }

  /** Something changed: republish Home for its viewers, coalesced (views.publish is rate limited per user). */
  scheduleHomeRefresh(delayMs = 2000): void {
    this.home.schedule(delayMs);
  }

  private async publishHome(users: string[]): Promise<void> {
    // Each viewer on their own: one user Slack refuses (left the workspace, rate limited) skips nobody else.
    // Each gets their own view: only incidents of alert channels they are a member of.
    // The setup panel is the same for everyone: asked once per refresh, and a failure only leaves it out.
    const setup = await this.deps.setup?.model().catch((err: unknown) => void this.deps.log.warn({ err: this.errorReason(err) }, 'could not read the setup for App Home'));
    for (const u of users) {
      await this.statusModel(true, u)
        .then(async (model) => {
          // Only fixes of incidents this viewer may see, and that their groups may approve.
          const awaitingYou = (await this.deps.approvals?.pendingFor(u, model.open.map((i) => i.incidentId))) ?? [];
          const view = renderHome({ ...model, ...(awaitingYou.length ? { awaitingYou } : {}), ...(setup ? { setup } : {}) }, this.deps.clock.now());
          await this.deps.chat.publishHome(u, view);
        })
        .catch((err: unknown) => this.deps.log.warn({ err: this.errorReason(err), user: u }, 'could not publish App Home for a user'));
    }
  }

  /** Resolves when no listener work is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p)).catch(() => undefined);
    return p;
  }

  private async handleChannelMessage(m: ChannelMessage): Promise<void> {
    const { service, log } = this.deps;
    if (m.threadTs && m.threadTs !== m.ts) {
      if (!m.user || m.botId) return; // bots replying in threads (e.g. Grafana panel images) are not steering
      const userName = await this.deps.chat.userName(m.user);
      const text = await this.typedText(m.message.text ?? '');
      // Slack had its ack and will not deliver the reply again: a store that is away for a moment is
      // waited for (the same doubling pauses as alert intake); when it stays away the thread says so.
      const r = await this.recordSteeringWithRetry({ channelId: m.channel, threadTs: m.threadTs, messageTs: m.ts, userId: m.user, ...(userName ? { userName } : {}), text });
      if (r?.kind === 'recorded') {
        const cmd = parseSteering(text);
        const applied = await service.applySteering(r.incidentId, m.user, cmd);
        log.info({ incidentId: r.incidentId, user: m.user, steering: cmd.kind, applied }, 'steering recorded');
        if (applied === 'unknown_label' && 'label' in cmd) {
          await this.answerUnknownHypothesis({ channel: m.channel, threadTs: m.threadTs, user: m.user }, r.incidentId, `There is no ${cmd.label} on this incident's board, so nothing changed.`);
        }
        if (applied === 'applied') await this.followBoard(r.incidentId, m.user);
        // Anything but a direct board command goes to the model, which investigates again with it. Without a
        // model, a reply still retries an investigation that failed (the failure notice says so).
        const again = applied === 'not_a_command' ? await this.investigateAgain(r.incidentId, this.deps.runner.hasModel ? 'finished' : 'failed', m.user) : undefined;
        await this.showInThread(r.incidentId);
        // After the board edit: a reaction on the reply, and a note when it changed the board (acknowledge.ts).
        await acknowledgeReply(this.deps.chat, log, { channel: m.channel, ts: m.ts, threadTs: m.threadTs, incidentId: r.incidentId, userId: m.user, cmd: this.deps.redactor.redactValue(cmd), applied, ...(again ? { again } : {}) });
      }
      return;
    }
    if (this.deps.changeChannels.includes(m.channel)) {
      await this.recordAnnouncement(m);
      return;
    }
    if (!this.deps.alertChannels.includes(m.channel)) return;
    // Alerts are posted by integrations; people start investigations with /sre investigate.
    if (!m.botId && m.subtype !== 'bot_message') return;

    // Redacted before parsing: the parser cuts and cleans titles and text, which would break a secret's
    // shape (a token cut at 200 characters, `_…_` markup) so that no detector matches it afterwards.
    const parsed = parseAlertMessage(this.deps.redactor.redactValue(m.message), { receivedAt: this.deps.clock.now() });
    if (parsed.kind === 'not_alert') {
      log.debug({ channel: m.channel, ts: m.ts, reason: parsed.reason }, 'bot post is not an alert');
      return;
    }
    if (parsed.kind === 'malformed') {
      await this.reportOnce(`malformed:${m.channel}:${m.ts}`, m.channel, m.ts, {
        what: 'Vigil could not read this alert post',
        detail: parsed.reason,
        next: 'Start an investigation by hand with `/sre investigate <what is failing>`, or fix the alert template.',
      });
      return;
    }
    // An edit is a new delivery (Alertmanager edits a post from RESOLVED back to FIRING); a Slack retry
    // of the same event, or an unfurl (no `edited`), is not.
    const edit = m.editedTs ? `:edited:${m.editedTs}` : '';
    await this.acceptAlert({ alert: parsed.alert, channelId: m.channel, messageTs: m.ts, deliveryKey: `slack:${m.channel}:${m.ts}:${parsed.alert.status}${edit}` });
  }

  private async handleCommand(cmd: SreCommand): Promise<ChatMessage> {
    const [sub = ''] = cmd.text.trim().split(/\s+/);
    const args = cmd.text.trim().slice(sub.length).trim();
    switch (sub.toLowerCase()) {
      case '':
      case 'help':
        return renderHelp({});
      case 'status':
        return this.status(cmd.userId);
      case 'investigate':
        return this.investigate(cmd, args);
      case 'postmortem':
        return runPostmortemCommand(this.deps.postmortem, this.deps.db, { args, channelId: cmd.channelId, userId: cmd.userId, canSee: (channel) => this.canSee(cmd.userId, channel) });
      case 'stop':
      case 'resume':
        if (!this.deps.approvals) return { text: 'Vigil runs read-only here (no write policy is configured): there is nothing to stop or resume.' };
        return runStopCommand(this.deps.approvals, {
          verb: sub.toLowerCase() as 'stop' | 'resume',
          args,
          userId: cmd.userId,
          channelId: cmd.channelId,
          canSee: (channel) => this.canSee(cmd.userId, channel),
          // Stop ends this replica's runs at once; other replicas read the stop switch at their next lease renewal.
          onStopped: (scope) => this.deps.runner.stopRuns(scope, cmd.userId),
        });
      default:
        return renderHelp({ error: `Unknown subcommand \`${sub.slice(0, 40)}\`.` });
    }
  }

  private async status(userId: string): Promise<ChatMessage> {
    return renderStatus(await this.statusModel(false, userId));
  }

  /**
   * Whether this user may see and act on incidents of this alert channel: they must be a member of it
   * (issue 12: someone outside a private alert channel must not read its incidents or stop them).
   */
  private async canSee(userId: string, channelId: string): Promise<boolean> {
    const { chat } = this.deps;
    return chat.isMember ? chat.isMember(channelId, userId) : true;
  }

  /** Open incidents (those of alert channels `viewer` is in) with their leading hypothesis (and, for Home, links and pending approvals). */
  private async statusModel(withLinks: boolean, viewer: string): Promise<StatusModel> {
    const { db, service, clock } = this.deps;
    const all = await service.openIncidents();
    const visible = new Map<string, boolean>();
    for (const ch of new Set(all.map((i) => i.channelId))) visible.set(ch, await this.canSee(viewer, ch));
    const open = all.filter((i) => visible.get(i.channelId));
    const records = await Promise.all(open.map((i) => loadIncidentRecord(db, i.id)));
    const pending = withLinks
      ? await db.approvalRequest.groupBy({ by: ['incidentId'], where: { status: 'pending', incidentId: { in: open.map((i) => i.id) } }, _count: { _all: true } })
      : [];
    // `/sre status` and Home both link to each thread: the list is for getting there.
    const links = await Promise.all(records.map((r) => (r.threadTs ? this.deps.chat.permalink(r.channelId, r.threadTs) : Promise.resolve(undefined))));
    return {
      open: records.map((r, idx) => {
        const leading = r.investigations[0]?.hypotheses.filter((h) => h.status === 'supported').sort((a, b) => b.confidence - a.confidence)[0];
        const waiting = pending.find((p) => p.incidentId === r.id)?._count._all;
        return {
          incidentId: r.id,
          title: r.title,
          target: r.namespace && r.service ? `${r.namespace}/${r.service}` : r.namespace ?? undefined,
          phase: phaseOf(r),
          openedAt: r.openedAt,
          leading: leading ? `${leading.label} ${leading.title}` : undefined,
          ...(links[idx] ? { permalink: links[idx] } : {}),
          ...(waiting ? { pendingApprovals: waiting } : {}),
        };
      }),
      resolvedRecently: await service.countResolvedSince(new Date(clock.now().getTime() - 24 * 3600_000)),
      ...(withLinks && this.deps.skills ? { skills: skillsStatus(this.deps.skills) } : {}),
    };
  }

  private async investigate(cmd: SreCommand, args: string): Promise<ChatMessage> {
    // Decoded (Slack's escaping undone, so detectors see what was typed), then redacted, then parsed: the
    // parser trims and cuts the text into a title, and a secret cut in half no longer matches a detector.
    const parsed = parseInvestigateText(this.deps.redactor.redactText(await this.typedText(args)));
    if ('error' in parsed) return renderHelp({ error: parsed.error });
    let alert: Alert;
    if ('slackLink' in parsed) {
      const msg = await this.deps.chat.fetchMessage(parsed.slackLink.channel, parsed.slackLink.ts);
      if (!msg) return renderHelp({ error: `Vigil cannot read that message (is it in a channel Vigil has joined?).` });
      const fromLink = parseAlertMessage(this.deps.redactor.redactValue(msg as AlertMessage), { receivedAt: this.deps.clock.now() });
      if (fromLink.kind !== 'alert') return renderHelp({ error: `That message is not an alert Vigil can read: ${fromLink.reason}` });
      alert = fromLink.alert;
    } else {
      alert = parsed.alert;
    }
    // Whatever a responder pasted is redacted before it is echoed, stored or posted anywhere.
    alert = this.deps.redactor.redactValue(alert);
    const key = `command:${cmd.triggerId || createHash('sha256').update(`${cmd.userId}:${cmd.text}`).digest('hex').slice(0, 16)}`;
    const result = await this.deps.service.receiveAlert({ alert: { ...alert, status: 'firing' }, channelId: cmd.channelId, deliveryKey: key, openedBy: cmd.userId });
    switch (result.kind) {
      case 'opened':
        this.deps.runner.enqueue(result.investigationId, PRIORITY.person);
        return { text: `🔎 Investigating *${fallbackText(alert.title, 200)}*: follow the thread Vigil just started in this channel.` };
      case 'repeat':
      case 'reopened': {
        // Asked by a person: a finished investigation runs again with fresh evidence.
        const again = await this.investigateAgain(result.incidentId, 'finished', cmd.userId);
        await this.showInThread(result.incidentId);
        const inc = await this.deps.db.incident.findUniqueOrThrow({ where: { id: result.incidentId } });
        const link = inc.threadTs ? await this.deps.chat.permalink(inc.channelId, inc.threadTs) : undefined;
        const where = link ? `: ${link}` : ' (see its thread in this channel)';
        const matches = result.kind === 'reopened' ? 'a recently resolved incident (now reopened)' : 'an open incident';
        const state = { again: '; Vigil is investigating it again with fresh evidence', running: ' that Vigil is investigating right now', kept: '' }[again];
        return { text: `${again === 'again' ? '🔎 ' : ''}This matches ${matches}${state}${where}.` };
      }
      case 'duplicate':
        return { text: 'Vigil already received this command; nothing new was started.' };
      case 'resolved':
      case 'resolved_unknown':
        return { text: 'Nothing to investigate.' };
    }
  }

  private async acceptAlert(d: AlertDelivery): Promise<void> {
    const r = await this.receiveWithRetry(d);
    if (!r) return;
    this.deps.log.info({ result: r.kind, channel: d.channelId, ts: d.messageTs, alert: d.alert.alertName }, 'alert received');
    switch (r.kind) {
      case 'opened':
        if (r.throttled) {
          // Not dropped: its thread says which investigation covers it, and links to it.
          this.deps.log.info({ incidentId: r.incidentId, throttle: r.throttled.key, by: r.throttled.byIncidentId, since: r.throttled.since }, 'automatic investigation throttled; linked to the one that covers this rule and service');
          await this.showInThread(r.incidentId);
          return;
        }
        this.deps.runner.enqueue(r.investigationId, priorityOf(d.alert.severity));
        return;
      case 'reopened':
        // It fired again after resolving: what is wrong now may differ, so triage runs again.
        await this.investigateAgain(r.incidentId, 'finished');
        await this.showInThread(r.incidentId);
        return;
      case 'repeat':
        // Still firing while the last run gave up (e.g. an API was down): try again; otherwise the board stands.
        await this.investigateAgain(r.incidentId, 'failed');
        await this.showInThread(r.incidentId);
        return;
      case 'resolved':
        // Nobody approves a fix for a problem that is gone: its open cards close before the thread says resolved.
        await this.deps.approvals?.closeForResolved(r.incidentId).catch((err: unknown) => this.deps.log.error({ incidentId: r.incidentId, err: this.errorReason(err) }, 'could not close the approval cards of a resolved incident'));
        await this.showInThread(r.incidentId);
        return;
      case 'duplicate':
      case 'resolved_unknown':
        return;
    }
  }

  /**
   * An approval card changed (proposed, approved, executed, withdrawn…): App Home lists pending approvals, and
   * the board says what became of the leading fix, so both follow. Tracked, so shutdown and tests wait for it.
   */
  approvalChanged(incidentId: string): void {
    this.scheduleHomeRefresh();
    void this.track(this.showInThread(incidentId)).catch((err: unknown) => this.deps.log.warn({ incidentId, err: this.errorReason(err) }, 'could not bring the board up to date after an approval changed'));
  }

  /**
   * After an investigation reports: its leading fix becomes an approval card (or a refusal), and the board is
   * brought up to date with what the planner and the policy made of it.
   */
  async afterReport(incidentId: string): Promise<void> {
    if (!this.deps.approvals) return;
    // A run a responder asked for (or an incident they opened with /sre investigate) proposes in their name:
    // four-eyes then keeps them from approving their own fix alone. Runs on an alert alone are Vigil's.
    const inv = await this.deps.db.investigation.findFirst({ where: { incidentId }, orderBy: { startedAt: 'desc' }, select: { context: true, incident: { select: { openedBy: true } } } });
    const requestedBy = (inv ? readContext(inv.context).askedBy : undefined) ?? inv?.incident.openedBy ?? undefined;
    await this.deps.approvals.proposeLeading(incidentId, requestedBy ? { requestedBy } : {});
    await this.showInThread(incidentId);
  }

  /**
   * Proposals follow the board: a verdict on a hypothesis (rule out, refute, confirm) withdraws the fixes it no
   * longer backs and proposes the leading one. A failure here must not lose the verdict, which is stored.
   */
  private async followBoard(incidentId: string, requestedBy: string): Promise<void> {
    await this.deps.approvals?.followBoard(incidentId, { propose: true, requestedBy }).catch((err: unknown) => this.deps.log.error({ incidentId, err: this.errorReason(err) }, 'could not bring the approval cards in line with the board'));
  }

  /**
   * Slack had its ack before the listener ran and never delivers the post again, so a failed intake
   * (database or Slack down for a moment) is retried here, with a doubling pause. Repeating is safe:
   * `receiveAlert` is one transaction keyed by the delivery, so an attempt that failed left nothing and
   * one that committed makes the next a `duplicate`. When every attempt fails, the post says so in its
   * thread instead of being dropped.
   */
  private async receiveWithRetry(d: AlertDelivery): Promise<ReceiveResult | undefined> {
    const { attempts, firstDelayMs } = INTAKE_RETRY;
    const log = this.deps.log.child({ channel: d.channelId, ts: d.messageTs, deliveryKey: d.deliveryKey });
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.deps.service.receiveAlert(d);
      } catch (err) {
        const reason = this.errorReason(err);
        if (attempt >= attempts) {
          // A webhook delivery has no post to answer in: the log says it (its sender was answered 202 already).
          if (!d.messageTs) return void log.error({ err: reason, attempts }, 'could not open an incident for a webhook alert');
          log.error({ err: reason, attempts }, 'could not open an incident for an alert post; answering in its thread');
          const link = await this.deps.chat.permalink(d.channelId, d.messageTs).catch(() => undefined);
          await this.reportOnce(`intake-failed:${d.deliveryKey}`, d.channelId, d.messageTs, {
            what: 'Vigil could not open an incident for this alert',
            detail: reason,
            next: `Run \`/sre investigate ${link ?? '<link to this alert post>'}\` to retry.`,
          });
          return undefined;
        }
        const waitMs = firstDelayMs * 2 ** (attempt - 1);
        log.warn({ err: reason, attempt, retryInMs: waitMs }, 'alert intake failed; will retry');
        await sleep(waitMs);
      }
    }
  }

  /**
   * Store a thread reply, retrying like alert intake. An attempt whose commit succeeded but whose answer
   * was lost makes the next one a `duplicate`: after a failed attempt that counts as recorded, so the
   * command is still applied. When every attempt fails, the reply's thread says it was not recorded.
   */
  private async recordSteeringWithRetry(m: { channelId: string; threadTs: string; messageTs: string; userId: string; userName?: string; text: string }): Promise<Awaited<ReturnType<IncidentService['recordSteering']>> | undefined> {
    const { attempts, firstDelayMs } = INTAKE_RETRY;
    const log = this.deps.log.child({ channel: m.channelId, ts: m.messageTs });
    for (let attempt = 1; ; attempt++) {
      try {
        const r = await this.deps.service.recordSteering(m);
        return r.kind === 'duplicate' && attempt > 1 ? { kind: 'recorded', incidentId: r.incidentId } : r;
      } catch (err) {
        const reason = this.errorReason(err);
        if (attempt >= attempts) {
          log.error({ err: reason, attempts }, 'could not store a thread reply; answering in its thread');
          await this.reportOnce(`steering-failed:${m.channelId}:${m.messageTs}`, m.channelId, m.threadTs, {
            what: `Vigil could not record <@${m.userId}>'s reply, so it did not act on it`,
            detail: reason,
            next: 'Send the reply again in a minute; if this keeps happening, ask whoever runs Vigil to check its database.',
          }).catch((e: unknown) => log.error({ err: this.errorReason(e) }, 'could not say in the thread that a reply was lost'));
          return undefined;
        }
        const waitMs = firstDelayMs * 2 ** (attempt - 1);
        log.warn({ err: reason, attempt, retryInMs: waitMs }, 'storing a thread reply failed; will retry');
        await sleep(waitMs);
      }
    }
  }

  /**
   * Run an incident's latest investigation again when it has `finished` (reported or gave up), or only
   * when it `failed`. One that is queued or running already reads the newest state, so it is left alone.
   * `askedBy`: the responder asking (a reply, `/sre investigate`); the fix the run leads to is requested by them.
   */
  private async investigateAgain(incidentId: string, when: 'finished' | 'failed', askedBy?: string): Promise<'again' | 'running' | 'kept'> {
    const inv = await this.deps.db.investigation.findFirst({ where: { incidentId }, orderBy: { startedAt: 'desc' } });
    if (!inv) return 'kept';
    if (inv.state === 'queued' || inv.state === 'running') return 'running';
    // Skipped by the throttle: only a person starts it (a repeat of the alert is what the throttle holds back).
    if (inv.state === 'skipped' && !askedBy) return 'kept';
    if (inv.state !== 'failed' && inv.state !== 'waiting' && inv.state !== 'skipped') return 'kept';
    // 'failed' also means "ended empty": a run that reported no hypothesis at all (a source was down, the
    // cluster had not caught up) is worth another look when the alert repeats or someone replies, but not
    // more than once per EMPTY_RERUN_MS, so a flapping alert does not re-run it at every repeat.
    if (inv.state === 'waiting' && when === 'failed') {
      const ended = inv.finishedAt ?? inv.updatedAt;
      if (this.deps.clock.now().getTime() - ended.getTime() < EMPTY_RERUN_MS) return 'kept';
      if ((await this.deps.db.hypothesis.count({ where: { investigationId: inv.id } })) > 0) return 'kept';
    }
    await this.deps.runner.reinvestigate(inv.id, askedBy);
    this.deps.log.info({ incidentId, investigationId: inv.id, was: inv.state }, 'investigating again');
    return 'again';
  }

  /** A steering command or a click named a hypothesis that is not on the board: say so, and what is. */
  private async answerUnknownHypothesis(to: { channel: string; threadTs: string | undefined; user: string }, incidentId: string | undefined, what: string): Promise<void> {
    const inv = incidentId ? await this.deps.db.investigation.findFirst({ where: { incidentId }, orderBy: { startedAt: 'desc' } }) : null;
    const hypotheses = inv ? await this.deps.db.hypothesis.findMany({ where: { investigationId: inv.id }, orderBy: { ordinal: 'asc' }, select: { label: true, title: true, status: true } }) : [];
    const board = hypotheses.length
      ? `The board has: ${hypotheses.map((h) => `${h.label} ${h.title} (${h.status.replace(/_/g, ' ')})`).join(' · ')}.`
      : 'The board has no hypotheses yet.';
    await this.deps.chat
      .ephemeral(to.channel, to.user, { text: fallbackText(this.deps.redactor.redactText(`${what} ${board}`), 2900) }, to.threadTs)
      .catch((err: unknown) => this.deps.log.warn({ err: String(err), incidentId }, 'could not answer a steering command about an unknown hypothesis'));
  }

  /**
   * Bring an incident's thread up to date. A post Slack refused is logged and retried by the next sync:
   * the command or message that changed the incident has been handled, and its answer should say so.
   */
  private async showInThread(incidentId: string): Promise<void> {
    await this.deps.thread.sync(incidentId).catch((err: unknown) => {
      if (!(err instanceof ThreadSyncError)) throw err;
      this.deps.log.warn({ incidentId, err: this.errorReason(err) }, 'could not bring the thread up to date');
    });
  }

  /** Text Slack delivered (escaped, with `<@U…>` mentions), as the person typed it, with mentioned users' names. */
  private async typedText(raw: string): Promise<string> {
    const names = new Map<string, string>();
    for (const id of mentionedUsers(raw).slice(0, 10)) {
      const name = await this.deps.chat.userName(id);
      if (name) names.set(id, name);
    }
    return decodeSlackText(raw, names);
  }

  /** A failure's message as a person can read it: one line, redacted, bounded. */
  private errorReason(err: unknown): string {
    const message = err instanceof Error ? err.message : String(err);
    // Redacted before it is folded and cut: folding joins a multi-line secret's lines, a cut shortens it.
    return cutRedacted(this.deps.redactor.redactText(message).replace(/\s+/g, ' ').trim(), 300) || 'unknown error';
  }

  /** A change announced in a change channel joins the change timeline; anything else there is ignored. */
  private async recordAnnouncement(m: ChannelMessage): Promise<void> {
    // Fields too: Flux's notification-controller puts the revision in one.
    const text = [m.message.text ?? '', ...(m.message.attachments ?? []).flatMap((a) => [a.title ?? '', a.text ?? a.fallback ?? '', ...(a.fields ?? []).map((f) => `${f.title ?? ''}: ${f.value ?? ''}`)])].join('\n');
    // Redacted before parsing: parsing strips `_*~` markup and cuts the text, after which `ghp_…` reads
    // `ghp…` and no detector matches it any more.
    const change = parseAnnouncement({ channel: m.channel, ts: m.ts, text: this.deps.redactor.redactText(text), author: m.message.username ?? m.user ?? m.botId ?? 'unknown', at: slackTsToDate(m.ts) });
    if (!change) return;
    const stored = await recordChange(this.deps.db, this.deps.redactor.redactValue(change), `slack:${m.channel}:${m.ts}`);
    this.deps.log.info({ channel: m.channel, kind: change.kind, target: change.target.name, stored }, 'change announcement');
  }

  /**
   * Post an error reply under a message once, even if Slack delivers the event again. When the store
   * cannot record it (it may be the failure being reported), the reply goes out anyway: a rare second
   * note beats a silent loss.
   */
  private async reportOnce(key: string, channel: string, threadTs: string, note: { what: string; detail: string; next: string }): Promise<void> {
    try {
      await this.deps.db.processedDelivery.create({ data: { key } });
    } catch (err) {
      if (isUniqueViolation(err)) return;
      this.deps.log.warn({ err: this.errorReason(err), key }, 'could not record an error note; posting it anyway');
    }
    await this.deps.chat.post(channel, threadTs, renderErrorNote(note), { incidentId: '-', purpose: key });
  }
}

/** Slack's ts is the post time in seconds with microseconds. */
function slackTsToDate(ts: string): Date {
  return new Date(Math.round(Number(ts) * 1000));
}

/** The skills directory as App Home shows it (picking up an edit made since the last load). */
function skillsStatus(skills: SkillLibrary): NonNullable<StatusModel['skills']> {
  skills.refresh();
  return { count: skills.skills.length, loadedAt: skills.loadedAt, ...(skills.dir ? { dir: skills.dir } : {}), errors: skills.errors.map((e) => ({ ...e })) };
}
