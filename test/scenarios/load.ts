/**
 * Scenario worlds: one folder per scenario under test/scenarios/, holding `scenario.yaml`.
 *
 * ## Format of scenario.yaml
 * ```yaml
 * id: demo-checkout-scaled-to-zero       # must equal the folder name
 * title: One line for humans
 * description: |
 *   What happened in this world and why it is hard.
 *
 * alert:                                 # the Slack message as the alerting tool posted it
 *   username: Alertmanager               # optional: username, bot_id, text, attachments, blocks
 *   bot_id: B0ALERTS01                   # (any other Slack message field is kept as is)
 *   text: ""
 *   attachments: [ { title: …, title_link: …, text: "", fallback: …, color: danger, mrkdwn_in: [fallback, pretext, text] } ]
 *
 * kubernetes:
 *   objects:                             # full Kubernetes objects of any kind, as the API returns them
 *     - apiVersion: apps/v1              #   (metadata.managedFields included); uid and resourceVersion
 *       kind: Deployment                 #   may be left out: the fake API server fills them
 *       metadata: { name: checkout, namespace: shop, creationTimestamp: "@-40d" }
 *   logs:                                # container logs keyed <namespace>/<pod>/<container>
 *     shop/storefront-abc/storefront:
 *       current: |                       # each line may start with an RFC 3339 stamp and a space (the
 *         {{@-2m}} GET /cart 200         #   kubelet's timestamps=true form): sinceSeconds filters on it
 *       previous: |                      # optional: the previous (crashed) container's log
 *         …
 *   helmReleases:                        # a readable shorthand; the loader writes REAL Helm release
 *     - name: checkout                   #   Secrets (type helm.sh/release.v1, sh.helm.release.v1.<name>.v<n>)
 *       namespace: shop
 *       manifest: |                      # optional: rendered manifest; {{ .Values.a.b }}, {{ .Release.Name }},
 *         …                              #   {{ .Release.Namespace }}, {{ .Release.Revision }},
 *       revisions:                       #   {{ .Chart.Name }}, {{ .Chart.Version }}, {{ .Chart.AppVersion }} are filled per revision
 *         - version: 7
 *           status: deployed             # deployed | superseded | failed | uninstalled | pending-* | unknown
 *           chart: checkout-2.3.1        # as `helm history` prints it: <chart name>-<chart version>
 *           appVersion: 1.14.2
 *           description: Upgrade complete
 *           deployedAt: "@-3d"
 *           values: { replicaCount: 3 }  # the user-supplied values (Helm's `config`)
 *           manifest: …                  # optional: overrides the release-level manifest
 *
 * noise:                                 # ids of background noise, dropped by loadScenario(dir, { noise: false })
 *   - Pod/payments/payments-worker-6c8f9d7b4-x2x9k     # objects: <Kind>/<namespace>/<name> or <Kind>/<name>
 *   - payments/payments-worker-6c8f9d7b4-x2x9k/worker  # log streams: <namespace>/<pod>/<container>
 *   - Event/payments/*                                  # '*' matches any run of characters
 *   # Dropping a Pod drops its log streams; dropping any object drops the Events about it.
 *   # Every id must match something, so a typo is an error.
 *
 * planted_secrets:                       # every secret string planted anywhere in the world (must each
 *   - "s3cr3t-password"                  #   occur somewhere: objects, logs, alert, or decoded Secret data)
 *
 * prometheus:                            # optional: series loaded into a REAL Prometheus (promtool blocks)
 *   series:                              #   metric names/labels: see src/evidence/prometheus/catalog.ts
 *     - metric: http_requests_total
 *       labels: { namespace: shop, service: checkout, code: "500" }
 *       type: counter                    # counter (segments give a per-second rate) | gauge (segments give a level)
 *       from: "@-2h"
 *       to: "@+2m"
 *       step: 15s
 *       segments: [ { until: "@0", rate: 0.1 }, { until: "@+2m", rate: 40 } ]
 *       noise: 0.1                       # optional ± jitter, deterministic
 *
 * loki:                                  # optional: streams served by the fake Loki
 *   streams:
 *     - labels: { namespace: shop, app: checkout }
 *       entries: [ { at: "@-1m", line: "level=info msg=ok" } ]
 *       repeat:                          # optional generator: `lines` cycled every `every` from..to
 *         - { from: "@-30m", to: "@0", every: 5s, lines: [ "level=info msg=\"GET /cart 200\"" ] }
 *
 * github:                                # optional: repositories served by the fake GitHub
 *   repos:
 *     acme/checkout:
 *       commits: [ { message: "Bump pool", author: alice, at: "@-2h" } ]
 *       pulls: [ { title: "Raise timeout", author: bob, mergedAt: "@-20m", mergedBy: carol, number: 42 } ]
 *       deployments: [ { sha: 3f9c2ab, environment: production, creator: ci-bot, at: "@-10m", state: success } ]
 *
 * flags:                                 # optional: flag changes delivered to POST /webhooks/flags before the alert
 *   - { flag: new-checkout-flow, before: "off", after: "on", actor: dana, at: "@-4m", environment: production }
 *
 * catalog:                               # optional: the service catalog (src/knowledge/catalog.ts)
 *   services: [ { name: checkout, namespace: shop, repo: acme/checkout, dependsOn: [payments-api], flags: [new-checkout-flow] } ]
 *
 * expected:                              # the diagnosis the first card must reach (graded by test/scenarios/grade.ts)
 *   analyzer: scaled-to-zero             # the analyzer whose finding is the leading, supported hypothesis
 *   component: { kind: Deployment, namespace: shop, name: checkout }
 *   facts: { replicas: 0, manager: kubectl }            # subset of the finding's structured facts
 *   affected: [ { kind: Deployment, namespace: shop, name: storefront } ]   # each in the finding's scope
 *   unrelated: [ { kind: Pod, namespace: payments, name: payments-worker-6c8f9d7b4-x2x9k } ]
 *   ruled_out: [ helm-release ]          # analyzers whose hypothesis must be ruled out, not blamed
 *   mitigation: { action: scale, params: { replicas: 3 } }
 * ```
 *
 * YAML anchors, aliases and `<<` merge keys may be used to avoid repetition.
 *
 * ## Times are relative to the alert's onset
 * A string value that is exactly `@<offset>` becomes the ISO time `onset + offset`; inside longer
 * strings write `{{@<offset>}}`. Offsets: `0`, or a sign and units `d h m s ms`, e.g. `@-13s`,
 * `@-5m`, `@-3d`, `@+30s`, `@-1h30m`. YAML reserves `@` at the start of a plain scalar, so quote the
 * whole form: `time: "@-13s"`. Times are printed like metav1.Time (`2025-03-01T12:00:00Z`, with
 * milliseconds only when not zero); the default onset is now, truncated to the second.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { helmHistorySecrets, type HelmReleaseShorthand } from '../fakes/kubernetes/helm-release.js';
import type { KubeObject, WorldLogs } from '../fakes/kubernetes/server.js';
import type { PromSeries, SeriesSpec } from '../support/prometheus.js';
import { tlsSecret, type TlsSecretShorthand } from './certificates.js';
import { parseOffset, timeShifter, TIME_FORMATS, type TimeFormat } from './times.js';

/** The Slack message the alerting tool posted (legacy attachments and/or blocks). */
export interface AlertPost {
  username?: string;
  bot_id?: string;
  text?: string;
  attachments?: Record<string, unknown>[];
  blocks?: Record<string, unknown>[];
  [field: string]: unknown;
}

