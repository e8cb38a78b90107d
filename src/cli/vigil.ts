/**
 * `vigil <command>`: operator commands. `start` runs the bot (same as `npm start`); `migrate` applies
 * the committed migrations to DATABASE_URL and reports what it did, without starting anything else.
 */
import { existsSync } from 'node:fs';
import { applyMigrations } from '../store/migrate.js';
import { describeDatabaseUrl, openDatabase } from '../store/db.js';

const USAGE = `Usage: vigil <command>
  start     run the bot from the environment / .env (same as npm start); VIGIL_ROLE=investigator for split mode
  executor  split mode's executor: its own Slack app (VIGIL_EXECUTOR_SLACK_*) and Kubernetes identity
            (VIGIL_EXECUTOR_KUBECONFIG or in-cluster); posts the approval cards, takes the clicks, writes
  migrate   apply the committed database migrations to DATABASE_URL (default file:./data/vigil.db)
  audit verify [--anchor A]… [--anchors-file FILE]
                                    check the audit trail's hash chain (exit 1 if it was tampered with);
                                    anchors also catch removed newest rows and a re-hashed chain
  audit head [--json]               the newest row as an anchor (vigil-audit:<row id>:<hash>) to keep elsewhere
  export <incident-id> [--out FILE] an incident's full record as JSON (stdout or FILE)
  queue [--json]                    investigations queued, running or failed today: holder, lease, step, attempts,
                                    last error; exit 1 when one is stuck (no replica claimed it for a whole lease)
  doctor    prove through SelfSubjectAccessReview that the reader cannot write, and show what the executor may do
  help      this text`;

async function migrate(): Promise<void> {
  const url = process.env['DATABASE_URL'] || 'file:./data/vigil.db';
  const db = await openDatabase(url);
  try {
    const { applied } = await applyMigrations(db);
    console.log(applied.length ? `Applied ${applied.length} migration(s) to ${describeDatabaseUrl(url)}:\n  ${applied.join('\n  ')}` : `${describeDatabaseUrl(url)} is up to date.`);
  } finally {
    await db.close();
  }
}

async function main(argv: string[]): Promise<number> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const [command = 'help'] = argv;
  switch (command) {
    case 'start':
      await import('../main.js');
      return -1; // main.ts keeps the process alive
    case 'executor':
      await import('../main-executor.js');
      return -1; // main-executor.ts keeps the process alive
    case 'migrate':
      await migrate();
      return 0;
    case 'audit':
    case 'export':
      return (await import('../audit/cli.js')).runAuditCommand(argv, process.env);
    case 'queue':
      return (await import('./queue.js')).runQueue(argv.slice(1), process.env);
    case 'doctor':
      return (await import('./doctor.js')).runDoctor(argv.slice(1), process.env);
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return 0;
    default:
      console.error(`Unknown command "${command}".\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    console.error(`vigil: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
