/**
 * Masking of variable tokens before template mining: Drain groups lines by their constant tokens, so
 * ids, numbers and times are replaced by typed masks first (the "preprocessing with domain knowledge"
 * step of He et al. 2017, and the masking list of Drain3). Order matters: the most specific shapes first,
 * so a timestamp is not read as three numbers and a UUID not as hex fragments.
 */

/** Alphabet of Kubernetes generated name suffixes (`SafeEncodeString`): no vowels, so real words rarely match. */
const K8S_SAFE = '[bcdfghjklmnpqrstvwxz2456789]';

interface Mask {
  pattern: RegExp;
  replace: string;
}

const MASKS: readonly Mask[] = [
  // Redaction placeholders: keep the kind, drop the per-secret digest so lines with different secrets group.
  { pattern: /\[REDACTED:([a-z0-9_]{1,40}):[0-9a-f]{8}\]/g, replace: '[REDACTED:$1]' },
  { pattern: /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g, replace: '<UUID>' },
  // RFC 3339 / ISO 8601 and the common `2024-01-29 10:23:45,123` forms.
  {
    pattern: /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w:])/g,
    replace: '<TS>',
  },
  // Common Log Format `29/Jan/2024:10:23:45 +0000`.
  { pattern: /(?<=\[|\s|^)\d{1,2}\/(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\/\d{4}:\d{2}:\d{2}:\d{2}(?: [+-]\d{4})?/g, replace: '<TS>' },
  { pattern: /(?<![\w:])\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z)?(?![\w:])/g, replace: '<TS>' },
  { pattern: /(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?(?![\w.])/g, replace: '<IP>' },
  // Deployment pods `name-<rs hash>-<5>`; ReplicaSets `name-<hash>` and DaemonSet/Job pods `name-<5>` (those must carry a digit).
  // Anchored on the `-` before the hash, so the name before it is never rescanned.
  { pattern: new RegExp(`(?<=[a-z0-9])-${K8S_SAFE}{5,10}-${K8S_SAFE}{5}(?![\\w-])`, 'g'), replace: '-<POD>' },
  { pattern: new RegExp(`(?<=[a-z])-(?=${K8S_SAFE}*\\d)(?:${K8S_SAFE}{8,10}|${K8S_SAFE}{5})(?![\\w-])`, 'g'), replace: '-<POD>' },
  // Hex ids: trace ids, digests, object ids; must contain a digit so words like `deadbeef` survive.
  { pattern: /\b(?:0x)?(?=[a-fA-F]*\d)(?=\d*[a-fA-F])[0-9a-fA-F]{8,}\b/g, replace: '<HEX>' },
  { pattern: /(?<![\w.])(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h)){1,4}(?![\w])/g, replace: '<DURATION>' },
  { pattern: /(?<![\w.])\d+(?:\.\d+)?(?:[KMGTP]i?B?|B|bytes)(?![\w])/g, replace: '<SIZE>' },
  { pattern: /(?<![A-Za-z0-9_])[-+]?\d+(?:\.\d+)*(?![A-Za-z0-9_])/g, replace: '<NUM>' },
];

const QUOTED: Mask = { pattern: /"(?:[^"\\]|\\.)*"/g, replace: '"<STR>"' };

/** Replace variable tokens by typed masks: `<UUID> <TS> <IP> <POD> <HEX> <DURATION> <SIZE> <NUM>` (and `<STR>` when asked). */
export function maskVariables(text: string, opts: { maskQuoted?: boolean } = {}): string {
  let out = opts.maskQuoted ? text.replace(QUOTED.pattern, QUOTED.replace) : text;
  for (const m of MASKS) out = out.replace(m.pattern, m.replace);
  return out;
}

/** A token the parse tree must not branch on: a mask, a wildcard, or anything with a digit (Drain's rule). */
export function isVariableToken(token: string): boolean {
  return token.includes('<') || /\d/.test(token);
}
