/**
 * PagerDuty Slack app posts [docs, unverified; fixtures are hand-written]: an attachment whose title is
 * `[#<incident number>] <summary>` linking to the incident, with `Status` (Triggered / Acknowledged / Resolved),
 * `Urgency`, `Service` and `Assigned` fields. When PagerDuty was fed by Alertmanager, the summary is
 * Alertmanager's subject, so its keyless values are read too.
 */
import type { AlertParser, ParseContext, ParseResult } from './types.js';
import { buildAlert } from './build.js';
import { alertNameFromSubject, parseSubject } from './subject.js';

export const pagerdutyParser: AlertParser = {
  name: 'pagerduty',
  detect({ msg, flat }) {
    return (
      /pagerduty/i.test(msg.username ?? '') ||
      /pagerduty/i.test(msg.bot_profile?.name ?? '') ||
      /\.pagerduty\.com\/incidents\//.test(flat.titleLink ?? '')
    );
  },
  parse: parsePagerDutyPost,
};

function parsePagerDutyPost(ctx: ParseContext): ParseResult {
  const { flat } = ctx;
  const summary = flat.headline.replace(/^\s*(?:(?:triggered|acknowledged|resolved):\s*)?\[?#\d+\]?:?\s*/i, '').trim();
  if (!summary) return { kind: 'malformed', reason: 'PagerDuty post has no incident title' };
  const field = (name: string): string | undefined =>
    flat.fields.find((candidate) => candidate.title.toLowerCase() === name)?.value.trim() || undefined;
  const stateWord = field('status') ?? /\b(triggered|acknowledged|resolved)\b/i.exec([...flat.lines, flat.headline].join(' '))?.[1];
  const labels: Record<string, string> = {};
  const service = field('service');
  if (service) labels.service = service;
  const subject = parseSubject(summary);
  const parts: Parameters<typeof buildAlert>[1] = {
    source: 'pagerduty',
    status: /resolved/i.test(stateWord ?? '') ? 'resolved' : 'firing',
    alertName: (subject && alertNameFromSubject(subject)) ?? summary,
    labels,
    labelValues: subject ? [...subject.groupValues, ...subject.commonValues] : [],
  };
  const severity = field('priority') ?? field('urgency') ?? field('severity');
  if (severity) parts.severity = severity.toLowerCase();
  return { kind: 'alert', alert: buildAlert(ctx, parts) };
}
