/**
 * A seeded, realistic mixed log stream for mining tests: eight message shapes (logfmt, JSON, klog,
 * plain text) over a few hundred distinct ids, latencies, addresses and pod names.
 */
import type { LogLine } from '../../../src/evidence/logs/types.js';

/** mulberry32: tiny, fast, good enough to make test data reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Shape {
  name: string;
  weight: number;
  /** Recognises a generated line of this shape (used to attribute mined patterns back to shapes). */
  matches: RegExp;
  make(r: Rng, ts: Date): string;
}

export interface Rng {
  int(max: number): number;
  pick<T>(xs: readonly T[]): T;
  hex(n: number): string;
}

function rng(seed: number): Rng {
  const next = seededRandom(seed);
  return {
    int: (max) => Math.floor(next() * max),
    pick: (xs) => xs[Math.floor(next() * xs.length)] as (typeof xs)[number],
    hex: (n) => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(next() * 16)]).join(''),
  };
}

const PRODUCTS = ['blue-widget', 'red-gadget', 'green-sprocket', 'tiny-lamp', 'large-desk', 'soft-chair', 'oak-table', 'steel-mug', 'paper-cup', 'glass-vase', 'wool-hat', 'silk-scarf'];
const PODS = ['checkout-7d9f8b6c5d-x2x7k', 'checkout-7d9f8b6c5d-qz4vn', 'checkout-5c8d7f9b4-mm2lp', 'payments-6b7c8d9f5-tt5wz'];
const uuid = (r: Rng): string => `${r.hex(8)}-${r.hex(4)}-4${r.hex(3)}-a${r.hex(3)}-${r.hex(12)}`;
const klogTs = (ts: Date): string => `${String(ts.getUTCMonth() + 1).padStart(2, '0')}${String(ts.getUTCDate()).padStart(2, '0')} ${ts.toISOString().slice(11, 23)}000`;

export const SHAPES: readonly Shape[] = [
  {
    name: 'request handled',
    weight: 40,
    matches: /msg="request handled"/,
    make: (r, ts) => `ts=${ts.toISOString()} level=info msg="request handled" method=GET path=/api/orders/${10000 + r.int(400)} status=200 duration=${1 + r.int(300)}ms trace_id=${r.hex(16)}`,
  },
  {
    name: 'cache miss',
    weight: 15,
    matches: /msg="cache miss"/,
    make: (r, ts) => `ts=${ts.toISOString()} level=debug msg="cache miss" key=product:${r.pick(PRODUCTS)}`,
  },
  {
    name: 'slow query',
    weight: 8,
    matches: /msg="slow query"/,
    make: (r, ts) => `ts=${ts.toISOString()} level=warn msg="slow query" table=orders rows=${r.int(5000)} elapsed=${(1 + r.int(900) / 100).toFixed(2)}s`,
  },
  {
    name: 'upstream failed',
    weight: 6,
    matches: /upstream request failed/,
    make: (r, ts) => `ts=${ts.toISOString()} level=error msg="upstream request failed" upstream=payments addr=10.0.${r.int(8)}.${r.int(250)}:8443 err="context deadline exceeded" attempt=${1 + r.int(3)}`,
  },
  {
    name: 'order placed',
    weight: 15,
    matches: /"order placed"/,
    make: (r, ts) => JSON.stringify({ level: 'info', ts: ts.toISOString(), msg: 'order placed', order_id: uuid(r), amount: r.int(50000) / 100 }),
  },
  {
    name: 'payment declined',
    weight: 5,
    matches: /"payment declined"/,
    make: (r, ts) => JSON.stringify({ level: 'error', time: ts.getTime(), msg: 'payment declined', error: 'card_declined', user: `u${r.int(300)}` }),
  },
  {
    name: 'probe failed',
    weight: 4,
    matches: /readiness probe failed/,
    make: (r, ts) => `W${klogTs(ts)}       1 prober.go:${100 + r.int(3)}] pod ${r.pick(PODS)} readiness probe failed: HTTP probe failed with statuscode: 503`,
  },
  {
    name: 'redis connected',
    weight: 7,
    matches: /Connected to redis/,
    make: (r, ts) => `${ts.toISOString()} INFO Connected to redis at 10.0.3.${r.int(250)}:6379 in ${r.int(40)}ms (pool=${1 + r.int(16)})`,
  },
];

export interface GeneratedStream {
  lines: LogLine[];
  /** Lines generated per shape, indexed like SHAPES. */
  counts: number[];
}

/** `n` lines spread evenly over [from, to), shapes drawn by weight. */
export function generateStream(n: number, seed: number, from: Date, to: Date, shapes: readonly Shape[] = SHAPES): GeneratedStream {
  const r = rng(seed);
  const total = shapes.reduce((s, x) => s + x.weight, 0);
  const counts = shapes.map(() => 0);
  const lines: LogLine[] = [];
  const span = to.getTime() - from.getTime();
  for (let i = 0; i < n; i++) {
    const ts = new Date(from.getTime() + Math.floor((i * span) / n));
    let w = r.int(total);
    let k = 0;
    while (k < shapes.length - 1 && w >= (shapes[k]?.weight ?? 0)) w -= shapes[k++]?.weight ?? 0;
    counts[k] = (counts[k] ?? 0) + 1;
    lines.push({ ts, line: (shapes[k] as Shape).make(r, ts) });
  }
  return { lines, counts };
}

/** Which shape produced a line (by its recognising regex), or -1. */
export function shapeOf(line: string, shapes: readonly Shape[] = SHAPES): number {
  return shapes.findIndex((s) => s.matches.test(line));
}
