import type { Logger } from 'pino';
import type { Alert } from '../alerts/types.js';
import type { SteeringCommand } from '../agent/steering.js';
import { fingerprintAlert, fingerprintParts } from '../alerts/fingerprint.js';
import type { Redactor } from '../redact/index.js';
import type { Db } from '../store/db.js';
import { isUniqueViolation } from '../store/db.js';
import { lockKey } from '../store/locks.js';
import type { Clock } from './clock.js';
import { recordAudit } from './audit.js';
import { sealedWrite } from '../audit/records.js';
import { admitAutomatic, firedAt, recordAutomatic, DEFAULT_THROTTLE, throttledNotice, type Throttled, type ThrottleSettings } from './throttle.js';
import type { DbTx } from '../store/tx.js';

export interface IncidentSettings {
  /** A repeat of an open incident's alert within this window joins its thread. */
  dedupWindowMs: number;
  /** A firing post this soon after the incident resolved reopens it instead of opening a new one. */
  reopenWindowMs: number;
  /** Automatic investigations per alert rule and service (default one per hour); manual ones are not limited. */
  throttle?: ThrottleSettings;
}

export type ReceiveResult =
  | { kind: 'duplicate' }
  /** `throttled`: the incident is open (its thread is posted) but its investigation was skipped, not queued. */
  | { kind: 'opened'; incidentId: string; investigationId: string; throttled?: Throttled }
  | { kind: 'repeat'; incidentId: string }
  | { kind: 'reopened'; incidentId: string }
  | { kind: 'resolved'; incidentId: string }
  /** A RESOLVED post for which no open incident exists: recorded nowhere, nothing to do. */
  | { kind: 'resolved_unknown' };

/** How a responder's rule-out (thread reply or Refute) reads in `Hypothesis.reason`; re-runs never overwrite it. */
export const RULED_OUT_BY_RESPONDER = 'ruled out by a responder';

/**
 * Whether a person ruled this hypothesis out (and it still stands). Proposals follow that verdict: its fixes
 * are withdrawn and not proposed again under another hypothesis's name.
 */
export function ruledOutByResponder(h: { status: string; steeredBy: string | null; reason: string | null }): boolean {
  return h.status === 'ruled_out' && h.steeredBy !== null && (h.reason ?? '').startsWith(RULED_OUT_BY_RESPONDER);
}

export type SteeringResult = { kind: 'recorded'; incidentId: string } | { kind: 'duplicate'; incidentId: string } | { kind: 'not_incident' };

export interface AlertDelivery {
  alert: Alert;
  channelId: string;
  /** The alert post's ts; the incident thread hangs from it. Absent for manual investigations until Vigil posts its root. */
  messageTs?: string;
  /** Identity of this delivery (e.g. `slack:C1:1700.1:firing`): a Slack retry or edit of the same post is a no-op. */
  deliveryKey: string;
  openedBy?: string;
}

/**
 * The incident lifecycle: alert → dedupe → incident (+ investigation) or repeat/resolve. Every write is
 * one DB transaction keyed by the delivery, so Slack retries and concurrent replicas open one incident.
 * Thread output is not done here: callers hand the incident to the investigation runner / thread sync.
 */
export class IncidentService {
  constructor(
    private readonly db: Db,
    private readonly settings: IncidentSettings,
    private readonly clock: Clock,
    private readonly redactor: Redactor,
    private readonly log: Logger,
  ) {}

