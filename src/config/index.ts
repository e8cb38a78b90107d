import { envSchema, type Env } from './schema.js';
import type { LinkSettings } from '../slack/blocks/links.js';
import type { VigilRole } from '../approvals/mode.js';

/** The one typed configuration, parsed once at boot; modules receive the slice they need. */
export interface Config {
  slack: {
    botToken: string;
    mode: 'socket' | 'http';
    appToken?: string;
    signingSecret?: string;
    apiUrl?: string;
    /** Per-attempt timeout of each Web API call; the retry policy applies on top. */
    apiTimeoutMs: number;
    port: number;
    alertChannels: string[];
    /** Also send a critical incident's summary card to the channel (reply_broadcast). Default off. */
    broadcastCritical?: boolean;
  };
  incidents: {
    dedupWindowMs: number;
    reopenWindowMs: number;
    workerConcurrency: number;
    leaseMs: number;
    /** Automatic investigations per alert rule and service per window (src/incidents/throttle.ts). */
    throttle: { limit: number; windowMs: number };
  };
  /** Probes and metrics (src/http/probes.ts, metrics.ts): a separate port from process start, and /metrics' bearer token. */
  probes: { port?: number; metricsToken?: string };
  databaseUrl: string;
  kubernetes: { kubeconfig?: string; context?: string; inCluster?: boolean };
  prometheus?: { url: string; publicUrl?: string; bearerToken?: string };
  /** Where citations on cards link to (src/slack/blocks/links.ts). */
  links: LinkSettings;
  loki?: { url: string; tenant?: string; bearerToken?: string };
  github?: { token?: string; apiUrl?: string };
  changes: { channels: string[]; flagsWebhookToken?: string };
  /**
   * `POST /webhooks/alertmanager` (absent = not mounted): its bearer token, and the channel where incidents it
   * opens live (default: the first alert channel; the channel Alertmanager's Slack receiver posts to, so both meet).
   */
  alertmanagerWebhook?: { token: string; channelId: string };
  /** `POST /webhooks/grafana|pagerduty|opsgenie` (absent = not mounted): each one's secret, and the channel its incidents live in. */
  grafanaWebhook?: { token: string; channelId: string };
  pagerdutyWebhook?: { secret: string; channelId: string };
  opsgenieWebhook?: { token: string; channelId: string };
  /** Who is paged when Vigil hands an incident over (src/paging); absent = no page, the handover card only. */
  paging?: { pagerduty?: { routingKey: string; baseUrl?: string }; opsgenie?: { apiKey: string; baseUrl?: string } };
  catalogFile?: string;
  /** Directory of skills (debugging procedures, one Markdown file each; src/knowledge/skills.ts), relative to the working directory. */
  skillsDir: string;
  /** Write policy YAML; unset means read-only (nothing can be executed, no approval cards). */
  policyFile?: string;
  /** How writes get their separate identity: impersonating the executor ServiceAccount, or a 10-minute token for it. */
  executor: { mode: 'impersonate' | 'token'; serviceAccount: { namespace: string; name: string } };
  /**
   * `single` (default): one process investigates and executes. Split mode: `investigator` (no write credential,
   * no approving Slack app) and `executor` (`vigil executor`, loadExecutorConfig: its own Slack app and Kubernetes identity).
   */
  role: VigilRole;
  /** `vigil executor`: how often it looks for work the investigator left, and how long it holds a claim. */
  split: { pollMs: number; leaseMs: number };
  /** The model that deepens triage; absent when no API key is set (deterministic triage only). */
  model?: { provider: 'anthropic' | 'openai'; apiKey: string; baseURL?: string; model?: string };
  /** OTLP/HTTP export of traces; absent = no traces exported. */
  tracing?: { endpoint: string; headers?: Record<string, string> };
  /** flip_flag through LaunchDarkly: reads with the reader token, writes with the separate writer token. */
  flags?: { apiUrl?: string; project: string; environment: string; readToken: string; writeToken: string };
  /** revert_pr: the GitHub token that opens revert pull requests (never the reader's GITHUB_TOKEN). */
  githubWriteToken?: string;
  /** Log the audit trail's head as `audit.anchor` this often; absent = not logged. */
  auditAnchorIntervalMs?: number;
  /** Where `/sre postmortem` opens its GitHub issue (a write token, separate from the reader's). */
  postmortemIssues?: { repo: string; token?: string; labels: string[] };
  /** `maxTokens` is per investigation run; `incidentMaxTokens` and `dailyMaxTokens` are shared caps kept in the store (src/incidents/spend.ts). */
  agent: { maxSteps: number; maxTokens: number; incidentMaxTokens: number; dailyMaxTokens: number; maxSeconds: number; maxCostUsd: number; escalationConfidence: number };
  logLevel: Env['LOG_LEVEL'];
}

