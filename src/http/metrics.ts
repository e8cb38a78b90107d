/**
 * GET /metrics in the Prometheus text format, with prom-client: the default process metrics (CPU, memory,
 * event-loop lag, GC, handles) plus Vigil's own, all prefixed `vigil_`.
 *
 * Two kinds of series:
 * - in-memory, per process (counters and histograms fed by hooks: alert intake, the runner, the model
 *   loop, the Slack clients). They start at zero with each process, as Prometheus expects of counters.
 * - read from the store on each scrape (investigations by state, approval requests by status, approval
 *   decisions): the database is the one truth shared by every replica and survives restarts, so a gauge
 *   kept in memory would be wrong after a restart or with several replicas. Each scrape runs three
 *   small GROUP BY queries under a short timeout; when the store does not answer, those series are left
 *   out and `vigil_store_up` is 0 — the scrape itself still succeeds.
 */
import { timingSafeEqual } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Db } from '../store/db.js';
import { sendJson, type Route } from './routes.js';

/** What an alert post came to: the intake's outcomes (service.ts ReceiveResult kinds), `malformed`, or `error`. */
export type AlertOutcome = 'opened' | 'repeat' | 'reopened' | 'resolved' | 'resolved_unknown' | 'duplicate' | 'malformed' | 'error';

const STORE_TIMEOUT_MS = 2_000;

export class VigilMetrics {
  readonly registry = new Registry();
  private store?: Db;

