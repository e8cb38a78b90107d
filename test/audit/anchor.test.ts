import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { anchorLine, formatAnchor, parseAnchor, startAuditAnchorer } from '../../src/audit/anchor.js';
import { auditHash } from '../../src/audit/chain.js';
import { runAuditCommand, type CliIo } from '../../src/audit/cli.js';
import { verifyAuditChain } from '../../src/audit/verify.js';
import { recordAudit } from '../../src/incidents/audit.js';
import { createLogger } from '../../src/log.js';
import { createRedactor } from '../../src/redact/index.js';
import type { Database } from '../../src/store/db.js';
import { testProviders } from '../store/test-databases.js';
import { freshDatabase, type AuditTestDb } from './helpers.js';

function captureIo(): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l) };
}

async function appendEvents(db: Database, n: number, kind = 'step') {
  for (let i = 0; i < n; i++) await recordAudit(db.prisma, { actor: 'vigil', kind, data: { i } });
  return db.prisma.auditEvent.findMany({ orderBy: { id: 'asc' } });
}

/** `vigil audit head`, as a cron job or operator would capture it. */
async function headAnchor(env: NodeJS.ProcessEnv): Promise<string> {
  const io = captureIo();
  expect(await runAuditCommand(['audit', 'head'], env, io)).toBe(0);
  expect(io.stdout).toHaveLength(1);
  return io.stdout[0]!;
}

