/**
 * Metric summaries → `Evidence` lines a card can show ("HTTP 5xx ratio rose from 0.001 to 1 at 12:00:15Z").
 * Only the facts that say something: a deviation or a level shift. Steady series produce no line.
 */
import type { Citation, Evidence } from '../types.js';
import type { MetricSummary, SeriesSummary } from './types.js';

export function seriesLabel(metric: Record<string, string>): string {
  const entries = Object.entries(metric).filter(([k]) => k !== '__name__');
  const name = metric.__name__ ?? '';
  return entries.length ? `${name}{${entries.map(([k, v]) => `${k}="${v}"`).join(',')}}` : name || '{}';
}

function clock(d: Date): string {
  return d.toISOString().replace('.000Z', 'Z');
}

function fmt(x: number | null, unit: string): string {
  if (x === null) return 'n/a';
  const n = Number(x.toPrecision(3));
  if (unit === 'ratio') return `${Number((n * 100).toPrecision(3))}%`;
  return unit ? `${n} ${unit}` : String(n);
}

/** One sentence about a series, or undefined when it did not move. */
export function describeSeries(title: string, unit: string, s: SeriesSummary): string | undefined {
  const who = seriesLabel(s.metric);
  const subject = [title, who === '{}' ? '' : who].filter(Boolean).join(' ') || 'series';
  const shift = s.changePoints[0];
  if (s.deviationStart) {
    const verb = s.deviationDirection === 'down' ? 'fell' : 'rose';
    const to = shift && shift.at >= s.deviationStart ? shift.after : s.deviationDirection === 'down' ? s.min : s.max;
    return `${subject} ${verb} from ${fmt(s.baseline?.median ?? null, unit)} to ${fmt(to, unit)} starting ${clock(s.deviationStart)} (now ${fmt(s.last, unit)})`;
  }
  if (shift) return `${subject} shifted from ${fmt(shift.before, unit)} to ${fmt(shift.after, unit)} at ${clock(shift.at)}`;
  return undefined;
}

export function metricEvidence(summary: MetricSummary, citation: Citation = summary.citation): Evidence[] {
  const out: Evidence[] = [];
  for (const s of summary.series) {
    const sentence = describeSeries(summary.title, summary.unit, s);
    if (!sentence) continue;
    out.push({
      kind: 'metric',
      summary: sentence,
      citation,
      ...(s.deviationStart ? { observedAt: s.deviationStart } : {}),
      detail: {
        metric: s.metric,
        baseline: s.baseline,
        last: s.last,
        min: s.min,
        max: s.max,
        changePoints: s.changePoints,
        ...(s.deviationStart ? { deviationStart: s.deviationStart, deviationDirection: s.deviationDirection } : {}),
      },
    });
  }
  return out;
}
