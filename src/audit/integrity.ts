// Whether one incident's stored record still matches the audit trail, for its postmortem and its export:
// every sealed row of the incident against its latest seal (./records-verify.ts), and every audit row of
// the incident against its own hash. Whether the chain as a whole is intact (no audit row removed,
// reordered, or the chain rewritten after its anchors) is `vigil audit verify`'s job: it reads the whole
// trail, which a postmortem should not have to.
import type { Redactor } from '../redact/index.js';
import type { Db } from '../store/db.js';
import { auditHash } from './chain.js';
import { SEAL_KIND } from './records.js';
import { verifySealedRecords } from './records-verify.js';

export type RecordIntegrity = {
  /** False when anything below is wrong: the record must not be trusted as it stands. */
  ok: boolean;
  /** Sealed rows that match their seal, and the incident's audit rows that match their hash. */
  checked: number;
  /** Rows from before sealing existed that no seal covers yet (not a failure; the next sealed write seals them). */
  unsealed: number;
  /** One line per problem, naming the row and, for an edit, each field with its current and sealed value. */
  problems: string[];
};

export async function incidentIntegrity(db: Db, incidentId: string, redactor?: Redactor): Promise<RecordIntegrity> {
  const records = await verifySealedRecords(db, { incidentId, ...(redactor ? { redactor } : {}) });
  const problems = records.problems.map((p) => p.detail);
  let checked = records.checked;
  const rows = await db.auditEvent.findMany({
    // Seals were checked above, each against its hash too.
    where: { OR: [{ incidentId }, { incidentRef: incidentId }], NOT: { kind: SEAL_KIND } },
    orderBy: { id: 'asc' },
    select: { id: true, incidentRef: true, actor: true, kind: true, data: true, at: true, prevHash: true, hash: true },
  });
  let unsealed = records.unsealed;
  for (const r of rows) {
    if (r.hash === null && r.prevHash === null) {
      unsealed++;
      continue;
    }
    const intact = r.hash !== null && r.prevHash !== null && auditHash(r.prevHash, { incidentRef: r.incidentRef, actor: r.actor, kind: r.kind, data: r.data, at: r.at }) === r.hash;
    if (intact) checked++;
    else problems.push(`audit row ${r.id} (${r.kind}): its content (incident, actor, kind, data or time) does not match its hash`);
  }
  return { ok: problems.length === 0, checked, unsealed, problems };
}
