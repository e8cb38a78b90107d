/**
 * LaunchDarkly's REST API (v2) as the flag provider. Reads use the reader token (a `reader` role);
 * writes use a separate writer token whose custom role should allow only `updateOn` on the flags Vigil
 * may flip. Writes are JSON patches with a `test` op on the targeting state (LaunchDarkly refuses the
 * patch when someone flipped the flag since the plan), carry a comment naming the incident and the
 * approver (LaunchDarkly's audit log shows it), and `dryRun=true` validates without persisting.
 */
import { pointerKey } from '../preconditions.js';
import type { FlagProvider, FlagState, ProviderWrite } from './types.js';

export interface LaunchDarklySettings {
  /** API base, default `https://app.launchdarkly.com`. */
  apiUrl?: string;
  /** Where people open flags (links on cards); default the API base. */
  webUrl?: string;
  project: string;
  environment: string;
  readToken: string;
  writeToken: string;
  /** Per request; default 10 s. */
  timeoutMs?: number;
  /** Attempts for reads and rate-limited writes; default 3. */
  attempts?: number;
}

export class FlagProviderError extends Error {
  override readonly name = 'FlagProviderError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

interface LdEnvironment {
  on?: boolean;
  archived?: boolean;
  version?: number;
  lastModified?: number | string;
  _site?: { href?: string };
}

const pathKey = (s: string) => encodeURIComponent(s);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class LaunchDarklyFlags implements FlagProvider {
  readonly name = 'LaunchDarkly';
  readonly defaultEnvironment: string;
  private readonly api: string;
  private readonly web: string;
  private writer: string | undefined;

  constructor(private readonly s: LaunchDarklySettings) {
    if (s.readToken === s.writeToken) throw new FlagProviderError('the LaunchDarkly writer token must differ from the reader token');
    this.api = (s.apiUrl ?? 'https://app.launchdarkly.com').replace(/\/+$/, '');
    this.web = (s.webUrl ?? this.api).replace(/\/+$/, '');
    this.defaultEnvironment = s.environment;
  }

  async read(flag: string, environment: string): Promise<FlagState | undefined> {
    const path = `/api/v2/flags/${pathKey(this.s.project)}/${pathKey(flag)}?env=${encodeURIComponent(environment)}`;
    const res = await this.request('GET', path, this.s.readToken);
    if (res.status === 404) return undefined;
    if (!res.ok) throw new FlagProviderError(`LaunchDarkly GET flag ${flag}: ${res.message}`, res.status);
    const body = res.body as { key?: string; archived?: boolean; environments?: Record<string, LdEnvironment> };
    const env = body.environments?.[environment];
    if (!env) throw new FlagProviderError(`LaunchDarkly flag ${flag} has no environment ${environment} in project ${this.s.project}`, 404);
    const modified = env.lastModified !== undefined ? new Date(env.lastModified).toISOString() : undefined;
    return {
      key: body.key ?? flag,
      environment,
      on: env.on === true,
      archived: body.archived === true || env.archived === true,
      ...(env.version !== undefined ? { version: env.version } : {}),
      ...(modified ? { lastModified: modified } : {}),
      url: env._site?.href ? `${this.web}${env._site.href}` : `${this.web}/projects/${pathKey(this.s.project)}/flags/${pathKey(flag)}?env=${encodeURIComponent(environment)}`,
    };
  }

  async writerIdentity(): Promise<string> {
    if (this.writer) return this.writer;
    const res = await this.request('GET', '/api/v2/caller-identity', this.s.writeToken);
    if (!res.ok) throw new FlagProviderError(`LaunchDarkly caller identity of the writer token: ${res.message}`, res.status);
    const b = res.body as { tokenName?: string; tokenId?: string; memberId?: string; serviceToken?: boolean };
    this.writer = `launchdarkly:${b.tokenName ?? b.tokenId ?? b.memberId ?? 'writer token'}${b.serviceToken ? ' (service token)' : ''}`;
    return this.writer;
  }

  async setTargeting(flag: string, environment: string, c: { on: boolean; expectOn: boolean; comment: string; dryRun: boolean }): Promise<ProviderWrite> {
    const pointer = `/environments/${pointerKey(environment)}/on`;
    const path = `/api/v2/flags/${pathKey(this.s.project)}/${pathKey(flag)}${c.dryRun ? '?dryRun=true' : ''}`;
    const body = {
      comment: c.comment.slice(0, 1000),
      patch: [
        { op: 'test', path: pointer, value: c.expectOn },
        { op: 'replace', path: pointer, value: c.on },
      ],
    };
    const request = `PATCH ${path} (${environment}: ${c.expectOn ? 'on' : 'off'} → ${c.on ? 'on' : 'off'})`;
    let res: Awaited<ReturnType<LaunchDarklyFlags['request']>>;
    try {
      // Only a rate-limited write is retried: a 5xx may have applied, and the test op would then fail the retry.
      res = await this.request('PATCH', path, this.s.writeToken, body, (status) => status === 429);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { request, dryRun: c.dryRun, status: 'rejected', message: c.dryRun ? message : `no answer from LaunchDarkly (${message}): the change may have been applied`, ...(c.dryRun ? {} : { uncertain: true }) };
    }
    if (res.ok) return { request, dryRun: c.dryRun, status: 'ok' };
    const uncertain = !c.dryRun && res.status >= 500;
    return { request, dryRun: c.dryRun, status: 'rejected', code: res.status, message: this.explain(res.status, res.message, c.expectOn, uncertain), ...(uncertain ? { uncertain } : {}) };
  }

  private explain(status: number, message: string, expectOn: boolean, uncertain: boolean): string {
    if (uncertain) return `LaunchDarkly failed (${message}): the change may have been applied`;
    if (status === 401 || status === 403) return `the writer token may not change this flag (HTTP ${status}): ${message}`;
    if (status === 409) return `LaunchDarkly reports a conflict (a pending approval or scheduled change?): ${message}`;
    // The patch tests the targeting state the plan saw; a refused patch most often means it moved.
    if (status === 400 || status === 422) return `LaunchDarkly refused the patch, which requires the flag to still be ${expectOn ? 'on' : 'off'} (did someone change it since the plan? propose again): ${message}`;
    return message;
  }

  private async request(
    method: 'GET' | 'PATCH',
    path: string,
    token: string,
    body?: unknown,
    retryable: (status: number) => boolean = (status) => status === 429 || status >= 500,
  ): Promise<{ ok: boolean; status: number; body: unknown; message: string }> {
    const attempts = this.s.attempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(`${this.api}${path}`, {
          method,
          headers: { authorization: token, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), 'user-agent': 'vigil-sre-agent' },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(this.s.timeoutMs ?? 10_000),
        });
      } catch (err) {
        // A write that timed out may have landed: never resend it.
        if (method === 'GET' && attempt < attempts) {
          await sleep(250 * attempt);
          continue;
        }
        throw new FlagProviderError(`LaunchDarkly ${method} ${path.split('?')[0]} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      if (!res.ok && retryable(res.status) && attempt < attempts) {
        const retryAfter = Number(res.headers.get('retry-after'));
        await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 10) * 1000 : 250 * attempt);
        continue;
      }
      const m = parsed as { message?: string; code?: string } | undefined;
      const message = res.ok ? '' : `${m?.message ?? (text.slice(0, 200) || res.statusText)}${m?.code ? ` (${m.code})` : ''} [HTTP ${res.status}]`;
      return { ok: res.ok, status: res.status, body: parsed, message };
    }
  }
}
