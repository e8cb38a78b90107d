/**
 * Escalation that reaches a person: when Vigil hands an incident over (the handover card, incidents/views.ts
 * `escalationModel`), each configured pager (PagerDuty Events API v2, Opsgenie Alert API) gets one page with the
 * incident's summary and the thread link; when the incident resolves, the page is resolved. The dedup key is the
 * incident id, so one incident is one page however often the thread is synced (and across replicas: the services
 * de-duplicate by that key too). What was paged is recorded in the audit log (`page.sent`, `page.resolved`,
 * `page.failed`), which is also where the state is read from. A pager that fails is logged, shown on the card and
 * tried again at the next sync; it never stops the thread.
 */
import type { Logger } from 'pino';
import { recordAudit } from '../incidents/audit.js';
import type { Db } from '../store/db.js';
import type { Redactor } from '../redact/index.js';
import { OpsgenieAlerts } from './opsgenie.js';
import { PagerDutyEvents } from './pagerduty.js';
import { pageSeverity, type Pager } from './types.js';
import type { PagingHttpOptions } from './http.js';

export type { Pager, PageRequest, PageSeverity } from './types.js';
export { PagerDutyEvents } from './pagerduty.js';
export { OpsgenieAlerts } from './opsgenie.js';
export { PagingError } from './http.js';

export const PAGE_SENT = 'page.sent';
export const PAGE_RESOLVED = 'page.resolved';
export const PAGE_FAILED = 'page.failed';

/** What the card says about one pager. */
export interface PageStatus {
  provider: Pager['name'];
  label: string;
  dedupKey: string;
  state: 'paged' | 'resolved' | 'failed';
  error?: string;
}

/** The incident as the pager needs it (from the stored record and its escalation model). */
export interface PagingSubject {
  incidentId: string;
  status: string;
  title: string;
  severity?: string | null;
  /** `namespace/name` of the target, if triage found one. */
  target?: string;
  /** Present when the thread carries the handover card. */
  escalation?: { reason: string; checked: string[]; ruledOut: string[]; couldNotAccess: string[] };
  threadLink(): Promise<string | undefined>;
}

export function pagersFrom(settings: { pagerduty?: { routingKey: string; baseUrl?: string }; opsgenie?: { apiKey: string; baseUrl?: string } } | undefined, http: PagingHttpOptions = {}): Pager[] {
  return [
    ...(settings?.pagerduty ? [new PagerDutyEvents({ ...settings.pagerduty, ...http })] : []),
    ...(settings?.opsgenie ? [new OpsgenieAlerts({ ...settings.opsgenie, ...http })] : []),
  ];
}

export class IncidentPaging {
  constructor(
    private readonly deps: { db: Db; pagers: Pager[]; redactor: Redactor; log: Logger; now?: () => Date },
  ) {}

  /**
   * Bring the pages in line with the incident: page when it is handed over and not paged (or its page was resolved
   * and it escalated again), resolve the page when it resolved. Returns each pager's state for the card.
   */
  async follow(s: PagingSubject): Promise<PageStatus[]> {
    if (this.deps.pagers.length === 0) return [];
    const last = await this.lastEvents(s.incidentId);
    const out: PageStatus[] = [];
    let link: Promise<string | undefined> | undefined;
    for (const pager of this.deps.pagers) {
      const prev = last.get(pager.name);
      const base = { provider: pager.name, label: pager.label, dedupKey: s.incidentId };
      const paged = prev?.kind === PAGE_SENT;
      try {
        if (s.status === 'resolved') {
          if (paged) {
            await pager.resolve(s.incidentId, `The incident resolved: ${s.title}`.slice(0, 500));
            await this.audit(s.incidentId, PAGE_RESOLVED, { provider: pager.name, dedupKey: s.incidentId });
            this.deps.log.info({ incidentId: s.incidentId, pager: pager.name }, 'page resolved');
            out.push({ ...base, state: 'resolved' });
          } else if (prev?.kind === PAGE_RESOLVED) out.push({ ...base, state: 'resolved' });
          continue;
        }
        if (!s.escalation) {
          if (paged) out.push({ ...base, state: 'paged' });
          continue;
        }
        if (paged) {
          out.push({ ...base, state: 'paged' });
          continue;
        }
        link ??= s.threadLink().catch(() => undefined);
        const threadLink = await link;
        await pager.trigger(this.request(s, threadLink));
        await this.audit(s.incidentId, PAGE_SENT, { provider: pager.name, dedupKey: s.incidentId, ...(threadLink ? { threadLink } : {}) });
        this.deps.log.info({ incidentId: s.incidentId, pager: pager.name }, 'paged a human for a handover');
        out.push({ ...base, state: 'paged' });
      } catch (err) {
        const error = this.deps.redactor.redactText(String(err instanceof Error ? err.message : err)).slice(0, 300);
        this.deps.log.error({ incidentId: s.incidentId, pager: pager.name, err: error }, 'could not page; the next thread update tries again');
        // One failure record per distinct error, not one per sync.
        if (!(prev?.kind === PAGE_FAILED && prev.error === error)) await this.audit(s.incidentId, PAGE_FAILED, { provider: pager.name, dedupKey: s.incidentId, error, action: s.status === 'resolved' ? 'resolve' : 'trigger' }).catch(() => undefined);
        if (s.status !== 'resolved') out.push({ ...base, state: paged ? 'paged' : 'failed', ...(paged ? {} : { error }) });
      }
    }
    return out;
  }

  private request(s: PagingSubject, threadLink: string | undefined) {
    const e = s.escalation!;
    const r = this.deps.redactor;
    const list = (items: string[]) => items.slice(0, 10).map((i) => `- ${i}`).join('\n') || 'nothing';
    return {
      dedupKey: s.incidentId,
      summary: r.redactText(`Vigil needs a human: ${s.title} — ${e.reason}`),
      source: r.redactText(s.target ?? 'vigil'),
      severity: pageSeverity(s.severity),
      ...(threadLink ? { threadLink } : {}),
      details: {
        incident: s.incidentId,
        alert: r.redactText(s.title),
        reason: r.redactText(e.reason),
        checked: r.redactText(list(e.checked)),
        ruled_out: r.redactText(list(e.ruledOut)),
        could_not_access: r.redactText(list(e.couldNotAccess)),
        ...(threadLink ? { thread: threadLink } : {}),
      },
    };
  }

  /** The latest paging event per provider. */
  private async lastEvents(incidentId: string): Promise<Map<string, { kind: string; error?: string }>> {
    const rows = await this.deps.db.auditEvent.findMany({ where: { incidentId, kind: { in: [PAGE_SENT, PAGE_RESOLVED, PAGE_FAILED] } }, orderBy: { id: 'asc' }, select: { kind: true, data: true } });
    const last = new Map<string, { kind: string; error?: string }>();
    for (const row of rows) {
      const data = JSON.parse(row.data) as { provider?: string; error?: string };
      if (!data.provider) continue;
      // A failure after a page (a failed resolve) leaves the page standing.
      if (row.kind === PAGE_FAILED && last.get(data.provider)?.kind === PAGE_SENT) continue;
      last.set(data.provider, { kind: row.kind, ...(data.error ? { error: data.error } : {}) });
    }
    return last;
  }

  private audit(incidentId: string, kind: string, data: Record<string, unknown>): Promise<void> {
    return recordAudit(this.deps.db, { incidentId, actor: 'vigil', kind, data, ...(this.deps.now ? { at: this.deps.now() } : {}) });
  }
}
