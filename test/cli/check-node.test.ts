import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
const check = (node: string, env: Record<string, string> = {}) =>
  spawnSync(node, ['scripts/check-node.mjs'], { cwd: root, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });

describe('npm ci on an old Node stops with one clear message', () => {
  it('refuses Node 20 and says how to get Node 24', () => {
    const res = check(process.execPath, { VIGIL_CHECK_NODE_VERSION: '20.20.2' });
    expect(res.status).toBe(1);
    expect(res.stderr).toMatch(/Vigil needs Node >= 22\.19 .*this is Node 20\.20\.2/);
    expect(res.stderr).toMatch(/\. scripts\/node24\.sh/);
  });

  it('accepts 22.19 and the Node running the tests', () => {
    expect(check(process.execPath, { VIGIL_CHECK_NODE_VERSION: '22.19.0' }).status).toBe(0);
    expect(check(process.execPath).status).toBe(0);
  });

  // The machine's own Node (20 on this image) really fails, when there is one.
  const system = ['/usr/local/bin/node', '/usr/bin/node'].find((p) => existsSync(p) && p !== process.execPath);
  it.skipIf(!system)('the machine Node, if older, is refused for real', () => {
    const v = spawnSync(system!, ['--version'], { encoding: 'utf8' }).stdout.trim();
    const old = Number(v.slice(1).split('.')[0]) < 22;
    expect(check(system!).status).toBe(old ? 1 : 0);
  });
});