export type { HelmReleaseShorthand, HelmRevision } from '../fakes/kubernetes/helm-release.js';

export interface Scenario {
  id: string;
  title: string;
  description: string;
  dir: string;
  onset: Date;
  alert: AlertPost;
  /** Every object of the world, the Helm release Secrets included. */
  objects: KubeObject[];
  logs: WorldLogs;
  helmReleases: HelmReleaseShorthand[];
  noise: string[];
  plantedSecrets: string[];
  expected: Record<string, unknown>;
  /** Series for the real Prometheus; times are offsets from the onset (`@-2h`), as buildSeries takes them. */
  prometheus?: { series: SeriesSpec[]; samples: PromSeries[] };
  loki?: { streams: { labels: Record<string, string>; entries: { ts: Date; line: string }[] }[] };
  github?: Scenario$GitHub;
  flags: { flag: string; after: string; before?: string; actor: string; at: string; environment?: string; service?: string }[];
  catalog?: { services: Record<string, unknown>[] };
  /** Change announcements and earlier alerts, in time order; delivered before the alert. */
  slack: { channels: { name: string; purpose: 'alerts' | 'changes' | 'chat' | 'status' }[]; messages: SlackMessage[] };
  source?: string;
  stack?: string;
  alertPointsAt?: 'origin' | 'victim' | 'symptom' | 'namespace' | 'node';
}