  async receiveAlert(d: AlertDelivery): Promise<ReceiveResult> {
    const alert = this.redactor.redactValue(d.alert);
    const fingerprint = fingerprintAlert(d.alert);
    // An Alertmanager group is a route's: the same group values posted by another route (another channel,
    // e.g. a warnings channel) are another group, so a title-only fingerprint matches in its own channel only.
    const scope = fingerprintParts(d.alert)[0] === 'group' ? { channelId: d.channelId } : {};
    const now = this.clock.now();
    try {
      return await this.db.$transaction(async (tx) => {
        // One decision per fingerprint at a time: the webhook's and the Slack post's copies of one alert, on
        // two replicas at once, must not both read "nothing open" and both open an incident.
        await lockKey(tx, `incident:${fingerprint}`);
        const existing = await tx.incident.findFirst({
          where: { fingerprint, status: 'open', ...scope },
          orderBy: { openedAt: 'desc' },
        });
        const alertRow = {
          source: alert.source,
          status: alert.status,
          fingerprint,
          title: alert.title,
          channelId: d.channelId,
          messageTs: d.messageTs ?? null,
          dedupeKey: d.deliveryKey,
          payload: JSON.stringify(alert),
          receivedAt: now,
        };

        if (alert.status === 'resolved') {
          if (!existing) return { kind: 'resolved_unknown' } as const;
          await tx.alert.create({ data: { ...alertRow, incidentId: existing.id } });
          await tx.incident.update({ where: { id: existing.id }, data: { status: 'resolved', resolvedAt: now } });
          await recordAudit(tx, { incidentId: existing.id, actor: 'vigil', kind: 'incident.resolved', data: { by: 'alert', title: alert.title }, at: now });
          return { kind: 'resolved', incidentId: existing.id } as const;
        }

        if (existing && now.getTime() - existing.lastAlertAt.getTime() <= this.settings.dedupWindowMs) {
          await tx.alert.create({ data: { ...alertRow, incidentId: existing.id } });
          await tx.incident.update({
            where: { id: existing.id },
            data: { lastAlertAt: now, alertCount: { increment: 1 } },
          });
          await recordAudit(tx, { incidentId: existing.id, actor: 'vigil', kind: 'alert.repeat', data: { title: alert.title }, at: now });
          return { kind: 'repeat', incidentId: existing.id } as const;
        }

        const recent = await tx.incident.findFirst({
          where: { fingerprint, status: 'resolved', resolvedAt: { gte: new Date(now.getTime() - this.settings.reopenWindowMs) }, ...scope },
          orderBy: { resolvedAt: 'desc' },
        });
        if (recent) {
          await tx.alert.create({ data: { ...alertRow, incidentId: recent.id } });
          await tx.incident.update({
            where: { id: recent.id },
            data: { status: 'open', resolvedAt: null, lastAlertAt: now, alertCount: { increment: 1 } },
          });
          await recordAudit(tx, { incidentId: recent.id, actor: 'vigil', kind: 'incident.reopened', data: { title: alert.title }, at: now });
          // Its re-investigation is automatic, so it counts against the throttle for the rule's other alerts; it is
          // not refused itself: what fired again may differ, and the incident's token cap bounds a flapping alert.
          if (!d.openedBy) await recordAutomatic(tx, alert, recent.id, firedAt(alert, d.messageTs, now));
          return { kind: 'reopened', incidentId: recent.id } as const;
        }

        const incident = await tx.incident.create({
          data: {
            fingerprint,
            title: alert.title,
            alertName: alert.alertName,
            severity: alert.severity ?? null,
            namespace: alert.labels['namespace'] ?? null,
            service: null,
            source: alert.source,
            channelId: d.channelId,
            threadTs: d.messageTs ?? null,
            openedBy: d.openedBy ?? null,
            openedAt: now,
            lastAlertAt: now,
          },
        });
        await tx.alert.create({ data: { ...alertRow, incidentId: incident.id } });
        // A person's `/sre investigate` always runs; an alert's own investigation passes the throttle first.
        const throttled = d.openedBy ? undefined : await admitAutomatic(tx, alert, incident.id, firedAt(alert, d.messageTs, now), this.throttle);
        const investigation = await tx.investigation.create({ data: { incidentId: incident.id, startedAt: now, ...(throttled ? { state: 'skipped' } : {}) } });
        if (throttled) await this.markThrottled(tx, incident.id, throttled, now);
        await recordAudit(tx, {
          incidentId: incident.id,
          actor: d.openedBy ?? 'vigil',
          kind: 'incident.opened',
          data: { title: alert.title, source: alert.source, fingerprint },
          at: now,
        });
        return { kind: 'opened', incidentId: incident.id, investigationId: investigation.id, ...(throttled ? { throttled } : {}) } as const;
      });
    } catch (err) {
      // The delivery key is unique: a concurrent retry (or another replica) already stored this post.
      if (isUniqueViolation(err)) {
        this.log.debug({ deliveryKey: d.deliveryKey }, 'duplicate alert delivery ignored');
        return { kind: 'duplicate' };
      }
      throw err;
    }
  }

