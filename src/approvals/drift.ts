/**
 * What changed between the plan people approved and the fresh plan made right before executing. The
 * fresh plan's pre-checks compare the target with the *diagnosis*; this compares it with the *card*: an
 * approval is for the change the card showed ("scale checkout to 0 (from 3)"), not for whatever the
 * same command would do after someone else changed the target.
 *
 * A content restore (`restore_config`) stores no content, only digests: the fresh plan re-derived the
 * content to write from the same source, and it must be the approved one, over the approved live content.
 */
import type { Plan } from '../actions/index.js';
import { shortDigest } from '../actions/config/content.js';
import type { Redactor } from '../redact/index.js';
import type { StoredPlan } from './types.js';

const show = (v: unknown): string => (v === undefined ? '(unset)' : JSON.stringify(v));

/** Why the approved plan no longer describes the target, or undefined when it still does. */
export function driftSinceApproval(approved: StoredPlan | undefined, fresh: Plan, redactor: Redactor): string | undefined {
  if (!approved) return undefined;
  const a = approved.observed;
  const f = fresh.observed;
  const what = `${fresh.target.kind.toLowerCase()}/${fresh.target.name}`;
  if (a.uid && f.uid && a.uid !== f.uid) return `${what} was deleted and recreated since it was approved (uid ${a.uid} → ${f.uid})`;
  const ac = approved.content;
  const fc = fresh.content;
  if (ac || fc) {
    if (!ac || !fc) return `${what}: the approved plan and the fresh one do not both restore content`;
    if (JSON.stringify(ac.source) !== JSON.stringify(fc.source)) return `the content to restore now comes from ${fc.sourceLabel}; the approved plan took it from ${ac.sourceLabel}`;
    if (ac.restoreDigest !== fc.restoreDigest) return `${fc.sourceLabel} now holds other content (${shortDigest(fc.restoreDigest)}) than the approved plan would restore (${shortDigest(ac.restoreDigest)})`;
    if (ac.currentDigest !== fc.currentDigest) return `${what}'s content changed since it was approved (${shortDigest(ac.currentDigest)} → ${shortDigest(fc.currentDigest)})`;
    // The digests decide; the card's rows hold masked text, which is not compared.
    return undefined;
  }
  if (a.generation !== undefined && f.generation !== undefined && a.generation !== f.generation) {
    return `${what}'s spec changed since it was approved (generation ${a.generation} → ${f.generation})`;
  }
  // The same comparison the card made: each field's value before the change (stored redacted, so compare redacted).
  const before = new Map(approved.changes.map((c) => [c.path, show(c.before)]));
  for (const c of redactor.redactValue(fresh.changes)) {
    const was = before.get(c.path);
    if (was !== undefined && was !== show(c.before)) return `${c.path} is ${show(c.before)} now; the approved plan saw ${was}`;
  }
  const ae = approved.external;
  const fe = fresh.external;
  if (ae?.kind === 'flag' && fe?.kind === 'flag' && ae.from !== fe.from) return `flag ${fe.flag} is ${fe.from ? 'on' : 'off'} now; the approved plan saw it ${ae.from ? 'on' : 'off'}`;
  return undefined;
}
