/**
 * `npm run eval`: run every scenario through the real application (fake Slack and fake/real APIs, as in
 * the demo), grade each diagnosis on nine structured questions, and print a table. Options:
 *   --dir DIR         scenarios from another folder (default test/scenarios)
 *   --json FILE       write the full report
 *   --no-noise        also run every scenario without its noise, reported beside the noisy run
 *   --baseline FILE   fail (exit 1) when the deterministic pass rate drops below the one recorded there
 *   (without --json, VIGIL_REPORT_DIR=DIR writes DIR/eval-<corpus folder>.json, as CI does)
 *   --strict          also fail when a scenario errors, a planted secret leaks, or Slack rejects a call
 *                     (Block Kit limits): what `npm test` runs, once per scenario
 *   --only ID         run one scenario
 *   --model           add the model loop (needs ANTHROPIC_API_KEY or OPENAI_API_KEY; base URLs and model names honoured)
 */
import { writeFileSync, readFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Writable } from 'node:stream';
import { createProvider } from '../src/agent/providers/index.js';
import { modelSettings } from '../src/config/index.js';
import type { ModelProvider } from '../src/agent/types.js';
import { storedDiagnosis } from '../src/eval/diagnosis.js';
import { readContext } from '../src/incidents/context.js';
import { expectedSchema, gradeDiagnosis, QUESTIONS, sameRef, type QuestionId } from '../src/eval/questions.js';
import { createLogger } from '../src/log.js';
import { createRedactor } from '../src/redact/index.js';
import { renderBlocksAsText } from '../src/slack/blocks/text.js';
import { listScenarios, loadScenario } from '../test/scenarios/load.js';
import { startWorld } from '../test/support/world.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: join(root, 'test', 'scenarios') },
    json: { type: 'string' },
    'no-noise': { type: 'boolean', default: false },
    baseline: { type: 'string' },
    strict: { type: 'boolean', default: false },
    only: { type: 'string' },
    model: { type: 'boolean', default: false },
    // Scenarios in N child processes (each with its own fakes and Prometheus), for a 2-core CI.
    jobs: { type: 'string', default: process.env['VIGIL_EVAL_JOBS'] ?? '1' },
    // Internal: the child's part of the list (`i/n`) and where it writes its reports.
    shard: { type: 'string' },
    'shard-out': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log('Usage: npm run eval [-- --dir DIR] [--json FILE] [--no-noise] [--baseline FILE] [--strict] [--only ID] [--model] [--jobs N]');
  process.exit(0);
}

/** One hypothesis as an outside judge reads it: everything structured, nothing only in prose. */
interface ReportedHypothesis {
  label: string;
  status: string;
  confidence: number;
  analyzer: string;
  family?: string;
  role?: string;
  path?: string;
  title: string;
  mechanism: string;
  reason?: string;
  component?: { kind: string; namespace?: string; name: string };
  facts: Record<string, unknown>;
  affected: { kind: string; namespace?: string; name: string }[];
  mitigation?: { action: string; params: Record<string, unknown>; command?: string };
  citations: { stance: string; kind: string; source: string; ref: string; summary: string }[];
}

interface ScenarioReport {
  id: string;
  /** Provenance of the scenario (its public fault, monitoring stack, where its alert points). */
  source?: string;
  stack?: string;
  alertPointsAt?: string;
  /** What the alert was resolved to, and the structured diagnosis. */
  subjects?: string[];
  /** The workloads the walk gathered evidence for. */
  candidates?: string[];
  hypotheses?: ReportedHypothesis[];
  /** The hypothesis board as a person reads it in Slack (the latest version of the card). */
  board?: string;
  /** Planted secrets found in Slack calls, the logs or the database (must be 0). */
  leakedSecrets?: number;
  /** Slack API calls the fake refused (Block Kit limits, missing text…): none is the only right number. */
  slackRejections?: string[];
  noise: boolean;
  modelNeeded: boolean;
  score: number;
  pass: boolean;
  answers: Record<string, boolean>;
  mitigation: 'right' | 'wrong' | 'none' | 'n/a';
  leading?: string;
  notes: string[];
  firstCardMs?: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  error?: string;
}

const settings = values.model ? modelSettings(process.env) : undefined;
const modelProvider: ModelProvider | undefined = settings ? createProvider(settings) : undefined;
if (values.model && !modelProvider) {
  console.error('eval: --model needs ANTHROPIC_API_KEY or OPENAI_API_KEY (and optionally *_BASE_URL / *_MODEL); nothing was run.');
  process.exit(2);
}

