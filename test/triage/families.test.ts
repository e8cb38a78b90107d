import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FAULT_FAMILIES } from '../../src/triage/families.js';
import { renderFamiliesDoc } from '../../src/triage/families-doc.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('fault families', () => {
  it('docs/fault-families.md is generated from the list (run `npm run docs:families`)', () => {
    expect(readFileSync(join(root, 'docs', 'fault-families.md'), 'utf8')).toBe(renderFamiliesDoc());
  });

  it('ids are unique kebab-case and fact keys camelCase', () => {
    const ids = FAULT_FAMILIES.map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const f of FAULT_FAMILIES) {
      expect(f.id).toMatch(/^[a-z]+(-[a-z]+)*$/);
      for (const key of Object.keys(f.facts)) expect(key).toMatch(/^[a-z][a-zA-Z]*$/);
    }
  });
});
