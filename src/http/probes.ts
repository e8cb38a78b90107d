/**
 * Kubernetes probes, in the spirit of the API server's own:
 *
 * - GET /livez — the process is alive: answering at all shows the event loop turns (the probe's timeout is
 *   the bound on how unresponsive it may be). It never touches the database or Slack, so a database blip
 *   or a Slack outage does not restart the pod (a restart would not fix either).
 * - GET /readyz — ready to take work: the database answers `SELECT 1` within a short timeout, the
 *   migrations were applied at start, and Slack is reachable (the Socket Mode connection is up, or the
 *   HTTP receiver is listening). 503 with a JSON body naming each check that is not ready.
 * - GET /healthz — kept for compatibility (the Dockerfile HEALTHCHECK, older manifests, scripts): it now
 *   means the same as /readyz (it used to check the database alone).
 *
 * In Socket Mode main.ts serves these from process start, before the database is opened or Slack
 * connects, so Kubernetes sees "starting" (/livez 200, /readyz 503) rather than a refused connection.
 */
import { createServer, type Server } from 'node:http';
import { withTimeout } from './metrics.js';
import { routeRequest, sendJson, type Route } from './routes.js';

export interface ProbeCheck {
  ok: boolean;
  /** Why not, when not ok. */
  error?: string;
  ms?: number;
}

export interface ProbeSettings {
  /** How long /readyz waits for the database (ms). Default 1500. */
  dbTimeoutMs?: number;
}

/** Readiness facts, filled in by startVigil as it gets there. */
export class Probes {
  private readonly startedAt = Date.now();
  private db?: { $queryRawUnsafe(sql: string): Promise<unknown> };
  private migrated = false;
  private slack: () => ProbeCheck = () => ({ ok: false, error: 'not started yet' });
  private stopping = false;
  private readonly dbTimeoutMs: number;

  constructor(settings: ProbeSettings = {}) {
    this.dbTimeoutMs = settings.dbTimeoutMs ?? 1_500;
  }

  /** The database is open (not yet: "not opened yet"). */
  useDatabase(db: { $queryRawUnsafe(sql: string): Promise<unknown> }): void {
    this.db = db;
  }

  migrationsApplied(): void {
    this.migrated = true;
  }

  /** How to tell whether Slack is reachable (Socket Mode connection, HTTP receiver). */
  useSlack(check: () => ProbeCheck): void {
    this.slack = check;
  }

  /** Shutting down: no longer ready, so Kubernetes stops sending work while it drains. */
  markStopping(): void {
    this.stopping = true;
  }

  liveness(): { ok: true; uptimeSeconds: number } {
    return { ok: true, uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000) };
  }

  async readiness(): Promise<{ ok: boolean; notReady: string[]; checks: Record<string, ProbeCheck> }> {
    const checks: Record<string, ProbeCheck> = {
      database: await this.database(),
      migrations: this.migrated ? { ok: true } : { ok: false, error: 'migrations not applied yet' },
      slack: this.slack(),
    };
    if (this.stopping) checks['shutdown'] = { ok: false, error: 'shutting down' };
    const notReady = Object.entries(checks)
      .filter(([, c]) => !c.ok)
      .map(([name]) => name);
    return { ok: notReady.length === 0, notReady, checks };
  }

  private async database(): Promise<ProbeCheck> {
    if (!this.db) return { ok: false, error: 'not opened yet' };
    const t0 = performance.now();
    try {
      await withTimeout(this.db.$queryRawUnsafe('SELECT 1'), this.dbTimeoutMs, 'SELECT 1');
      return { ok: true, ms: Math.round(performance.now() - t0) };
    } catch (err) {
      return { ok: false, error: `database unreachable: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200)}`, ms: Math.round(performance.now() - t0) };
    }
  }

  routes(): Route[] {
    const ready: Route['handler'] = (_req, res) => {
      this.readiness().then(
        (r) => sendJson(res, r.ok ? 200 : 503, r, { 'cache-control': 'no-store' }),
        (err: unknown) => sendJson(res, 503, { ok: false, notReady: ['probe'], error: String(err) }),
      );
    };
    return [
      { path: '/livez', method: ['GET', 'HEAD'], handler: (_req, res) => sendJson(res, 200, this.liveness(), { 'cache-control': 'no-store' }) },
      { path: '/readyz', method: ['GET', 'HEAD'], handler: ready },
      // Compatibility: the old health check, now the readiness check.
      { path: '/healthz', method: ['GET', 'HEAD'], handler: ready },
    ];
  }
}

/** A bare HTTP server for the probes (and, in Socket Mode, the webhooks): `routes` is read per request, so it can grow after start. */
export function listenProbes(port: number, routes: () => Route[], host?: string): Promise<Server> {
  const server = createServer((req, res) => routeRequest(routes(), req, res));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => (server.off('error', reject), resolve(server)));
  });
}
