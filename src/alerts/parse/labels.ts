/**
 * Reads keyed labels and annotations out of alert body text. Teams' templates print labels as
 * `key=value`, ` - key = value` (Grafana's default), `*key*: value`, `• *key:* \`value\`` (the widely copied
 * Alertmanager Slack template), or as attachment fields. A value with spaces, a URL, or a known annotation key
 * (`summary`, `description`, `runbook_url`, …) is an annotation; a single token under a Prometheus-style
 * label name is a label. When a post lists several alerts, a key seen with different values is not common to
 * the group and is dropped from the labels (Alertmanager's CommonLabels rule).
 */
import type { FlatField } from './flatten.js';

export interface KeyedText {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_.]*$/;
const ANNOTATION_ALIASES: Record<string, string> = {
  summary: 'summary',
  alert: 'summary',
  message: 'summary',
  description: 'description',
  details: 'description',
  runbook: 'runbook_url',
  runbook_url: 'runbook_url',
  runbookurl: 'runbook_url',
  value: 'value',
  source: 'source',
  silence: 'silence',
  dashboard: 'dashboard',
  panel: 'panel',
  dashboard_url: 'dashboard',
  generatorurl: 'source',
};
/** Keys that describe the post, not the alerted target. */
const NOT_LABELS = new Set(['status', 'state', 'labels', 'annotations', 'time', 'date', 'started', 'startsat', 'endsat', 'firing', 'resolved']);

/** One whole-line `key = value` or `key: value` form, bullets, bold and backticks allowed. */
const LINE_PAIR = /^\s*(?:[-•*·]\s+)?\*{0,2}_?([A-Za-z][A-Za-z0-9_. ]{0,62}?)_?\*{0,2}\s*(?::\*{0,2}|=)\s*(.*?)\s*$/;
/** Inline `key=value` / `key="value"` tokens (several per line, PromQL-style selectors too). */
const INLINE_PAIR = /(?:^|[\s{,(])([a-zA-Z_][a-zA-Z0-9_]*)\s?=~?\s?"?([^\s",}()]+)"?/g;
const URL = /https?:\/\/\S+/g;

export function readKeyedText(lines: readonly string[], fields: readonly FlatField[] = []): KeyedText {
  const seen = new Map<string, Set<string>>();
  const annotations: Record<string, string> = {};
  let section: 'labels' | 'annotations' | undefined;

  const addLabel = (rawKey: string, rawValue: string): void => {
    const key = rawKey.trim().toLowerCase();
    const value = stripDecoration(rawValue);
    if (!LABEL_NAME.test(key) || !value || NOT_LABELS.has(key)) return;
    const values = seen.get(key) ?? new Set<string>();
    values.add(value);
    seen.set(key, values);
  };
  const addPair = (rawKey: string, rawValue: string): void => {
    const keyWords = rawKey.trim();
    const value = stripDecoration(rawValue);
    const normalised = keyWords.toLowerCase().replace(/\s+/g, '_');
    const alias = ANNOTATION_ALIASES[normalised.replace(/_/g, '')] ?? ANNOTATION_ALIASES[normalised];
    if (!value) return;
    if (section === 'annotations' || alias || /\s/.test(value) || /^https?:\/\//.test(value) || /\s/.test(keyWords)) {
      const key = alias ?? normalised;
      annotations[key] ??= value;
      return;
    }
    addLabel(keyWords, value);
  };

  for (const line of lines) {
    const header = /^\s*\*{0,2}(labels|annotations|details)\s*:?\*{0,2}\s*:?\s*$/i.exec(line);
    if (header) {
      section = header[1]!.toLowerCase() === 'annotations' ? 'annotations' : 'labels';
      continue;
    }
    const pair = LINE_PAIR.exec(line);
    if (pair && !/^https?$/i.test(pair[1]!.trim()) && pair[2] !== undefined && !/^\s*\w+\s*=\s*\S+\s+\w+\s*=/.test(line)) {
      addPair(pair[1]!, pair[2]);
      continue;
    }
    if (section !== 'annotations') {
      for (const match of line.replace(URL, ' ').matchAll(INLINE_PAIR)) addLabel(match[1]!, match[2]!);
    }
  }
  for (const field of fields) addPair(field.title, field.value);

  const labels: Record<string, string> = {};
  for (const [key, values] of seen) {
    if (values.size === 1) labels[key] = [...values][0]!;
  }
  return { labels, annotations };
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
