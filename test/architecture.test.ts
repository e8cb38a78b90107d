/** Product code stands alone: nothing under src/ imports the tests, fakes or scenario fixtures. */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('src/ never imports test/', () => {
  it('has no import or dynamic import of a path under test/', () => {
    const offenders = files(join(root, 'src')).filter((f) => /(?:from\s+|import\()\s*['"](?:\.\.\/)+test\//.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => f.slice(root.length + 1))).toEqual([]);
  });
});