async function runOne(dir: string, noise: boolean): Promise<ScenarioReport> {
  const id = basename(dir);
  const base: ScenarioReport = { id, noise, modelNeeded: false, score: 0, pass: false, answers: {}, mitigation: 'n/a', notes: [], inputTokens: 0, outputTokens: 0, costUsd: 0 };
  let world: Awaited<ReturnType<typeof startWorld>> | undefined;
  const logLines: string[] = [];
  try {
    // Logs at debug go through the redacting logger into memory: planted secrets must not reach them either.
    const sink = new Writable({ write: (chunk, _e, done) => (logLines.push(String(chunk)), done()) });
    world = await startWorld({ scenarioDir: dir, noise, logger: createLogger('debug', createRedactor(), sink), ...(modelProvider ? { modelProvider } : {}) });
    const expected = expectedSchema.safeParse(world.scenario.expected);
    if (!expected.success) throw new Error(`expected: ${expected.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    base.modelNeeded = expected.data.model_needed;
    if (world.skipped.length) throw new Error(`cannot run here: ${world.skipped.join('; ')}`);
    const posted = await world.postAlert();
    // From the alert's own post (its ts), not from the start of postAlert: the world's past traffic
    // (earlier alerts, announcements) is played and settled first and is not the first card's latency.
    const t0 = Math.round(Number(posted.ts) * 1000);
    await world.settle();
    const db = world.vigil!.db.prisma;
    // Earlier alerts of the world's past open incidents of their own: grade the one this alert opened.
    const row = await db.alert.findFirst({ where: { messageTs: posted.ts } });
    const incident = row ? await db.incident.findUniqueOrThrow({ where: { id: row.incidentId } }) : await db.incident.findFirstOrThrow({ orderBy: { openedAt: 'desc' } });
    const board = world.slack.callsTo('chat.postMessage').find((c) => {
      const tag = (c.body['metadata'] as { event_payload?: { purpose?: string; incident_id?: string } } | undefined)?.event_payload;
      return tag?.purpose === 'board' && tag.incident_id === incident.id;
    });
    // Without noise, what the noise put in the world (objects, and the events about them) is gone:
    // nothing left to mark unrelated for it.
    let exp = expected.data;
    if (!noise) {
      const full = await loadScenario(dir, { onset: world.scenario.onset });
      const kept = new Set(world.scenario.objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`));
      const dropped = full.objects.filter((o) => !kept.has(`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`));
      const droppedRefs = dropped.flatMap((o) => {
        const involved = (o as { involvedObject?: { kind?: string; namespace?: string; name?: string } }).involvedObject;
        return [{ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }, ...(o.kind === 'Event' && involved?.name ? [{ kind: involved.kind ?? '', namespace: involved.namespace, name: involved.name }] : [])];
      });
      exp = { ...exp, unrelated: exp.unrelated.filter((u) => !droppedRefs.some((d) => sameRef(u, d))) };
    }
    const grade = gradeDiagnosis(await storedDiagnosis(db, incident.id), exp);
    const inv = await db.investigation.findFirstOrThrow({ where: { incidentId: incident.id } });
    const model = readContext(inv.context).model;
    const rows = await db.hypothesis.findMany({ where: { investigationId: inv.id }, include: { evidence: true }, orderBy: { ordinal: 'asc' } });
    const hypotheses: ReportedHypothesis[] = rows.map((h) => {
      const m = h.mitigation ? (JSON.parse(h.mitigation) as { action: string; params: Record<string, unknown>; command?: string }) : undefined;
      return {
        label: h.label,
        status: h.status,
        confidence: h.confidence,
        analyzer: h.analyzer,
        ...(h.family ? { family: h.family } : {}),
        ...(h.role ? { role: h.role } : {}),
        ...(h.path ? { path: h.path } : {}),
        title: h.title,
        mechanism: h.mechanism,
        ...(h.reason ? { reason: h.reason } : {}),
        ...(h.componentKind && h.componentName ? { component: { kind: h.componentKind, ...(h.componentNs ? { namespace: h.componentNs } : {}), name: h.componentName } } : {}),
        facts: h.facts ? (JSON.parse(h.facts) as Record<string, unknown>) : {},
        affected: h.affected ? (JSON.parse(h.affected) as ReportedHypothesis['affected']) : [],
        ...(m ? { mitigation: { action: m.action, params: m.params, ...(m.command ? { command: m.command } : {}) } } : {}),
        citations: h.evidence.map((e) => ({ stance: e.stance, kind: e.kind, source: e.citationSource, ref: e.citationRef, summary: e.summary })),
      };
    });
    const boardPosts = world.slack.calls.filter((c) => (c.method === 'chat.postMessage' || c.method === 'chat.update') && (c.body['metadata'] as { event_payload?: { purpose?: string; incident_id?: string } } | undefined)?.event_payload?.incident_id === incident.id && (c.body['metadata'] as { event_payload?: { purpose?: string } }).event_payload?.purpose === 'board');
    const lastBoard = boardPosts.at(-1)?.body as { text?: string; blocks?: unknown[] } | undefined;
    const outbound = JSON.stringify(world.slack.calls.map((c) => c.body)) + logLines.join('');
    const stored = JSON.stringify(await Promise.all([db.incident.findMany(), db.alert.findMany(), db.investigation.findMany(), db.hypothesis.findMany(), db.evidence.findMany(), db.auditEvent.findMany(), db.changeEvent.findMany()]));
    const leaked = world.scenario.plantedSecrets.filter((secret) => outbound.includes(secret) || stored.includes(secret));
    const ctx = readContext(inv.context) as { subjects?: string[]; candidates?: string[] };
    return {
      ...base,
      score: grade.score,
      pass: grade.pass,
      answers: grade.answers,
      mitigation: grade.mitigation,
      leading: grade.leading,
      notes: grade.notes,
      ...(board ? { firstCardMs: board.at - t0 } : {}),
      ...(world.scenario.source ? { source: world.scenario.source } : {}),
      ...(world.scenario.stack ? { stack: world.scenario.stack } : {}),
      ...(world.scenario.alertPointsAt ? { alertPointsAt: world.scenario.alertPointsAt } : {}),
      ...(ctx.subjects ? { subjects: ctx.subjects } : {}),
      ...(ctx.candidates ? { candidates: ctx.candidates } : {}),
      hypotheses,
      ...(lastBoard ? { board: renderBlocksAsText(lastBoard) } : {}),
      leakedSecrets: leaked.length,
      slackRejections: world.slack.rejections.map((r) => `${r.method}: ${r.error}`),
      ...(leaked.length ? { notes: [...grade.notes, `planted secrets leaked: ${leaked.map((x) => `${x.slice(0, 4)}…`).join(', ')}`] } : {}),
      inputTokens: model?.inputTokens ?? 0,
      outputTokens: model?.outputTokens ?? 0,
      costUsd: model?.costUsd ?? 0,
    };
  } catch (err) {
    return { ...base, error: err instanceof Error ? err.message.split('\n')[0] : String(err) };
  } finally {
    await world?.close().catch(() => undefined);
  }
}

