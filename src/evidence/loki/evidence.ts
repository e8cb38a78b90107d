import { OTHER_TEMPLATE, type LogPattern } from '../logs/types.js';
import type { Evidence } from '../types.js';
import type { LogSummary } from './types.js';

const quote = (p: LogPattern): string => `"${p.template.length > 160 ? `${p.template.slice(0, 159)}…` : p.template}"`;

/**
 * Card-sized facts from one log summary: the overall shape, what is new or spiking since the onset,
 * and the biggest error patterns. Text comes from already-redacted lines.
 */
export function logSummaryEvidence(s: LogSummary): Evidence[] {
  if (s.status !== 'success') return [];
  const out: Evidence[] = [];
  const top = s.patterns.filter((p) => p.template !== OTHER_TEMPLATE).reduce<LogPattern | undefined>((a, p) => (!a || p.count > a.count ? p : a), undefined);
  out.push({
    kind: 'log',
    summary: `${s.totalLines} log lines${s.sampled ? ' (sampled)' : ''} in ${s.patterns.length} patterns from ${s.selector}${top ? `; most frequent ${quote(top)} ×${top.count}` : ''}`,
    citation: s.citation,
    detail: { totalLines: s.totalLines, sampled: s.sampled, errorPatterns: s.errorPatterns.length, top: s.patterns.slice(0, 5).map((p) => ({ template: p.template, count: p.count, level: p.level })) },
  });
  const shown = new Set<string>();
  for (const p of s.newSinceOnset.slice(0, 5)) {
    shown.add(p.template);
    const what = p.change.kind === 'new' ? `New since onset` : `Rate jumped ${p.change.perMinuteBefore.toFixed(1)}→${p.change.perMinuteAfter.toFixed(1)}/min at onset`;
    out.push({
      kind: 'log',
      summary: `${what}: ${p.level ? `[${p.level}] ` : ''}${quote(p)} ×${p.change.countAfter}`,
      citation: s.citation,
      observedAt: p.first,
      detail: { template: p.template, example: p.example, level: p.level, ...p.change },
    });
  }
  for (const p of s.errorPatterns.filter((x) => !shown.has(x.template)).slice(0, 3)) {
    out.push({
      kind: 'log',
      summary: `Error pattern ${quote(p)} ×${p.count}`,
      citation: s.citation,
      observedAt: p.first,
      detail: { template: p.template, example: p.example, count: p.count },
    });
  }
  return out;
}
