import { z } from 'zod';

/** Comma- or whitespace-separated list, e.g. `C0ALERTS1,C0ALERTS2`. */
const list = z
  .string({ error: 'is required' })
  .transform((s) => s.split(/[\s,]+/).filter(Boolean));

const positiveInt = (what: string) =>
  z.coerce.number({ error: `expects ${what} (a whole number)` }).int(`expects ${what} (a whole number)`).positive(`expects ${what} (> 0)`);

/**
 * Every setting Vigil reads, from the environment (or `.env`). `.env.example` documents each one;
 * test/config keeps the two in step. Nothing else in the code reads `process.env`.
 */
export const envSchema = z
  .object({
    SLACK_BOT_TOKEN: z
      .string({ error: 'is required: the bot token (xoxb-…) from OAuth & Permissions' })
      .regex(/^xoxb-/, 'expects a bot token starting with xoxb-'),
    SLACK_APP_TOKEN: z.string().regex(/^xapp-/, 'expects an app-level token starting with xapp- (scope connections:write)').optional(),
    SLACK_SIGNING_SECRET: z.string().min(16, 'expects the signing secret from Basic Information (32 hex characters)').optional(),
    SLACK_API_URL: z.url({ error: 'expects an http(s) URL ending in /api/' }).optional(),
    SLACK_API_TIMEOUT_SECONDS: positiveInt('seconds a Slack Web API call may take before it is abandoned (and retried)').max(300).default(10),
    PORT: z.coerce
      .number({ error: 'expects a TCP port for the HTTP receiver and the probes (a whole number)' })
      .int('expects a TCP port (a whole number)')
      .min(0, 'expects a TCP port 0–65535 (0 picks a free one)')
      .max(65535, 'expects a TCP port 0–65535')
      .default(3000),
    VIGIL_PROBE_PORT: z.coerce
      .number({ error: 'expects a TCP port for /livez, /readyz and /metrics (a whole number)' })
      .int('expects a TCP port (a whole number)')
      .min(0, 'expects a TCP port 0–65535 (0 picks a free one)')
      .max(65535, 'expects a TCP port 0–65535')
      .optional(),
    VIGIL_METRICS_TOKEN: z.string().min(16, 'expects a bearer token of at least 16 characters').optional(),
    VIGIL_ALERT_CHANNELS: list.pipe(
      z
        .array(z.string().regex(/^[CG][A-Z0-9]{2,}$/, 'expects Slack channel ids like C0123ABCD'))
        .min(1, 'expects at least one Slack channel id (e.g. C0123ABCD) to watch for alert posts'),
    ),
    VIGIL_BROADCAST_CRITICAL: z.enum(['true', 'false'], { error: 'expects true or false' }).default('false'),
    VIGIL_DEDUP_WINDOW_MINUTES: positiveInt('minutes').default(240),
    VIGIL_REOPEN_WINDOW_MINUTES: positiveInt('minutes').default(30),
    VIGIL_WORKER_CONCURRENCY: positiveInt('a number of concurrent investigations').max(64).default(4),
    VIGIL_AUTO_INVESTIGATIONS_PER_RULE: positiveInt('automatic investigations per alert rule and service in the throttle window').max(1000).default(1),
    VIGIL_AUTO_INVESTIGATION_WINDOW_MINUTES: positiveInt('minutes').max(10_080, 'expects at most 10080 minutes (a week)').default(60),
    VIGIL_LEASE_SECONDS: positiveInt('seconds').default(60),
    DATABASE_URL: z
      .string()
      .regex(/^(file:|postgres(ql)?:\/\/)/, 'expects file:<path> (SQLite) or postgresql://user@host:port/db')
      .default('file:./data/vigil.db'),
    KUBECONFIG: z.string().optional(),
    VIGIL_KUBE_CONTEXT: z.string().optional(),
    VIGIL_KUBE_IN_CLUSTER: z.enum(['true', 'false'], { error: 'expects true or false' }).optional(),
    VIGIL_CHANGE_CHANNELS: list.optional(),
    VIGIL_CATALOG_FILE: z.string().optional(),
    VIGIL_SKILLS_DIR: z.string().trim().min(1, 'expects a directory of skill Markdown files').default('skills'),
    VIGIL_POLICY_FILE: z.string().optional(),
    VIGIL_EXECUTOR_MODE: z.enum(['impersonate', 'token'], { error: 'expects impersonate or token' }).default('impersonate'),
    VIGIL_EXECUTOR_SERVICE_ACCOUNT: z
      .string()
      .regex(/^[a-z0-9-]+\/[a-z0-9-]+$/, 'expects <namespace>/<serviceaccount>, e.g. vigil/vigil-executor')
      .default('vigil/vigil-executor'),
    // Split mode (src/approvals/mode.ts): `investigator` holds no write credential; `vigil executor` is the other half.
    VIGIL_ROLE: z.enum(['single', 'investigator', 'executor'], { error: 'expects single, investigator or executor' }).default('single'),
    // The executor process's own credentials (`vigil executor` only; the investigator refuses them).
    VIGIL_EXECUTOR_SLACK_BOT_TOKEN: z.string().regex(/^xoxb-/, "expects the executor Slack app's bot token (xoxb-…)").optional(),
    VIGIL_EXECUTOR_SLACK_SIGNING_SECRET: z.string().min(16, "expects the executor Slack app's signing secret (Basic Information)").optional(),
    VIGIL_EXECUTOR_SLACK_APP_TOKEN: z.string().regex(/^xapp-/, "expects the executor Slack app's app-level token (xapp-…, Socket Mode)").optional(),
    VIGIL_EXECUTOR_KUBECONFIG: z.string().optional(),
    VIGIL_EXECUTOR_PORT: z.coerce.number({ error: 'expects a TCP port number' }).int().min(0).max(65535).optional(),
    VIGIL_EXECUTOR_POLL_SECONDS: z.coerce.number({ error: 'expects seconds, e.g. 2' }).positive().max(600).default(2),
    VIGIL_EXECUTOR_LEASE_SECONDS: positiveInt('seconds an executor holds a claimed approval request before another may take it over').max(3600).default(60),
    VIGIL_FLAGS_WEBHOOK_TOKEN: z.string().min(16, 'expects a shared secret of at least 16 characters').optional(),
    VIGIL_ALERTMANAGER_WEBHOOK_TOKEN: z.string().min(16, 'expects a shared secret of at least 16 characters (Alertmanager sends it as Authorization: Bearer <token>)').optional(),
    VIGIL_ALERTMANAGER_WEBHOOK_CHANNEL: z.string().regex(/^[CG][A-Z0-9]{2,}$/, 'expects a Slack channel id like C0123ABCD').optional(),
    VIGIL_GRAFANA_WEBHOOK_TOKEN: z.string().min(16, 'expects a shared secret of at least 16 characters (the Grafana webhook contact point sends it as Authorization: Bearer <token> or as the basic auth password)').optional(),
    VIGIL_GRAFANA_WEBHOOK_CHANNEL: z.string().regex(/^[CG][A-Z0-9]{2,}$/, 'expects a Slack channel id like C0123ABCD').optional(),
    VIGIL_PAGERDUTY_WEBHOOK_SECRET: z.string().min(16, 'expects the V3 webhook subscription signing secret PagerDuty showed when the subscription was created (at least 16 characters)').optional(),
    VIGIL_PAGERDUTY_WEBHOOK_CHANNEL: z.string().regex(/^[CG][A-Z0-9]{2,}$/, 'expects a Slack channel id like C0123ABCD').optional(),
    VIGIL_OPSGENIE_WEBHOOK_TOKEN: z.string().min(16, 'expects a shared secret of at least 16 characters (the Opsgenie webhook integration sends it in an X-Vigil-Token header, or ?token= in the URL)').optional(),
    VIGIL_OPSGENIE_WEBHOOK_CHANNEL: z.string().regex(/^[CG][A-Z0-9]{2,}$/, 'expects a Slack channel id like C0123ABCD').optional(),
    PAGERDUTY_ROUTING_KEY: z.string().regex(/^[A-Za-z0-9]{32}$/, 'expects the 32-character integration (routing) key of a PagerDuty Events API v2 integration').optional(),
    PAGERDUTY_EVENTS_URL: z.url({ error: 'expects the PagerDuty Events API base URL, e.g. https://events.pagerduty.com (EU: https://events.eu.pagerduty.com)' }).optional(),
    OPSGENIE_API_KEY: z.string().regex(/^[A-Za-z0-9-]{20,}$/, 'expects the API key of an Opsgenie API integration (a GenieKey, e.g. a UUID)').optional(),
    OPSGENIE_API_URL: z.url({ error: 'expects the Opsgenie API base URL, e.g. https://api.opsgenie.com (EU: https://api.eu.opsgenie.com)' }).optional(),
    PROMETHEUS_URL: z.url({ error: 'expects the Prometheus base URL, e.g. http://prometheus.monitoring:9090' }).optional(),
    PROMETHEUS_PUBLIC_URL: z.url({ error: 'expects the URL people open Prometheus at (for links on cards)' }).optional(),
    PROMETHEUS_BEARER_TOKEN: z.string().optional(),
    GRAFANA_URL: z.url({ error: 'expects the URL people open Grafana at, e.g. https://grafana.example.com (Explore links on cards)' }).optional(),
    GRAFANA_PROMETHEUS_DATASOURCE: z.string().regex(/^[\w.-]+$/, 'expects a Grafana datasource uid').optional(),
    GRAFANA_LOKI_DATASOURCE: z.string().regex(/^[\w.-]+$/, 'expects a Grafana datasource uid').optional(),
    GITHUB_WEB_URL: z.url({ error: 'expects the GitHub web URL for links on cards (GitHub Enterprise: https://<host>)' }).default('https://github.com'),
    SLACK_WORKSPACE_URL: z.url({ error: 'expects the workspace URL, e.g. https://acme.slack.com (message links on cards)' }).optional(),
    VIGIL_KUBE_CONSOLE_URL: z
      .string()
      .regex(/^https?:\/\/\S+$/, 'expects an http(s) URL template with {namespace}, {kind}, {plural}, {group}, {name}, e.g. https://console/ns/{namespace}/{kind}/{name}')
      .optional(),
    VIGIL_KUBE_CITATIONS: z.enum(['kubectl', 'ref'], { error: 'expects kubectl or ref' }).default('kubectl'),
    LOKI_URL: z.url({ error: 'expects the Loki base URL, e.g. http://loki-gateway.monitoring:3100' }).optional(),
    LOKI_TENANT: z.string().optional(),
    LOKI_BEARER_TOKEN: z.string().optional(),
    GITHUB_TOKEN: z.string().optional(),
    GITHUB_API_URL: z.url({ error: 'expects the GitHub API base URL (GitHub Enterprise: https://<host>/api/v3)' }).optional(),
    VIGIL_MODEL_PROVIDER: z.enum(['anthropic', 'openai'], { error: 'expects anthropic or openai' }).optional(),
    ANTHROPIC_API_KEY: z.string().optional(),
    ANTHROPIC_BASE_URL: z.url({ error: 'expects the Anthropic API base URL (an LLM gateway, for instance)' }).optional(),
    ANTHROPIC_MODEL: z.string().optional(),
    OPENAI_API_KEY: z.string().optional(),
    OPENAI_BASE_URL: z.url({ error: 'expects an OpenAI-compatible base URL, e.g. http://vllm.internal:8000/v1' }).optional(),
    OPENAI_MODEL: z.string().optional(),
    VIGIL_AGENT_MAX_STEPS: positiveInt('model calls per investigation').max(100).default(12),
    VIGIL_AGENT_MAX_TOKENS: positiveInt('tokens per investigation').default(200_000),
    VIGIL_AGENT_INCIDENT_MAX_TOKENS: positiveInt('model tokens per incident, all its investigations together').default(600_000),
    VIGIL_AGENT_DAILY_MAX_TOKENS: positiveInt('model tokens per day (UTC), all incidents and replicas together').default(5_000_000),
    VIGIL_AGENT_MAX_SECONDS: positiveInt('seconds per investigation').default(120),
    VIGIL_AGENT_MAX_COST_USD: z.coerce.number({ error: 'expects US dollars, e.g. 0.50' }).positive('expects US dollars > 0').default(0.5),
    VIGIL_ESCALATION_CONFIDENCE: z.coerce.number({ error: 'expects a number between 0 and 1' }).min(0).max(1).default(0.7),
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ error: 'expects the OTLP/HTTP traces URL, e.g. http://otel-collector:4318/v1/traces' }).optional(),
    OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
    GITHUB_WRITE_TOKEN: z.string().optional(),
    LAUNCHDARKLY_API_URL: z.url({ error: 'expects the LaunchDarkly API base URL, e.g. https://app.launchdarkly.com' }).optional(),
    LAUNCHDARKLY_PROJECT: z.string().regex(/^[\w.-]+$/, 'expects a LaunchDarkly project key, e.g. default').optional(),
    LAUNCHDARKLY_ENVIRONMENT: z.string().regex(/^[\w.-]+$/, 'expects a LaunchDarkly environment key, e.g. production').default('production'),
    LAUNCHDARKLY_READ_TOKEN: z.string().optional(),
    LAUNCHDARKLY_WRITE_TOKEN: z.string().optional(),
    // Node timers overflow past 2^31 ms (about 24.8 days): bounded below that.
    VIGIL_AUDIT_ANCHOR_INTERVAL: positiveInt('minutes between audit.anchor log lines').max(35_000, 'expects at most 35000 minutes (about 24 days)').optional(),
    GITHUB_ISSUES_REPO: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'expects owner/name').optional(),
    GITHUB_ISSUES_TOKEN: z.string().optional(),
    GITHUB_ISSUES_LABELS: list.optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  });

export type Env = z.infer<typeof envSchema>;