const mark = (b: boolean | undefined) => (b === undefined ? ' ' : b ? '✓' : '✗');

async function main(): Promise<number> {
  let dirs: string[];
  try {
    dirs = await listScenarios(values.dir!);
  } catch (err) {
    console.error(`eval: cannot list scenarios in ${values.dir}: ${(err as Error).message}`);
    return 2;
  }
  if (values.only) dirs = dirs.filter((d) => basename(d) === values.only);
  const shard = values.shard ? /^(\d+)\/(\d+)$/.exec(values.shard) : undefined;
  if (values.shard && !shard) {
    console.error(`eval: --shard wants i/n, got ${values.shard}`);
    return 2;
  }
  if (shard) dirs = dirs.filter((_, i) => i % Number(shard[2]) === Number(shard[1]));
  const jobs = Math.max(1, Math.min(Number(values.jobs) || 1, dirs.length || 1));
  const ids = Object.keys(QUESTIONS) as QuestionId[];
  if (!shard) {
    console.log(`Vigil eval · ${dirs.length} scenario(s)${jobs > 1 ? ` in ${jobs} processes` : ''} · ${modelProvider ? `model ${modelProvider.name} ${modelProvider.model}` : 'deterministic triage only (--model adds the model loop)'} · ${new Date().toISOString()}`);
    console.log(`questions: ${ids.map((q, i) => `${i + 1}=${q}`).join(' ')}\n`);
    console.log(`${'scenario'.padEnd(40)} ${'noise'.padEnd(5)} 1 2 3 4 5 6 7 8 9  score pass  mitig.  1st card  tokens  cost`);
  }
  const reports: ScenarioReport[] = jobs > 1 && !shard ? await runShards(jobs, dirs) : [];
  for (const dir of jobs > 1 && !shard ? [] : dirs) {
    for (const noise of values['no-noise'] ? [true, false] : [true]) {
      const r = await runOne(dir, noise);
      reports.push(r);
      const row = r.error
        ? `ERROR ${r.error}`
        : `${ids.map((q) => mark(r.answers[q])).join(' ')}  ${`${r.score}/9`.padEnd(5)} ${(r.pass ? 'yes' : 'no').padEnd(5)} ${r.mitigation.padEnd(7)} ${r.firstCardMs !== undefined ? `${r.firstCardMs} ms`.padStart(8) : '       -'}  ${String(r.inputTokens).padStart(6)}  $${r.costUsd.toFixed(3)}`;
      console.log(`${r.id.padEnd(40)} ${(noise ? 'yes' : 'no').padEnd(5)} ${row}${r.modelNeeded ? '  (model needed)' : ''}`);
    }
  }
  if (shard) {
    writeFileSync(values['shard-out']!, JSON.stringify(reports));
    return 0;
  }
  const noisy = reports.filter((r) => r.noise);
  const deterministic = noisy.filter((r) => !r.modelNeeded);
  const passed = noisy.filter((r) => r.pass).length;
  const detPassed = deterministic.filter((r) => r.pass).length;
  const summary = {
    total: noisy.length,
    passed,
    passRate: noisy.length ? passed / noisy.length : 0,
    deterministic: { total: deterministic.length, passed: detPassed, passRate: deterministic.length ? detPassed / deterministic.length : 0 },
    ...(values['no-noise']
      ? (() => {
          const clean = reports.filter((r) => !r.noise);
          const p = clean.filter((r) => r.pass).length;
          return { withoutNoise: { total: clean.length, passed: p, passRate: clean.length ? p / clean.length : 0 } };
        })()
      : {}),
    errors: reports.filter((r) => r.error).length,
    at: new Date().toISOString(),
  };
  console.log(`\npassed ${passed}/${noisy.length} (${(summary.passRate * 100).toFixed(0)}%); deterministic-coverable ${detPassed}/${deterministic.length} (${(summary.deterministic.passRate * 100).toFixed(0)}%)${summary.errors ? `; ${summary.errors} scenario run(s) failed to load or run` : ''}`);
  for (const r of reports.filter((x) => !x.pass && !x.error && !x.modelNeeded)) console.log(`  ${r.id}${r.noise ? '' : ' (no noise)'}: ${r.notes.join(' · ')}`);
  // CI collects every eval run's report: VIGIL_REPORT_DIR names the folder, the corpus names the file.
  const reportDir = process.env['VIGIL_REPORT_DIR'];
  const jsonFile = values.json ?? (reportDir ? join(reportDir, `eval-${basename(values.dir)}.json`) : undefined);
  if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ summary, scenarios: reports }, null, 2));

  if (values.strict) {
    const broken = reports.filter((r) => r.error || (r.leakedSecrets ?? 0) > 0 || (r.slackRejections?.length ?? 0) > 0);
    for (const r of broken) console.error(`eval --strict: ${r.id}: ${r.error ?? ''}${r.leakedSecrets ? ` ${r.leakedSecrets} planted secret(s) leaked` : ''}${r.slackRejections?.length ? ` Slack rejected ${r.slackRejections.join(', ')}` : ''}`);
    if (broken.length) return 1;
    console.log('strict: no errors, no leaked secrets, no rejected Slack calls');
  }
  if (values.baseline) {
    if (!existsSync(values.baseline)) {
      console.error(`eval: baseline ${values.baseline} not found`);
      return 2;
    }
    const baseline = JSON.parse(readFileSync(values.baseline, 'utf8')) as { deterministicPassRate: number };
    if (summary.deterministic.passRate + 1e-9 < baseline.deterministicPassRate) {
      console.error(`eval: deterministic pass rate ${(summary.deterministic.passRate * 100).toFixed(1)}% is below the recorded baseline ${(baseline.deterministicPassRate * 100).toFixed(1)}%`);
      return 1;
    }
    console.log(`baseline held: ${(summary.deterministic.passRate * 100).toFixed(1)}% ≥ ${(baseline.deterministicPassRate * 100).toFixed(1)}%`);
  }
  return 0;
}

