/**
 * Architecture: the rows the postmortem and `vigil export` rely on are written only through
 * src/audit/records.ts, which seals each write in the audit chain. A write to those tables anywhere else
 * under src/ (a model call, a nested write, raw SQL, or deleting the incident or investigation that
 * cascades to them) would not be sealed, and `vigil audit verify` would then report Vigil's own row as
 * written behind its back: this test fails first, naming the file and line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const HELPER = 'src/audit/records.ts';

const DELEGATES = 'approvalRequest|approvalDecision|steeringMessage|hypothesis|evidence';
const WRITES = 'create|createMany|createManyAndReturn|update|updateMany|updateManyAndReturn|upsert|delete|deleteMany';
const RULES: { what: string; re: RegExp }[] = [
  { what: 'a write to a sealed table', re: new RegExp(`\\.\\s*(?:${DELEGATES})\\s*\\.\\s*(?:${WRITES})\\s*\\(`, 'g') },
  // Nested writes through a relation: `decisions: { create: … }`, `hypotheses: { upsert: … }`.
  { what: 'a nested write to a sealed table', re: /\b(?:decisions|hypotheses|steering|evidence|approvals)\s*:\s*\{\s*(?:create|createMany|connectOrCreate|upsert|update|updateMany|delete|deleteMany|set|connect|disconnect)\b/g },
  // Raw SQL naming one of the tables (Prisma quotes identifiers, and so must raw SQL on PostgreSQL).
  { what: 'raw SQL on a sealed table', re: /"(?:ApprovalRequest|ApprovalDecision|SteeringMessage|Hypothesis|Evidence)"/g },
  // Deleting an incident or an investigation cascades to its sealed rows.
  { what: 'a delete that cascades to sealed rows', re: /\.\s*(?:incident|investigation)\s*\.\s*(?:delete|deleteMany)\s*\(/g },
];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** `file:line: what — code` for each write that bypasses the helper. */
function bypasses(file: string, text: string): string[] {
  const out: string[] = [];
  for (const rule of RULES) {
    for (const m of text.matchAll(rule.re)) {
      const line = text.slice(0, m.index).split('\n').length;
      out.push(`${file}:${line}: ${rule.what} — ${text.split('\n')[line - 1]!.trim().slice(0, 120)}`);
    }
  }
  return out;
}

describe('sealed record tables are written through src/audit/records.ts only', () => {
  it('finds no other write path under src/', () => {
    const offenders = files(join(root, 'src'))
      .map((f) => f.slice(root.length + 1))
      .filter((f) => f !== HELPER)
      .flatMap((f) => bypasses(f, readFileSync(join(root, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('would catch the ways a write can bypass the helper', () => {
    const sample = [
      'await tx.approvalDecision.create({ data: d });',
      'await this.deps.db.approvalRequest\n  .updateMany({ where: { id }, data: { status } });',
      'await db.hypothesis.update({ where: { id }, data });',
      'await tx.steeringMessage.upsert({ where, create, update });',
      'await tx.evidence.deleteMany({ where: { hypothesisId } });',
      'await db.approvalRequest.update({ where: { id }, data: { decisions: { create: { userId } } } });',
      'await db.$executeRawUnsafe(`UPDATE "ApprovalDecision" SET "userId" = $1`);',
      'await db.incident.delete({ where: { id } });',
    ].join('\n');
    // The nested-write line also counts as a direct write: every sample line is caught at least once.
    const lines = new Set(bypasses('sample.ts', sample).map((o) => o.split(':')[1]));
    expect([...lines].sort()).toEqual(['1', '2', '4', '5', '6', '7', '8', '9']);
    // Reads are fine anywhere.
    expect(bypasses('reads.ts', 'await db.approvalDecision.findMany({}); await tx.hypothesis.count(); h.evidence.map((e) => e.id);')).toEqual([]);
  });

  it('leaves the helper itself writing the tables', () => {
    expect(bypasses(HELPER, readFileSync(join(root, HELPER), 'utf8')).length).toBeGreaterThan(5);
  });
});
