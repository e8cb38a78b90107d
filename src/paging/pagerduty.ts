/**
 * PagerDuty Events API v2 (https://developer.pagerduty.com/docs/events-api-v2-overview): `POST /v2/enqueue` with
 * `{ routing_key, event_action: trigger | resolve, dedup_key, payload: { summary, source, severity,
 * custom_details }, links, client }`, answered `202 { status: "success", message, dedup_key }`; `400` for an
 * invalid event (e.g. a routing key that is not 32 characters, a summary over 1024 characters), `429` when the
 * integration is throttled (retried, see http.ts). The dedup key is the incident id: a second trigger for the
 * same incident joins PagerDuty's open alert instead of paging again, and the resolve closes it.
 */
import { PagingError, answerText, postJson, type PagingHttpOptions } from './http.js';
import type { PageRequest, Pager } from './types.js';

export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com';

export class PagerDutyEvents implements Pager {
  readonly name = 'pagerduty' as const;
  readonly label = 'PagerDuty';
  private readonly url: string;

  constructor(
    private readonly o: { routingKey: string; baseUrl?: string } & PagingHttpOptions,
  ) {
    this.url = `${(o.baseUrl ?? PAGERDUTY_EVENTS_URL).replace(/\/+$/, '')}/v2/enqueue`;
  }

  async trigger(page: PageRequest): Promise<void> {
    await this.send({
      routing_key: this.o.routingKey,
      event_action: 'trigger',
      dedup_key: page.dedupKey,
      client: 'Vigil',
      ...(page.threadLink ? { client_url: page.threadLink } : {}),
      payload: {
        summary: cut(page.summary, 1024),
        source: cut(page.source, 255) || 'vigil',
        severity: page.severity,
        component: cut(page.source, 255) || undefined,
        custom_details: page.details,
      },
      ...(page.threadLink ? { links: [{ href: page.threadLink, text: 'Incident thread in Slack (Vigil)' }] } : {}),
    });
  }

  async resolve(dedupKey: string): Promise<void> {
    await this.send({ routing_key: this.o.routingKey, event_action: 'resolve', dedup_key: dedupKey });
  }

  private async send(event: Record<string, unknown>): Promise<void> {
    const { status, json } = await postJson(this.url, event, {}, this.o);
    if (status !== 202) throw new PagingError(`PagerDuty refused the ${String(event['event_action'])} event: ${answerText(status, json)}`, status);
  }
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
