/** `npx vigil …` runs the same CLI as `npm run vigil -- …` through the package's bin. */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;

describe('bin/vigil.mjs', () => {
  it('prints the CLI usage', () => {
    const out = execFileSync(process.execPath, [`${root}bin/vigil.mjs`, 'help'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    expect(out).toMatch(/Usage: vigil <command>/);
    expect(out).toMatch(/doctor/);
  });
});
