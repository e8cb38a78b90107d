/**
 * Reads keyed labels and annotations out of alert body text, in every layout teams' templates print:
 * - `key=value` tokens, several per line, including the common one-line form of Alertmanager text
 *   templates: `Labels: alertname=X namespace=Y deployment=Z severity=critical`;
 * - ` - key = value` (Grafana's default), `*key*: value`, `• *key:* \`value\`` (the widely copied
 *   Alertmanager Slack template), bullet lists, attachment fields, section fields written as
 *   `*Key*\nvalue` (PagerDuty, Opsgenie, Datadog blocks);
 * - `key:value` tag lists (`Tags: kube_namespace:shop, kube_deployment:api`).
 * A value with spaces, a URL, or a known annotation key (`summary`, `description`, `runbook_url`, …) is an
 * annotation; a single token under a Prometheus-style label name is a label.
 *
 * A post can list several alerts (`[FIRING:3]` rendered with `range .Alerts`): a key seen again that
 * starts an alert (`alertname`, `summary`, Grafana's `Value`), or seen again with another value, opens the
 * next alert. `labels` are then the labels every alert shares (Alertmanager's CommonLabels rule) and
 * `members` holds each alert's own labels.
 */
import type { FlatField } from './flatten.js';

export interface KeyedSet {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface KeyedText extends KeyedSet {
  /** One entry per alert when the post lists more than one (each with all its labels). */
  members: KeyedSet[];
}

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_.]*$/;
const ANNOTATION_ALIASES: Record<string, string> = {
  summary: 'summary',
  alert: 'summary',
  title: 'title',
  message: 'summary',
  description: 'description',
  details: 'description',
  runbook: 'runbook_url',
  runbook_url: 'runbook_url',
  runbookurl: 'runbook_url',
  value: 'value',
  values: 'value',
  source: 'source',
  silence: 'silence',
  dashboard: 'dashboard',
  panel: 'panel',
  dashboard_url: 'dashboard',
  generatorurl: 'source',
  started: 'startsAt',
  startsat: 'startsAt',
  starts_at: 'startsAt',
  since: 'startsAt',
  fired: 'startsAt',
  firing_since: 'startsAt',
};
/** Keys that describe the post, not the alerted target. */
const NOT_LABELS = new Set(['status', 'state', 'labels', 'annotations', 'time', 'date', 'started', 'startsat', 'endsat', 'firing', 'resolved', 'tags', 'urgency', 'assigned', 'assignee', 'escalation_policy', 'monitor', 'priority_level', 'http', 'https']);
/** Keys whose reappearance opens the next alert of a grouped post. */
const ALERT_START = new Set(['alertname', 'title', 'summary', 'value']);
/** Headers that introduce a label list, on their own line or followed by the labels. */
const LABEL_HEADERS = /^(labels|common labels|group labels|details|tags|label|dimensions)$/i;

/** One whole-line `key = value` or `key: value` form, bullets, bold and backticks allowed. */
const LINE_PAIR = /^\s*(?:[-•*·▪◦]\s+)?\*{0,2}_?([A-Za-z][A-Za-z0-9_. ]{0,62}?)_?\*{0,2}\s*(?::\*{0,2}|=)\s*(.*?)\s*$/;
/** Inline `key=value` / `key="value"` tokens (several per line, PromQL-style selectors too). */
const INLINE_PAIR = /(?:^|[\s{,(])([a-zA-Z_][a-zA-Z0-9_.]*)\s?=~?\s?"?([^\s",}()]+)"?/g;
/** Datadog/Opsgenie tags: `key:value` separated by commas or spaces. */
const TAG_PAIR = /(?:^|[\s,])([a-zA-Z_][a-zA-Z0-9_.\-/]*):([^\s,:][^\s,]*)/g;
const URL = /https?:\/\/\S+/g;

interface Collector {
  seen: Map<string, string>;
  annotations: Record<string, string>;
}

const emptyCollector = (): Collector => ({ seen: new Map(), annotations: {} });

