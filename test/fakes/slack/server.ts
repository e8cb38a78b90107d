/**
 * A fake Slack for offline tests, on plain node:http (PLATFORM-FACTS A7):
 *   POST /api/<method>      the Web API (point Bolt at it: clientOptions.slackApiUrl = fake.apiUrl)
 *   POST /webhook/<channel> incoming webhooks (Alertmanager slack_configs.api_url = fake.webhookUrl(channel))
 *   POST /response/<id>     response_url targets handed out with delivered commands
 * Everything is recorded for assertions; messages from outside the app are delivered to it as signed events.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerApiCall } from './api.js';
import { AppLink, type DeliveryRecord } from './app-link.js';
import type { DeliveryOptions, DeliveryResult, SlashCommandInput } from './events.js';
import { Faults, type DelaySpec, type FailSpec, type PostRate, type RateLimitSpec } from './faults.js';
import { botMessage, messageEventFor, userMessage, webhookMessage, type BotPost, type UserPost } from './inbound.js';
import { parseParams, readRawBody, tokenOf } from './request.js';
import { ResponseUrls, type ResponseUrlPost } from './response-urls.js';
import { SlackStore, type NewMessage } from './store.js';
import type { ApiReply, BotIdentity, EventsTarget, FakeChannel, FakeUser, Params, RecordedCall, Rejection, StoredMessage, TeamIdentity } from './types.js';
import { Waiters, type Probe, type WaitOptions } from './waiters.js';

export interface FakeSlackOptions {
  /** The bot token the app uses (default 'xoxb-fake-vigil'); `extraTokens` are accepted too. */
  botToken?: string;
  extraTokens?: string[];
  bot?: Partial<Omit<BotIdentity, 'token'>>;
  /**
   * More Slack apps installed in the workspace (e.g. split mode's executor app), each with its own bot token,
   * bot user and app id. A call with one's token acts as that app (its posts carry its bot_id and user, and it
   * may edit only its own messages); interactions on its messages are delivered to its own Request URL and
   * signing secret (`setEventsTarget(target, appId)`), as Slack routes block_actions by api_app_id. An extra
   * app subscribes to no events unless given a target.
   */
  apps?: BotIdentity[];
  team?: Partial<TeamIdentity>;
  users?: FakeUser[];
  /** Usergroup id → member user ids, for usergroups.users.list. */
  usergroups?: Record<string, string[]>;
  channels?: FakeChannel[];
  /** Where to deliver signed events/commands; can also be set later with setEventsTarget (the app starts after the fake). */
  eventsTarget?: EventsTarget;
  /** Off by default. When set, chat.postMessage answers 429 once a channel's bucket is empty. */
  postRatePerChannel?: PostRate;
  /** Seconds of the first message ts, for deterministic ts values (default: wall-clock time, as real Slack). */
  startTs?: number;
  /**
   * The bot token's granted scopes, sent as Slack does in the `x-oauth-scopes` header of every Web API
   * answer to the bot token (the WebClient exposes them as `response_metadata.scopes`), and enforced: a call
   * without its method's scope answers `missing_scope` (scopes.ts). Unset: no header, every scope granted.
   */
  scopes?: string[];
}

export interface WebhookPost {
  channel: string;
  body: string;
  at: number;
}

export interface PostResult {
  message: StoredMessage;
  /** The app's answer to the delivered event; undefined when no eventsTarget is set. */
  delivery?: DeliveryResult;
}

const DEFAULT_TOKEN = 'xoxb-fake-vigil';

export class FakeSlack {
  readonly calls: RecordedCall[] = [];
  readonly rejections: Rejection[] = [];
  readonly webhooks: WebhookPost[] = [];
  /** Every HTTP 429 answered (injected or from postRatePerChannel). */
  rateLimitedCount = 0;
  readonly store: SlackStore;
  private readonly faults: Faults;
  private readonly link: AppLink;
  /** The other apps' connections, by app id (their own Request URL and signing secret). */
  private readonly appLinks = new Map<string, AppLink>();
  private readonly responseUrls = new ResponseUrls();
  private readonly waiters = new Waiters();
  private readonly acceptedTokens: Set<string>;
  private readonly server: Server;

