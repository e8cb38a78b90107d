/**
 * Small wording helpers shared by the cards. Times are rendered with Slack's `<!date>` token so each reader
 * sees their own time zone; the fallback (shown by clients that cannot format, and by our text renderer)
 * is UTC.
 */

const pad = (n: number): string => String(n).padStart(2, '0');

/** `14:02:11` in UTC. */
export function utcClock(d: Date): string {
  if (Number.isNaN(d.getTime())) return '--:--:--';
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** `14:02` in UTC. */
export function utcClockShort(d: Date): string {
  if (Number.isNaN(d.getTime())) return '--:--';
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

/**
 * A time for mrkdwn: `<!date^1700000000^{time_secs}|14:02:11 UTC>` (Slack: formatting dates, tokens
 * `{time}` = 14:02, `{time_secs}` = 14:02:11 in the reader's zone).
 */
export function slackTime(d: Date, withSeconds = true): string {
  if (Number.isNaN(d.getTime())) return 'unknown time';
  const secs = Math.floor(d.getTime() / 1000);
  const fallback = withSeconds ? utcClock(d) : utcClockShort(d);
  return `<!date^${secs}^{${withSeconds ? 'time_secs' : 'time'}}|${fallback} UTC>`;
}

/**
 * A date and time for mrkdwn, in the reader's zone: `<!date^1700000000^{date_short_pretty} {time}|2023-11-14 22:13 UTC>`
 * (Slack shows `Today 23:13`, `Yesterday …` or `Nov 14 …`).
 */
export function slackDateTime(d: Date): string {
  if (Number.isNaN(d.getTime())) return 'unknown time';
  const secs = Math.floor(d.getTime() / 1000);
  return `<!date^${secs}^{date_short_pretty} {time}|${d.toISOString().slice(0, 10)} ${utcClockShort(d)} UTC>`;
}

/** `+3 s`, `+2 min`, `+1 h 5 min`. */
export function shortDuration(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
}

/** 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st. */
export function ordinal(n: number): string {
  const mod100 = n % 100;
  const suffix = mod100 >= 11 && mod100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${suffix}`;
}

/** `high (0.92)`, `medium (0.60)`, `low (0.20)`. */
export function confidenceWords(c: number): string {
  if (!Number.isFinite(c)) return 'unknown';
  const v = Math.min(1, Math.max(0, c));
  const word = v >= 0.8 ? 'high' : v >= 0.5 ? 'medium' : 'low';
  return `${word} (${v.toFixed(2)})`;
}