export function readKeyedText(lines: readonly string[], fields: readonly FlatField[] = []): KeyedText {
  const members: Collector[] = [emptyCollector()];
  const post = emptyCollector(); // fields: about the whole post
  let section: 'labels' | 'annotations' | undefined;
  let pendingKey: string | undefined;

  const current = (): Collector => members[members.length - 1]!;
  const startNext = (): void => {
    const c = current();
    if (c.seen.size > 0 || Object.keys(c.annotations).length > 0) members.push(emptyCollector());
  };
  const addLabel = (into: Collector | undefined, rawKey: string, rawValue: string): void => {
    const key = rawKey.trim().toLowerCase();
    const value = stripDecoration(rawValue);
    if (!LABEL_NAME.test(key) || !value || NOT_LABELS.has(key)) return;
    let c = into ?? current();
    if (!into && (c.seen.get(key) !== undefined && (c.seen.get(key) !== value || ALERT_START.has(key)))) {
      startNext();
      c = current();
    }
    c.seen.set(key, value);
  };
  const addAnnotation = (into: Collector | undefined, key: string, value: string): void => {
    let c = into ?? current();
    // A repeated summary opens the next alert only once this one has shown its labels: templates that
    // print both `*Alert:*` and `*Summary:*` for one alert must not split it.
    if (!into && ALERT_START.has(key) && c.annotations[key] !== undefined && c.seen.size > 0) {
      startNext();
      c = current();
    }
    c.annotations[key] ??= value;
  };
  const addPair = (into: Collector | undefined, rawKey: string, rawValue: string): void => {
    const keyWords = rawKey.trim();
    const value = stripDecoration(rawValue);
    const normalised = keyWords.toLowerCase().replace(/\s+/g, '_');
    const alias = ANNOTATION_ALIASES[normalised.replace(/_/g, '')] ?? ANNOTATION_ALIASES[normalised];
    if (!value) return;
    if (LABEL_HEADERS.test(keyWords) && readInline(into, value, true)) return;
    // A URL under a label-like key (`instance`, `url`, `target`) is a label: probes name their target so.
    const urlLabel = /^https?:\/\/\S+$/.test(value) && /^(instance|url|target|endpoint|probe_url|host)$/i.test(keyWords);
    if (!urlLabel && (section === 'annotations' || alias || /\s/.test(value) || /^https?:\/\//.test(value) || /\s/.test(keyWords))) {
      addAnnotation(into, alias ?? normalised, value);
      return;
    }
    addLabel(into, keyWords, value);
  };
  /** `a=b c=d`, or `a:b, c:d` tags where a label header or `Tags:` says so; true when it held pairs. */
  const readInline = (into: Collector | undefined, text: string, tagsAllowed: boolean): boolean => {
    // Pairs inside a URL (`?receiver=slack&x=y`) are not labels: the pattern needs a space or bracket before a key.
    const eq = [...text.matchAll(INLINE_PAIR)];
    if (eq.length > 0) {
      for (const m of eq) addLabel(into, m[1]!, m[2]!);
      return true;
    }
    if (!tagsAllowed) return false;
    const tags = [...text.replace(URL, ' ').matchAll(TAG_PAIR)];
    if (tags.length > 0) {
      for (const m of tags) addLabel(into, normaliseTag(m[1]!), m[2]!);
      return true;
    }
    return false;
  };

  for (const raw of lines) {
    const line = raw;
    // `*Key*` alone on a line, its value on the next (section fields, PagerDuty/Opsgenie layouts).
    if (pendingKey !== undefined) {
      const key = pendingKey;
      pendingKey = undefined;
      if (!/^\s*\*{1,2}[^*]+\*{1,2}\s*$/.test(line) && !LINE_PAIR.test(line)) {
        addPair(undefined, key, line);
        continue;
      }
    }
    const header = /^\s*\*{0,2}(labels|annotations|details|tags|common labels)\s*:?\*{0,2}\s*:?\s*$/i.exec(line);
    if (header) {
      section = header[1]!.toLowerCase() === 'annotations' ? 'annotations' : 'labels';
      continue;
    }
    const bare = /^\s*\*{1,2}([A-Za-z][A-Za-z0-9_ ]{0,40}?)\*{1,2}\s*$/.exec(line);
    if (bare) {
      pendingKey = bare[1]!;
      continue;
    }
    const pair = LINE_PAIR.exec(line);
    if (pair && !/^https?$/i.test(pair[1]!.trim()) && pair[2] !== undefined && !/^\s*[\w.]+\s*=\s*\S+\s+[\w.]+\s*=/.test(line)) {
      addPair(undefined, pair[1]!, pair[2]);
      continue;
    }
    if (section !== 'annotations') {
      if (/^\s*\*{0,2}tags?\b/i.test(line)) readInline(undefined, line.replace(/^\s*\*{0,2}tags?\*{0,2}\s*:?\*{0,2}/i, ''), true);
      else readInline(undefined, line, false);
    }
  }
  for (const field of fields) addPair(post, field.title, field.value);

  const sets = members.filter((m) => m.seen.size > 0 || Object.keys(m.annotations).length > 0).map(toSet);
  const labels: Record<string, string> = { ...toSet(post).labels };
  const annotations: Record<string, string> = { ...toSet(post).annotations };
  if (sets.length > 0) {
    // Common labels: the same value in every alert of the post.
    for (const [key, value] of Object.entries(sets[0]!.labels)) {
      if (sets.every((s) => s.labels[key] === value)) labels[key] ??= value;
    }
    for (const [key, value] of Object.entries(sets[0]!.annotations)) {
      if (sets.length === 1 || sets.every((s) => s.annotations[key] === value)) annotations[key] ??= value;
    }
  }
  // The grouped alert's own annotations (summary, description) still describe the incident.
  for (const s of sets) for (const [key, value] of Object.entries(s.annotations)) annotations[key] ??= value;
  return { labels, annotations, members: sets.length > 1 ? sets : [] };
}

function toSet(c: Collector): KeyedSet {
  return { labels: Object.fromEntries(c.seen), annotations: { ...c.annotations } };
}

/** Datadog's and Opsgenie's tag names for Kubernetes objects, as the label names used elsewhere. */
const TAG_NAMES: Record<string, string> = {
  kube_namespace: 'namespace',
  kube_deployment: 'deployment',
  kube_stateful_set: 'statefulset',
  kube_daemon_set: 'daemonset',
  kube_cronjob: 'cronjob',
  kube_job: 'job_name',
  kube_service: 'service',
  kube_cluster_name: 'cluster',
  kube_container_name: 'container',
  container_name: 'container',
  pod_name: 'pod',
  kube_replica_set: 'replicaset',
  kube_ingress: 'ingress',
  kube_node: 'node',
};

export function normaliseTag(key: string): string {
  const k = key.toLowerCase();
  return TAG_NAMES[k] ?? k.replace(/[^a-z0-9_.]/g, '_');
}

/** Drops bold/code/quote wrapping around a whole value (`\`checkout\``, `*shop*`, `"x"`), leaving inner marks alone. */
function stripDecoration(value: string): string {
  let result = value.trim();
  for (;;) {
    const wrapped = /^([`*_"'])(.*)\1$/s.exec(result);
    if (!wrapped || wrapped[2]!.includes(wrapped[1]!)) return result;
    result = wrapped[2]!.trim();
  }
}
