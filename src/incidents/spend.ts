/**
 * Model tokens spent per incident and per UTC day, kept in the store (ModelTokenSpend) so the caps hold
 * across restarts, re-runs and replicas: the model loop reads them before every call and adds each call's
 * tokens after it (agent/loop.ts `TokenAllowance`). Runs in flight at once may each make the call they were
 * allowed, so a cap can be passed by at most one call per concurrent run; none starts once it is reached.
 */
import type { SharedCap } from '../agent/budget.js';
import type { TokenAllowance } from '../agent/loop.js';
import type { Db } from '../store/db.js';
import { isUniqueViolation } from '../store/db.js';

export interface TokenCaps {
  /** All investigations of one incident together. */
  incidentTokens: number;
  /** Everything, per UTC day. */
  dayTokens: number;
}

const incidentScope = (id: string) => `incident:${id}`;
const dayScope = (now: Date) => `day:${now.toISOString().slice(0, 10)}`;

/** What is spent against each cap now. */
export async function readSpend(db: Db, incidentId: string, caps: TokenCaps, now: Date): Promise<SharedCap[]> {
  const scopes = [incidentScope(incidentId), dayScope(now)];
  const rows = await db.modelTokenSpend.findMany({ where: { scope: { in: scopes } } });
  const used = (scope: string) => rows.find((r) => r.scope === scope)?.tokens ?? 0;
  return [
    { scope: 'incident', used: used(scopes[0]!), cap: caps.incidentTokens },
    { scope: 'day', used: used(scopes[1]!), cap: caps.dayTokens },
  ];
}

/** Add tokens to both totals, atomically per row (an increment, so concurrent replicas do not lose each other's). */
export async function chargeSpend(db: Db, incidentId: string, tokens: number, now: Date): Promise<void> {
  if (tokens <= 0) return;
  for (const scope of [incidentScope(incidentId), dayScope(now)]) {
    try {
      await db.modelTokenSpend.upsert({ where: { scope }, create: { scope, tokens }, update: { tokens: { increment: tokens } } });
    } catch (err) {
      // Two first charges of a scope at once: the loser's insert collides, and its increment now finds the row.
      if (!isUniqueViolation(err)) throw err;
      await db.modelTokenSpend.update({ where: { scope }, data: { tokens: { increment: tokens } } });
    }
  }
}

/** The model loop's view of the caps for one incident's run. */
export function tokenAllowance(db: Db, incidentId: string, caps: TokenCaps, now: () => Date): TokenAllowance {
  return {
    read: () => readSpend(db, incidentId, caps, now()),
    charge: (tokens) => chargeSpend(db, incidentId, tokens, now()),
  };
}
