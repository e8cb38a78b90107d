import { describe, expect, it } from 'vitest';
import { createRedactor, cutRedacted, isPlaceholder } from '../../src/redact/index.js';
import { plantAll, seededRandom } from './planted.js';

const planted = plantAll(seededRandom(99));
const text = planted.map((p) => p.line).join('\n');

describe('placeholders', () => {
  it('have the documented shape', () => {
    const out = createRedactor({ salt: 'a' }).redactText(text);
    const all = out.match(/\[REDACTED:[^\]]*\]/g) ?? [];
    expect(all.length).toBeGreaterThanOrEqual(planted.length);
    for (const p of all) expect(isPlaceholder(p)).toBe(true);
  });

  it('are stable: the same secret gets the same placeholder within a run', () => {
    const r = createRedactor({ salt: 'a' });
    const gh = planted.find((p) => p.kind === 'github_token')?.secret ?? '';
    const [a, b] = r.redactText(`first ${gh}\nsecond ${gh}`).split('\n');
    expect(a?.replace('first ', '')).toBe(b?.replace('second ', ''));
    // Across redactors sharing the process salt, too.
    expect(createRedactor().redactText(gh)).toBe(createRedactor().redactText(gh));
    // The same password seen in a URL and in a YAML line links up.
    expect(r.redactText('postgres://app:pw-Zx81Qa@db').match(/:([0-9a-f]{8})\]/)?.[1]).toBe(
      r.redactText('password: pw-Zx81Qa').match(/:([0-9a-f]{8})\]/)?.[1],
    );
  });

  it('depend on the salt, so values cannot be confirmed without it', () => {
    const gh = planted.find((p) => p.kind === 'github_token')?.secret ?? '';
    expect(createRedactor({ salt: 'a' }).redactText(gh)).not.toBe(createRedactor({ salt: 'b' }).redactText(gh));
  });

  it('are idempotent: redacting redacted text changes nothing', () => {
    const r = createRedactor({ salt: 'a' });
    const once = r.redactText(text);
    expect(r.redactText(once)).toBe(once);
    expect(r.findings(once)).toEqual([]);
    const value = r.redactValue({ env: [{ name: 'API_TOKEN', value: 'abc123XYZ' }], log: text });
    expect(r.redactValue(value)).toEqual(value);
  });
});

describe('cutRedacted', () => {
  const p = '[REDACTED:github_token:1a2b3c4d]';

  it('cuts like slice, but never through a placeholder', () => {
    expect(cutRedacted('short', 10)).toBe('short');
    expect(cutRedacted('abcdef', 3)).toBe('abc');
    expect(cutRedacted(`key ${p} tail`, 10)).toBe('key ');
    expect(cutRedacted(`key ${p} tail`, 4 + p.length)).toBe(`key ${p}`);
    expect(cutRedacted(`${p}${p}`, p.length + 5)).toBe(p);
  });
});