describe.each(testProviders)('audit anchors on %s', (provider) => {
  let t: AuditTestDb | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('vigil audit head prints the newest row as an anchor, plain and --json, and nothing on an empty trail', async () => {
    t = await freshDatabase(provider);
    const env = { DATABASE_URL: t.target.url };
    const empty = captureIo();
    expect(await runAuditCommand(['audit', 'head'], env, empty)).toBe(0);
    expect(empty.stdout).toEqual([]);
    expect(empty.stderr.join('\n')).toContain('empty');
    const emptyJson = captureIo();
    expect(await runAuditCommand(['audit', 'head', '--json'], env, emptyJson)).toBe(0);
    expect(JSON.parse(emptyJson.stdout[0]!)).toEqual({ anchor: null });

    const last = (await appendEvents(t.db, 4)).at(-1)!;
    expect(await headAnchor(env)).toBe(`vigil-audit:${last.id}:${last.hash}`);
    const json = captureIo();
    expect(await runAuditCommand(['audit', 'head', '--json'], env, json)).toBe(0);
    expect(JSON.parse(json.stdout[0]!)).toEqual({ anchor: `vigil-audit:${last.id}:${last.hash}`, rowId: last.id, hash: last.hash, at: last.at.toISOString() });
    expect(await runAuditCommand(['audit', 'head', '--yaml'], env, captureIo())).toBe(2);
  });

  it('round-trips the head into --anchor and passes while the anchored row is intact', async () => {
    t = await freshDatabase(provider);
    const env = { DATABASE_URL: t.target.url };
    await appendEvents(t.db, 3);
    const anchor = await headAnchor(env);
    await appendEvents(t.db, 2); // the trail grows after the anchor: still fine
    const io = captureIo();
    expect(await runAuditCommand(['audit', 'verify', '--anchor', anchor], env, io)).toBe(0);
    expect(io.stdout.join('\n')).toMatch(/intact: 5 row\(s\) checked, 1 anchor\(s\) checked/);
    // verify prints the head it checked as the next anchor to keep.
    expect(io.stdout.join('\n')).toContain(`Head: ${await headAnchor(env)}`);
  });

  it('misses the newest rows deleted without an anchor, and names them as truncated with one', async () => {
    t = await freshDatabase(provider);
    const env = { DATABASE_URL: t.target.url };
    const all = await appendEvents(t.db, 10);
    const anchor = await headAnchor(env);
    const removed = all.slice(7).map((r) => r.id);
    await t.db.prisma.$executeRawUnsafe(`DELETE FROM "AuditEvent" WHERE "id" >= ${removed[0]}`);

    // The limit the anchor exists for: the cut chain verifies on its own.
    const blind = captureIo();
    expect(await runAuditCommand(['audit', 'verify'], env, blind)).toBe(0);
    expect(blind.stdout.join('\n')).toMatch(/intact: 7 row\(s\) checked/);

    const io = captureIo();
    expect(await runAuditCommand(['audit', 'verify', '--anchor', anchor], env, io)).toBe(1);
    const report = io.stderr.join('\n');
    expect(report).toContain(`row ${removed[2]}: truncated`);
    expect(report).toContain(`rows ${removed.join(', ')} removed`);
    expect(report).toContain(`the trail now ends at row ${all[6]!.id}`);
    expect((await verifyAuditChain(t.db.prisma, [parseAnchorOrThrow(anchor)])).problems).toEqual([
      { id: removed[2], problem: 'truncated', removed: { from: removed[0], to: removed[2] }, detail: expect.any(String) as string },
    ]);
  });

  it('still names the cut rows after new rows were chained onto the last survivor', async () => {
    t = await freshDatabase(provider);
    const env = { DATABASE_URL: t.target.url };
    const all = await appendEvents(t.db, 6);
    const anchor = await headAnchor(env);
    await t.db.prisma.$executeRawUnsafe(`DELETE FROM "AuditEvent" WHERE "id" > ${all[3]!.id}`);
    const regrown = (await appendEvents(t.db, 2, 'after-cut')).filter((r) => r.kind === 'after-cut');
    expect(regrown[0]!.prevHash).toBe(all[3]!.hash);
    expect(await runAuditCommand(['audit', 'verify'], env, captureIo())).toBe(0);

    const io = captureIo();
    expect(await runAuditCommand(['audit', 'verify', `--anchor=${anchor}`], env, io)).toBe(1);
    const report = io.stderr.join('\n');
    expect(report).toContain(`row ${all[5]!.id}: truncated`);
    expect(report).toContain(`rows ${all[4]!.id}, ${all[5]!.id} removed`);
    expect(report).toContain(`row ${regrown[0]!.id} was appended after the cut, chained straight to row ${all[3]!.id}`);
  });

  it('catches a chain rewritten from a row on as rewritten, and says after which anchor it began', async () => {
    t = await freshDatabase(provider);
    const env = { DATABASE_URL: t.target.url };
    await appendEvents(t.db, 2);
    const early = await headAnchor(env);
    const all = await appendEvents(t.db, 4);
    const late = await headAnchor(env);

    // The forger edits row 3 and recomputes every hash from there with the chain's own function.
    let prevHash = all[1]!.hash!;
    for (const r of all.slice(2)) {
      const data = r.id === all[2]!.id ? '{"i":"nothing happened"}' : r.data;
      const hash = auditHash(prevHash, { incidentRef: r.incidentRef, actor: r.actor, kind: r.kind, data, at: r.at });
      await t.db.prisma.auditEvent.update({ where: { id: r.id }, data: { data, prevHash, hash } });
      prevHash = hash;
    }
    expect(await runAuditCommand(['audit', 'verify'], env, captureIo())).toBe(0);

    dir = mkdtempSync(join(tmpdir(), 'vigil-anchors-'));
    const file = join(dir, 'anchors.txt');
    writeFileSync(file, `# heads from the log pipeline\n${early}   # after the second event\n\n${late}\n`);
    const io = captureIo();
    expect(await runAuditCommand(['audit', 'verify', '--anchors-file', file], env, io)).toBe(1);
    const report = io.stderr.join('\n');
    expect(report).toContain(`row ${all[5]!.id}: rewritten`);
    expect(report).toContain(`after row ${all[1]!.id} (whose anchor still matches)`);
    expect(report).not.toContain(`row ${all[1]!.id}: rewritten`);
    expect(io.stderr[0]).toMatch(/1 problem\(s\) in 6 row\(s\), 2 anchor\(s\) checked/);
  });

  it('logs audit.anchor lines through the redacting logger that verify accepts as anchors', async () => {
    t = await freshDatabase(provider);
    const env = { DATABASE_URL: t.target.url };
    expect(await anchorLine(t.db.prisma)).toBeNull();
    await appendEvents(t.db, 2);
    const lines: Record<string, unknown>[] = [];
    const log = createLogger('info', createRedactor(), { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
    const anchorer = startAuditAnchorer(t.db.prisma, log, { intervalMs: 10 });
    try {
      await waitFor(() => lines.length >= 1);
      await appendEvents(t.db, 1);
      const head = (await anchorLine(t.db.prisma))!.anchor;
      await waitFor(() => lines.some((l) => l['anchor'] === head));
    } finally {
      await anchorer.stop();
    }
    const anchors = lines.filter((l) => l['msg'] === 'audit.anchor');
    expect(anchors.length).toBe(lines.length);
    expect(new Set(anchors.map((l) => l['anchor'])).size).toBe(2);
    for (const l of anchors) {
      expect(l['anchor']).toBe(`vigil-audit:${String(l['rowId'])}:${String(l['hash'])}`);
      expect(await runAuditCommand(['audit', 'verify', '--anchor', String(l['anchor'])], env, captureIo())).toBe(0);
    }
    const count = lines.length;
    await new Promise((r) => setTimeout(r, 40));
    expect(lines.length).toBe(count); // stopped means stopped
  });
});

describe('malformed anchors', () => {
  // Parsing happens before the database is opened; this URL would fail if it were.
  const env = { DATABASE_URL: 'file:/nonexistent-vigil-dir/none/vigil.db' };
  const hash = 'ab'.repeat(32);
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it.each([
    [['--anchor', 'vigil-audit:12'], '--anchor "vigil-audit:12": expected vigil-audit:<row id>:<64 hex characters>'],
    [['--anchor', `vigil-audit:twelve:${hash}`], 'row id "twelve" is not a positive whole number'],
    [['--anchor', `vigil-audit:0:${hash}`], 'row id "0"'],
    [['--anchor', 'vigil-audit:12:deadbeef'], '--anchor "vigil-audit:12:deadbeef": hash "deadbeef" is not 64 hex characters'],
    [['--anchor', `audit:12:${hash}`], `--anchor "audit:12:${hash}"`],
    [['--anchor'], '--anchor needs a value'],
    [['--anchor', `vigil-audit:1:${hash}`, '--since', 'yesterday'], 'Unknown argument "--since"'],
  ])('refuses %j with exit 2', async (args, message) => {
    const io = captureIo();
    expect(await runAuditCommand(['audit', 'verify', ...args], env, io)).toBe(2);
    expect(io.stderr.join('\n')).toContain(message);
    expect(io.stderr.join('\n')).toContain('Usage:');
  });

  it('names the file and line of a bad anchors file, and refuses an unreadable or empty one', async () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-anchors-'));
    const bad = join(dir, 'bad.txt');
    writeFileSync(bad, `# ok so far\nvigil-audit:1:${hash}\nvigil-audit:2:${hash.slice(2)}\n`);
    const empty = join(dir, 'empty.txt');
    writeFileSync(empty, '# nothing fetched\n\n');
    const cases: [string, string][] = [
      [bad, `--anchors-file ${bad}: line 3: "vigil-audit:2:${hash.slice(2)}": hash`],
      [join(dir, 'missing.txt'), `--anchors-file ${join(dir, 'missing.txt')}: cannot read it`],
      [empty, `--anchors-file ${empty}: holds no anchors`],
    ];
    for (const [file, message] of cases) {
      const io = captureIo();
      expect(await runAuditCommand(['audit', 'verify', '--anchors-file', file], env, io)).toBe(2);
      expect(io.stderr.join('\n')).toContain(message);
    }
  });

  it('parses what formatAnchor writes, uppercase hex included', () => {
    expect(parseAnchor(` ${formatAnchor({ rowId: 42, hash })}\n`)).toEqual({ ok: true, anchor: { rowId: 42, hash } });
    expect(parseAnchor(`vigil-audit:42:${hash.toUpperCase()}`)).toEqual({ ok: true, anchor: { rowId: 42, hash } });
  });
});

function parseAnchorOrThrow(text: string) {
  const parsed = parseAnchor(text);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.anchor;
}

async function waitFor(done: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}
