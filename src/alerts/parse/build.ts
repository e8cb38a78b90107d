/** Assembles an `Alert` from what a parser found, applying the rules every source shares. */
import type { Alert, AlertMember, AlertSource, AlertStatus } from '../types.js';
import type { ParseContext } from './types.js';
import { cutRedacted } from '../../redact/index.js';
import { pickSeverity } from './severity.js';

export interface AlertParts {
  source: AlertSource;
  status: AlertStatus;
  alertName: string;
  labels?: Record<string, string>;
  labelValues?: string[];
  annotations?: Record<string, string>;
  severity?: string;
  count?: number;
  startsAt?: Date;
  link?: string;
  members?: AlertMember[];
}

const MAX_TITLE = 1024;
const MAX_TEXT = 8000;

export function buildAlert(ctx: ParseContext, parts: AlertParts): Alert {
  const labels = parts.labels ?? {};
  const labelValues = parts.labelValues ?? [];
  const alert: Alert = {
    source: parts.source,
    status: parts.status,
    // The message was redacted before parsing (see IncidentDesk); cuts keep placeholders whole.
    title: cutRedacted(ctx.flat.headline || parts.alertName, MAX_TITLE),
    alertName: cutRedacted(parts.alertName, 256),
    labels,
    labelValues,
    annotations: parts.annotations ?? {},
    count: parts.count ?? 1,
    startsAt: ctx.postedAt,
    text: cutRedacted(bodyText(ctx), MAX_TEXT),
  };
  if (parts.members && parts.members.length > 1) alert.members = parts.members.slice(0, 50);
  const startsAt = parts.startsAt ?? startedAnnotation(parts.annotations, ctx.postedAt);
  if (startsAt) alert.startsAt = startsAt;
  const severity = parts.severity ?? pickSeverity(labels, labelValues);
  if (severity) alert.severity = severity;
  const link = parts.link ?? ctx.flat.titleLink ?? ctx.flat.links[0];
  if (link) alert.link = link;
  return alert;
}

function bodyText(ctx: ParseContext): string {
  const { headline, lines, fields } = ctx.flat;
  return [headline, ...lines, ...fields.map((field) => `${field.title}: ${field.value}`)].filter(Boolean).join('\n');
}

/**
 * `Started: 2026-12-01 21:15:54 UTC` (or an ISO time, or epoch seconds) printed by the template: when the
 * alert really started, which may be well before the post. Only times before the post and within a week
 * count; anything else is a template quirk, not a start.
 */
function startedAnnotation(annotations: Record<string, string> | undefined, postedAt: Date): Date | undefined {
  const raw = annotations?.['startsAt']?.trim();
  if (!raw) return undefined;
  const epoch = /^\d{10}(\.\d+)?$/.test(raw) ? Number(raw) * 1000 : undefined;
  const parsed = epoch ?? Date.parse(raw.replace(/ UTC$/, 'Z').replace(/^(\d{4}-\d\d-\d\d) (\d)/, '$1T$2'));
  if (Number.isNaN(parsed) || parsed > postedAt.getTime() + 60_000 || postedAt.getTime() - parsed > 7 * 86_400_000) return undefined;
  return new Date(parsed);
}