/** A Slack message of the world's past: `at` is ISO, `channel` is `alerts` or a channel named under `slack.channels`. */
export interface SlackMessage {
  channel: string;
  at: string;
  username?: string;
  bot_id?: string;
  user?: string;
  text?: string;
  attachments?: Record<string, unknown>[];
  blocks?: Record<string, unknown>[];
}

/** Repositories for the fake GitHub, times resolved. */
export type Scenario$GitHub = z.infer<typeof schema>['github'];

export interface LoadOptions {
  /** When the alert fired; defaults to now (whole seconds). */
  onset?: Date;
  /** false drops the objects and log streams listed under `noise`. Default true. */
  noise?: boolean;
}

const HELM_STATUSES = [
  'unknown',
  'deployed',
  'uninstalled',
  'superseded',
  'failed',
  'uninstalling',
  'pending-install',
  'pending-upgrade',
  'pending-rollback',
] as const;

const text = z.union([z.string(), z.number()]).transform(String);
const logRepeat = z.object({ from: z.iso.datetime({ offset: true }), to: z.iso.datetime({ offset: true }), every: z.string(), lines: z.array(z.string()).min(1) });
const schema = z.object({
  id: z.string().min(1),
  title: z.string().min(1),
  description: z.string().min(1),
  alert: z.looseObject({
    username: z.string().optional(),
    bot_id: z.string().optional(),
    text: z.string().optional(),
    attachments: z.array(z.record(z.string(), z.unknown())).optional(),
    blocks: z.array(z.record(z.string(), z.unknown())).optional(),
  }),
  kubernetes: z.object({
    objects: z.array(
      z.looseObject({
        apiVersion: z.string().min(1),
        kind: z.string().min(1),
        metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().optional() }),
      }),
    ),
    logs: z
      .record(
        z.string().regex(/^[^/]+\/[^/]+\/[^/]+$/, 'log keys are <namespace>/<pod>/<container>'),
        z.object({
          current: z.string().default(''),
          previous: z.string().optional(),
          /** Generated lines, stamped like `kubectl logs --timestamps` (RFC 3339 + space), merged in time order. */
          repeat: z.array(logRepeat.extend({ previous: z.boolean().default(false) })).default([]),
        }),
      )
      .default({}),
    /** Real `kubernetes.io/tls` Secrets with certificates valid from/to times relative to the onset. */
    tlsSecrets: z
      .array(
        z.object({
          name: z.string().min(1),
          namespace: z.string().min(1),
          commonName: z.string().min(1),
          dnsNames: z.array(z.string()).optional(),
          notBefore: z.iso.datetime({ offset: true }),
          notAfter: z.iso.datetime({ offset: true }),
          issuer: z.string().optional(),
          labels: z.record(z.string(), z.string()).optional(),
          annotations: z.record(z.string(), z.string()).optional(),
          creationTimestamp: z.iso.datetime({ offset: true }).optional(),
        }),
      )
      .default([]),
    helmReleases: z
      .array(
        z.object({
          name: z.string().min(1),
          namespace: z.string().min(1),
          manifest: z.string().optional(),
          revisions: z
            .array(
              z.object({
                version: z.number().int().positive(),
                status: z.enum(HELM_STATUSES),
                chart: z.string().regex(/^.+-v?\d+\.\d+\.\d+\S*$/, 'chart is <name>-<semver>, as `helm history` prints it'),
                appVersion: text,
                description: z.string(),
                deployedAt: z.iso.datetime({ offset: true }),
                values: z.record(z.string(), z.unknown()).default({}),
                manifest: z.string().optional(),
              }),
            )
            .min(1),
        }),
      )
      .default([]),
  }),
  prometheus: z
    .object({
      series: z.array(
        z.object({
          metric: z.string().min(1),
          labels: z.record(z.string(), text),
          type: z.enum(['counter', 'gauge']),
          from: z.string(),
          to: z.string(),
          step: z.string(),
          segments: z.array(z.object({ until: z.string(), rate: z.number().optional(), value: z.number().optional() })).min(1),
          start: z.number().optional(),
          noise: z.number().optional(),
        }),
      ).default([]),
      /** Raw samples, for shapes the segment shorthand cannot draw (a sawtooth, a gap, a reset). */
      samples: z
        .array(
          z.object({
            metric: z.string().min(1),
            labels: z.record(z.string(), text).default({}),
            type: z.enum(['counter', 'gauge']).optional(),
            points: z
              .array(z.union([z.tuple([z.iso.datetime({ offset: true }), z.number()]), z.object({ at: z.iso.datetime({ offset: true }), value: z.number() })]))
              .min(1),
          }),
        )
        .default([]),
    })
    .optional(),
  loki: z
    .object({
      streams: z.array(
        z.object({
          labels: z.record(z.string(), text),
          entries: z.array(z.object({ at: z.iso.datetime({ offset: true }), line: z.string() })).default([]),
          repeat: z.array(logRepeat).default([]),
        }),
      ),
    })
    .optional(),
  github: z
    .object({
      repos: z.record(
        z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'repository keys are owner/name'),
        z.object({
          commits: z.array(z.object({ message: z.string(), author: z.string(), at: z.iso.datetime({ offset: true }), sha: z.string().optional() })).default([]),
          pulls: z
            .array(
              z.object({
                title: z.string(),
                author: z.string(),
                number: z.number().int().optional(),
                body: z.string().optional(),
                /** Absent: the pull request is open (or a draft, with `draft: true`), not merged. */
                mergedAt: z.iso.datetime({ offset: true }).optional(),
                createdAt: z.iso.datetime({ offset: true }).optional(),
                draft: z.boolean().optional(),
                mergedBy: z.string().optional(),
                files: z.array(z.object({ filename: z.string(), additions: z.number().default(1), deletions: z.number().default(0) })).optional(),
              }),
            )
            .default([]),
          deployments: z
            .array(
              z.object({
                sha: z.string(),
                environment: z.string(),
                creator: z.string(),
                at: z.iso.datetime({ offset: true }),
                state: z.enum(['success', 'failure', 'error', 'in_progress', 'queued', 'pending', 'inactive']).default('success'),
              }),
            )
            .default([]),
          /** GitHub Actions workflow runs (CI and CD pipelines), as `GET /repos/{o}/{r}/actions/runs` lists them. */
          workflowRuns: z
            .array(
              z.object({
                name: z.string(),
                headSha: z.string(),
                headBranch: z.string().default('main'),
                event: z.string().default('push'),
                status: z.enum(['queued', 'in_progress', 'completed']).default('completed'),
                conclusion: z.enum(['success', 'failure', 'cancelled', 'skipped', 'timed_out', 'action_required', 'neutral']).nullable().default('success'),
                actor: z.string(),
                at: z.iso.datetime({ offset: true }),
                updatedAt: z.iso.datetime({ offset: true }).optional(),
                displayTitle: z.string().optional(),
              }),
            )
            .default([]),
        }),
      ),
    })
    .optional(),
  flags: z
    .array(
      z.object({
        flag: z.string(),
        after: text,
        before: text.optional(),
        actor: z.string(),
        at: z.iso.datetime({ offset: true }),
        environment: z.string().optional(),
        service: z.string().optional(),
      }),
    )
    .default([]),
  catalog: z.object({ services: z.array(z.record(z.string(), z.unknown())) }).optional(),
  /**
   * Other Slack traffic before the alert: change announcements in a change channel (deploy bots, CD
   * tools, people), earlier alert posts in the alert channel. Each is delivered to Vigil as the message
   * event it was, with its `ts` at `at`, in time order, before the alert.
   */
  slack: z
    .object({
      channels: z.array(z.object({ name: z.string().regex(/^[a-z0-9_-]+$/), purpose: z.enum(['alerts', 'changes', 'chat', 'status']) })).default([]),
      messages: z
        .array(
          z.looseObject({
            channel: z.string().min(1),
            at: z.iso.datetime({ offset: true }),
            username: z.string().optional(),
            bot_id: z.string().optional(),
            user: z.string().optional(),
            text: z.string().optional(),
            attachments: z.array(z.record(z.string(), z.unknown())).optional(),
            blocks: z.array(z.record(z.string(), z.unknown())).optional(),
          }),
        )
        .default([]),
    })
    .optional(),
  /** Provenance, for readers and graders: which public fault this plays, which monitoring stack, where the alert points. */
  source: z.string().optional(),
  stack: z.string().optional(),
  alert_points_at: z.enum(['origin', 'victim', 'symptom', 'namespace', 'node']).optional(),
  noise: z.array(z.string().min(1)).default([]),
  planted_secrets: z.array(z.string().min(1)).default([]),
  expected: z.record(z.string(), z.unknown()).default({}),
});

