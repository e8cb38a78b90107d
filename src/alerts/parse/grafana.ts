/**
 * Grafana Alerting's Slack contact point (grafana/alerting receivers/slack): one attachment with `title` (the same
 * `[FIRING:n] …` subject as Alertmanager by default), `title_link` (rule URL), `text` (default message: `**Firing**`,
 * `Value:`, `Labels:` and `Annotations:` lists of ` - key = value`, then Source/Silence/Dashboard/Panel links),
 * `color`, and `footer: "Grafana v<version>"`.
 */
import type { AlertParser, ParseContext, ParseResult } from './types.js';
import { buildAlert } from './build.js';
import { readKeyedText } from './labels.js';
import { alertNameFromSubject, parseSubject } from './subject.js';

export const grafanaParser: AlertParser = {
  name: 'grafana',
  detect({ msg, flat }) {
    return (
      /^grafana v/i.test(flat.footer) ||
      /grafana/i.test(msg.username ?? '') ||
      /grafana/i.test(msg.bot_profile?.name ?? '') ||
      (parseSubject(flat.headline) !== undefined && /\/alerting\//.test(flat.titleLink ?? ''))
    );
  },
  parse: parseGrafanaPost,
};

function parseGrafanaPost(ctx: ParseContext): ParseResult {
  const { flat } = ctx;
  if (!flat.headline) return { kind: 'malformed', reason: 'Grafana post has no attachment title' };
  const subject = parseSubject(flat.headline);
  const keyed = readKeyedText(flat.lines, flat.fields);
  const resolvedBody = flat.lines.some((line) => /^\s*\**resolved\**\s*$/i.test(line));
  const firingBody = flat.lines.some((line) => /^\s*\**firing\**\s*$/i.test(line));
  const status = subject?.status ?? (resolvedBody && !firingBody ? 'resolved' : 'firing');
  const parts: Parameters<typeof buildAlert>[1] = {
    source: 'grafana',
    status,
    alertName: keyed.labels.alertname ?? (subject && alertNameFromSubject(subject)) ?? flat.headline,
    labels: keyed.labels,
    labelValues: subject ? [...subject.groupValues, ...subject.commonValues] : [],
    annotations: keyed.annotations,
    members: keyed.members,
  };
  if (subject?.count !== undefined) parts.count = subject.count;
  return { kind: 'alert', alert: buildAlert(ctx, parts) };
}
