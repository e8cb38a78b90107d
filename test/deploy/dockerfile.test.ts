/**
 * No Docker engine runs here, so the Dockerfile is linted, not built: the rules a reviewer (and
 * hadolint) would check, plus that every path it copies exists in the repository.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
const text = readFileSync(`${root}Dockerfile`, 'utf8');
// Instructions, with backslash continuations joined (a HEALTHCHECK's CMD is not the image's CMD).
const lines = text
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const instr = (name: string) => lines.filter((l) => l.toUpperCase().startsWith(`${name} `));

describe('Dockerfile', () => {
  it('is multi-stage on pinned Node 24 images, never :latest', () => {
    const froms = instr('FROM');
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const f of froms) {
      expect(f).toMatch(/FROM node:24[-\w.]*( AS \w+)?$/i);
      expect(f).not.toMatch(/:latest/);
    }
  });

  it('installs with npm ci from the lockfile, and copies only paths that exist', () => {
    expect(instr('RUN').some((r) => /npm ci\b/.test(r))).toBe(true);
    for (const c of instr('COPY').filter((c) => !/--from=/.test(c))) {
      const parts = c.replace(/--chown=\S+\s*/, '').split(/\s+/).slice(1, -1);
      for (const p of parts) expect(existsSync(`${root}${p}`), `COPY source ${p}`).toBe(true);
    }
  });

  it('runs as a non-root user with a health check on /livez (a database blip must not mark the container unhealthy)', () => {
    const userIdx = lines.findIndex((l) => /^USER /i.test(l));
    const cmdIdx = lines.findIndex((l) => /^CMD /i.test(l));
    expect(userIdx).toBeGreaterThan(-1);
    expect(lines[userIdx]).not.toMatch(/USER (root|0)\b/);
    expect(userIdx).toBeLessThan(cmdIdx);
    expect(text).toMatch(/HEALTHCHECK[\s\S]*\/livez/);
    expect(lines[cmdIdx]).toMatch(/^CMD \[/); // exec form: signals reach node
  });

  it('ships the bin the package declares, so `vigil doctor` runs in the image', () => {
    const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { bin?: Record<string, string> };
    for (const file of Object.values(pkg.bin ?? {})) expect(instr('COPY').some((c) => c.includes(` ${file.split('/')[0]} `) || c.includes(` ./${file.split('/')[0]}`)), `COPY of ${file}`).toBe(true);
  });
});
