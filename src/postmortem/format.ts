/** `1 h 4 min`, `3 min 12 s`, `45 s`. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h${m % 60 ? ` ${m % 60} min` : ''}`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** `2026-11-29 18:05:48 UTC`: postmortems are read across time zones, so always UTC. */
export function utcStamp(d: Date): string {
  return `${d.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

/** `18:05:48`. */
export function utcTime(d: Date): string {
  return d.toISOString().slice(11, 19);
}