  private get throttle(): ThrottleSettings {
    return this.settings.throttle ?? DEFAULT_THROTTLE;
  }

  /** The latest investigation of `incidentId` says it was throttled, and by whom (card line, thread note, audit). */
  private async markThrottled(tx: DbTx, incidentId: string, t: Throttled, now: Date): Promise<void> {
    const inv = await tx.investigation.findFirst({ where: { incidentId }, orderBy: { startedAt: 'desc' } });
    if (!inv) return;
    const by = await tx.incident.findUnique({ where: { id: t.byIncidentId }, select: { title: true } });
    const ctx = JSON.parse(inv.context || '{}') as Record<string, unknown>;
    await tx.investigation.update({ where: { id: inv.id }, data: { context: JSON.stringify({ ...ctx, throttled: t, notice: throttledNotice(t, by?.title) }) } });
    await recordAudit(tx, { incidentId, actor: 'vigil', kind: 'investigation.throttled', data: { key: t.key, by: t.byIncidentId, since: t.since, limit: t.limit, windowMs: t.windowMs }, at: now });
  }

  /** The thread root of a manual investigation is Vigil's own post, made after the incident exists. */
  async setThreadRoot(incidentId: string, threadTs: string): Promise<void> {
    await this.db.incident.update({ where: { id: incidentId }, data: { threadTs } });
  }

  async findByThread(channelId: string, threadTs: string) {
    return this.db.incident.findFirst({ where: { channelId, threadTs } });
  }

  async recordSteering(m: { channelId: string; threadTs: string; messageTs: string; userId: string; userName?: string; text: string }): Promise<SteeringResult> {
    const incident = await this.findByThread(m.channelId, m.threadTs);
    if (!incident) return { kind: 'not_incident' };
    const text = this.redactor.redactText(m.text);
    const now = this.clock.now();
    try {
      await this.db.$transaction(async (tx) => {
        // Sealed in the audit chain with the message (src/audit/records.ts): the postmortem quotes it.
        await sealedWrite(tx, (w) =>
          w.createSteering({
            incidentId: incident.id,
            channelId: m.channelId,
            messageTs: m.messageTs,
            userId: m.userId,
            userName: m.userName ?? null,
            text,
            receivedAt: now,
          }),
        );
        await recordAudit(tx, { incidentId: incident.id, actor: m.userId, kind: 'steering.received', data: { text }, at: now });
      });
      return { kind: 'recorded', incidentId: incident.id };
    } catch (err) {
      if (isUniqueViolation(err)) return { kind: 'duplicate', incidentId: incident.id };
      throw err;
    }
  }

