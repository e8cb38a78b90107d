// `vigil audit verify`, `vigil audit head` and `vigil export <incident-id> [--out FILE]`, on DATABASE_URL.
// Exit codes: 0 fine; 1 the audit chain is tampered with (or an unexpected error, from vigil.ts);
// 2 usage error (a malformed anchor or anchors file included) or unknown incident.
import { readFile, writeFile } from 'node:fs/promises';
import { openDatabase, type Database } from '../store/db.js';
import { applyMigrations } from '../store/migrate.js';
import { anchorLine, formatAnchor, parseAnchor, parseAnchorsFile, type AuditAnchor } from './anchor.js';
import { exportIncident } from './export.js';
import { verifyAuditTrail } from './verify.js';

const USAGE = `Usage:
  vigil audit verify [--anchor A]... [--anchors-file FILE]...
                                          check the audit trail's hash chain, and the approvals, decisions,
                                          executions, steering and hypotheses against their seals in it
                                          (exit 1 if tampered with); each anchor must still be in it, which
                                          catches removed newest rows and a rewritten chain (FILE: one
                                          anchor a line, # comments)
  vigil audit head [--json]               the chain's head as an anchor, vigil-audit:<row id>:<hash>,
                                          to keep where the database admin cannot edit it
  vigil export <incident-id> [--out FILE] the incident's full record as JSON (stdout, or FILE); exit 1,
                                          after writing it, when the record fails verification`;

export type CliIo = { out: (line: string) => void; err: (line: string) => void };

const consoleIo: CliIo = { out: (l) => console.log(l), err: (l) => console.error(l) };

/** `argv` starts at the command: `['audit', 'verify', '--anchor', a]`, `['audit', 'head']` or `['export', id, '--out', file]`. */
export async function runAuditCommand(argv: string[], env: NodeJS.ProcessEnv, io: CliIo = consoleIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'audit' && rest[0] === 'verify') {
    // Anchors are read before the database is opened: a bad one is a usage error, not a verdict.
    const anchors = await readVerifyArgs(rest.slice(1));
    if (typeof anchors === 'string') {
      io.err(`${anchors}\n${USAGE}`);
      return 2;
    }
    return withDb(env, (db) => verify(db, anchors, io));
  }
  if (command === 'audit' && rest[0] === 'head' && (rest.length === 1 || (rest.length === 2 && rest[1] === '--json'))) {
    return withDb(env, (db) => head(db, rest[1] === '--json', io));
  }
  if (command === 'export') {
    const parsed = parseExportArgs(rest);
    if (typeof parsed === 'string') {
      io.err(`${parsed}\n${USAGE}`);
      return 2;
    }
    return withDb(env, (db) => exportCommand(db, parsed, io));
  }
  io.err(USAGE);
  return 2;
}

async function withDb(env: NodeJS.ProcessEnv, work: (db: Database) => Promise<number>): Promise<number> {
  const db = await openDatabase(env['DATABASE_URL'] || 'file:./data/vigil.db');
  try {
    await applyMigrations(db);
    return await work(db);
  } finally {
    await db.close();
  }
}

async function verify(db: Database, anchors: AuditAnchor[], io: CliIo): Promise<number> {
  const result = await verifyAuditTrail(db.prisma, anchors);
  const r = result.records;
  const unsealed = result.unsealed ? ` (${result.unsealed} older row(s) not chained yet; the next audit write seals them)` : '';
  const anchored = anchors.length ? `, ${anchors.length} anchor(s) checked` : '';
  const pending = r.unsealed ? `; ${r.unsealed} record row(s) from before sealing, sealed by the next sealed write` : '';
  const gone = r.goneWithIncident ? `; ${r.goneWithIncident} sealed row(s) went with their deleted incident` : '';
  const records = `${r.checked} sealed record row(s) (approvals, decisions, steering, hypotheses) match the chain${pending}${gone}`;
  if (result.ok) {
    const headAnchor = result.head !== null && result.headId !== null ? formatAnchor({ rowId: result.headId, hash: result.head }) : '(empty)';
    io.out(`Audit trail intact: ${result.checked} row(s) checked${anchored}${unsealed}; ${records}.\nHead: ${headAnchor}`);
    if (!anchors.length) io.out('Without an anchor, removed newest rows or a rewritten chain cannot be told apart from an intact trail: see `vigil audit head`.');
    return 0;
  }
  const total = result.problems.length + r.problems.length;
  io.err(`Audit trail TAMPERED WITH: ${total} problem(s) in ${result.checked} row(s)${anchored}${unsealed}, and ${r.checked} sealed record row(s) compared with their seals:`);
  for (const p of result.problems) io.err(`  row ${p.id}: ${p.problem} — ${p.detail}`);
  for (const p of r.problems) io.err(`  ${p.problem} — ${p.detail}`);
  return 1;
}

