/** `14:01:58` (UTC), the way cards show times. */
export function clockTime(d: Date): string {
  return d.toISOString().slice(11, 19);
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
