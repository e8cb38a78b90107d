/**
 * A real Prometheus (Debian's `prometheus`, 2.42) for tests, loaded with scenario series so the PromQL Vigil
 * writes is really evaluated.
 *
 * How: the series are written as OpenMetrics text, `promtool tsdb create-blocks-from openmetrics` turns them
 * into TSDB blocks, and `prometheus` serves that directory on 127.0.0.1 (no scrape targets: `global: {}`).
 * Facts this relies on (checked with 2.42): promtool silently drops samples that are out of time order within a
 * series, so every series is sorted; data must be inside the retention window and not in the future (the
 * server's clock is the real one), so build series around `onset = now - a few minutes`.
 *
 * CI must install the binaries (`apt-get install -y prometheus`, which provides both). When they are missing,
 * `prometheusSkipReason()` throws under `CI` and otherwise returns a reason for a visible skip.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseOffset } from '../scenarios/load.js';

export const PROMETHEUS_BINARY = process.env.VIGIL_PROMETHEUS_BIN ?? '/usr/bin/prometheus';
export const PROMTOOL_BINARY = process.env.VIGIL_PROMTOOL_BIN ?? '/usr/bin/promtool';
const RETENTION_MS = 30 * 86_400_000;

/** Why the live Prometheus tests cannot run here, or undefined when they can. Throws under CI instead of skipping. */
export function prometheusSkipReason(): string | undefined {
  const missing = [PROMETHEUS_BINARY, PROMTOOL_BINARY].filter((bin) => !existsSync(bin));
  if (missing.length === 0) return undefined;
  const reason = `Prometheus binaries not found (${missing.join(', ')}); install them with: apt-get install -y prometheus`;
  if (process.env.CI) throw new Error(`${reason} (CI must not skip the live Prometheus tests)`);
  return reason;
}

export interface SeriesPoint {
  t: Date;
  v: number;
}

export interface PromSeries {
  metric: string;
  labels: Record<string, string>;
  points: SeriesPoint[];
  /** Written as `# TYPE`; counters must be named `<family>_total`. Untyped when absent (fine for `_bucket`s). */
  type?: 'counter' | 'gauge';
}

export interface PrometheusOptions {
  series?: PromSeries[];
  /** Ready-made OpenMetrics text (ending with `# EOF`), loaded instead of `series`. */
  openMetrics?: string;
  /** The run's clock; every sample must be at or before it and inside the 30-day retention. Default: now. */
  now?: Date;
}

export interface RunningPrometheus {
  url: string;
  /** Milliseconds spent building blocks and waiting for `/-/ready`. */
  startupMs: number;
  stop(): Promise<void>;
}

function labelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** OpenMetrics text: series grouped by metric family, samples sorted by time, timestamps in unix seconds. */
export function toOpenMetrics(input: PromSeries[]): string {
  // One series per metric and label set: a scenario may write the same series in two pieces (a series
  // and raw samples), and promtool refuses a series whose samples are not in one time-ordered run.
  const merged = new Map<string, PromSeries>();
  for (const s of input) {
    const id = `${s.metric}{${Object.entries(s.labels).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
    const prev = merged.get(id);
    if (!prev) merged.set(id, { ...s, points: [...s.points] });
    else {
      const byTime = new Map(prev.points.map((p) => [p.t.getTime(), p]));
      for (const p of s.points) byTime.set(p.t.getTime(), p); // the later piece wins at a shared timestamp
      merged.set(id, { ...prev, type: prev.type ?? s.type, points: [...byTime.values()] });
    }
  }
  const series = [...merged.values()];
  const byMetric = new Map<string, PromSeries[]>();
  for (const s of series) byMetric.set(s.metric, [...(byMetric.get(s.metric) ?? []), s]);
  const lines: string[] = [];
  for (const [metric, group] of byMetric) {
    const type = group.find((s) => s.type)?.type;
    if (type === 'counter' && metric.endsWith('_total')) lines.push(`# TYPE ${metric.slice(0, -'_total'.length)} counter`);
    else if (type === 'gauge') lines.push(`# TYPE ${metric} gauge`);
    for (const s of group) {
      const labels = Object.entries(s.labels)
        .map(([k, v]) => `${k}="${labelValue(v)}"`)
        .join(',');
      const name = labels ? `${metric}{${labels}}` : metric;
      for (const p of [...s.points].sort((a, b) => a.t.getTime() - b.t.getTime())) {
        lines.push(`${name} ${formatValue(p.v)} ${(p.t.getTime() / 1000).toFixed(3)}`);
      }
    }
  }
  lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}

/** Scenario shorthand for one series. Times are offsets from the onset: `@-2h`, `@0`, `@+5m` (or without `@`). */
export interface SeriesSpec {
  metric: string;
  labels: Record<string, string>;
  type: 'counter' | 'gauge';
  from: string;
  to: string;
  /** Sample interval, e.g. `15s`. */
  step: string;
  /**
   * Consecutive pieces: each applies until its `until` (exclusive; the last one also past it, up to `to`).
   * Counters take `rate` (per second; values accumulate), gauges take `value`.
   */
  segments: { until: string; rate?: number; value?: number }[];
  /** Counter start value; default 0. */
  start?: number;
  /** Relative jitter on each rate or level, e.g. 0.2 for ±20%, deterministic per series. */
  noise?: number;
}

