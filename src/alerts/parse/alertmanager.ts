/**
 * Alertmanager `slack_configs` posts: one attachment, no blocks, no top-level text (PLATFORM-FACTS A2, captured from
 * 0.25 in test/fixtures/alerts/alertmanager-*.json). The default title is the subject (see subject.ts); the default
 * `text` is empty, and custom `text` templates often list labels, which fill `labels`.
 */
import type { AlertParser, ParseContext, ParseResult } from './types.js';
import { buildAlert } from './build.js';
import { readKeyedText } from './labels.js';
import { alertNameFromSubject, parseSubject } from './subject.js';

export const alertmanagerParser: AlertParser = {
  name: 'alertmanager',
  detect(ctx) {
    const { msg, flat } = ctx;
    if (/^alertmanager$/i.test(msg.username ?? '') || /alertmanager/i.test(msg.bot_profile?.name ?? '')) return true;
    // A renamed sender still links to the Alertmanager UI and puts the subject in the title.
    return parseSubject(flat.headline) !== undefined && (flat.titleLink ?? '').includes('/#/alerts');
  },
  parse: parseAlertmanagerPost,
};

function parseAlertmanagerPost(ctx: ParseContext): ParseResult {
  const { flat } = ctx;
  if (!flat.headline) return { kind: 'malformed', reason: 'Alertmanager post has no attachment title or text' };
  const subject = parseSubject(flat.headline);
  const keyed = readKeyedText(flat.lines, flat.fields);
  const labelValues = subject ? [...subject.groupValues, ...subject.commonValues] : [];
  const alertName = keyed.labels.alertname ?? (subject && alertNameFromSubject(subject)) ?? flat.headline;
  const status = subject?.status ?? (flat.colors.includes('good') ? 'resolved' : 'firing');
  const parts: Parameters<typeof buildAlert>[1] = {
    source: 'alertmanager',
    status,
    alertName,
    labels: keyed.labels,
    labelValues,
    annotations: keyed.annotations,
    members: keyed.members,
  };
  if (subject?.count !== undefined) parts.count = subject.count;
  return { kind: 'alert', alert: buildAlert(ctx, parts) };
}
