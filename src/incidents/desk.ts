import { createHash } from 'node:crypto';
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
import type { StatusModel } from '../slack/blocks/models.js';
import type { Db } from '../store/db.js';
import { isUniqueViolation } from '../store/db.js';
import type { ChatMessage, ChatPort } from './chat.js';
import type { Redactor } from '../redact/index.js';
import { parseAnnouncement } from '../changes/announcements.js';
import { recordChange } from '../changes/store.js';
import type { Clock } from './clock.js';
import { phaseOf, loadIncidentRecord } from './views.js';
import type { InvestigationRunner } from './runner.js';
import type { IncidentService } from './service.js';
import type { ThreadSync } from './thread.js';

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
  message: AlertMessage;
}

export interface SreCommand {
  text: string;
  userId: string;
  channelId: string;
  /** Unique per invocation; a resubmission of the same command is ignored. */
  triggerId: string;
}

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
      log: Logger;
    },
  ) {}

  onChannelMessage(m: ChannelMessage): Promise<void> {
    return this.track(this.handleChannelMessage(m));
  }

  onCommand(cmd: SreCommand): Promise<ChatMessage> {
    return this.track(this.handleCommand(cmd));
  }

  /** A click on a hypothesis's own controls: Confirm, Pin, or Refute with the reason from its dialog. */
  onHypothesisControl(c: { hypothesisId: string; userId: string; action: 'confirm' | 'pin' | 'refute'; reason?: string }): Promise<void> {
    return this.track(
      (async () => {
        const ref = await this.deps.service.hypothesisRef(c.hypothesisId);
        if (!ref) return;
        const cmd =
          c.action === 'refute'
            ? ({ kind: 'rule_out', label: ref.label, ...(c.reason ? { reason: c.reason } : {}) } as const)
            : c.action === 'confirm'
              ? ({ kind: 'confirm', label: ref.label } as const)
              : ({ kind: 'pin', label: ref.label } as const);
        await this.deps.service.applySteering(ref.incidentId, c.userId, cmd);
        await this.deps.thread.sync(ref.incidentId);
      })(),
    );
  }

  /** "Add evidence" from a hypothesis's dialog: a link and/or a note. */
  onResponderEvidence(e: { hypothesisId: string; userId: string; link?: string; note?: string }): Promise<void> {
    return this.track(
      (async () => {
        const incidentId = await this.deps.service.addResponderEvidence(e.hypothesisId, e.userId, e);
        if (incidentId) await this.deps.thread.sync(incidentId);
      })(),
    );
  }

  /** Users who opened App Home (bounded), so it can be republished as incidents change. */
  private readonly homeViewers = new Set<string>();
  private homeTimer?: NodeJS.Timeout;

  /** App Home opened: publish the shared incident view for this user. */
  onHomeOpened(userId: string): Promise<void> {
    if (this.homeViewers.size >= 500) this.homeViewers.delete(this.homeViewers.values().next().value!);
    this.homeViewers.add(userId);
    return this.track(this.publishHome([userId]));
  }

  /** Something changed: republish Home for its viewers, coalesced (views.publish is rate limited per user). */
  scheduleHomeRefresh(delayMs = 2000): void {
    if (this.homeTimer || this.homeViewers.size === 0) return;
    this.homeTimer = setTimeout(() => {
      this.homeTimer = undefined;
      void this.track(this.publishHome([...this.homeViewers])).catch((err: unknown) => this.deps.log.warn({ err: String(err) }, 'App Home refresh failed'));
    }, delayMs);
    this.homeTimer.unref();
  }

  private async publishHome(users: string[]): Promise<void> {
    const model = await this.statusModel(true);
    const view = renderHome(model, this.deps.clock.now());
    for (const u of users) await this.deps.chat.publishHome(u, view);
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
      const r = await service.recordSteering({ channelId: m.channel, threadTs: m.threadTs, messageTs: m.ts, userId: m.user, userName, text: m.message.text ?? '' });
      if (r.kind === 'recorded') {
        const cmd = parseSteering(m.message.text ?? '');
        const applied = await service.applySteering(r.incidentId, m.user, cmd);
        log.info({ incidentId: r.incidentId, user: m.user, steering: cmd.kind, applied }, 'steering recorded');
        // Anything but a direct board command goes to the model, which investigates again with it.
        if (applied === 'not_a_command' && this.deps.runner.hasModel) {
          const inv = await this.deps.db.investigation.findFirst({ where: { incidentId: r.incidentId }, orderBy: { startedAt: 'desc' } });
          if (inv) await this.deps.runner.reinvestigate(inv.id);
        }
        await this.deps.thread.sync(r.incidentId);
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

    const parsed = parseAlertMessage(m.message, { receivedAt: this.deps.clock.now() });
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
    await this.acceptAlert(parsed.alert, m.channel, m.ts, `slack:${m.channel}:${m.ts}:${parsed.alert.status}`);
  }

  private async handleCommand(cmd: SreCommand): Promise<ChatMessage> {
    const [sub = ''] = cmd.text.trim().split(/\s+/);
    const args = cmd.text.trim().slice(sub.length).trim();
    switch (sub.toLowerCase()) {
      case '':
      case 'help':
        return renderHelp({});
      case 'status':
        return this.status();
      case 'investigate':
        return this.investigate(cmd, args);
      case 'postmortem':
        return runPostmortemCommand(this.deps.postmortem, this.deps.db, { args, channelId: cmd.channelId, userId: cmd.userId });
      case 'stop':
      case 'resume':
        if (!this.deps.approvals) return { text: 'Vigil runs read-only here (no write policy is configured): there is nothing to stop or resume.' };
        return runStopCommand(this.deps.approvals, { verb: sub.toLowerCase() as 'stop' | 'resume', args, userId: cmd.userId, channelId: cmd.channelId });
      default:
        return renderHelp({ error: `Unknown subcommand \`${sub.slice(0, 40)}\`.` });
    }
  }

  private async status(): Promise<ChatMessage> {
    return renderStatus(await this.statusModel(false));
  }

  /** Open incidents with their leading hypothesis (and, for Home, links and pending approvals). */
  private async statusModel(withLinks: boolean): Promise<StatusModel> {
    const { db, service, clock } = this.deps;
    const open = await service.openIncidents();
    const records = await Promise.all(open.map((i) => loadIncidentRecord(db, i.id)));
    const pending = withLinks
      ? await db.approvalRequest.groupBy({ by: ['incidentId'], where: { status: 'pending', incidentId: { in: open.map((i) => i.id) } }, _count: { _all: true } })
      : [];
    const links = withLinks ? await Promise.all(records.map((r) => (r.threadTs ? this.deps.chat.permalink(r.channelId, r.threadTs) : Promise.resolve(undefined)))) : [];
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
    };
  }

  private async investigate(cmd: SreCommand, args: string): Promise<ChatMessage> {
    const parsed = parseInvestigateText(args);
    if ('error' in parsed) return renderHelp({ error: parsed.error });
    let alert: Alert;
    if ('slackLink' in parsed) {
      const msg = await this.deps.chat.fetchMessage(parsed.slackLink.channel, parsed.slackLink.ts);
      if (!msg) return renderHelp({ error: `Vigil cannot read that message (is it in a channel Vigil has joined?).` });
      const fromLink = parseAlertMessage(msg as AlertMessage, { receivedAt: this.deps.clock.now() });
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
        this.deps.runner.enqueue(result.investigationId);
        return { text: `🔎 Investigating *${alert.title}*: follow the thread Vigil just started in this channel.` };
      case 'repeat':
      case 'reopened': {
        await this.deps.thread.sync(result.incidentId);
        const inc = await this.deps.db.incident.findUniqueOrThrow({ where: { id: result.incidentId } });
        const link = inc.threadTs ? await this.deps.chat.permalink(inc.channelId, inc.threadTs) : undefined;
        return { text: `This matches an open incident already under investigation${link ? `: ${link}` : ''}.` };
      }
      case 'duplicate':
        return { text: 'Already received; the investigation is running.' };
      case 'resolved':
      case 'resolved_unknown':
        return { text: 'Nothing to investigate.' };
    }
  }

  private async acceptAlert(alert: Alert, channel: string, ts: string, deliveryKey: string): Promise<void> {
    const r = await this.deps.service.receiveAlert({ alert, channelId: channel, messageTs: ts, deliveryKey });
    this.deps.log.info({ result: r.kind, channel, ts, alert: alert.alertName }, 'alert received');
    switch (r.kind) {
      case 'opened':
        this.deps.runner.enqueue(r.investigationId);
        return;
      case 'repeat':
      case 'resolved':
        await this.deps.thread.sync(r.incidentId);
        return;
      case 'reopened': {
        await this.deps.thread.sync(r.incidentId);
        const inv = await this.deps.db.investigation.findFirst({ where: { incidentId: r.incidentId }, orderBy: { startedAt: 'desc' } });
        if (inv) this.deps.runner.enqueue(inv.id);
        return;
      }
      case 'duplicate':
      case 'resolved_unknown':
        return;
    }
  }

  /** A change announced in a change channel joins the change timeline; anything else there is ignored. */
  private async recordAnnouncement(m: ChannelMessage): Promise<void> {
    const text = [m.message.text ?? '', ...(m.message.attachments ?? []).flatMap((a) => [a.title ?? '', a.text ?? a.fallback ?? ''])].join('\n');
    const change = parseAnnouncement({ channel: m.channel, ts: m.ts, text, author: m.message.username ?? m.user ?? m.botId ?? 'unknown', at: slackTsToDate(m.ts) });
    if (!change) return;
    const stored = await recordChange(this.deps.db, this.deps.redactor.redactValue(change), `slack:${m.channel}:${m.ts}`);
    this.deps.log.info({ channel: m.channel, kind: change.kind, target: change.target.name, stored }, 'change announcement');
  }

  /** Post an error reply under a message once, even if Slack delivers the event again. */
  private async reportOnce(key: string, channel: string, threadTs: string, note: { what: string; detail: string; next: string }): Promise<void> {
    try {
      await this.deps.db.processedDelivery.create({ data: { key } });
    } catch (err) {
      if (isUniqueViolation(err)) return;
      throw err;
    }
    await this.deps.chat.post(channel, threadTs, renderErrorNote(note), { incidentId: '-', purpose: key });
  }
}

/** Slack's ts is the post time in seconds with microseconds. */
function slackTsToDate(ts: string): Date {
  return new Date(Math.round(Number(ts) * 1000));
}
