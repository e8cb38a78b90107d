/**
 * Any other bot post (home-grown scripts, uptime checkers, unknown integrations): reads `text`, attachments and
 * blocks together. It is an alert only when it reads like one (alert words, a danger colour or the Alertmanager
 * subject); anything else is `not_alert`, so ordinary chat in an alert channel opens no incident.
 */
import type { AlertParser, ParseContext, ParseResult } from './types.js';
import { buildAlert } from './build.js';
import { readKeyedText } from './labels.js';
import { pickSeverity, severityInText } from './severity.js';
import { alertNameFromSubject, parseSubject } from './subject.js';
import { extractTargetHints } from './targets.js';
import { cutRedacted } from '../../redact/index.js';

const ALERT_WORDS =
  /\b(alert(?:ing)?|alarm|firing|triggered|critical|warning|down|outage|incident|error(?:s)?|fail(?:ed|ing|ure)|degraded|unhealthy|unavailable|crash ?loop\w*|oom\w*|timeouts?|5xx|latency|saturat\w+|resolved|recovered|sev[- ]?\d|p[1-5])\b|:rotating_light:|:red_circle:|:fire:|🚨|🔴|🔥/i;
const RESOLVED_WORDS = /\b(resolved|recovered|cleared|back to normal|is (?:back )?up)\b|:white_check_mark:|:large_green_circle:|✅|🟢/i;
const DANGER_COLORS = /^(danger|warning|#?(?:d|e|f)[0-9a-f]{5})$/i;

export const genericParser: AlertParser = {
  name: 'generic',
  detect: () => true,
  parse: parseGenericPost,
};

function parseGenericPost(ctx: ParseContext): ParseResult {
  const { flat } = ctx;
  const all = [flat.headline, ...flat.lines, ...flat.fields.map((field) => `${field.title}: ${field.value}`)].join('\n');
  if (!all.trim()) return { kind: 'not_alert', reason: 'message has no text, attachment or block content' };
  const subject = parseSubject(flat.headline);
  const looksLikeAlert = subject !== undefined || ALERT_WORDS.test(all) || flat.colors.some((color) => DANGER_COLORS.test(color));
  if (!looksLikeAlert) return { kind: 'not_alert', reason: 'no alert wording, colour or alert title found' };

  const keyed = readKeyedText(flat.lines.concat(flat.headline), flat.fields);
  const hints = extractTargetHints(flat.headline);
  const labels = { ...hints.labels, ...keyed.labels };
  const labelValues = subject
    ? [...subject.groupValues, ...subject.commonValues]
    : [...hints.names, ...hints.words.filter((word) => !ALERT_WORDS.test(word) && !/^\d+%?$/.test(word))].slice(0, 12);
  const parts: Parameters<typeof buildAlert>[1] = {
    source: 'generic',
    status: subject?.status ?? (RESOLVED_WORDS.test(flat.headline) ? 'resolved' : 'firing'),
    alertName: keyed.labels.alertname ?? (subject && alertNameFromSubject(subject)) ?? cleanHeadline(flat.headline),
    labels,
    labelValues,
    annotations: keyed.annotations,
    members: keyed.members,
  };
  if (subject?.count !== undefined) parts.count = subject.count;
  const severity = pickSeverity(labels, labelValues) ?? severityInText(all);
  if (severity) parts.severity = severity;
  return { kind: 'alert', alert: buildAlert(ctx, parts) };
}

/** `:red_circle: ALERT: checkout-api is DOWN: https://… (…)` → `checkout-api is DOWN`. */
function cleanHeadline(headline: string): string {
  const cleaned = headline
    // Emoji codes, but not the `:kind:` inside a redaction placeholder (the message is redacted before parsing).
    .replace(/(?<!\[REDACTED):[a-z0-9_+-]+:/g, ' ')
    .replace(/[\u{1F300}-\u{1FAFF}\u{2600}-\u{27BF}]/gu, ' ')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/\([^)]*\)/g, ' ')
    .replace(/^\s*\[?(alert|alarm|firing|triggered|warning|critical|resolved|recovered)\]?\s*[:!-]?\s*/i, '')
    .replace(/\s+/g, ' ')
    .replace(/[\s:;,.-]+$/, '')
    .trim();
  return cutRedacted(cleaned, 200) || cutRedacted(headline, 200);
}