/** The executor process's own credentials: `vigil executor` only. */
const EXECUTOR_ONLY = ['VIGIL_EXECUTOR_SLACK_BOT_TOKEN', 'VIGIL_EXECUTOR_SLACK_SIGNING_SECRET', 'VIGIL_EXECUTOR_SLACK_APP_TOKEN', 'VIGIL_EXECUTOR_KUBECONFIG'] as const;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Vigil cannot start: invalid settings\n${problems.map((p) => `  - ${p}`).join('\n')}\nSee .env.example for every setting.`);
    this.name = 'ConfigError';
  }
}

/** Parse settings; throws one ConfigError naming every bad variable and what it expects. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  // Empty strings in .env mean "unset", as most teams write `SLACK_APP_TOKEN=` to disable a mode.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((i) => {
        const name = String(i.path[0] ?? 'settings');
        const missing = i.code === 'invalid_type' && cleaned[name] === undefined;
        return `${name}: ${missing && !/required/.test(i.message) ? `is required; ${i.message}` : i.message}`;
      });
  // Checked outside the schema so it is reported together with every other problem.
  if (!cleaned['SLACK_APP_TOKEN'] && !cleaned['SLACK_SIGNING_SECRET']) {
    problems.push('SLACK_APP_TOKEN: set SLACK_APP_TOKEN (xapp-…, Socket Mode) or SLACK_SIGNING_SECRET (HTTP mode); neither is set');
  }
  if (cleaned['VIGIL_MODEL_PROVIDER'] === 'anthropic' && !cleaned['ANTHROPIC_API_KEY']) problems.push('ANTHROPIC_API_KEY: is required when VIGIL_MODEL_PROVIDER=anthropic');
  if (cleaned['VIGIL_MODEL_PROVIDER'] === 'openai' && !cleaned['OPENAI_API_KEY']) problems.push('OPENAI_API_KEY: is required when VIGIL_MODEL_PROVIDER=openai (any non-empty value for a self-hosted endpoint that ignores it)');
  const ld = ['LAUNCHDARKLY_PROJECT', 'LAUNCHDARKLY_READ_TOKEN', 'LAUNCHDARKLY_WRITE_TOKEN'] as const;
  if (ld.some((k) => cleaned[k])) {
    for (const k of ld) if (!cleaned[k]) problems.push(`${k}: is required with the other LAUNCHDARKLY_* settings (project, a reader token and a separate writer token)`);
    if (cleaned['LAUNCHDARKLY_READ_TOKEN'] && cleaned['LAUNCHDARKLY_READ_TOKEN'] === cleaned['LAUNCHDARKLY_WRITE_TOKEN']) problems.push('LAUNCHDARKLY_WRITE_TOKEN: must be a different token from LAUNCHDARKLY_READ_TOKEN (writes never use the reader)');
  }
  if (cleaned['VIGIL_ROLE'] === 'investigator') {
    // Split mode's point: the investigator cannot write even if fully compromised, so it is given nothing that writes.
    for (const k of [...EXECUTOR_ONLY, 'GITHUB_WRITE_TOKEN', 'LAUNCHDARKLY_WRITE_TOKEN'] as const)
      if (cleaned[k]) problems.push(`${k}: must not be given to the investigator (VIGIL_ROLE=investigator): it is the executor's credential; set it for \`vigil executor\` only`);
  }
  if (cleaned['GITHUB_WRITE_TOKEN'] && cleaned['GITHUB_WRITE_TOKEN'] === cleaned['GITHUB_TOKEN']) problems.push('GITHUB_WRITE_TOKEN: must be a different token from GITHUB_TOKEN (writes never use the reader)');
  if (!parsed.success || problems.length) throw new ConfigError(problems);
  const e = parsed.data;
  return {
    slack: {
      botToken: e.SLACK_BOT_TOKEN,
      mode: e.SLACK_APP_TOKEN ? 'socket' : 'http',
      appToken: e.SLACK_APP_TOKEN,
      signingSecret: e.SLACK_SIGNING_SECRET,
      apiUrl: e.SLACK_API_URL,
      apiTimeoutMs: e.SLACK_API_TIMEOUT_SECONDS * 1000,
      port: e.PORT,
      alertChannels: e.VIGIL_ALERT_CHANNELS,
      broadcastCritical: e.VIGIL_BROADCAST_CRITICAL === 'true',
    },
    incidents: {
      dedupWindowMs: e.VIGIL_DEDUP_WINDOW_MINUTES * 60_000,
      reopenWindowMs: e.VIGIL_REOPEN_WINDOW_MINUTES * 60_000,
      workerConcurrency: e.VIGIL_WORKER_CONCURRENCY,
      leaseMs: e.VIGIL_LEASE_SECONDS * 1000,
      throttle: { limit: e.VIGIL_AUTO_INVESTIGATIONS_PER_RULE, windowMs: e.VIGIL_AUTO_INVESTIGATION_WINDOW_MINUTES * 60_000 },
    },
    probes: { port: e.VIGIL_PROBE_PORT, metricsToken: e.VIGIL_METRICS_TOKEN },
    databaseUrl: e.DATABASE_URL,
    kubernetes: {
      kubeconfig: e.KUBECONFIG,
      context: e.VIGIL_KUBE_CONTEXT,
      inCluster: e.VIGIL_KUBE_IN_CLUSTER === undefined ? undefined : e.VIGIL_KUBE_IN_CLUSTER === 'true',
    },
    prometheus: e.PROMETHEUS_URL ? { url: e.PROMETHEUS_URL, publicUrl: e.PROMETHEUS_PUBLIC_URL, bearerToken: e.PROMETHEUS_BEARER_TOKEN } : undefined,
    links: {
      ...(e.PROMETHEUS_PUBLIC_URL ? { prometheusUrl: e.PROMETHEUS_PUBLIC_URL } : {}),
      ...(e.GRAFANA_URL ? { grafanaUrl: e.GRAFANA_URL } : {}),
      ...(e.GRAFANA_PROMETHEUS_DATASOURCE ? { grafanaPrometheusDatasource: e.GRAFANA_PROMETHEUS_DATASOURCE } : {}),
      ...(e.GRAFANA_LOKI_DATASOURCE ? { grafanaLokiDatasource: e.GRAFANA_LOKI_DATASOURCE } : {}),
      githubUrl: e.GITHUB_WEB_URL,
      ...(e.SLACK_WORKSPACE_URL ? { slackWorkspaceUrl: e.SLACK_WORKSPACE_URL } : {}),
      ...(e.VIGIL_KUBE_CONSOLE_URL ? { kubeConsoleUrl: e.VIGIL_KUBE_CONSOLE_URL } : {}),
      kubectl: e.VIGIL_KUBE_CITATIONS === 'kubectl',
    },
    loki: e.LOKI_URL ? { url: e.LOKI_URL, tenant: e.LOKI_TENANT, bearerToken: e.LOKI_BEARER_TOKEN } : undefined,
    github: e.GITHUB_TOKEN || e.GITHUB_API_URL ? { token: e.GITHUB_TOKEN, apiUrl: e.GITHUB_API_URL } : undefined,
    changes: { channels: e.VIGIL_CHANGE_CHANNELS ?? [], flagsWebhookToken: e.VIGIL_FLAGS_WEBHOOK_TOKEN },
    alertmanagerWebhook: e.VIGIL_ALERTMANAGER_WEBHOOK_TOKEN
      ? { token: e.VIGIL_ALERTMANAGER_WEBHOOK_TOKEN, channelId: e.VIGIL_ALERTMANAGER_WEBHOOK_CHANNEL ?? e.VIGIL_ALERT_CHANNELS[0]! }
      : undefined,
    grafanaWebhook: e.VIGIL_GRAFANA_WEBHOOK_TOKEN ? { token: e.VIGIL_GRAFANA_WEBHOOK_TOKEN, channelId: e.VIGIL_GRAFANA_WEBHOOK_CHANNEL ?? e.VIGIL_ALERT_CHANNELS[0]! } : undefined,
    pagerdutyWebhook: e.VIGIL_PAGERDUTY_WEBHOOK_SECRET ? { secret: e.VIGIL_PAGERDUTY_WEBHOOK_SECRET, channelId: e.VIGIL_PAGERDUTY_WEBHOOK_CHANNEL ?? e.VIGIL_ALERT_CHANNELS[0]! } : undefined,
    opsgenieWebhook: e.VIGIL_OPSGENIE_WEBHOOK_TOKEN ? { token: e.VIGIL_OPSGENIE_WEBHOOK_TOKEN, channelId: e.VIGIL_OPSGENIE_WEBHOOK_CHANNEL ?? e.VIGIL_ALERT_CHANNELS[0]! } : undefined,
    paging:
      e.PAGERDUTY_ROUTING_KEY || e.OPSGENIE_API_KEY
        ? {
            ...(e.PAGERDUTY_ROUTING_KEY ? { pagerduty: { routingKey: e.PAGERDUTY_ROUTING_KEY, ...(e.PAGERDUTY_EVENTS_URL ? { baseUrl: e.PAGERDUTY_EVENTS_URL } : {}) } } : {}),
            ...(e.OPSGENIE_API_KEY ? { opsgenie: { apiKey: e.OPSGENIE_API_KEY, ...(e.OPSGENIE_API_URL ? { baseUrl: e.OPSGENIE_API_URL } : {}) } } : {}),
          }
        : undefined,
    catalogFile: e.VIGIL_CATALOG_FILE,
    skillsDir: e.VIGIL_SKILLS_DIR,
    policyFile: e.VIGIL_POLICY_FILE,
    executor: {
      mode: e.VIGIL_EXECUTOR_MODE,
      serviceAccount: { namespace: e.VIGIL_EXECUTOR_SERVICE_ACCOUNT.split('/')[0]!, name: e.VIGIL_EXECUTOR_SERVICE_ACCOUNT.split('/')[1]! },
    },
    role: e.VIGIL_ROLE,
    split: { pollMs: Math.round(e.VIGIL_EXECUTOR_POLL_SECONDS * 1000), leaseMs: e.VIGIL_EXECUTOR_LEASE_SECONDS * 1000 },
    model: modelSettings(e),
    tracing: e.OTEL_EXPORTER_OTLP_ENDPOINT
      ? {
          endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
          ...(e.OTEL_EXPORTER_OTLP_HEADERS
            ? { headers: Object.fromEntries(e.OTEL_EXPORTER_OTLP_HEADERS.split(',').map((kv) => kv.split('=').map((x) => x.trim()) as [string, string]).filter(([k, v]) => k && v)) }
            : {}),
        }
      : undefined,
    flags:
      e.LAUNCHDARKLY_PROJECT && e.LAUNCHDARKLY_READ_TOKEN && e.LAUNCHDARKLY_WRITE_TOKEN
        ? { ...(e.LAUNCHDARKLY_API_URL ? { apiUrl: e.LAUNCHDARKLY_API_URL } : {}), project: e.LAUNCHDARKLY_PROJECT, environment: e.LAUNCHDARKLY_ENVIRONMENT, readToken: e.LAUNCHDARKLY_READ_TOKEN, writeToken: e.LAUNCHDARKLY_WRITE_TOKEN }
        : undefined,
    githubWriteToken: e.GITHUB_WRITE_TOKEN,
    auditAnchorIntervalMs: e.VIGIL_AUDIT_ANCHOR_INTERVAL ? e.VIGIL_AUDIT_ANCHOR_INTERVAL * 60_000 : undefined,
    postmortemIssues: e.GITHUB_ISSUES_REPO ? { repo: e.GITHUB_ISSUES_REPO, token: e.GITHUB_ISSUES_TOKEN ?? e.GITHUB_TOKEN, labels: e.GITHUB_ISSUES_LABELS ?? ['postmortem'] } : undefined,
    agent: {
      maxSteps: e.VIGIL_AGENT_MAX_STEPS,
      maxTokens: e.VIGIL_AGENT_MAX_TOKENS,
      incidentMaxTokens: e.VIGIL_AGENT_INCIDENT_MAX_TOKENS,
      dailyMaxTokens: e.VIGIL_AGENT_DAILY_MAX_TOKENS,
      maxSeconds: e.VIGIL_AGENT_MAX_SECONDS,
      maxCostUsd: e.VIGIL_AGENT_MAX_COST_USD,
      escalationConfidence: e.VIGIL_ESCALATION_CONFIDENCE,
    },
    logLevel: e.LOG_LEVEL,
  };
}

