/**
 * `vigil doctor`'s result in the audit trail, for App Home's setup panel (src/incidents/setup.ts): one
 * `doctor.completed` row appended to the hash chain (src/audit/chain.ts) on the database Vigil uses.
 * The row is small and redacted: ok, exit code, how many checks passed and failed, the names of the
 * failed ones, the mode line and who ran it (USER). Recording is best effort: with no database, or
 * one that cannot be opened or written, doctor says so in one line and exits as it would have.
 */
import { existsSync } from 'node:fs';
import { DOCTOR_COMPLETED_KIND, type DoctorAuditData } from '../incidents/doctor-result.js';

export { DOCTOR_COMPLETED_KIND };

const DEFAULT_DATABASE_URL = 'file:./data/vigil.db';
const FAILED_SHOWN = 20;
const NAME_MAX = 160;
const OPEN_TIMEOUT_MS = 10_000;

/** The summary of a finished run, from the lines doctor printed and its exit code. */
export function summariseDoctor(lines: string[], code: number, env: Record<string, string | undefined>, redact: (s: string) => string = (s) => s): DoctorAuditData {
  const marked = (mark: string) => lines.filter((l) => l.trimStart().startsWith(mark) && !l.trimStart().startsWith(`${mark}${mark}`));
  const clip = (s: string) => {
    const t = redact(s.trim().replace(/\s+/g, ' '));
    return t.length > NAME_MAX ? `${t.slice(0, NAME_MAX - 1)}…` : t;
  };
  // A check that failed is a ✗ line; the FAILED verdicts restate them, so they are left out unless alone.
  const failedLines = marked('✗').map((l) => l.trimStart().slice(1).trim());
  const named = failedLines.filter((l) => !l.startsWith('FAILED'));
  const settings = lines.find((l) => l.startsWith('vigil doctor: '));
  const failedChecks = [...(settings ? [settings.slice('vigil doctor: '.length)] : []), ...(named.length ? named : failedLines)].map(clip);
  const mode = lines.find((l) => l.startsWith('Mode: '));
  const user = env['USER'] || env['LOGNAME'];
  return {
    ok: code === 0,
    exitCode: code,
    passed: marked('✓').length,
    failed: failedChecks.length,
    warnings: marked('⚠').length,
    failedChecks: failedChecks.slice(0, FAILED_SHOWN),
    ...(mode ? { mode: clip(mode.slice('Mode: '.length)) } : {}),
    ...(user ? { ranBy: clip(user) } : {}),
  };
}

/**
 * Appends the run's `doctor.completed` row and returns the one line doctor prints about it. A database is
 * configured when DATABASE_URL is set, or when the app's default SQLite file (./data/vigil.db) exists;
 * doctor never creates a database nor applies migrations.
 */
export async function recordDoctorResult(lines: string[], code: number, env: Record<string, string | undefined>): Promise<string> {
  const url = env['DATABASE_URL']?.trim() || '';
  const notRecorded = (why: string) => `Result not recorded in the audit trail (App Home will not show it): ${why}`;
  let db: import('../store/db.js').Database | undefined;
  try {
    const { openDatabase, parseDatabaseUrl, describeDatabaseUrl } = await import('../store/db.js');
    const target = parseDatabaseUrl(url || DEFAULT_DATABASE_URL);
    if (target.provider === 'sqlite' && !existsSync(target.file)) {
      return notRecorded(url ? `the database file ${target.file} does not exist (start Vigil once to create it)` : 'no database configured (DATABASE_URL is not set and ./data/vigil.db does not exist)');
    }
    const where = describeDatabaseUrl(url || DEFAULT_DATABASE_URL);
    const opening = openDatabase(url || DEFAULT_DATABASE_URL, { busyTimeoutMs: 5000 });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`could not open the database at DATABASE_URL (${where}) within ${OPEN_TIMEOUT_MS / 1000}s`)), OPEN_TIMEOUT_MS);
      timer.unref();
    });
    try {
      db = await Promise.race([opening, timeout]);
    } catch (err) {
      // Opened late, after the timeout: close it rather than leave a connection behind.
      void opening.then((late) => late.close()).catch(() => undefined);
      throw err;
    } finally {
      clearTimeout(timer);
    }
    const [{ createRedactor }, { recordAudit }] = await Promise.all([import('../redact/index.js'), import('../incidents/audit.js')]);
    const redactor = createRedactor();
    const data = summariseDoctor(lines, code, env, (s) => redactor.redactText(s));
    await recordAudit(db.prisma, { actor: data.ranBy ? `cli:${data.ranBy}` : 'cli', kind: DOCTOR_COMPLETED_KIND, data });
    return `Result recorded in the audit trail (${where}): App Home's setup panel shows it.`;
  } catch (err) {
    return notRecorded((err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').slice(0, 300));
  } finally {
    await db?.close().catch(() => undefined);
  }
}
