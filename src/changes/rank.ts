import type { ChangeEvent, ChangeKind, RankedChange } from './types.js';
import { humanDuration } from '../triage/time.js';

/** How likely each kind of change is to break a running service, all else equal. */
const KIND_WEIGHT: Record<ChangeKind, number> = {
  scale: 1,
  image: 0.95,
  rollout: 0.9,
  deploy: 0.9,
  config: 0.9,
  secret: 0.9,
  flag: 0.85,
  resources: 0.85,
  network_policy: 0.85,
  edit: 0.8,
  helm_upgrade: 0.8,
  helm_rollback: 0.8,
  helm_install: 0.6,
  announcement: 0.7,
  pr_merged: 0.6,
  hpa: 0.5,
  commit: 0.4,
};

export interface RankContext {
  onset: Date;
  /** The alerting workload. */
  target?: { namespace: string; kind: string; name: string };
  /** Objects the target uses (its ConfigMaps/Secrets, its HPA, its Helm release, its repo): `Kind/ns/name` or `Repository//owner/repo`. */
  usedByTarget?: Set<string>;
  /** Services the target calls (upstream of its symptoms), by name. */
  dependencies?: string[];
}

const key = (kind: string, ns: string | undefined, name: string) => `${kind}/${ns ?? ''}/${name}`;

/** Closeness in time: changes just before the onset weigh most; after the onset they cannot be the cause (skew allowed). */
function timeScore(at: Date, onset: Date): { score: number; why: string } {
  const delta = onset.getTime() - at.getTime();
  if (delta < -120_000) return { score: 0.05, why: `${humanDuration(-delta)} after onset` };
  if (delta < 0) return { score: 0.6, why: `${humanDuration(-delta)} after onset (clock skew?)` };
  // Half-life of 30 minutes: 5 min before → 0.89, 1 h → 0.25, 1 day → ~0.
  return { score: Math.max(0.01, Math.pow(0.5, delta / (30 * 60_000))), why: `${humanDuration(delta)} before onset` };
}

function relationScore(c: ChangeEvent, ctx: RankContext): { score: number; why: string } {
  const t = ctx.target;
  if (!t) return { score: 0.5, why: 'target unknown' };
  const k = key(c.target.kind, c.target.namespace, c.target.name);
  if (c.target.name === t.name && (c.target.namespace === t.namespace || !c.target.namespace)) return { score: 1, why: 'same workload' };
  if (ctx.usedByTarget?.has(k)) return { score: 1, why: `used by ${t.name}` };
  if (ctx.dependencies?.includes(c.target.name)) return { score: 0.6, why: `${c.target.name} is a dependency of ${t.name}` };
  if (c.target.namespace === t.namespace) return { score: 0.5, why: `same namespace (${t.namespace})` };
  return { score: 0.1, why: 'no known relation' };
}

/**
 * Rank changes by their relation to the alert: time before onset × relation to the target × kind.
 * Pure; the newest-relevant change first.
 */
export function rankChanges(changes: ChangeEvent[], ctx: RankContext): RankedChange[] {
  return changes
    .map((c) => {
      const time = timeScore(c.at, ctx.onset);
      const rel = relationScore(c, ctx);
      const w = KIND_WEIGHT[c.kind] ?? 0.5;
      return { ...c, score: Math.round(time.score * rel.score * w * 1000) / 1000, why: [time.why, rel.why, c.kind.replace('_', ' ')] };
    })
    .sort((a, b) => b.score - a.score || b.at.getTime() - a.at.getTime());
}