type ModelEnv = Partial<Record<'VIGIL_MODEL_PROVIDER' | 'ANTHROPIC_API_KEY' | 'ANTHROPIC_BASE_URL' | 'ANTHROPIC_MODEL' | 'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'OPENAI_MODEL', string>>;

/**
 * Anthropic by default; OpenAI (or any OpenAI-compatible endpoint) when chosen or when only its key is
 * set. Also used on the raw environment by `npm run demo` and `npm run eval`, which need no Slack settings.
 */
export function modelSettings(env: ModelEnv): Config['model'] {
  const e = Object.fromEntries(Object.entries(env).filter(([, v]) => v)) as ModelEnv;
  const provider = e.VIGIL_MODEL_PROVIDER ?? (e.ANTHROPIC_API_KEY ? 'anthropic' : e.OPENAI_API_KEY ? 'openai' : undefined);
  if (provider === 'anthropic' && e.ANTHROPIC_API_KEY) return { provider, apiKey: e.ANTHROPIC_API_KEY, baseURL: e.ANTHROPIC_BASE_URL, model: e.ANTHROPIC_MODEL };
  if (provider === 'openai' && e.OPENAI_API_KEY) return { provider, apiKey: e.OPENAI_API_KEY, baseURL: e.OPENAI_BASE_URL, model: e.OPENAI_MODEL };
  return undefined;
}

