import { describe, expect, it } from 'vitest';
import { mineTemplates } from '../../../src/evidence/logs/drain.js';
import { maskVariables } from '../../../src/evidence/logs/mask.js';
import { detectLevel, prepareLine } from '../../../src/evidence/logs/preprocess.js';
import { OTHER_TEMPLATE, type LogLine } from '../../../src/evidence/logs/types.js';
import { generateStream, SHAPES, shapeOf } from './generate.js';

const FROM = new Date('2024-01-29T10:00:00Z');
const TO = new Date('2024-01-29T10:35:00Z');
const plain = (...lines: string[]): LogLine[] => lines.map((line) => ({ line }));

describe('mineTemplates on a realistic mixed stream', () => {
  const stream = generateStream(10_000, 7, FROM, TO);
  const patterns = mineTemplates(stream.lines);

  it('collapses 10,000 lines of eight shapes into exactly those eight templates', () => {
    expect(patterns).toHaveLength(SHAPES.length);
    const shapes = patterns.map((p) => shapeOf(p.example));
    expect(new Set(shapes).size).toBe(SHAPES.length);
    expect(shapes).not.toContain(-1);
  });

  it('counts every line of a shape in its template', () => {
    for (const p of patterns) expect(p.count).toBe(stream.counts[shapeOf(p.example)]);
    expect(patterns.reduce((s, p) => s + p.count, 0)).toBe(10_000);
  });

  it('produces readable templates with typed masks and keyed wildcards', () => {
    const byShape = new Map(patterns.map((p) => [SHAPES[shapeOf(p.example)]?.name, p]));
    expect(byShape.get('request handled')?.template).toBe(
      'ts=<TS> level=info msg="request handled" method=GET path=/api/orders/<NUM> status=<NUM> duration=<DURATION> trace_id=<*>',
    );
    expect(byShape.get('cache miss')?.template).toBe('ts=<TS> level=debug msg="cache miss" key=<*>');
    expect(byShape.get('upstream failed')?.template).toBe(
      'ts=<TS> level=error msg="upstream request failed" upstream=payments addr=<IP> err="context deadline exceeded" attempt=<NUM>',
    );
    expect(byShape.get('order placed')?.template).toBe('order placed');
    expect(byShape.get('payment declined')?.template).toBe('payment declined error: card_declined');
    expect(byShape.get('probe failed')?.template).toBe('prober.go:<NUM>] pod <*> readiness probe failed: HTTP probe failed with statuscode: <NUM>');
    expect(byShape.get('redis connected')?.template).toBe('<TS> INFO Connected to redis at <IP> in <DURATION> (pool=<NUM>)');
  });

  it('detects each shape’s level', () => {
    const levels = Object.fromEntries(patterns.map((p) => [SHAPES[shapeOf(p.example)]?.name, p.level]));
    expect(levels).toEqual({
      'request handled': 'info',
      'cache miss': 'debug',
      'slow query': 'warn',
      'upstream failed': 'error',
      'order placed': 'info',
      'payment declined': 'error',
      'probe failed': 'warn',
      'redis connected': 'info',
    });
  });

  it('sorts error patterns first, then by count', () => {
    const errors = patterns.filter((p) => p.level === 'error');
    expect(patterns.slice(0, errors.length)).toEqual(errors);
    const rest = patterns.slice(errors.length).map((p) => p.count);
    expect(rest).toEqual([...rest].sort((a, b) => b - a));
    expect(errors[0]!.count).toBeGreaterThanOrEqual(errors[1]!.count);
  });

  it('keeps first and last timestamps inside the window', () => {
    for (const p of patterns) {
      expect(p.first!.getTime()).toBeGreaterThanOrEqual(FROM.getTime());
      expect(p.last!.getTime()).toBeLessThan(TO.getTime());
      expect(p.first!.getTime()).toBeLessThanOrEqual(p.last!.getTime());
    }
  });

  // Throughput is measured by `npm run bench`; this only catches a pathological (quadratic) regression.
  it('mines 10,000 lines without a pathological slowdown', () => {
    mineTemplates(stream.lines); // warm the JIT
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      mineTemplates(stream.lines);
      best = Math.min(best, performance.now() - t);
    }
    expect(best).toBeLessThan(2000);
  });
});