/**
 * Run the list in `jobs` child processes of this same script (each starts its own fakes, Prometheus and
 * database, so nothing is shared), each printing its rows as they finish; merge their reports in list order.
 */
async function runShards(jobs: number, dirs: string[]): Promise<ScenarioReport[]> {
  const tmp = mkdtempSync(join(tmpdir(), 'vigil-eval-'));
  // What selects and runs scenarios goes to the children; reporting, strictness and the baseline stay here.
  const pass = ['--dir', values.dir!, ...(values.only ? ['--only', values.only] : []), ...(values['no-noise'] ? ['--no-noise'] : []), ...(values.model ? ['--model'] : [])];
  try {
    const parts = await Promise.all(
      Array.from({ length: jobs }, (_, i) => {
        const out = join(tmp, `shard-${i}.json`);
        return new Promise<ScenarioReport[]>((resolve, reject) => {
          const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...pass, '--shard', `${i}/${jobs}`, '--shard-out', out], { stdio: ['ignore', 'inherit', 'inherit'] });
          child.on('error', reject);
          child.on('exit', (code) => (code === 0 && existsSync(out) ? resolve(JSON.parse(readFileSync(out, 'utf8')) as ScenarioReport[]) : reject(new Error(`eval shard ${i}/${jobs} exited with ${code}`))));
        });
      }),
    );
    const order = new Map(dirs.map((d, i) => [basename(d), i]));
    return parts.flat().sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0) || Number(b.noise) - Number(a.noise));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`eval failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  },
);
