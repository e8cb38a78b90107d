/**
 * Policy durations are written as strings: `45s`, `30m`, `1h`, `1h30m`, `2d` (units in descending
 * order, each at most once). They are compared as milliseconds and shown to responders as `30 min`.
 */
const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 } as const;

/** Milliseconds, or undefined when the text is not a duration. `0m` parses to 0; callers decide if that is allowed. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  if (!m || text.trim() === '') return undefined;
  const [, d, h, min, s] = m;
  return Number(d ?? 0) * UNIT_MS.d + Number(h ?? 0) * UNIT_MS.h + Number(min ?? 0) * UNIT_MS.m + Number(s ?? 0) * UNIT_MS.s;
}

/** For sentences on cards: `30 min`, `1 h`, `1 h 30 min`, `2 d`, `45 s`. */
export function formatDuration(ms: number): string {
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(ms / 1000)) * 1000;
  for (const [unit, label] of [['d', 'd'], ['h', 'h'], ['m', 'min'], ['s', 's']] as const) {
    const n = Math.floor(rest / UNIT_MS[unit]);
    if (n > 0) parts.push(`${n} ${label}`);
    rest -= n * UNIT_MS[unit];
  }
  return parts.length ? parts.join(' ') : '0 s';
}
