import { DETECTORS } from './detectors/index.js';
import { createPlaceholderFn, normaliseKind } from './placeholder.js';
import { scanText } from './scan.js';
import type { DetectContext, Detector, ExtraPattern, RedactionFinding, Redactor, RedactorOptions } from './types.js';
import { ValueWalker, type WalkDeps } from './values.js';

/** User patterns get the flags the scanner relies on (`g` for matchAll, `d` for group offsets). */
function toDetector(p: ExtraPattern | Detector): Detector {
  let flags = p.pattern.flags;
  if (!flags.includes('g')) flags += 'g';
  if (!flags.includes('d')) flags += 'd';
  const pattern = flags === p.pattern.flags ? p.pattern : new RegExp(p.pattern.source, flags);
  const kind = normaliseKind(p.kind ?? p.name);
  return { ...p, kind, pattern };
}

/** `oncall@example.com` allows that address; `@example.com` allows the whole domain. */
function emailAllowList(entries: readonly string[]): (address: string) => boolean {
  const exact = new Set<string>();
  const domains: string[] = [];
  for (const e of entries) {
    const v = e.trim().toLowerCase().replace(/^\*@/, '@');
    if (v.startsWith('@')) domains.push(v);
    else exact.add(v);
  }
  return (address) => {
    const a = address.toLowerCase();
    return exact.has(a) || domains.some((d) => a.endsWith(d));
  };
}

export function createRedactor(opts: RedactorOptions = {}): Redactor {
  const detectors: readonly Detector[] = [...(opts.extraPatterns ?? []).map(toDetector), ...DETECTORS];
  const placeholder = createPlaceholderFn(opts.salt);
  const isAllowedEmail = emailAllowList(opts.allowEmails ?? []);
  const counts = new Map<string, number>();
  const count = (name: string): void => {
    counts.set(name, (counts.get(name) ?? 0) + 1);
  };

  const findings = (s: string): RedactionFinding[] => {
    if (s.length < 6) return [];
    const ctx: DetectContext = { text: s, isAllowedEmail };
    return scanText(detectors, ctx);
  };

  const redactText = (s: string): string => {
    const found = findings(s);
    if (found.length === 0) return s;
    let out = '';
    let at = 0;
    for (const f of found) {
      out += s.slice(at, f.start) + placeholder(f.kind, s.slice(f.start, f.end));
      at = f.end;
      count(f.detector);
    }
    return out + s.slice(at);
  };

  const deps: WalkDeps = {
    redactText,
    replace: (detector, kind, raw) => {
      count(detector);
      return placeholder(kind, raw);
    },
  };

  return {
    redactText,
    findings,
    redactValue: <T>(v: T): T => new ValueWalker(deps, false).walk(v) as T,
    redactK8sObject: <T>(obj: T): T => new ValueWalker(deps, true).walk(obj) as T,
    stats: () => Object.fromEntries(counts),
  };
}
