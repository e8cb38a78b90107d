/**
 * The scenario tests' check of a first card: the same nine structured questions as `npm run eval`
 * (src/eval/questions.ts), but strict — every question must be answered yes and the proposed
 * mitigation, when one is expected, must be the right one.
 */
import type { Db } from '../../src/store/db.js';
import { storedDiagnosis } from '../../src/eval/diagnosis.js';
import { gradeDiagnosis, type Expected } from '../../src/eval/questions.js';

export { expectedSchema } from '../../src/eval/questions.js';

export interface Grade {
  pass: boolean;
  failures: string[];
  leading?: string;
}

export async function gradeFirstCard(db: Db, incidentId: string, expected: Expected): Promise<Grade> {
  const g = gradeDiagnosis(await storedDiagnosis(db, incidentId), expected);
  const failures = [...g.notes];
  if (expected.mitigation && g.mitigation !== 'right') failures.push(`mitigation ${g.mitigation}, expected ${expected.mitigation.action}`);
  if (!expected.mitigation && g.mitigation === 'wrong') failures.push('a mitigation listed as wrong was proposed');
  return { pass: failures.length === 0, failures, leading: g.leading };
}