async function head(db: Database, json: boolean, io: CliIo): Promise<number> {
  const line = await anchorLine(db.prisma);
  if (json) io.out(JSON.stringify(line ?? { anchor: null }));
  else if (line) io.out(line.anchor);
  else io.err('The audit trail is empty: nothing to anchor yet.');
  return 0;
}

/** The anchors `--anchor A` / `--anchor=A` and `--anchors-file FILE` name, or what is wrong with them. */
async function readVerifyArgs(args: string[]): Promise<AuditAnchor[] | string> {
  const anchors: AuditAnchor[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    if (flag !== '--anchor' && flag !== '--anchors-file') return `Unknown argument "${a}" for audit verify`;
    const value = inline ?? args[++i];
    if (!value) return `${flag} needs a value`;
    if (flag === '--anchor') {
      const parsed = parseAnchor(value);
      if (!parsed.ok) return `--anchor "${value}": ${parsed.reason}`;
      anchors.push(parsed.anchor);
      continue;
    }
    let text: string;
    try {
      text = await readFile(value, 'utf8');
    } catch (err) {
      return `--anchors-file ${value}: cannot read it (${err instanceof Error ? err.message : String(err)})`;
    }
    const parsed = parseAnchorsFile(text);
    if (!parsed.ok) return `--anchors-file ${value}: ${parsed.reason}`;
    // An empty file (say, a failed fetch from the log store) must not pass as "anchors checked".
    if (!parsed.anchors.length) return `--anchors-file ${value}: holds no anchors`;
    anchors.push(...parsed.anchors);
  }
  return anchors;
}

type ExportArgs = { incidentId: string; out?: string };

function parseExportArgs(args: string[]): ExportArgs | string {
  let incidentId: string | undefined;
  let out: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--out') {
      out = args[++i];
      if (!out) return '--out needs a file name';
    } else if (a.startsWith('--out=')) out = a.slice('--out='.length);
    else if (a.startsWith('-')) return `Unknown option "${a}"`;
    else if (incidentId === undefined) incidentId = a;
    else return `Unexpected argument "${a}"`;
  }
  if (!incidentId) return 'export needs an incident id';
  return out ? { incidentId, out } : { incidentId };
}

async function exportCommand(db: Database, args: ExportArgs, io: CliIo): Promise<number> {
  const doc = await exportIncident(db.prisma, args.incidentId);
  if (!doc) {
    io.err(`No incident with id "${args.incidentId}" in this database.`);
    return 2;
  }
  const json = JSON.stringify(doc, null, 2);
  if (args.out) {
    await writeFile(args.out, `${json}\n`, 'utf8');
    io.out(`Wrote incident ${args.incidentId} to ${args.out}.`);
  } else io.out(json);
  // The document says so too (`integrity`); the exit code lets a script that archives exports notice.
  if (!doc.integrity.ok) {
    io.err(`WARNING: the record of incident ${args.incidentId} fails verification against the audit chain (${doc.integrity.problems.length} problem(s)); do not rely on it as it stands:`);
    for (const p of doc.integrity.problems) io.err(`  ${p}`);
    return 1;
  }
  return 0;
}
