/** Assembles an `Alert` from what a parser found, applying the rules every source shares. */
import type { Alert, AlertSource, AlertStatus } from '../types.js';
import type { ParseContext } from './types.js';
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
}

const MAX_TITLE = 1024;
const MAX_TEXT = 8000;

export function buildAlert(ctx: ParseContext, parts: AlertParts): Alert {
  const labels = parts.labels ?? {};
  const labelValues = parts.labelValues ?? [];
  const alert: Alert = {
    source: parts.source,
    status: parts.status,
    title: (ctx.flat.headline || parts.alertName).slice(0, MAX_TITLE),
    alertName: parts.alertName.slice(0, 256),
    labels,
    labelValues,
    annotations: parts.annotations ?? {},
    count: parts.count ?? 1,
    startsAt: parts.startsAt ?? ctx.postedAt,
    text: bodyText(ctx).slice(0, MAX_TEXT),
  };
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
