import { DETECTORS } from './detectors/index.js';
import { createPlaceholderFn, normaliseKind } from './placeholder.js';
import { mergeFindings, scanText, withoutMarkupUnderscores } from './scan.js';
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
    const found = scanText(detectors, ctx);
    // Text from chat may wrap a secret in markup (`_ghp_…_`): scan it again with the markup blanked, and
    // add what only that reading finds. The text as written wins where the two overlap.
    const plain = withoutMarkupUnderscores(s);
    return plain === s ? found : mergeFindings(found, scanText(detectors, { text: plain, isAllowedEmail }));
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

  const redactLines = (lines: readonly string[]): string[] => {
    const out: string[] = [];
    /** Lines before this index are already part of a masked key. */
    let free = 0;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const begins = PEM_BEGIN.test(line);
      const ends = PEM_END.test(line);
      if (begins && !ends) {
        // The BEGIN line is its own redaction; the lines after it are the key.
        const block = privateKeyBlock(lines, i);
        out.push(redactText(line));
        if (block > 0) out.push(...Array<string>(block).fill(maskKey(lines.slice(i, i + block + 1))));
        i += block;
        free = i + 1;
      } else if (ends && !begins) {
        // The log starts inside a key (a tail cut it): the END line and the body lines before it.
        let start = i;
        while (start > free && i - start < MAX_PEM_LINES && PEM_BODY_LINE.test(lines[start - 1]!)) start--;
        const masked = maskKey(lines.slice(start, i + 1));
        out.splice(start, i - start, ...Array<string>(i - start).fill(masked));
        out.push(masked);
        free = i + 1;
      } else {
        out.push(redactText(line));
      }
    }
    return out;
  };
  const maskKey = (block: readonly string[]): string => {
    count('pem_private_key');
    return placeholder('private_key', block.join('\n'));
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
    redactLines,
    findings,
    redactValue: <T>(v: T): T => new ValueWalker(deps, false).walk(v) as T,
    redactK8sObject: <T>(obj: T): T => new ValueWalker(deps, true).walk(obj) as T,
    stats: () => Object.fromEntries(counts),
  };
}

const PEM_BEGIN = /-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/;
const PEM_END = /-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/;
/** A 4096-bit RSA key is ~50 lines of base64; more than this without END is not one key. */
const MAX_PEM_LINES = 120;
/** A key body line: base64 at the end of the line, after whatever prefix the logger wrote. */
const PEM_BODY_LINE = /(?:^|[\s|:])[A-Za-z0-9+/]{16,}={0,2}\s*$/;

/**
 * How many lines after `lines[begin]` (a BEGIN line) belong to the key: up to and including its END
 * line; without an END within reach (a cut log), the run of base64 lines that follows.
 */
function privateKeyBlock(lines: readonly string[], begin: number): number {
  const last = Math.min(lines.length - 1, begin + MAX_PEM_LINES);
  for (let j = begin + 1; j <= last; j++) if (PEM_END.test(lines[j]!)) return j - begin;
  let n = 0;
  while (begin + n + 1 < lines.length && n < MAX_PEM_LINES && PEM_BODY_LINE.test(lines[begin + n + 1]!)) n++;
  return n;
}