  constructor(private readonly options: FakeSlackOptions = {}) {
    const token = options.botToken ?? DEFAULT_TOKEN;
    const bot: BotIdentity = { token, userId: 'U0VIGIL', botId: 'B0VIGIL', appId: 'A0VIGIL', name: 'vigil', ...options.bot };
    const team: TeamIdentity = { id: 'T0FAKE', name: 'Fake Workspace', domain: 'fake', ...options.team };
    const apps = options.apps ?? [];
    const users = [{ id: bot.userId, name: bot.name, is_bot: true }, ...apps.map((a) => ({ id: a.userId, name: a.name, is_bot: true })), ...(options.users ?? [])];
    this.store = new SlackStore({ bot, apps, team, users, usergroups: options.usergroups ?? {}, channels: options.channels ?? [], startTs: options.startTs });
    this.acceptedTokens = new Set([token, ...apps.map((a) => a.token), ...(options.extraTokens ?? [])]);
    this.faults = new Faults(options.postRatePerChannel);
    this.link = new AppLink(options.eventsTarget, () => this.waiters.notify());
    for (const a of apps) this.appLinks.set(a.appId, new AppLink(undefined, () => this.waiters.notify()));
    this.server = createServer((req, res) => {
      this.route(req, res).catch((error: unknown) => {
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(error));
      });
    });
  }

  /** Listens on 127.0.0.1 and a random port. */
  async listen(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    return this;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** For `clientOptions.slackApiUrl`; ends with `/api/`. */
  get apiUrl(): string {
    return `${this.baseUrl}/api/`;
  }

  get botToken(): string {
    return this.store.bot.token;
  }

  webhookUrl(channel: string): string {
    return `${this.baseUrl}/webhook/${channel}`;
  }

  async close(): Promise<void> {
    await this.idle();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const raw = await readRawBody(req);
    const [, area, id] = url.pathname.split('/');
    if (area === 'api' && id) return this.handleApi(req, res, decodeURIComponent(id), raw, url.searchParams);
    if (req.method === 'POST' && area === 'webhook' && id) return this.handleWebhook(res, id, raw);
    if (req.method === 'POST' && area === 'response' && id) {
      const { status, text } = this.responseUrls.receive(id, raw, this.store);
      res.writeHead(status, { 'Content-Type': 'text/plain' }).end(text);
      return this.waiters.notify();
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not_found');
  }

  private handleApi(req: IncomingMessage, res: ServerResponse, method: string, raw: string, query: URLSearchParams): void {
    const { params, malformed } = parseParams(raw, req.headers['content-type'], query);
    const call: RecordedCall = { method, body: params, headers: { ...req.headers }, at: Date.now() };
    this.calls.push(call);
    const reply: ApiReply = answerApiCall({ method, params, token: tokenOf(req, params), malformed }, { store: this.store, faults: this.faults, acceptedTokens: this.acceptedTokens, ...(this.options.scopes ? { scopes: this.options.scopes } : {}) });
    const status = reply.status ?? 200;
    call.response = { status, body: reply.body };
    if (reply.rateLimited) this.rateLimitedCount += 1;
    if (reply.rejection) {
      const messages = (reply.body.response_metadata as { messages?: string[] } | undefined)?.messages ?? [];
      this.rejections.push({ method, error: reply.body.error ?? 'unknown', messages, body: params, at: call.at });
    }
    const answer = () => {
      // A client that gave up (timed out) has closed the connection: nothing to answer.
      const scopes = this.options.scopes && tokenOf(req, params) === this.store.bot.token ? { 'x-oauth-scopes': this.options.scopes.join(',') } : {};
      if (!res.destroyed) res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...scopes, ...reply.headers }).end(JSON.stringify(reply.body));
      this.waiters.notify();
    };
    const delay = this.faults.takeDelay(method);
    if (delay > 0) setTimeout(answer, delay).unref();
    else answer();
  }

  private handleWebhook(res: ServerResponse, channel: string, raw: string): void {
    this.webhooks.push({ channel, body: raw, at: Date.now() });
    const message = webhookMessage(channel, raw);
    if ('error' in message) {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end(message.error);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
    // Answer first, like Slack: the event reaches the app independently of the webhook's HTTP response.
    this.storeInbound(message).catch(() => undefined);
  }

  /** Stores an outside message and, with an eventsTarget, delivers it as a `message` event. */
  private async storeInbound(input: NewMessage): Promise<PostResult> {
    const threadTs = input.thread_ts ? this.store.threadRoot(input.channel, input.thread_ts)?.ts : undefined;
    if (input.thread_ts && !threadTs) throw new Error(`fake Slack: no message ${input.thread_ts} in ${input.channel} to reply to`);
    const message = this.store.add({ ...input, thread_ts: threadTs });
    this.waiters.notify();
    if (!this.link.target) return { message };
    const delivery = await this.link.sendEvent(messageEventFor(this.store, message));
    return { message, delivery };
  }

  // ---- driving the app -------------------------------------------------------------------------------------

  /** Where the app under test (or, with `appId`, another installed app) receives its deliveries, signed with its secret. */
  setEventsTarget(target: EventsTarget | undefined, appId?: string): void {
    const link = appId && appId !== this.store.bot.appId ? this.appLinks.get(appId) : this.link;
    if (!link) throw new Error(`fake Slack: no app ${appId} installed (FakeSlackOptions.apps)`);
    link.target = target;
  }

  /** A human posts in a channel (or thread); delivered to the app as a `message` event. */
  postAsUser(channel: string, post: UserPost): Promise<PostResult> {
    return this.storeInbound(userMessage(channel, post, this.store.users.values()));
  }

  /** Another integration posts (default subtype bot_message, bot_id B0ALERTS); delivered as a `message` event. */
  postAsBot(channel: string, post: BotPost): Promise<PostResult> {
    return this.storeInbound(botMessage(channel, post));
  }

  /** Someone deletes a message in the Slack client (no event is delivered); later calls on it answer message_not_found/thread_not_found. */
  deleteMessage(channel: string, ts: string): boolean {
    const deleted = this.store.remove(channel, ts);
    this.waiters.notify();
    return deleted;
  }

  sendEvent(envelope: unknown, opts?: DeliveryOptions): Promise<DeliveryResult> {
    return this.link.sendEvent(envelope, opts);
  }

  /** Delivers a slash command; `response_url` defaults to a fresh one on this fake (see `responses`). */
  sendCommand(input: Omit<SlashCommandInput, 'response_url' | 'team_id'> & { response_url?: string }, opts?: DeliveryOptions): Promise<DeliveryResult> {
    const response_url = input.response_url ?? this.newResponseUrl({ channel_id: input.channel_id, user_id: input.user_id });
    return this.link.sendCommand({ ...input, team_id: this.store.team.id, api_app_id: this.store.bot.appId, response_url }, opts);
  }

  /** Delivers an interaction to the app it is for: `api_app_id` names it, as Slack routes it (default: the app under test). */
  sendInteraction(payload: unknown, opts?: DeliveryOptions): Promise<DeliveryResult> {
    const appId = (payload as { api_app_id?: string } | null)?.api_app_id;
    return (this.appLinks.get(appId ?? '') ?? this.link).sendInteraction(payload, opts);
  }

  newResponseUrl(context: { channel_id: string; user_id: string }): string {
    return this.responseUrls.issue(this.baseUrl, context);
  }

  /** Resolves when all deliveries to the app so far have been answered. */
  async idle(): Promise<void> {
    await Promise.all([this.link, ...this.appLinks.values()].map((l) => l.idle()));
  }

  get deliveries(): readonly DeliveryRecord[] {
    return [this.link, ...this.appLinks.values()].flatMap((l) => l.deliveries).sort((a, b) => a.at - b.at);
  }

  /** What the app posted to response_urls, in order. */
  get responses(): readonly ResponseUrlPost[] {
    return this.responseUrls.posts;
  }

  // ---- faults ----------------------------------------------------------------------------------------------

  failNext(method: string, spec: FailSpec): void {
    this.faults.failNext(method, spec);
  }

  rateLimitNext(method: string, spec: RateLimitSpec): void {
    this.faults.rateLimitNext(method, spec);
  }

  /** The next `times` calls to `method` are processed, but answered `ms` late. */
  delayNext(method: string, spec: DelaySpec): void {
    this.faults.delayNext(method, spec);
  }

  // ---- inspection ------------------------------------------------------------------------------------------

  callsTo(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Every stored message in the channel (top level and replies), in posting order, with current content. */
  messages(channel: string): StoredMessage[] {
    return this.store.messages(channel);
  }

  message(channel: string, ts: string): StoredMessage | undefined {
    return this.store.find(channel, ts);
  }

  /** Parent then replies, current content (edits applied; earlier versions in `edits`). */
  threadOf(channel: string, ts: string): StoredMessage[] {
    return this.store.thread(channel, ts);
  }

  waitFor<T>(probe: Probe<T>, opts: WaitOptions = {}): Promise<T> {
    return this.waiters.waitFor(probe, opts, () => this.describeRecent());
  }

  waitForCall(method: string, predicate: (call: RecordedCall) => boolean = () => true, opts: WaitOptions = {}): Promise<RecordedCall> {
    return this.waitFor(() => this.calls.find((c) => c.method === method && c.response !== undefined && predicate(c)), { label: method, ...opts });
  }

  waitForMessage(channel: string, predicate: (m: StoredMessage) => boolean = () => true, opts: WaitOptions = {}): Promise<StoredMessage> {
    return this.waitFor(() => this.store.messages(channel).find(predicate), { label: `message in ${channel}`, ...opts });
  }

  /** The last calls and deliveries, for timeout errors. */
  describeRecent(count = 10): string {
    const calls = this.calls.slice(-count).map((c) => `  ${c.method} → ${c.response?.body.ok === false ? c.response.body.error : 'ok'} ${summarize(c.body)}`);
    const deliveries = this.link.deliveries.slice(-count).map((d) => `  ${d.kind} → ${d.result?.status ?? d.error ?? 'pending'}`);
    return [`Recent calls (${this.calls.length} total):`, ...(calls.length ? calls : ['  (none)']), `Deliveries (${this.link.deliveries.length} total):`, ...(deliveries.length ? deliveries : ['  (none)'])].join('\n');
  }
}

function summarize(body: Params): string {
  const { token: _token, ...rest } = body;
  const text = JSON.stringify(rest);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/** Starts a fake Slack on 127.0.0.1:<random port>. Close it in afterAll. */
export function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  return new FakeSlack(options).listen();
}
