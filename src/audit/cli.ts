// `vigil audit verify` and `vigil export <incident-id> [--out FILE]`, on DATABASE_URL.
// Exit codes: 0 fine; 1 the audit chain is tampered with (or an unexpected error, from vigil.ts);
// 2 usage error or unknown incident.
import { writeFile } from 'node:fs/promises';
import { openDatabase, type Database } from '../store/db.js';
import { applyMigrations } from '../store/migrate.js';
import { exportIncident } from './export.js';
import { verifyAuditChain } from './verify.js';

const USAGE = `Usage:
  vigil audit verify                      check the audit trail's hash chain (exit 1 if tampered with)
  vigil export <incident-id> [--out FILE] the incident's full record as JSON (stdout, or FILE)`;

export type CliIo = { out: (line: string) => void; err: (line: string) => void };

const consoleIo: CliIo = { out: (l) => console.log(l), err: (l) => console.error(l) };

/** `argv` starts at the command: `['audit', 'verify']` or `['export', id, '--out', file]`. */
export async function runAuditCommand(argv: string[], env: NodeJS.ProcessEnv, io: CliIo = consoleIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'audit' && rest.length === 1 && rest[0] === 'verify') return withDb(env, (db) => verify(db, io));
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

async function verify(db: Database, io: CliIo): Promise<number> {
  const result = await verifyAuditChain(db.prisma);
  const unsealed = result.unsealed ? ` (${result.unsealed} older row(s) not chained yet; the next audit write seals them)` : '';
  if (result.ok) {
    io.out(`Audit trail intact: ${result.checked} row(s) checked${unsealed}.\nHead: ${result.head ?? '(empty)'}`);
    return 0;
  }
  io.err(`Audit trail TAMPERED WITH: ${result.problems.length} problem(s) in ${result.checked} row(s)${unsealed}:`);
  for (const p of result.problems) io.err(`  row ${p.id}: ${p.problem} — ${p.detail}`);
  return 1;
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
  return 0;
}
