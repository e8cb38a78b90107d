/**
 * Opsgenie Alert API (https://docs.opsgenie.com/docs/alert-api): `POST /v2/alerts` with `Authorization: GenieKey
 * <key>` and `{ message (≤130), alias (≤512), description (≤15000), details, entity, source, priority, tags }`,
 * answered `202 { result: "Request will be processed", requestId }`; the close is `POST
 * /v2/alerts/<alias>/close?identifierType=alias`, also 202. Opsgenie de-duplicates open alerts by alias, which is
 * the incident id: one alert per incident. 429 (throttled) is retried (http.ts).
 */
import { PagingError, answerText, postJson, type PagingHttpOptions } from './http.js';
import type { PageRequest, PageSeverity, Pager } from './types.js';

export const OPSGENIE_API_URL = 'https://api.opsgenie.com';

const PRIORITY: Record<PageSeverity, string> = { critical: 'P1', error: 'P2', warning: 'P3', info: 'P5' };

export class OpsgenieAlerts implements Pager {
  readonly name = 'opsgenie' as const;
  readonly label = 'Opsgenie';
  private readonly base: string;

  constructor(private readonly o: { apiKey: string; baseUrl?: string } & PagingHttpOptions) {
    this.base = `${(o.baseUrl ?? OPSGENIE_API_URL).replace(/\/+$/, '')}/v2/alerts`;
  }

  async trigger(page: PageRequest): Promise<void> {
    const details = Object.fromEntries(Object.entries({ ...page.details, ...(page.threadLink ? { thread: page.threadLink } : {}) }).map(([k, v]) => [k.slice(0, 50), v.slice(0, 8000)]));
    await this.send(this.base, 'create', {
      message: cut(page.summary, 130),
      alias: page.dedupKey.slice(0, 512),
      description: cut([page.summary, page.threadLink ? `Thread: ${page.threadLink}` : '', ...Object.entries(page.details).map(([k, v]) => `${k}: ${v}`)].filter(Boolean).join('\n'), 15000),
      details,
      entity: cut(page.source, 512),
      source: 'Vigil',
      priority: PRIORITY[page.severity],
      tags: ['vigil', 'handover'],
    });
  }

  async resolve(dedupKey: string, note: string): Promise<void> {
    await this.send(`${this.base}/${encodeURIComponent(dedupKey)}/close?identifierType=alias`, 'close', { source: 'Vigil', note: cut(note, 25000) });
  }

  private async send(url: string, what: string, body: unknown): Promise<void> {
    const { status, json } = await postJson(url, body, { authorization: `GenieKey ${this.o.apiKey}` }, this.o);
    if (status !== 202) throw new PagingError(`Opsgenie refused the ${what} request: ${answerText(status, json)}`, status);
  }
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