/** Thrown for a scenario that cannot be loaded; the message names the file and the problem. */
export class ScenarioError extends Error {
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`);
    this.name = 'ScenarioError';
  }
}

export { formatTime, parseOffset } from './times.js';

export function objectId(obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  return ns ? `${obj.kind}/${ns}/${obj.metadata.name}` : `${obj.kind}/${obj.metadata.name}`;
}

function globToRegex(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

/** Drops noise: listed objects, listed log streams, logs of dropped pods, events about dropped objects. */
function dropNoise(objects: KubeObject[], logs: WorldLogs, noise: string[]): { objects: KubeObject[]; logs: WorldLogs } {
  const patterns = noise.map(globToRegex);
  const isNoise = (id: string): boolean => patterns.some((p) => p.test(id));
  const dropped = new Set(objects.filter((o) => isNoise(objectId(o))).map(objectId));
  const aboutDropped = (o: KubeObject): boolean => {
    const io = o['involvedObject'] as { kind?: string; namespace?: string; name?: string } | undefined;
    if (o.kind !== 'Event' || !io?.kind || !io.name) return false;
    return dropped.has(io.namespace ? `${io.kind}/${io.namespace}/${io.name}` : `${io.kind}/${io.name}`);
  };
  const keptObjects = objects.filter((o) => !dropped.has(objectId(o)) && !aboutDropped(o));
  const keptLogs = Object.fromEntries(
    Object.entries(logs).filter(([key]) => {
      const [ns, pod] = key.split('/');
      return !isNoise(key) && !dropped.has(`Pod/${ns}/${pod}`);
    }),
  );
  return { objects: keptObjects, logs: keptLogs };
}

/** Every planted secret must be findable somewhere, or a redaction test would prove nothing. */
function checkPlantedSecrets(secrets: string[], objects: KubeObject[], logs: WorldLogs, alert: AlertPost, fail: (p: string) => never, more: unknown[] = []): void {
  const decoded = objects
    .filter((o) => o.kind === 'Secret')
    .flatMap((o) => Object.values((o['data'] ?? {}) as Record<string, string>).map((v) => Buffer.from(v, 'base64').toString('utf8')));
  const haystack = [JSON.stringify(objects), JSON.stringify(logs), JSON.stringify(alert), ...decoded, ...more.map((m) => JSON.stringify(m ?? null))].join('\n');
  // JSON.stringify escapes quotes and backslashes; look for the raw and the escaped form.
  for (const secret of secrets) {
    if (!haystack.includes(secret) && !haystack.includes(JSON.stringify(secret).slice(1, -1)))
      fail(`planted secret "${secret.slice(0, 12)}…" does not occur anywhere in the world`);
  }
}

export async function loadScenario(dir: string, options: LoadOptions = {}): Promise<Scenario> {
  const file = join(dir, 'scenario.yaml');
  const fail = (problem: string): never => {
    throw new ScenarioError(file, problem);
  };
  const onset = options.onset ?? new Date(Math.floor(Date.now() / 1000) * 1000);
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (err) {
    return fail(`cannot read: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(source, { merge: true, prettyErrors: true });
  } catch (err) {
    return fail(`invalid YAML: ${(err as Error).message}`);
  }
  const shifted = timeShifter(onset, fail).shift(raw);
  const parsed = schema.safeParse(shifted);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return fail(`${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const s = parsed.data;
  if (s.id !== basename(dir)) fail(`id "${s.id}" does not match the folder name "${basename(dir)}"`);

  const worldObjects = s.kubernetes.objects as KubeObject[];
  const helmReleases = s.kubernetes.helmReleases as HelmReleaseShorthand[];
  let objects: KubeObject[] = [...worldObjects];
  for (const release of helmReleases) {
    try {
      objects.push(...(helmHistorySecrets(release) as KubeObject[]));
    } catch (err) {
      fail((err as Error).message);
    }
  }
  for (const t of s.kubernetes.tlsSecrets as TlsSecretShorthand[]) objects.push(tlsSecret(t));
  let logs: WorldLogs = expandContainerLogs(s.kubernetes.logs, fail);

  const seen = new Set<string>();
  for (const obj of objects) {
    const id = objectId(obj);
    if (seen.has(id)) fail(`duplicate object ${id}`);
    seen.add(id);
  }
  for (const id of s.noise) {
    const re = globToRegex(id);
    if (![...seen].some((o) => re.test(o)) && !Object.keys(logs).some((k) => re.test(k)))
      fail(`noise id "${id}" matches no object (<Kind>/<namespace>/<name>) and no log stream (<namespace>/<pod>/<container>)`);
  }
  const alert = s.alert as AlertPost;
  const slackMessages = [...(s.slack?.messages ?? [])].sort((a, b) => Date.parse(a.at) - Date.parse(b.at)) as SlackMessage[];
  const channels = s.slack?.channels ?? [];
  for (const m of slackMessages) {
    if (m.channel !== 'alerts' && !channels.some((c) => c.name === m.channel)) fail(`slack.messages: channel "${m.channel}" is neither "alerts" nor listed under slack.channels`);
    if (Date.parse(m.at) > onset.getTime()) fail(`slack.messages: a message at ${m.at} is after the onset; only earlier traffic can be played`);
  }
  checkPlantedSecrets(s.planted_secrets, objects, logs, alert, fail, [s.slack, s.loki, s.github, s.flags, helmReleases]);
  if (options.noise === false) ({ objects, logs } = dropNoise(objects, logs, s.noise));

  return {
    id: s.id,
    title: s.title,
    description: s.description,
    dir,
    onset,
    alert,
    objects,
    logs,
    helmReleases,
    noise: s.noise,
    plantedSecrets: s.planted_secrets,
    expected: s.expected,
    prometheus: s.prometheus
      ? {
          series: s.prometheus.series.map((x) => seriesOffsets(x, onset)),
          samples: s.prometheus.samples.map((x) => ({
            metric: x.metric,
            labels: x.labels,
            ...(x.type ? { type: x.type } : {}),
            points: x.points.map((p) => (Array.isArray(p) ? { t: new Date(p[0]), v: p[1] } : { t: new Date(p.at), v: p.value })),
          })),
        }
      : undefined,
    loki: s.loki ? { streams: s.loki.streams.map((st) => ({ labels: st.labels, entries: expandEntries(st.entries, st.repeat, fail) })) } : undefined,
    github: s.github,
    flags: s.flags,
    catalog: s.catalog,
    slack: { channels, messages: slackMessages },
    ...(s.source ? { source: s.source } : {}),
    ...(s.stack ? { stack: s.stack } : {}),
    ...(s.alert_points_at ? { alertPointsAt: s.alert_points_at } : {}),
  };
}

/** Container logs with their `repeat` generators expanded into stamped lines (`<RFC 3339> <line>`), in time order. */
function expandContainerLogs(
  raw: Record<string, { current: string; previous?: string; repeat: { from: string; to: string; every: string; lines: string[]; previous: boolean }[] }>,
  fail: (problem: string) => never,
): WorldLogs {
  const out: WorldLogs = {};
  for (const [key, stream] of Object.entries(raw)) {
    const merge = (text: string | undefined, generated: { from: string; to: string; every: string; lines: string[] }[]): string | undefined => {
      if (generated.length === 0) return text;
      const stamped = (text ?? '').split('\n').filter(Boolean).map((line) => {
        const m = /^(\d{4}-\d{2}-\d{2}T\S+)\s/.exec(line);
        return { t: m ? Date.parse(m[1]!) : Number.NEGATIVE_INFINITY, line };
      });
      for (const e of expandEntries([], generated, fail)) stamped.push({ t: e.ts.getTime(), line: `${e.ts.toISOString()} ${e.line}` });
      return `${stamped.sort((a, b) => a.t - b.t).map((l) => l.line).join('\n')}\n`;
    };
    const previous = merge(stream.previous, stream.repeat.filter((r) => r.previous));
    out[key] = { current: merge(stream.current, stream.repeat.filter((r) => !r.previous)) ?? '', ...(previous !== undefined ? { previous } : {}) };
  }
  return out;
}

/** Times in the YAML were shifted to ISO; the Prometheus shorthand wants offsets from the onset again. */
function seriesOffsets(x: SeriesSpec, onset: Date): SeriesSpec {
  const off = (v: string) => {
    const t = Date.parse(v);
    if (Number.isNaN(t)) return v;
    const ms = t - onset.getTime();
    return `@${ms < 0 ? '-' : '+'}${Math.abs(ms)}ms`;
  };
  return { ...x, from: off(x.from), to: off(x.to), segments: x.segments.map((sg) => ({ ...sg, until: off(sg.until) })) };
}

const MAX_GENERATED = 20_000;

/** Explicit entries plus `repeat` generators, in time order. */
function expandEntries(
  entries: { at: string; line: string }[],
  repeat: { from: string; to: string; every: string; lines: string[] }[],
  fail: (problem: string) => never,
): { ts: Date; line: string }[] {
  const out = entries.map((e) => ({ ts: new Date(e.at), line: e.line }));
  for (const r of repeat) {
    const every = parseOffset(r.every);
    if (!every || every <= 0) fail(`repeat "every: ${r.every}" is not a positive duration`);
    let i = 0;
    for (let t = Date.parse(r.from); t < Date.parse(r.to); t += every!) {
      if (out.length > MAX_GENERATED) fail(`repeat generates more than ${MAX_GENERATED} lines`);
      const at = new Date(t);
      out.push({ ts: at, line: lineTime(r.lines[i++ % r.lines.length]!, at, fail) });
    }
  }
  return out.sort((a, b) => a.ts.getTime() - b.ts.getTime());
}

/** `{{t}}` / `{{t|apache}}` in a generated line: that line's own time, in a format of TIME_FORMATS. */
function lineTime(line: string, at: Date, fail: (problem: string) => never): string {
  return line.replace(/\{\{\s*t\s*(?:\|\s*([a-z0-9_]+)\s*)?\}\}/g, (_, format: string | undefined) => {
    const fn = TIME_FORMATS[(format ?? 'iso') as TimeFormat];
    if (!fn) fail(`repeat line: unknown time format "${format}" (one of ${Object.keys(TIME_FORMATS).join(', ')})`);
    return String(fn(at));
  });
}

/** The scenario folders (those holding a scenario.yaml) under `rootDir`, sorted by name. */
export async function listScenarios(rootDir: string): Promise<string[]> {
  const entries = await readdir(rootDir, { withFileTypes: true });
  const dirs: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const found = await stat(join(rootDir, e.name, 'scenario.yaml')).then(
      () => true,
      () => false,
    );
    if (found) dirs.push(join(rootDir, e.name));
  }
  return dirs.sort();
}
