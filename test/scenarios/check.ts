/**
 * `npm run scenario:check -- DIR...`: checks scenario folders without running Vigil. For each it loads
 * the world with and without its noise, checks the expected diagnosis against the grader's schema and
 * the fault families, and that every referenced component exists in the world. It grades nothing, so
 * an author can validate a scenario without learning how Vigil would diagnose it.
 */
import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { expectedSchema } from '../../src/eval/questions.js';
import { FAMILY_IDS } from '../../src/triage/families.js';
import { listScenarios, loadScenario, objectId } from './load.js';

async function scenarioDirs(args: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const arg of args) {
    const dir = resolve(arg);
    const isScenario = await stat(join(dir, 'scenario.yaml')).then(() => true, () => false);
    out.push(...(isScenario ? [dir] : await listScenarios(dir)));
  }
  return out;
}

/** Kinds a scenario may name that are not Kubernetes objects of its world. */
const VIRTUAL_KINDS = new Set(['FeatureFlag', 'ExternalService', 'Repository', 'HelmRelease']);

/** `strict` also requires the provenance a blind-corpus scenario must carry (`stack`, `alert_points_at`). */
export async function checkScenario(dir: string, strict = false): Promise<string[]> {
  const problems: string[] = [];
  let scenario;
  try {
    scenario = await loadScenario(dir);
    await loadScenario(dir, { noise: false });
  } catch (err) {
    return [(err as Error).message];
  }
  const parsed = expectedSchema.safeParse(scenario.expected);
  if (!parsed.success) return parsed.error.issues.map((i) => `expected.${i.path.join('.')}: ${i.message}`);
  const e = parsed.data;
  for (const f of [e.family, ...e.also_accept].filter((x): x is string => !!x)) {
    if (!FAMILY_IDS.has(f)) problems.push(`expected: "${f}" is not a fault family (see docs/fault-families.md)`);
  }
  // Events may be about objects that no longer exist (an evicted pod): those count as named.
  const ids = new Set([
    ...scenario.objects.map(objectId),
    ...scenario.objects.flatMap((o) => {
      const io = (o as { involvedObject?: { kind?: string; namespace?: string; name?: string } }).involvedObject;
      return o.kind === 'Event' && io?.kind && io.name ? [io.namespace ? `${io.kind}/${io.namespace}/${io.name}` : `${io.kind}/${io.name}`] : [];
    }),
  ]);
  const exists = (r: { kind: string; namespace?: string; name: string }): boolean => {
    if (VIRTUAL_KINDS.has(r.kind)) return true;
    const prefix = r.namespace ? `${r.kind}/${r.namespace}/` : `${r.kind}/`;
    return r.name.endsWith('*') ? [...ids].some((id) => id.startsWith(prefix + r.name.slice(0, -1))) : ids.has(prefix + r.name);
  };
  if (!exists(e.component) && !e.component.kind.includes('Missing'))
    problems.push(`expected.component ${e.component.kind}/${e.component.namespace ?? ''}/${e.component.name} is not an object of the world (use family missing-object for an object that was deleted, and name it as it was)`);
  for (const [field, refs] of [['affected', e.affected], ['unrelated', e.unrelated]] as const) {
    for (const r of refs) if (!exists(r)) problems.push(`expected.${field}: ${r.kind}/${r.namespace ?? ''}/${r.name} is not an object of the world`);
  }
  for (const r of e.ruled_out) if (typeof r !== 'string' && !exists(r)) problems.push(`expected.ruled_out: ${r.kind}/${r.namespace ?? ''}/${r.name} is not an object of the world`);
  if (scenario.noise.length < 2) problems.push('noise: list at least two pieces of background noise');
  if (strict && !scenario.alertPointsAt) problems.push('alert_points_at: say where the alert points (origin, victim, symptom, namespace or node)');
  if (strict && !scenario.stack) problems.push('stack: name the monitoring stack whose metric names the scenario uses');
  return problems;
}

async function main(): Promise<number> {
  const strict = process.argv.includes('--strict');
  const args = process.argv.slice(2).filter((a) => a !== '--' && a !== '--strict');
  if (args.length === 0) {
    console.error('usage: npm run scenario:check -- [--strict] <scenario folder or folder of scenarios>...');
    return 2;
  }
  const dirs = await scenarioDirs(args);
  let bad = 0;
  for (const dir of dirs) {
    const problems = await checkScenario(dir, strict);
    if (problems.length) bad++;
    console.log(`${problems.length ? '✗' : '✓'} ${basename(dir)}${problems.map((p) => `\n    ${p}`).join('')}`);
  }
  console.log(`\n${dirs.length - bad}/${dirs.length} scenario(s) well-formed`);
  return bad ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) main().then((code) => process.exit(code));
