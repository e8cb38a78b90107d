/**
 * `flag-flip`: a feature flag that changes the target's behaviour was flipped
 * shortly before its errors or latency rose. Flag changes arrive on the flags webhook as `flag` changes
 * (target `FeatureFlag/<name>`). Errors that began before the flip rule it out.
 *
 * Facts (camelCase): `flag`, `before` (state before, when the tool sent it), `after`, `actor`,
 * `changedAt` (ISO), and when a metric corroborates `metric`, `metricBefore`, `metricAfter`.
 * Mitigation: `flip_flag` back to `before` (or the opposite of an on/off `after`).
 *
 * Which flags change the target: the catalog's `flags`, and — since most clusters have no catalog — any
 * flag the target itself names: its log lines (SDKs log evaluations and updates: "flag tax-engine-v2
 * evaluated"), its pod template (env, args) and the keys of the ConfigMaps it reads.
 */
import type { RankedChange } from '../../changes/types.js';
import type { Evidence } from '../../evidence/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';
import { fmtLevel, metricLabel, metricWord, moved, symptomAfter, targetScope, targetSymptoms, CLOSE_AFTER_MS } from './deploy-regression.js';

const OPPOSITE: Record<string, string> = { on: 'off', off: 'on', true: 'false', false: 'true', enabled: 'disabled', disabled: 'enabled' };

/** The state to flip back to: the one before, else the opposite of a boolean-ish `after`. */
export function flipBackTo(c: Pick<RankedChange, 'before' | 'after'>): string | undefined {
  if (c.before !== undefined && c.before !== '') return c.before;
  return c.after ? OPPOSITE[c.after.toLowerCase()] : undefined;
}

/** Everything the target says about itself that could name a flag: log lines, pod template, ConfigMaps it reads. */
function targetText(input: TriageInput): string {
  const parts: string[] = [];
  for (const s of input.logs?.summaries ?? []) for (const p of s.patterns) parts.push(p.template, p.example);
  for (const l of input.kube.containerLogs ?? []) {
    for (const p of l.patterns) parts.push(p.template, p.example);
    parts.push(...l.tail);
  }
  const spec = input.kube.workload?.spec?.template?.spec;
  for (const c of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])]) {
    parts.push(...(c.args ?? []), ...(c.command ?? []));
    for (const e of c.env ?? []) parts.push(`${e.name}=${e.value ?? ''}`);
  }
  for (const r of input.kube.related) if (r.kind === 'ConfigMap') parts.push(...(r.keys ?? []));
  return parts.join('\n');
}

/** The flag key as a whole token (a key like `new-ui` must not match inside `new-ui-v2` or `renew-ui`). */
function namesFlag(text: string, flag: string): boolean {
  if (flag.length < 3 || !text) return false;
  const escaped = flag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\w.-])${escaped}(?![\\w-]|\\.\\w)`, 'i').test(text);
}

export const flagFlip: Analyzer = {
  name: 'flag-flip',
  analyze(input: TriageInput): Finding[] {
    const t = input.kube.target;
    if (!t) return [];
    const onset = input.onset.getTime();
    const catalogFlags = new Set(input.service?.flags ?? []);
    const named = targetText(input);
    const flips = input.changes
      .filter((c) => c.kind === 'flag' && (catalogFlags.has(c.target.name) || namesFlag(named, c.target.name)))
      .filter((c) => onset - c.at.getTime() <= CHANGE_WINDOW_MS && c.at.getTime() <= onset + 2 * 60_000)
      .sort((a, b) => b.at.getTime() - a.at.getTime());
    const symptoms = targetSymptoms(input);
    const out: Finding[] = [];
    const seen = new Set<string>();
    for (const c of flips) {
      if (seen.has(c.target.name)) continue;
      seen.add(c.target.name);
      const flag = c.target.name;
      const component = { kind: 'FeatureFlag', name: flag };
      const change: Evidence = {
        kind: 'change',
        summary: `${c.summary} at ${clockTime(c.at)}`,
        citation: c.citation,
        observedAt: c.at,
        detail: { flag, before: c.before ?? null, after: c.after ?? null, actor: c.actor },
      };
      const facts: Record<string, string | number> = { flag, ...(c.before !== undefined ? { before: c.before } : {}), ...(c.after !== undefined ? { after: c.after } : {}), actor: c.actor, changedAt: c.at.toISOString() };
      const key = `flag-flip:/FeatureFlag/${flag}`;
      const flipText = `${c.before !== undefined ? `${c.before} → ` : ''}${c.after ?? 'changed'}`;
      const title = `Flag ${flag} flipped ${flipText} by ${c.actor} ${relativeToOnset(c.at, input.onset)}`;
      const timing = symptomAfter(symptoms, c.at);
      if (timing.relation === 'before' && timing.earlierMetric) {
        const m = timing.earlierMetric;
        out.push({
          key,
          analyzer: 'flag-flip',
          status: 'ruled_out',
          confidence: 0.05,
          title,
          component,
          mechanism: `Flag ${flag} (used by ${t.name}) went ${flipText} at ${clockTime(c.at)}, after the symptoms began.`,
          reason: `${metricWord(m.metric)} started at ${clockTime(m.start)}, ${humanDuration(c.at.getTime() - m.start.getTime())} BEFORE the flip`,
          facts,
          supporting: [change],
          refuting: [m.evidence],
        });
        continue;
      }
      const first = timing.metricsAfter[0];
      const corroborated = (first && (timing.delayMs ?? 0) <= CLOSE_AFTER_MS) || timing.logsAfter.length > 0;
      const to = flipBackTo(c);
      const mitigation: MitigationProposal | undefined = to
        ? {
            action: 'flip_flag',
            // The workload the flag changes: policy scope, environment and approvers follow its service.
            target: { kind: t.kind, namespace: t.namespace, name: t.name },
            params: { flag, to },
            command: `set flag ${flag} to "${to}" in the flag tool`,
            rationale: `${flag} was "${to}" before ${c.actor} flipped it, and ${t.name} served without these errors then`,
          }
        : undefined;
      const symptomText = first
        ? `; ${t.name}'s ${metricLabel(first.metric)} ${moved(first)} from ${fmtLevel(first.before, first.unit)} to ${fmtLevel(first.after, first.unit)} starting ${clockTime(first.start)}, ${humanDuration(first.start.getTime() - c.at.getTime())} later`
        : timing.logsAfter.length
          ? `; new error logs since: "${timing.logsAfter[0]!.template.slice(0, 120)}"`
          : '';
      out.push({
        key,
        analyzer: 'flag-flip',
        status: corroborated ? 'supported' : 'open',
        confidence: corroborated ? (first && timing.logsAfter.length ? 0.87 : 0.85) : 0.55,
        title,
        component,
        mechanism: `Flag ${flag}, which changes ${t.name}'s behaviour, was flipped ${flipText} by ${c.actor} at ${clockTime(c.at)}${symptomText}: the code path behind the flag fails.`,
        scope: `${t.name}'s requests that take the ${flag} path${input.kube.dependents.length ? `; callers affected: ${input.kube.dependents.map((d) => d.name).join(', ')}` : ''}`,
        affected: targetScope(input),
        facts: { ...facts, ...(first ? { metric: first.metric, ...(first.before !== null ? { metricBefore: first.before } : {}), ...(first.after !== null ? { metricAfter: first.after } : {}) } : {}) },
        supporting: [change, ...timing.metricsAfter.map((m) => m.evidence), ...timing.logsAfter.slice(0, 3).map((l) => l.evidence)],
        refuting: [],
        ...(mitigation ? { mitigation } : {}),
      });
    }
    return out;
  },
};
