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

describe('who claims each family', () => {
  it('names every family once, only analyzers that exist, and claims at least 80% deterministically', async () => {
    const { FAMILY_CLAIMS, FAULT_FAMILIES } = await import('../../src/triage/families.js');
    const { analyzers } = await import('../../src/triage/index.js');
    const { clusterAnalyzers } = await import('../../src/triage/cluster/index.js');
    const names = new Set([...analyzers, ...clusterAnalyzers].map((a) => a.name));
    expect(Object.keys(FAMILY_CLAIMS).sort()).toEqual(FAULT_FAMILIES.map((f) => f.id).sort());
    let claimed = 0;
    for (const [family, claim] of Object.entries(FAMILY_CLAIMS)) {
      if ('analyzers' in claim) {
        claimed += 1;
        for (const a of claim.analyzers) expect(names.has(a), `${family}: no analyzer named ${a}`).toBe(true);
      } else expect(claim.model.length, `${family}: say why it goes to the model`).toBeGreaterThan(20);
    }
    expect(claimed / FAULT_FAMILIES.length).toBeGreaterThanOrEqual(0.8);
  });
});
