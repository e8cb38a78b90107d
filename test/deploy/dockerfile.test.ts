/**
 * No Docker engine runs here, so the Dockerfile is linted, not built: dockerfile-utils' validator (the
 * offline linter of the Docker language server: syntax, flags, JSON forms, one CMD/HEALTHCHECK per
 * stage…), then the rules a reviewer (and hadolint) would check, and that the runtime stage ships every
 * path the entry points read from the package root. dist-build.test.ts then runs that layout.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { validate } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { args, copies, dockerfile, dockerfileText, landing, root, stages, type Stage } from './image.js';

const all = stages();
const runtime = all.at(-1)!;
const build = all.find((s) => s.name === 'build')!;
const keyword = (s: Stage, k: string) => s.instructions.filter((i) => i.getKeyword() === k);
const text = (s: Stage, k: string) => keyword(s, k).map((i) => args(i).join(' '));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };

/** What the runtime stage puts under /app (top-level names). */
const shipped = new Set(copies(runtime, all).flatMap((c) => c.sources.map((s) => posix.relative('/app', landing(c, s)).split('/')[0]!)));

// .dockerignore patterns, matched as Docker does: from the context root, `*` within a name, `**` then a slash
// for any depth; a match covers everything below it.
const ignored = readFileSync(join(root, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
function globToRegExp(p: string): RegExp {
  let re = '';
  for (let i = 0; i < p.length; i++) {
    if (p.startsWith('**/', i)) {
      re += '(?:.*/)?';
      i += 2;
    } else if (p[i] === '*') re += '[^/]*';
    else re += '.+?^$(){}|[]\\'.includes(p[i]!) ? `\\${p[i]}` : p[i];
  }
  return new RegExp(`^${re}(?:/.*)?$`);
}
const isIgnored = (path: string) => ignored.some((p) => globToRegExp(p).test(path));

describe('Dockerfile', () => {
  it('passes the offline Dockerfile linter (which does catch a broken one)', () => {
    expect(validate(dockerfileText).map((d) => `line ${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
    const broken = validate('FROM node:24-bookworm-slim\nCMD ["node", dist/main.js"]\nCMD node\nHEALTHCHECK --interval=x CMD true\nEXPOSE port\n');
    expect(broken.length).toBeGreaterThanOrEqual(3);
  });

  it('is multi-stage on the official Node 24 bookworm images, by tag or digest, never latest', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    for (const { from } of all) {
      expect(from.getImageName()).toBe('node');
      expect(from.getImageTag()).toMatch(/^24(\.\d+){0,2}-bookworm(-slim)?$/);
      const digest = from.getImageDigest();
      if (digest !== null) expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(args(from)[0]).not.toMatch(/latest/);
    }
    expect(runtime.from.getImageTag()).toMatch(/-slim$/);
  });

  it('builds the TypeScript once in the build stage, from the lockfile, and keeps production dependencies only', () => {
    const runs = text(build, 'RUN').join(' && ');
    expect(runs).toMatch(/\bnpm ci\b/);
    expect(runs).toMatch(/\bnpm run build\b/);
    expect(runs).toMatch(/\bnpm prune --omit=dev\b/);
    expect(runs.indexOf('npm run build')).toBeLessThan(runs.indexOf('npm prune'));
    expect(pkg.scripts['build']).toMatch(/tsc -p tsconfig\.build\.json/);
    const tsconfig = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '')) as { compilerOptions: { outDir: string; rootDir: string }; include: string[] };
    expect(tsconfig.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
    expect(tsconfig.include).toEqual(['src']);
  });

  it('copies from the context only paths that exist and that .dockerignore lets through', () => {
    for (const stage of all) {
      for (const c of copies(stage, all).filter((c) => !c.from)) {
        for (const s of c.sources) {
          expect(existsSync(join(root, s)), `COPY source ${s}`).toBe(true);
          expect(isIgnored(s), `${s} is excluded by .dockerignore`).toBe(false);
        }
      }
      for (const c of copies(stage, all).filter((c) => c.from)) expect(all.some((s) => s.name === c.from), `stage ${c.from}`).toBe(true);
    }
  });

  it('has a .dockerignore that keeps secrets, databases, dependencies and the development trees out of the context', () => {
    expect(ignored.filter((p) => p.startsWith('!')), 'no negated patterns (isIgnored does not read them)').toEqual([]);
    for (const p of ['.git', 'node_modules', '.env', 'data', 'dist', 'coverage', 'test', 'harness', 'docs', 'data/vigil.db', 'x.db', '.env.local']) expect(isIgnored(p), p).toBe(true);
    for (const p of ['src', 'prisma', 'skills', 'bin', 'deploy', 'scripts', 'package.json', 'package-lock.json', 'skills/crash-loop.md']) expect(isIgnored(p), p).toBe(false);
  });

  it('ships what the entry points read from the package root, and no source, tests or harness', () => {
    for (const p of ['dist', 'node_modules', 'package.json', 'prisma', 'skills', 'bin', 'deploy']) expect(shipped.has(p), `/app/${p}`).toBe(true);
    for (const p of ['src', 'test', 'harness', 'scripts', '.env']) expect(shipped.has(p), `/app/${p}`).toBe(false);
    // Every path the source resolves against the package root (import.meta.url, PACKAGE_ROOT) is shipped.
    const files = readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.ts'));
    const readsFromRoot = new Set<string>();
    for (const f of files) {
      const ts = readFileSync(join(f.parentPath, f.name), 'utf8');
      const depth = posix.relative(join(root, 'src'), f.parentPath).split('/').filter(Boolean).length + 1;
      // A relative path literal climbing out of src/ (an import, or new URL(…, import.meta.url)) names a root entry.
      for (const m of ts.matchAll(/['"`]((?:\.\.\/)+)([^'"`/]+)/g)) if (m[1]!.length / 3 >= depth) readsFromRoot.add(m[2]!);
      for (const m of ts.matchAll(/join\(PACKAGE_ROOT, [^)]*?'([^'/]+)\//g)) readsFromRoot.add(m[1]!);
    }
    expect([...readsFromRoot].sort()).toEqual(expect.arrayContaining(['deploy', 'node_modules', 'prisma']));
    for (const p of readsFromRoot) expect(shipped.has(p), `/app/${p} (read by src/)`).toBe(true);
    // The default skills directory (VIGIL_SKILLS_DIR, relative to WORKDIR /app).
    expect(readFileSync(join(root, 'src/config/schema.ts'), 'utf8')).toMatch(/VIGIL_SKILLS_DIR:[^\n]*\.default\('skills'\)/);
  });

  it('ships the bin the package declares, on PATH as `vigil`, so `vigil doctor` runs in the image', () => {
    for (const file of Object.values(pkg.bin)) {
      expect(shipped.has(file.split('/')[0]!), `COPY of ${file}`).toBe(true);
      expect(readFileSync(join(root, file), 'utf8')).toContain('../dist/cli/vigil.js');
    }
    expect(text(runtime, 'RUN').join(' ')).toMatch(/ln -s \/app\/bin\/vigil\.mjs \/usr\/local\/bin\/vigil/);
  });

  it('runs compiled JavaScript as a non-root user, in exec form, with SIGTERM and a health check on /livez', () => {
    const insts = runtime.instructions;
    const user = insts.filter((i) => i.getKeyword() === 'USER').at(-1);
    const cmd = insts.filter((i) => i.getKeyword() === 'CMD').at(-1) as unknown as { getJSONStrings(): { getJSONValue(): string }[] } | undefined;
    expect(user, 'USER in the runtime stage').toBeDefined();
    expect(args(user!)[0]).not.toMatch(/^(root|0)(:|$)/);
    expect(insts.indexOf(user!)).toBeLessThan(insts.indexOf(cmd as never));
    // Exec form (JSON): node is PID 1 and receives SIGTERM itself (src/main.ts drains and exits 0).
    expect(cmd!.getJSONStrings().map((s) => s.getJSONValue())).toEqual(['node', 'dist/main.js']);
    expect(keyword(runtime, 'ENTRYPOINT')).toEqual([]);
    expect(text(runtime, 'STOPSIGNAL')).toEqual(['SIGTERM']);
    expect(readFileSync(join(root, 'src/main.ts'), 'utf8')).toMatch(/process\.once\('SIGTERM'/);
    // /livez: a database blip must not mark the container unhealthy (that is /readyz's job).
    const health = text(runtime, 'HEALTHCHECK');
    expect(health).toHaveLength(1);
    expect(health[0]).toMatch(/^CMD \["node",/);
    expect(health[0]).toContain('/livez');
    // No tsx anywhere in what the image runs.
    for (const i of insts) expect(args(i).join(' '), i.getKeyword()).not.toMatch(/\btsx\b|src\/main\.ts/);
    expect(dockerfile.getCMDs()).toHaveLength(1);
  });
});
