/**
 * `vigil queue [--json]`: the investigations not finished, as the replicas see them in the database, so
 * stuck work is visible without SQL: who holds each one, until when, which step, how many attempts, the
 * last error, and whether it is stuck (its lease or retry time passed and no live replica has taken it
 * for a whole lease: no replica is running, or they cannot reach it). Failed ones of the last day are
 * listed too: a reply, `/sre investigate` or the alert firing again runs them again.
 */
import { openDatabase, type Db } from '../store/db.js';

export interface QueueRow {
  investigation: string;
  incident: string;
  title: string;
  state: string;
  step: string;
  attempts: number;
  owner: string | null;
  leaseUntil: string | null;
  lastError: string | null;
  stuck: boolean;
}

const DAY_MS = 86_400_000;

export async function queueRows(db: Db, leaseMs: number, now = new Date()): Promise<QueueRow[]> {
  const rows = await db.investigation.findMany({
    where: { OR: [{ state: { in: ['queued', 'running'] } }, { state: 'failed', updatedAt: { gt: new Date(now.getTime() - DAY_MS) } }] },
    orderBy: { startedAt: 'asc' },
    take: 500,
    include: { incident: { select: { id: true, title: true } } },
  });
  return rows.map((r) => {
    const due = r.leaseUntil ?? r.updatedAt;
    const stuck = r.state !== 'failed' && now.getTime() - due.getTime() > leaseMs;
    return {
      investigation: r.id,
      incident: r.incident.id,
      title: r.incident.title,
      state: r.state,
      step: r.step,
      attempts: r.attempts,
      owner: r.leaseOwner,
      leaseUntil: r.leaseUntil?.toISOString() ?? null,
      lastError: r.lastError,
      stuck,
    };
  });
}

export async function runQueue(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const json = argv.includes('--json');
  const unknown = argv.filter((a) => a !== '--json');
  if (unknown.length) {
    console.error(`vigil queue: unknown argument ${unknown[0]}\nUsage: vigil queue [--json]`);
    return 2;
  }
  const leaseMs = Number(env['VIGIL_LEASE_SECONDS'] ?? 60) * 1000;
  const db = await openDatabase(env['DATABASE_URL'] || 'file:./data/vigil.db');
  try {
    const rows = await queueRows(db.prisma, leaseMs);
    if (json) {
      console.log(JSON.stringify(rows, null, 2));
    } else if (!rows.length) {
      console.log('No investigation is queued, running or recently failed.');
    } else {
      for (const r of rows) {
        const holder = r.owner ? `held by ${r.owner} until ${r.leaseUntil}` : 'not held';
        console.log(`${r.stuck ? 'STUCK ' : ''}${r.state.padEnd(7)} ${r.investigation}  step ${r.step}, attempt ${r.attempts}, ${holder}  ${r.title}`);
        if (r.lastError) console.log(`        last error: ${r.lastError}`);
      }
      const stuck = rows.filter((r) => r.stuck).length;
      if (stuck) console.log(`\n${stuck} stuck: no replica has claimed them for a whole lease. Is a replica running, and can it reach the database?`);
    }
    return rows.some((r) => r.stuck) ? 1 : 0;
  } finally {
    await db.close();
  }
}