describe('masking', () => {
  it.each([
    ['GET /api/orders/12345 took 35ms from 10.1.2.3:51234', 'GET /api/orders/<NUM> took <DURATION> from <IP>'],
    ['request 3f2b6c1e-9a4d-4e1b-8c2f-1234567890ab failed', 'request <UUID> failed'],
    ['2024-01-29T10:23:45.123Z started', '<TS> started'],
    ['2024-01-29 10:23:45,123 started', '<TS> started'],
    ['127.0.0.1 - - [29/Jan/2024:10:23:45 +0000] "GET / HTTP/1.1" 200 512', '<IP> - - [<TS>] "GET / HTTP/<NUM>" <NUM> <NUM>'],
    ['pod checkout-7d9f8b6c5d-x2x7k restarted', 'pod checkout-<POD> restarted'],
    ['replicaset checkout-7d9f8b6c5d scaled; daemon fluent-bit-7x2kq ready', 'replicaset checkout-<POD> scaled; daemon fluent-bit-<POD> ready'],
    ['commit 9fceb02d0ae598e95dc970b74767f19372d61af8 deployed', 'commit <HEX> deployed'],
    ['retry in 1m30s (backoff 2.5s), heap 512MiB', 'retry in <DURATION> (backoff <DURATION>), heap <SIZE>'],
    ['user=[REDACTED:email:6dfba9ff] key=[REDACTED:aws_access_key:a6ff44c5]', 'user=[REDACTED:email] key=[REDACTED:aws_access_key]'],
  ])('%s', (input, expected) => {
    expect(maskVariables(input)).toBe(expected);
  });

  it('keeps words and versioned names', () => {
    expect(maskVariables('checkout-service v2 api deadbeef ok')).toBe('checkout-service v2 api deadbeef ok');
  });

  it('masks quoted strings only when asked', () => {
    expect(maskVariables('user "bob" not found')).toBe('user "bob" not found');
    expect(maskVariables('user "bob" not found', { maskQuoted: true })).toBe('user "<STR>" not found');
  });
});

describe('levels', () => {
  it.each([
    ['ts=1 level=error msg=x', 'error'],
    ['ts=1 level="WARNING" msg=x', 'warn'],
    ['lvl=dbug msg=x', 'debug'],
    ['E0129 10:23:45.123456       1 reflector.go:138] failed to list', 'error'],
    ['W0129 10:23:45.123456       1 warnings.go:70] deprecated', 'warn'],
    ['I0129 10:23:45.123456       1 leaderelection.go:248] acquired', 'info'],
    ['2024-01-29 10:23:45 ERROR [main] Boom', 'error'],
    ['2024/01/29 10:23:45 [error] 31#31: *1 connect() failed', 'error'],
    ['2024-01-29T10:23:45Z WARN disk almost full', 'warn'],
    ['DEBUG cache warmed', 'debug'],
    ['panic: runtime error: invalid memory address', 'error'],
    ['server listening on :8080', undefined],
  ])('%s → %s', (line, level) => {
    expect(detectLevel(line)).toBe(level);
  });

  it('reads JSON levels by name and pino number, and templates on the message', () => {
    expect(prepareLine('{"level":"warn","msg":"slow","ms":1200}')).toEqual({ text: 'slow', level: 'warn' });
    expect(prepareLine('{"level":50,"time":1,"msg":"db down","err":"ECONNREFUSED 10.0.0.5:5432"}')).toEqual({
      text: 'db down error: ECONNREFUSED 10.0.0.5:5432',
      level: 'error',
    });
    expect(prepareLine('{"severity":"INFO","message":"started"}')).toEqual({ text: 'started', level: 'info' });
    expect(prepareLine('{"not":"a log"}')).toEqual({ text: '{"not":"a log"}', level: undefined });
    expect(prepareLine('{broken json level=error')).toEqual({ text: '{broken json level=error', level: 'error' });
  });
});

describe('mineTemplates behaviour', () => {
  it('merges a varying word into <*> and keeps levels apart', () => {
    const patterns = mineTemplates(
      plain(
        'level=info msg=started worker alpha',
        'level=info msg=started worker beta',
        'level=info msg=started worker gamma',
        'level=error msg=started worker gamma',
      ),
    );
    expect(patterns.map((p) => [p.level, p.template, p.count])).toEqual([
      ['error', 'level=error msg=started worker gamma', 1],
      ['info', 'level=info msg=started worker <*>', 3],
    ]);
  });

  it('separates lines that share little', () => {
    const patterns = mineTemplates(plain('connection refused by upstream', 'cache warmed in memory', 'connection refused by upstream'));
    expect(patterns.map((p) => [p.template, p.count])).toEqual([
      ['connection refused by upstream', 2],
      ['cache warmed in memory', 1],
    ]);
  });

  it('folds everything past maxPatterns into one "other" entry with its count', () => {
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
    const lines: LogLine[] = [];
    for (let i = 0; i < 100; i++) {
      const shape = `${words[i % 10]} ${words[Math.floor(i / 10)]} happened`;
      for (let k = 0; k <= i % 7; k++) lines.push({ line: shape, ts: new Date(Date.UTC(2024, 0, 1, 0, i, k)) });
    }
    const patterns = mineTemplates(lines, { maxPatterns: 40, similarity: 0.9 });
    expect(patterns).toHaveLength(40);
    const other = patterns[39]!;
    expect(other.template).toBe(OTHER_TEMPLATE);
    expect(patterns.reduce((s, p) => s + p.count, 0)).toBe(lines.length);
    expect(other.count).toBe(lines.length - patterns.slice(0, 39).reduce((s, p) => s + p.count, 0));
    expect(other.first).toBeInstanceOf(Date);
  });

  it('shortens examples and templates to exampleLength', () => {
    const long = `ERROR ${'x'.repeat(1000)}`;
    const [p] = mineTemplates(plain(long), { exampleLength: 50 });
    expect(p!.example).toHaveLength(50);
    expect(p!.template.length).toBeLessThanOrEqual(50);
    expect(p!.level).toBe('error');
  });

  it('skips blank lines and returns nothing for nothing', () => {
    expect(mineTemplates([])).toEqual([]);
    expect(mineTemplates(plain('', '   '))).toEqual([]);
  });
});