/**
 * `vigil executor`'s settings: the shared ones (database, policy, catalog, channels) as for the investigator,
 * but Slack and Kubernetes are the executor's own — its Slack app (VIGIL_EXECUTOR_SLACK_*) and its
 * ServiceAccount (VIGIL_EXECUTOR_KUBECONFIG, else the pod's in-cluster token). The investigator's Slack and
 * kube settings are dropped, never used; the same token or secret for both apps is refused (no boundary).
 */
export function loadExecutorConfig(env: Record<string, string | undefined>): Config {
  const e = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')) as Record<string, string>;
  const problems: string[] = [];
  if (!e['VIGIL_EXECUTOR_SLACK_BOT_TOKEN']) problems.push("VIGIL_EXECUTOR_SLACK_BOT_TOKEN: is required for `vigil executor`: the bot token of the executor's own Slack app (xoxb-…)");
  if (!e['VIGIL_EXECUTOR_SLACK_SIGNING_SECRET'] && !e['VIGIL_EXECUTOR_SLACK_APP_TOKEN'])
    problems.push("VIGIL_EXECUTOR_SLACK_SIGNING_SECRET: set it (HTTP mode) or VIGIL_EXECUTOR_SLACK_APP_TOKEN (Socket Mode) for the executor's own Slack app; neither is set");
  for (const [mine, theirs] of [['VIGIL_EXECUTOR_SLACK_BOT_TOKEN', 'SLACK_BOT_TOKEN'], ['VIGIL_EXECUTOR_SLACK_SIGNING_SECRET', 'SLACK_SIGNING_SECRET'], ['VIGIL_EXECUTOR_SLACK_APP_TOKEN', 'SLACK_APP_TOKEN'], ['VIGIL_EXECUTOR_KUBECONFIG', 'KUBECONFIG']] as const)
    if (e[mine] && e[mine] === e[theirs]) problems.push(`${mine}: must differ from the investigator's ${theirs}: split mode needs a separate Slack app and Kubernetes identity`);
  if (!e['VIGIL_POLICY_FILE']) problems.push('VIGIL_POLICY_FILE: is required for `vigil executor`: without a write policy there is nothing to approve or execute');
  if (e['VIGIL_ROLE'] && e['VIGIL_ROLE'] !== 'executor') problems.push(`VIGIL_ROLE: is "${e['VIGIL_ROLE']}"; \`vigil executor\` runs as the executor (unset it or set executor)`);
  if (problems.length) throw new ConfigError(problems);
  const { SLACK_BOT_TOKEN: _b, SLACK_SIGNING_SECRET: _s, SLACK_APP_TOKEN: _a, KUBECONFIG: _k, VIGIL_KUBE_IN_CLUSTER: _i, VIGIL_KUBE_CONTEXT: _c, ...shared } = e;
  return loadConfig({
    ...shared,
    SLACK_BOT_TOKEN: e['VIGIL_EXECUTOR_SLACK_BOT_TOKEN'],
    SLACK_SIGNING_SECRET: e['VIGIL_EXECUTOR_SLACK_SIGNING_SECRET'],
    SLACK_APP_TOKEN: e['VIGIL_EXECUTOR_SLACK_APP_TOKEN'],
    ...(e['VIGIL_EXECUTOR_KUBECONFIG'] ? { KUBECONFIG: e['VIGIL_EXECUTOR_KUBECONFIG'] } : { VIGIL_KUBE_IN_CLUSTER: 'true' }),
    ...(e['VIGIL_EXECUTOR_PORT'] !== undefined ? { PORT: e['VIGIL_EXECUTOR_PORT'] } : {}),
    VIGIL_ROLE: 'executor',
  });
}
