/** `14:01:58` (UTC), the way cards show times. */
export function clockTime(d: Date): string {
  return d.toISOString().slice(11, 19);
}

/** `14:01:58` near `ref`, `2026-11-27 14:01` when more than 20 h away from it (a bare clock time would read as today). */
export function timeNear(d: Date, ref: Date): string {
  return Math.abs(ref.getTime() - d.getTime()) > 20 * 3600_000 ? `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)}` : clockTime(d);
}

/** `13 s`, `5 min`, `3 h`, `3 days` — coarse, for people reading a card. */
export function humanDuration(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 90) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m} min`;
  const h = Math.round(m / 60);
  if (h < 36) return `${h} h`;
  const d = Math.round(h / 24);
  return `${d} day${d === 1 ? '' : 's'}`;
}

/** `13 s before the alert` / `2 min after the alert`. */
export function relativeToOnset(t: Date, onset: Date): string {
  const delta = t.getTime() - onset.getTime();
  return `${humanDuration(delta)} ${delta <= 0 ? 'before' : 'after'} the alert`;
}
