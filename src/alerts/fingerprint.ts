/**
 * `fingerprintAlert`: a short stable id for "the same alert about the same target", used to thread repeat posts
 * (re-notifications, a growing group, the resolve) into one incident.
 *
 * The rule, first match wins:
 * 0. **The source's own key** (`sourceKey`, e.g. Opsgenie's alias), when the parser set one: its create and close
 *    carry different fields, but always the same key.
 * 1. **Alertmanager/Grafana subject with group values** (`[FIRING:n] <group values> (<common values>)`): the
 *    group values, i.e. Alertmanager's own group identity (`group_by`). The count and the parenthesised common
 *    values are left out on purpose: they change as alerts join or leave the group (`[FIRING:1] … (pod-a warning)`
 *    becomes `[FIRING:3] … (warning)`), and `[RESOLVED]` repeats the group. Webhook alerts carry the same subject
 *    (see alertmanager-webhook.ts). Consequence: with `group_by: [alertname]` alone, one rule firing for two targets
 *    is one group and one fingerprint, exactly as Alertmanager posts it; group by `namespace` (or service) to split.
 * 2. **Keyed target labels** (`namespace`, `deployment`, `statefulset`, `daemonset`, `pod`, `service`, `job`,
 *    `instance`, `cluster`, `container`, `node`, `persistentvolumeclaim`, …) plus the alert name. A `pod` is reduced
 *    to its workload (`checkout-7d9f8b6c5-x2x9z` → `checkout`, `kafka-2` → `kafka`) and dropped when a workload
 *    label is present, because pod names change on every restart; `instance` is dropped when a workload, pod or
 *    service label says what the target is (it is then the scrape address).
 * 3. **Keyless values** (`labelValues`) plus the alert name, minus severity words, pod names reduced the same way.
 * 4. Otherwise the alert name (or title without its `[FIRING:n]` prefix).
 * Always ignored: severity and other volatile labels (`pod_template_hash`, `uid`, `endpoint`, …), letter case,
 * surrounding whitespace; digits are dropped from free-text names so "disk at 91%" and "disk at 93%" match.
 */
import { createHash } from 'node:crypto';
import { isSeverityWord } from './parse/severity.js';
import { parseSubject } from './parse/subject.js';
import type { Alert } from './types.js';

const WORKLOAD_LABELS = ['deployment', 'statefulset', 'daemonset', 'cronjob', 'job_name', 'replicaset', 'persistentvolumeclaim'];
const TARGET_LABELS = [
  'cluster', 'namespace', ...WORKLOAD_LABELS, 'pod', 'service', 'job', 'instance', 'container', 'node',
  'horizontalpodautoscaler', 'ingress', 'app', 'app_kubernetes_io_name', 'env', 'environment',
];

export function fingerprintAlert(alert: Alert): string {
  return hash(fingerprintParts(alert));
}

/** The normalised parts hashed by `fingerprintAlert` (exported for debugging and tests). */
export function fingerprintParts(alert: Alert): string[] {
  if (alert.sourceKey) return ['source', alert.source, alert.sourceKey];
  const subject = parseSubject(alert.title);
  const groupValues = subject?.groupValues.map(normalise).filter((value) => value && !isSeverityWord(value)) ?? [];
  if (groupValues.length > 0) return ['group', ...groupValues];

  const name = normaliseName(alert.labels.alertname ?? alert.alertName);
  const targets = targetLabels(alert.labels);
  if (targets.length > 0) return ['labels', name, ...targets];

  const values = [
    ...new Set(
      alert.labelValues
        .map(normalise)
        .filter((value) => value && !isSeverityWord(value) && value !== name)
        .map((value) => workloadOfPod(value, { ordinal: false })),
    ),
  ];
  if (values.length > 0) return ['values', name, ...values];
  return ['name', name || normaliseName(alert.title.replace(/^\s*\[[^\]]*\]\s*/, ''))];
}

function targetLabels(raw: Record<string, string>): string[] {
  const labels = new Map<string, string>();
  for (const [key, value] of Object.entries(raw)) {
    const k = normalise(key);
    const v = normalise(value);
    if (TARGET_LABELS.includes(k) && v) labels.set(k, v);
  }
  const hasWorkload = WORKLOAD_LABELS.some((key) => labels.has(key));
  const pod = labels.get('pod');
  if (pod !== undefined) {
    labels.delete('pod');
    if (!hasWorkload) labels.set('workload', workloadOfPod(pod));
  }
  const replicaset = labels.get('replicaset');
  if (replicaset !== undefined) labels.set('replicaset', replicaset.replace(REPLICASET_HASH, ''));
  if (hasWorkload || pod !== undefined || labels.has('service')) labels.delete('instance');
  return [...labels.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, value]) => `${key}=${value}`);
}

/** Kubernetes name suffixes: ReplicaSet hash + pod id, CronJob schedule time + pod id, DaemonSet/Job pod id, StatefulSet ordinal. */
const POD_SUFFIX_ALPHABET = '[bcdfghjklmnpqrstvwxz2456789]';
const POD_SUFFIXES = [
  new RegExp(`^(.+)-${POD_SUFFIX_ALPHABET}{6,10}-${POD_SUFFIX_ALPHABET}{5}$`),
  new RegExp(`^(.+)-\\d{8,10}-${POD_SUFFIX_ALPHABET}{5}$`),
  new RegExp(`^(.+)-${POD_SUFFIX_ALPHABET}{5}$`),
  /^(.+)-\d+$/,
];

const REPLICASET_HASH = new RegExp(`-${POD_SUFFIX_ALPHABET}{6,10}$`);

/**
 * The workload part of a pod name. `ordinal: false` keeps a trailing `-<number>` (for keyless values, where
 * `prod-eu-1` is more likely a cluster than StatefulSet pod 1).
 */
export function workloadOfPod(pod: string, options: { ordinal?: boolean } = {}): string {
  const suffixes = options.ordinal === false ? POD_SUFFIXES.slice(0, 3) : POD_SUFFIXES;
  for (const suffix of suffixes) {
    const match = suffix.exec(pod);
    // A 5-character suffix must contain a digit, so names such as `api-sync` stay whole.
    if (match && (suffix !== POD_SUFFIXES[2] || /\d/.test(pod.slice(match[1]!.length)))) return match[1]!;
  }
  return pod;
}

function normalise(value: string): string {
  return value.trim().toLowerCase().replace(/\s+/g, ' ');
}

function normaliseName(value: string): string {
  return normalise(value).replace(/\d+(\.\d+)?%?/g, '#').replace(/\s+/g, ' ');
}

function hash(parts: string[]): string {
  return createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 16);
}