  readonly alertsReceived = new Counter({
    name: 'vigil_alerts_received_total',
    help: 'Alert posts taken in, by alert source and outcome (opened, repeat, reopened, resolved, resolved_unknown, duplicate, error).',
    labelNames: ['source', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly investigationDuration = new Histogram({
    name: 'vigil_investigation_duration_seconds',
    help: 'Wall time of one investigation run in this process, from claim to report (outcome=reported) or to a failed step (outcome=failed).',
    labelNames: ['outcome'] as const,
    buckets: [1, 5, 10, 30, 60, 120, 300, 600, 1800],
    registers: [this.registry],
  });
  readonly firstCardLatency = new Histogram({
    name: 'vigil_first_card_latency_seconds',
    help: 'Time from the alert post being received to the first investigation card in its thread.',
    buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });
  readonly modelCalls = new Counter({
    name: 'vigil_model_calls_total',
    help: 'Model calls made by the investigation loop, by provider, model and outcome (ok, failed, aborted).',
    labelNames: ['provider', 'model', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly modelTokens = new Counter({
    name: 'vigil_model_tokens_total',
    help: 'Tokens the model calls used, by provider, model and direction (input, output).',
    labelNames: ['provider', 'model', 'direction'] as const,
    registers: [this.registry],
  });
  readonly modelCost = new Counter({
    name: 'vigil_model_cost_usd_total',
    help: 'Estimated cost of the model calls in US dollars, by provider and model.',
    labelNames: ['provider', 'model'] as const,
    registers: [this.registry],
  });
  readonly toolCalls = new Counter({
    name: 'vigil_tool_calls_total',
    help: 'Evidence tool calls the model made, by tool and status.',
    labelNames: ['tool', 'status'] as const,
    registers: [this.registry],
  });
  readonly slackRateLimited = new Counter({
    name: 'vigil_slack_rate_limited_total',
    help: 'Slack Web API answers of 429 (rate limited), by API method.',
    labelNames: ['method'] as const,
    registers: [this.registry],
  });
  readonly slackCalls = new Counter({
    name: 'vigil_slack_api_calls_total',
    help: 'Slack Web API requests, by API method and outcome: ok, the Slack error code (ok:false), http_<status>, or transport (no answer).',
    labelNames: ['method', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // One store read per scrape, shared by the four gauges (prom-client collects them in parallel).
    let pending: Promise<void> | undefined;
    const collect = async () => {
      pending ??= this.readStore(storeUp, investigations, approvals, decisions).finally(() => setTimeout(() => (pending = undefined), 250).unref());
      await pending;
    };
    const storeUp = new Gauge({ name: 'vigil_store_up', help: 'Whether this scrape could read the store (1) or not (0).', registers: [this.registry], collect });
    const investigations = new Gauge({
      name: 'vigil_investigations',
      help: 'Investigations in the store by state (queued, running, waiting, done, failed), all replicas.',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect,
    });
    const approvals = new Gauge({
      name: 'vigil_approval_requests',
      help: 'Approval requests in the store by status (pending, approved, executing, executed, failed, rejected, ...); executed and failed are the executions by outcome.',
      labelNames: ['status'] as const,
      registers: [this.registry],
      collect,
    });
    const decisions = new Gauge({ name: 'vigil_approval_decisions', help: 'Approve and reject decisions recorded in the store, by decision.', labelNames: ['decision'] as const, registers: [this.registry], collect });
  }

  /** The store the scrape-time gauges read; until it is set (start-up), they are absent and vigil_store_up is 0. */
  useStore(db: Db): void {
    this.store = db;
  }

  alert(source: string, outcome: AlertOutcome): void {
    this.alertsReceived.inc({ source, outcome });
  }

  investigationRun(outcome: 'reported' | 'failed', seconds: number): void {
    this.investigationDuration.observe({ outcome }, seconds);
  }

  firstCard(seconds: number): void {
    this.firstCardLatency.observe(Math.max(0, seconds));
  }

  /** An agent-loop event (agent/loop.ts AgentEvent); only model and tool calls are counted. */
  agentEvent(e: { type: string; provider?: string; model?: string; outcome?: string; usage?: { inputTokens?: number; outputTokens?: number }; costUsd?: number; name?: string; status?: string }): void {
    if (e.type === 'model_call') {
      const labels = { provider: e.provider ?? 'unknown', model: e.model ?? 'unknown' };
      this.modelCalls.inc({ ...labels, outcome: e.outcome ?? 'unknown' });
      if (e.usage?.inputTokens) this.modelTokens.inc({ ...labels, direction: 'input' }, e.usage.inputTokens);
      if (e.usage?.outputTokens) this.modelTokens.inc({ ...labels, direction: 'output' }, e.usage.outputTokens);
      if (e.costUsd) this.modelCost.inc(labels, e.costUsd);
    } else if (e.type === 'tool_call') {
      this.toolCalls.inc({ tool: e.name ?? 'unknown', status: e.status ?? 'unknown' });
    }
  }

  private async readStore(up: Gauge, investigations: Gauge, approvals: Gauge, decisions: Gauge): Promise<void> {
    for (const g of [investigations, approvals, decisions]) g.reset();
    const db = this.store;
    if (!db) return void up.set(0);
    try {
      const [inv, req, dec] = await withTimeout(
        Promise.all([
          db.investigation.groupBy({ by: ['state'], _count: { _all: true } }),
          db.approvalRequest.groupBy({ by: ['status'], _count: { _all: true } }),
          db.approvalDecision.groupBy({ by: ['decision'], _count: { _all: true } }),
        ]),
        STORE_TIMEOUT_MS,
      );
      for (const state of ['queued', 'running', 'waiting', 'done', 'failed']) investigations.set({ state }, 0);
      for (const r of inv) investigations.set({ state: r.state }, r._count._all);
      for (const r of req) approvals.set({ status: r.status }, r._count._all);
      for (const r of dec) decisions.set({ decision: r.decision }, r._count._all);
      up.set(1);
    } catch {
      up.set(0);
    }
  }

  /** GET /metrics; with a token, only for `Authorization: Bearer <token>` (401 otherwise). */
  route(token?: string): Route {
    return {
      path: '/metrics',
      method: ['GET'],
      handler: (req, res) => {
        if (token && !bearerMatches(req.headers.authorization, token)) {
          return void sendJson(res, 401, { ok: false, error: 'unauthorized: send Authorization: Bearer <VIGIL_METRICS_TOKEN>' }, { 'www-authenticate': 'Bearer' });
        }
        this.registry.metrics().then(
          (text) => void res.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
          (err: unknown) => sendJson(res, 500, { ok: false, error: `metrics unavailable: ${err instanceof Error ? err.message : String(err)}` }),
        );
      },
    };
  }
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1]!.trim());
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function withTimeout<T>(p: Promise<T>, ms: number, what = 'operation'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