function offsetMs(offset: string, field: string): number {
  const ms = parseOffset(offset.startsWith('@') ? offset.slice(1) : offset);
  if (ms === undefined) throw new Error(`${field}: "${offset}" is not a time offset (use e.g. @-2h, @0, @+5m)`);
  return ms;
}

/** Builds the samples a scrape every `step` would have stored for the shorthand. */
export function buildSeries(spec: SeriesSpec, onset: Date): PromSeries {
  const from = onset.getTime() + offsetMs(spec.from, 'from');
  const to = onset.getTime() + offsetMs(spec.to, 'to');
  const step = offsetMs(spec.step, 'step');
  if (step <= 0) throw new Error(`step must be positive, got ${spec.step}`);
  if (spec.segments.length === 0) throw new Error(`${spec.metric}: at least one segment is needed`);
  const segments = spec.segments.map((s, i) => {
    const amount = spec.type === 'counter' ? s.rate : s.value;
    if (amount === undefined) throw new Error(`${spec.metric} segment ${i}: a ${spec.type} segment needs ${spec.type === 'counter' ? 'rate' : 'value'}`);
    return { until: onset.getTime() + offsetMs(s.until, `segments[${i}].until`), amount };
  });
  const at = (t: number): number => (segments.find((s) => t < s.until) ?? segments[segments.length - 1]!).amount;
  // One histogram's buckets (and its _count, _sum) share their noise: a request counted in le=0.1 is in
  // every larger bucket too, so real buckets never cross. Independent jitter per bucket would make
  // le="10" smaller than le="+Inf" and push p99 into the +Inf bucket, a latency no real server showed.
  const { le: _le, ...family } = spec.labels;
  void _le;
  const jitter = random(JSON.stringify(/_(bucket|count|sum)$/.test(spec.metric) ? [spec.metric.replace(/_(bucket|count|sum)$/, ''), family] : [spec.metric, spec.labels]));
  const noisy = (x: number): number => (spec.noise ? x * (1 + spec.noise * jitter()) : x);

  const points: SeriesPoint[] = [];
  let value = spec.start ?? 0;
  for (let t = from; t <= to; t += step) {
    // A counter's sample at t holds what accumulated over (t - step, t], at the rate of the segment that interval starts in.
    if (spec.type === 'counter') {
      if (t > from) value += Math.max(0, noisy(at(t - step))) * (step / 1000);
      points.push({ t: new Date(t), v: value });
    } else {
      points.push({ t: new Date(t), v: noisy(at(t)) });
    }
  }
  return { metric: spec.metric, labels: spec.labels, type: spec.type, points };
}

/** mulberry32 seeded from a string: values in [-1, 1). */
function random(seedText: string): () => number {
  let a = 0;
  for (const ch of seedText) a = (Math.imul(a, 31) + ch.charCodeAt(0)) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  };
}

export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  const skip = prometheusSkipReason();
  if (skip) throw new Error(skip);
  const started = Date.now();
  const now = options.now ?? new Date();
  for (const s of options.series ?? []) {
    for (const p of s.points) {
      if (p.t.getTime() > now.getTime()) throw new Error(`${s.metric}: sample at ${p.t.toISOString()} is after now (${now.toISOString()}); shift the onset back`);
      if (p.t.getTime() < now.getTime() - RETENTION_MS) throw new Error(`${s.metric}: sample at ${p.t.toISOString()} is outside the 30-day retention`);
    }
  }
  const text = options.openMetrics ?? toOpenMetrics(options.series ?? []);

  const dir = await mkdtemp(join(tmpdir(), 'vigil-prometheus-'));
  const tsdb = join(dir, 'tsdb');
  const configFile = join(dir, 'prometheus.yml');
  try {
    await writeFile(join(dir, 'data.om'), text);
    await writeFile(configFile, 'global: {}\n');
    await promisify(execFile)(PROMTOOL_BINARY, ['tsdb', 'create-blocks-from', 'openmetrics', join(dir, 'data.om'), tsdb]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    // promtool says what is wrong (the line, a sample out of order) on stderr only.
    const e = error as { stderr?: unknown; stdout?: unknown };
    const stderr = `${String(e.stderr ?? '')}\n${String(e.stdout ?? '')}`.trim().split('\n').filter(Boolean).slice(-3).join(' | ');
    throw new Error(`promtool could not load the series: ${error instanceof Error ? error.message : String(error)}${stderr ? `: ${stderr}` : ''}`);
  }

  const port = await freeLoopbackPort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    PROMETHEUS_BINARY,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${tsdb}`,
      '--storage.tsdb.retention.time=30d',
      `--web.listen-address=127.0.0.1:${port}`,
      `--web.external-url=${url}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`Prometheus exited with code ${child.exitCode}: ${stderr}`);
      if (Date.now() > deadline) throw new Error(`Prometheus was not ready within 20s: ${stderr}`);
      const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
      if (ready) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, startupMs: Date.now() - started, stop };
}

async function freeLoopbackPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not allocate a loopback port');
  return address.port;
}