  /**
   * Apply a responder's steering command to the hypothesis board at once: rule out, confirm or pin a
   * hypothesis by its label. Confirming a hypothesis that has no cited evidence leaves it "not sure"
   * (inconclusive): a person's word is recorded, but it is not evidence.
   */
  async applySteering(incidentId: string, userId: string, cmd: SteeringCommand): Promise<'applied' | 'unknown_label' | 'not_a_command'> {
    if (cmd.kind !== 'rule_out' && cmd.kind !== 'confirm' && cmd.kind !== 'pin') return 'not_a_command';
    const inv = await this.db.investigation.findFirst({ where: { incidentId }, orderBy: { startedAt: 'desc' } });
    const h = inv ? await this.db.hypothesis.findFirst({ where: { investigationId: inv.id, label: cmd.label }, include: { evidence: true } }) : null;
    if (!h) return 'unknown_label';
    const reason = 'reason' in cmd && cmd.reason ? this.redactor.redactText(cmd.reason) : undefined;
    const data =
      cmd.kind === 'rule_out'
        ? { status: 'ruled_out', reason: reason ? `${RULED_OUT_BY_RESPONDER}: ${reason}` : RULED_OUT_BY_RESPONDER, steeredBy: userId }
        : cmd.kind === 'confirm'
          ? h.evidence.some((e) => e.stance === 'supports')
            ? { status: 'supported', steeredBy: userId, ...(reason ? { reason: `confirmed by a responder: ${reason}` } : {}) }
            : { status: 'inconclusive', steeredBy: userId, reason: 'confirmed by a responder, but no evidence is cited yet (not sure)' }
          : { steeredBy: userId };
    await this.db.$transaction(async (tx) => {
      await sealedWrite(tx, (w) => w.updateHypothesis(h.id, data));
      await recordAudit(tx, { incidentId, actor: userId, kind: `hypothesis.${cmd.kind}`, data: { label: h.label, key: h.key, ...(reason ? { reason } : {}) }, at: this.clock.now() });
    });
    return 'applied';
  }

  /** The incident a hypothesis belongs to, and its board label. */
  async hypothesisRef(hypothesisId: string): Promise<{ incidentId: string; label: string; title: string; status: string; confidence: number } | undefined> {
    const h = await this.db.hypothesis.findUnique({ where: { id: hypothesisId }, select: { label: true, title: true, status: true, confidence: true, investigation: { select: { incidentId: true } } } });
    return h ? { incidentId: h.investigation.incidentId, label: h.label, title: h.title, status: h.status, confidence: h.confidence } : undefined;
  }

  /**
   * A responder's evidence for a hypothesis (a link or a note), stored with who added it. It counts as
   * cited evidence — the citation is the link, or the note's author — and is redacted like any other.
   */
  async addResponderEvidence(hypothesisId: string, userId: string, input: { link?: string; note?: string }): Promise<string | undefined> {
    const h = await this.db.hypothesis.findUnique({ where: { id: hypothesisId }, include: { investigation: true } });
    if (!h) return undefined;
    const link = input.link?.trim() || undefined;
    const note = input.note?.trim() ? this.redactor.redactText(input.note.trim()).slice(0, 1000) : undefined;
    const now = this.clock.now();
    await this.db.$transaction(async (tx) => {
      await sealedWrite(tx, async (w) => {
        await w.addEvidence({
          investigationId: h.investigationId,
          hypothesisId: h.id,
          stance: 'supports',
          kind: 'note',
          summary: note ?? `link added by a responder`,
          citationSource: 'responder',
          citationRef: link ? this.redactor.redactText(link) : `note by ${userId}`,
          citationUrl: link && /^https?:\/\//.test(link) ? this.redactor.redactText(link) : null,
          observedAt: now,
        });
        await w.updateHypothesis(h.id, { steeredBy: userId });
      });
      await recordAudit(tx, { incidentId: h.investigation.incidentId, actor: userId, kind: 'hypothesis.evidence_added', data: { label: h.label, link: link ? this.redactor.redactText(link) : null, note: note ?? null }, at: now });
    });
    return h.investigation.incidentId;
  }

  async openIncidents() {
    return this.db.incident.findMany({ where: { status: 'open' }, orderBy: { openedAt: 'desc' }, take: 20 });
  }

  async countResolvedSince(since: Date): Promise<number> {
    return this.db.incident.count({ where: { status: 'resolved', resolvedAt: { gte: since } } });
  }
}
