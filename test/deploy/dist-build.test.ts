/**
 * The image runs JavaScript compiled once (`npm run build`, tsconfig.build.json), never tsx. No Docker
 * engine runs here, so this lays out a copy of the image's /app in a temp directory from the
 * Dockerfile's runtime stage (each COPY; node_modules holding only the lockfile's production packages,
 * as `npm prune --omit=dev` leaves it), compiles src/ into its dist/, and runs there, with plain node,
 * what the image runs: the CLI and the `vigil` bin (`vigil doctor` against the fake cluster), and the
 * bot itself against the fakes (migrations applied at start, ready, SIGTERM exits 0). It also reads
 * every emitted import: none reaches test/, harness/ or tsx, and every package one names is a
 * production dependency.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, eventually, freePort } from '../e2e/helpers.js';
import { copies, landing, root, stages } from './image.js';

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; bin: Record<string, string> };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };

let tmp: string;
let app: string;
let world: World | undefined;
let child: ChildProcess | undefined;

/** node_modules as the image has it: a link to each top-level package the lockfile does not mark dev-only, and the generated Prisma clients. */
function productionNodeModules(dest: string): void {
  mkdirSync(dest, { recursive: true });
  const names = Object.entries(lock.packages)
    .filter(([path, p]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path) && !p.dev)
    .map(([path]) => path.slice('node_modules/'.length));
  for (const name of [...names, '.prisma']) {
    const target = join(root, 'node_modules', name);
    if (!existsSync(target)) continue; // an optional package for another platform
    mkdirSync(dirname(join(dest, name)), { recursive: true });
    symlinkSync(target, join(dest, name), 'dir');
  }
}

/** The image's /app, from the runtime stage's COPY instructions. */
async function layOutImage(): Promise<void> {
  const all = stages();
  const runtime = all.at(-1)!;
  for (const c of copies(runtime, all)) {
    for (const source of c.sources) {
      const dest = join(tmp, landing(c, source));
      expect(dest.startsWith(app + sep) || dest === app, `${source} lands in /app`).toBe(true);
      if (c.from && source === 'dist') {
        // `npm run build` in the build stage: the same tsconfig, into this copy. --noCheck emits the same
        // files without type-checking them again (`npm run typecheck` does that), in half the time.
        await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', dest, '--noCheck'], { cwd: root });
      } else if (c.from && source === 'node_modules') {
        productionNodeModules(dest);
      } else {
        cpSync(join(root, source), dest, { recursive: true });
      }
    }
  }
}

