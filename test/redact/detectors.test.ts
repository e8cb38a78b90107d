import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/redact/index.js';
import { chars, plantAll, seededRandom } from './planted.js';

const planted = plantAll(seededRandom(7));

describe('detectors: every planted kind in a log line', () => {
  const redactor = createRedactor({ salt: 'test-salt' });

  it.each(planted.map((p) => [`${p.kind}: ${p.line.slice(0, 40)}`, p] as const))('%s', (_name, p) => {
    const out = redactor.redactText(`2024-01-15T10:00:00.123Z ERROR [checkout-7d9f8b6c5-x2x9k] ${p.line}`);
    expect(out).not.toContain(p.secret);
    for (const probe of p.probes ?? []) expect(out).not.toContain(probe);
    expect(out).toContain(`[REDACTED:${p.kind}:`);
    expect(out.startsWith('2024-01-15T10:00:00.123Z ERROR [checkout-7d9f8b6c5-x2x9k] ')).toBe(true);
  });

  it('keeps the parts around a credential that are evidence', () => {
    const r = createRedactor({ salt: 's' });
    expect(r.redactText('postgres://app:pw-9f8e7d6c@db.shop.svc:5432/orders')).toMatch(
      /^postgres:\/\/app:\[REDACTED:password:[0-9a-f]{8}\]@db\.shop\.svc:5432\/orders$/,
    );
    expect(r.redactText('Authorization: Bearer abcdef0123456789XYZ')).toMatch(/^Authorization: Bearer \[REDACTED:authorization:[0-9a-f]{8}\]$/);
    expect(r.redactText('https://hooks.slack.com/services/T0000/B0000/abcdefghijklmnop')).toMatch(
      /^https:\/\/hooks\.slack\.com\/services\/\[REDACTED:slack_webhook:[0-9a-f]{8}\]$/,
    );
    expect(r.redactText('Server=db;User Id=sa;Password=P@ss w0rd;Encrypt=true')).toMatch(
      /^Server=db;User Id=sa;Password=\[REDACTED:password:[0-9a-f]{8}\];Encrypt=true$/,
    );
  });

  it('reports kinds and offsets without the raw value', () => {
    const r = createRedactor({ salt: 's' });
    const line = planted.find((p) => p.kind === 'email');
    if (!line) throw new Error('fixture missing');
    const text = `to: ${line.secret}`;
    const found = r.findings(text);
    expect(found).toEqual([{ detector: 'email', kind: 'email', start: 4, end: 4 + line.secret.length }]);
    expect(JSON.stringify(found)).not.toContain(line.secret);
    expect(r.stats()).toEqual({});
  });

  it('counts replacements per detector', () => {
    const r = createRedactor({ salt: 's' });
    const gh = planted.find((p) => p.kind === 'github_token');
    if (!gh) throw new Error('fixture missing');
    r.redactText(`${gh.secret} and ${gh.secret}; mail ops.lead@corp-mail.com`);
    expect(r.stats()).toEqual({ github_token: 2, email: 1 });
  });

  it('honours the email allow-list (exact and domain)', () => {
    const r = createRedactor({ salt: 's', allowEmails: ['oncall@example.com', '@vigil.dev'] });
    expect(r.redactText('page oncall@example.com and bot@vigil.dev, not alice@corp.io')).toMatch(
      /^page oncall@example\.com and bot@vigil\.dev, not \[REDACTED:email:[0-9a-f]{8}\]$/,
    );
  });

  it('runs extra patterns first, with their own kind', () => {
    const r = createRedactor({ salt: 's', extraPatterns: [{ name: 'acme_key', pattern: /acme_[a-z0-9]{12}/ }] });
    expect(r.redactText('key acme_0123abcd4567 here')).toMatch(/^key \[REDACTED:acme_key:[0-9a-f]{8}\] here$/);
  });

  it('accepts only Luhn-valid card numbers', () => {
    const r = createRedactor({ salt: 's' });
    expect(r.redactText('4111 1111 1111 1111')).toMatch(/^\[REDACTED:card:/);
    expect(r.redactText('4111 1111 1111 1112')).toBe('4111 1111 1111 1112');
  });

  // Throughput is measured by `npm run bench`; this only catches a pathological (quadratic) regression.
  it('redacts a 1 MB log blob without a pathological slowdown', () => {
    const r = createRedactor({ salt: 's' });
    const gh = planted.find((p) => p.kind === 'github_token')?.secret ?? '';
    const lines = [
      '2024-01-15T10:00:00.123Z level=info msg="request done" method=GET path=/api/v1/orders status=200 duration=12.5ms pod=checkout-7d9f8b6c5-x2x9k ip=10.0.3.17',
      '{"ts":1705312800123,"level":"warn","msg":"slow query","elapsed_ms":512,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","user":"alice@example.com"}',
      'I0115 10:00:00.123456       1 controller.go:123] Reconciling deployment shop/checkout resourceVersion=48291734 image=registry.example.com/shop/checkout:1.14.2',
      `W0115 10:00:01.000000       1 client.go:88] retrying with token=${gh} after 503 Service Unavailable`,
    ];
    let blob = '';
    for (let i = 0; blob.length < 1_000_000; i++) blob += `${lines[i % lines.length]}\n`;
    r.redactText(blob.slice(0, 50_000));
    let best = Infinity;
    let out = '';
    for (let run = 0; run < 3; run++) {
      const t0 = performance.now();
      out = r.redactText(blob);
      best = Math.min(best, performance.now() - t0);
    }
    expect(out).not.toContain(gh);
    expect(best).toBeLessThan(1000);
  });

  it('stays linear on adversarial input (no catastrophic backtracking)', () => {
    const r = createRedactor({ salt: 's' });
    const inputs = [
      'a'.repeat(200_000) + '@',
      '1 '.repeat(100_000),
      'password='.repeat(20_000),
      '-----BEGIN PRIVATE KEY-----' + 'A'.repeat(200_000),
      'eyJ' + 'a'.repeat(100_000) + '.' + 'b'.repeat(100_000),
      '+1 '.repeat(50_000),
      '://' + 'a:'.repeat(100_000),
      'x.'.repeat(100_000) + '@' + 'y.'.repeat(100_000),
      // The detectors that look back from a flag or ahead from a word, and the base64 and markup passes
      // (~60 KB each: a quadratic pass would still take seconds, and the suite runs these under load).
      'mysql -p'.repeat(8_000),
      'curl -u a:'.repeat(6_000),
      'redis-cli -a '.repeat(5_000),
      'password is '.repeat(5_000),
      'the password for '.repeat(4_000),
      'aws_secret '.repeat(6_000),
      'a='.repeat(30_000),
      'ew' + 'A'.repeat(60_000),
      'ew'.repeat(30_000),
      'x%40'.repeat(15_000),
      'DE89'.repeat(15_000),
      'DE89 '.repeat(12_000),
      '123-45-'.repeat(9_000),
      'name: x\n'.repeat(8_000),
      '_a_ '.repeat(15_000),
      'sig='.repeat(15_000),
      'hvs.'.repeat(15_000),
    ];
    for (const s of inputs) {
      const t0 = performance.now();
      r.redactText(s);
      expect(performance.now() - t0).toBeLessThan(250);
    }
  });
});

describe('prefixed tokens glued to an identifier', () => {
  const redactor = createRedactor({ salt: 'glued' });
  const rng = seededRandom(41);
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const r = (n: number) => chars(rng, A, n);
  // Assembled at run time so the repository holds no literal token.
  const tokens = [
    'sk-' + 'ant-' + 'api03-' + r(40),
    'xo' + 'xb-' + '1234567890-' + r(24),
    'glp' + 'at-' + r(20),
    'h' + 'f_' + r(34),
    'np' + 'm_' + r(36),
    'AI' + 'za' + r(35),
    'hv' + 's.' + r(30),
    Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url') + '.' + Buffer.from(`{"sub":"${r(12)}"}`).toString('base64url') + '.' + r(43),
  ];
  it.each(tokens.map((t) => [t.slice(0, 6), t] as const))('%s… after TOKEN_ or tool_ is still redacted', (_p, token) => {
    for (const line of [`TOKEN_${token}`, `lookup_${token}`, `-${token}`]) expect(redactor.redactText(line), line).not.toContain(token.slice(6, 18));
  });
  it('letters right before a prefix keep it out (desk-… is not sk-…)', () => {
    expect(redactor.redactText(`desk-${r(40)}x`)).toMatch(/^desk-/);
  });
});
