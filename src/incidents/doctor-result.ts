/**
 * The `doctor.completed` audit row `vigil doctor` appends (src/cli/doctor-record.ts) and App Home's setup
 * panel reads (./setup.ts): its kind and data, and the reading of the newest one.
 */
import type { Db } from '../store/db.js';
import type { SetupModel } from '../slack/blocks/models.js';

export const DOCTOR_COMPLETED_KIND = 'doctor.completed';

export type DoctorAuditData = {
  ok: boolean;
  exitCode: number;
  passed: number;
  failed: number;
  warnings: number;
  /** Redacted, at most 20, each at most 160 characters. */
  failedChecks: string[];
  /** The mode line doctor printed (single process, or split and which side). */
  mode?: string;
  /** USER of the shell that ran it. */
  ranBy?: string;
};

/** The newest `doctor.completed` row as the setup panel shows it; null when doctor never recorded one. */
export async function lastDoctorResult(db: Db): Promise<NonNullable<SetupModel['doctor']> | null> {
  const row = await db.auditEvent.findFirst({ where: { kind: DOCTOR_COMPLETED_KIND }, orderBy: { id: 'desc' }, select: { at: true, data: true } });
  if (!row) return null;
  let d: Partial<DoctorAuditData> = {};
  try {
    d = JSON.parse(row.data) as Partial<DoctorAuditData>;
  } catch {
    // An unreadable row still says doctor ran; it shows as failed with nothing named.
  }
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return {
    at: row.at,
    ok: d.ok === true,
    passed: num(d.passed),
    failed: num(d.failed),
    failedChecks: Array.isArray(d.failedChecks) ? d.failedChecks.filter((x): x is string => typeof x === 'string') : [],
    ...(typeof d.mode === 'string' ? { mode: d.mode } : {}),
    ...(typeof d.ranBy === 'string' ? { ranBy: d.ranBy } : {}),
  };
}