/** The image's environment: no tsx loader, no developer settings, cwd /app. */
const imageEnv = (extra: Record<string, string> = {}) => ({ PATH: process.env['PATH'] ?? '', HOME: tmp, NODE_ENV: 'production', ...extra });
const node = (argv: string[], env: Record<string, string> = {}) =>
  run(process.execPath, argv, { cwd: app, env: imageEnv(env), timeout: 30_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
  );

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'vigil-image-'));
  app = join(tmp, 'app');
  await layOutImage();
}, 150_000);

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await world?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** Import specifiers in emitted JavaScript: static imports/exports, side-effect imports and import('literal'). */
function specifiers(js: string): string[] {
  const out: string[] = [];
  for (const m of js.matchAll(/^\s*(?:import|export)\b[^'"`;]*?\bfrom\s*(['"])([^'"]+)\1|^\s*import\s*(['"])([^'"]+)\3|\bimport\(\s*(['"])([^'"]+)\5\s*\)/gm)) out.push(m[2] ?? m[4] ?? m[6]!);
  return out;
}

const packageName = (spec: string) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.js'))
    .map((e) => join(e.parentPath, e.name));
}

describe('the image layout, compiled once', () => {
  it('has the compiled entry points and no TypeScript source, tests or harness', () => {
    for (const p of ['dist/main.js', 'dist/cli/vigil.js', ...Object.values(pkg.bin)]) expect(existsSync(join(app, p)), p).toBe(true);
    // (typescript stays: the lockfile marks it devOptional, an optional peer of prisma, which --omit=dev keeps.)
    for (const p of ['src', 'test', 'harness', 'scripts', 'node_modules/tsx', 'node_modules/esbuild', 'node_modules/vitest']) expect(existsSync(join(app, p)), p).toBe(false);
  });

  it('imports only what is in the image: nothing under test/ or harness/, no tsx, only production dependencies', () => {
    const files = jsFiles(join(app, 'dist'));
    expect(files.length).toBeGreaterThan(50);
    const problems: string[] = [];
    for (const file of files) {
      for (const spec of specifiers(readFileSync(file, 'utf8'))) {
        const where = `${relative(app, file)} imports ${spec}`;
        if (spec.startsWith('.')) {
          const target = resolve(dirname(file), spec);
          const rel = relative(app, target);
          if (!(rel.startsWith(`dist${sep}`) || rel.startsWith(join('node_modules', '.prisma') + sep))) problems.push(`${where}: outside dist/`);
          else if (!existsSync(target)) problems.push(`${where}: missing`);
        } else if (!isBuiltin(spec)) {
          const name = packageName(spec);
          if (name === 'tsx' || !(name in pkg.dependencies)) problems.push(`${where}: not a production dependency`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('runs the CLI with plain node: help, migrate (twice), audit verify, queue', async () => {
    const help = await node(['dist/cli/vigil.js', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: vigil <command>/);

    const databaseUrl = `file:${join(tmp, 'cli.db')}`;
    const migrations = readdirSync(join(app, 'prisma/migrations'), { withFileTypes: true }).filter((e) => e.isDirectory()).length;
    const first = await node(['dist/cli/vigil.js', 'migrate'], { DATABASE_URL: databaseUrl });
    expect(first.stderr).toBe('');
    expect(first.stdout).toContain(`Applied ${migrations} migration(s)`);
    const again = await node(['dist/cli/vigil.js', 'migrate'], { DATABASE_URL: databaseUrl });
    expect(again.stdout).toContain('is up to date');

    // The package's bin (what `npx vigil` and the image's `vigil` run): dist/, since src/ is absent.
    const verify = await node([pkg.bin['vigil']!, 'audit', 'verify'], { DATABASE_URL: databaseUrl });
    expect({ code: verify.code, stderr: verify.stderr }).toEqual({ code: 0, stderr: '' });
    expect(verify.stdout).toMatch(/Audit trail intact/);
    const queue = await node([pkg.bin['vigil']!, 'queue', '--json'], { DATABASE_URL: databaseUrl });
    expect(queue.code).toBe(0);
    expect(JSON.parse(queue.stdout)).toEqual([]);
  }, 60_000);

  it('starts the bot with `node dist/main.js`: migrations applied at start, ready, SIGTERM exits 0', async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, startApp: false });
    const port = await freePort();
    const databaseUrl = `file:${join(tmp, 'bot.db')}`;
    child = spawn(process.execPath, ['dist/main.js'], { cwd: app, env: imageEnv({ ...world.env, DATABASE_URL: databaseUrl, PORT: String(port), LOG_LEVEL: 'warn' }), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const ready = await eventually(async () => {
      if (child!.exitCode !== null) throw new Error(`node dist/main.js exited ${child!.exitCode}: ${stderr}`);
      const r = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      return r?.status === 200 ? ((await r.json()) as unknown) : undefined;
    }, 'node dist/main.js to be ready', 30_000);
    expect(ready).toMatchObject({ ok: true, checks: { database: { ok: true }, migrations: { ok: true }, slack: { ok: true } } });
    expect((await fetch(`http://127.0.0.1:${port}/livez`)).status).toBe(200);

    // `vigil doctor` in the image (kubectl exec … vigil doctor), against the fake cluster: it reads the
    // example policy from /app/deploy.
    const doctor = await node([pkg.bin['vigil']!, 'doctor'], world.env);
    expect({ code: doctor.code, stderr: doctor.stderr }).toEqual({ code: 0, stderr: '' });
    expect(doctor.stdout).toContain(`Comparing with policy ${join(app, 'deploy/policy.example.yaml')}`);
    expect(doctor.stdout).toMatch(/✓ cannot patch deployments/);

    child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => (child!.exitCode !== null ? r(child!.exitCode) : child!.once('exit', (c) => r(c))));
    expect(code).toBe(0);
  }, 60_000);
});
