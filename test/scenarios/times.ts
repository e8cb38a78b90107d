/**
 * Scenario times are written relative to the alert's onset and rendered in the form the real system
 * prints them, because real logs and payloads rarely use ISO 8601:
 *
 *   "@-5m"                → ISO (metav1.Time style)        2026-12-01T21:15:54Z
 *   "@-5m|epoch"          → a number of unix seconds        1796159754   (a YAML value becomes a number)
 *   "{{@-5m|apache}}"     → inside a longer string           01/Dec/2026:21:15:54 +0000
 *
 * Every format renders UTC. Offsets: `0`, or a sign and units `d h m s ms` (`@-1h30m`, `@+30s`).
 */

/** The formats a scenario may ask for, with what each renders for 2026-12-01T21:15:54.123Z. */
export const TIME_FORMATS = {
  /** `2026-12-01T21:15:54.123Z` (milliseconds only when not zero). */
  iso: (d: Date) => d.toISOString().replace('.000Z', 'Z'),
  /** `2026-12-01T21:15:54.123000000Z`: Go's RFC3339Nano as the kubelet and Loki print it. */
  rfc3339nano: (d: Date) => `${d.toISOString().slice(0, 19)}.${String(d.getUTCMilliseconds()).padStart(3, '0')}000000Z`,
  /** `1796159754` */
  epoch: (d: Date) => Math.floor(d.getTime() / 1000),
  /** `1796159754.123` (Python's time.time(), Prometheus' API) */
  epoch_float: (d: Date) => d.getTime() / 1000,
  /** `1796159754123` */
  epoch_ms: (d: Date) => d.getTime(),
  /** `1796159754123000000` (Loki, OpenTelemetry), as a string: it does not fit a double. */
  epoch_ns: (d: Date) => `${d.getTime()}000000`,
  /** `21:15:54` */
  clock: (d: Date) => d.toISOString().slice(11, 19),
  /** `21:15:54.123` */
  clock_ms: (d: Date) => d.toISOString().slice(11, 23),
  /** `2026-12-01` */
  date: (d: Date) => d.toISOString().slice(0, 10),
  /** `Tue, 01 Dec 2026 21:15:54 GMT` (HTTP Date, RFC 1123) */
  rfc1123: (d: Date) => d.toUTCString(),
  /** `01/Dec/2026:21:15:54 +0000` (nginx/Apache access logs) */
  apache: (d: Date) => `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${d.toISOString().slice(11, 19)} +0000`,
  /** `Dec  1 21:15:54` (syslog, RFC 3164) */
  syslog: (d: Date) => `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${d.toISOString().slice(11, 19)}`,
  /** `2026-12-01 21:15:54,123` (log4j/logback, Python logging) */
  java: (d: Date) => `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 19)},${String(d.getUTCMilliseconds()).padStart(3, '0')}`,
  /** `2026-12-01 21:15:54.123` (PostgreSQL, many frameworks) */
  sql: (d: Date) => `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 23)}`,
  /** `1201 21:15:54.123000` (klog's header after the level letter: `I1201 21:15:54.123000    1 file.go:12]`) */
  klog: (d: Date) => `${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())} ${d.toISOString().slice(11, 23)}000`,
  /** `2026/12/01 21:15:54` (Go's log package) */
  go: (d: Date) => `${d.toISOString().slice(0, 10).replace(/-/g, '/')} ${d.toISOString().slice(11, 19)}`,
  /** `Tue Dec  1 21:15:54 UTC 2026` (`date`) */
  unix: (d: Date) => `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${d.toISOString().slice(11, 19)} UTC ${d.getUTCFullYear()}`,
} satisfies Record<string, (d: Date) => string | number>;

export type TimeFormat = keyof typeof TIME_FORMATS;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const pad = (n: number) => String(n).padStart(2, '0');

const OFFSET = /^([+-])?((?:\d+(?:ms|d|h|m|s))+|0)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `-1h30m` → -5 400 000; undefined when not an offset. */
export function parseOffset(offset: string): number | undefined {
  const m = OFFSET.exec(offset);
  if (!m) return undefined;
  let ms = 0;
  for (const [, n, unit] of m[2]!.matchAll(/(\d+)(ms|d|h|m|s)/g)) ms += Number(n) * UNIT_MS[unit!]!;
  return m[1] === '-' ? -ms : ms;
}

/** metav1.Time style: whole seconds unless the time has milliseconds. */
export function formatTime(d: Date): string {
  return TIME_FORMATS.iso(d);
}

/** A whole YAML value: `@-5m` or `@-5m|epoch`. */
const WHOLE = /^@([+-]?[0-9][0-9a-z]*)(?:\|([a-z0-9_]+))?$/;
/** Inside a string: `{{@-5m}}` or `{{ @-5m | apache }}`. */
const INLINE = /\{\{\s*@([^}|\s]+)\s*(?:\|\s*([a-z0-9_]+)\s*)?\}\}/g;

export interface TimeShifter {
  /** Replaces `@offset[|format]` values and `{{@offset[|format]}}` fragments throughout a parsed YAML tree. */
  shift(node: unknown, where?: string[]): unknown;
}

export function timeShifter(onset: Date, fail: (problem: string) => never): TimeShifter {
  const render = (offset: string, format: string | undefined, where: string[]): string | number => {
    const ms = parseOffset(offset);
    const at = where.join('.') || '(root)';
    if (ms === undefined) fail(`${at}: "@${offset}" is not a time offset (use e.g. @-13s, @-5m, @+1h30m)`);
    const name = (format ?? 'iso') as TimeFormat;
    const fn = TIME_FORMATS[name];
    if (!fn) fail(`${at}: unknown time format "${format}" (one of ${Object.keys(TIME_FORMATS).join(', ')})`);
    return fn(new Date(onset.getTime() + ms!));
  };
  const shift = (node: unknown, where: string[] = []): unknown => {
    if (typeof node === 'string') {
      const whole = WHOLE.exec(node);
      if (whole) return render(whole[1]!, whole[2], where);
      return node.replace(INLINE, (_, offset: string, format: string | undefined) => String(render(offset, format, where)));
    }
    if (Array.isArray(node)) return node.map((v, i) => shift(v, [...where, String(i)]));
    if (node !== null && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, shift(v, [...where, k])]));
    return node;
  };
  return { shift };
}
