/**
 * `chaos-experiment`: a Chaos Mesh experiment (PodChaos, NetworkChaos, StressChaos, IOChaos, DNSChaos,
 * TimeChaos, HTTPChaos) or a Litmus ChaosEngine is injecting the fault into a candidate workload.
 *
 * An experiment counts when it is not paused (annotation `experiment.chaos-mesh.org/pause`, condition
 * `Paused`), its status says it runs (Chaos Mesh `status.experiment.desiredPhase: Run` with
 * `containerRecords` in phase `Injected` or the `AllInjected` condition; Litmus `spec.engineState: active`
 * with an engine that has not completed), it started before the onset and did not end long before it,
 * and it selects the candidate's pods: Chaos Mesh `spec.selector` (`namespaces`, defaulting to the
 * experiment's own, `labelSelectors`, `expressionSelectors`, `annotationSelectors`, `pods`) or the pods
 * its records name; a NetworkChaos `spec.target` side; Litmus `spec.appinfo` (`appns`, `applabel`,
 * `appkind`). Labels are matched against the workloads' pod templates in the snapshot.
 *
 * It is corroborated by the candidate's symptoms after the start (5xx ratio / p99 latency up, new error
 * logs) and by what the action does (pod-kill and container-kill restart or replace pods, a network delay
 * shows as latency). Symptoms that began before the experiment refute it; an injection whose targets'
 * metrics answered without any rise stays `open`. A paused, stopped, long finished or later-started
 * experiment that selects a candidate is returned `ruled_out`.
 *
 * Localised to the chaos object (its kind, namespace and name). Facts: `experiment` (`Kind/name`),
 * `action` (`spec.action`; `stress-cpu`/`stress-memory`, `time-offset`, `abort`/`delay` where the kind
 * has none; the Litmus experiment name), `target` (`ns/workload`, comma-separated), `startedAt`, plus
 * `mode`, `duration` and the injected parameter (`latency`, `loss`, `timeOffset`…) as `detail`.
 * Mitigation: `pause_chaos` when the experiment is running and the finding is supported (pause
 * annotation for Chaos Mesh, `engineState: stop` for Litmus; its rollback resumes it). Deleting the
 * experiment stays the owner's call.
 */
import type { V1LabelSelectorRequirement, V1Pod } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, selectorMatches } from '../../topology/graph.js';
import { dependsOn } from '../../topology/walk.js';
import type { CustomObject } from '../../topology/snapshot.js';
import type { ClusterAnalyzer, ClusterTriageInput, TriageInput } from '../analyzer.js';
import { FAILURE_TEXT, targetScope, targetSymptoms, type Symptoms } from '../analyzers/deploy-regression.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { eventEvidenceOf, eventTime } from './common.js';

const NAME = 'chaos-experiment';
const SKEW_MS = 60_000;
/** An experiment that ended this long before the symptoms is not what the alert is about. */
const ENDED_MS = 15 * 60_000;
/** An experiment started this long after the onset did not cause it. */
const LATE_MS = 2 * 60_000;
/** A one-shot action (pod-kill) keeps hurting for about this long after it ran. */
const ONE_SHOT_MS = 10 * 60_000;
const KILL_ACTIONS = /^(pod-kill|pod-failure|container-kill|pod-delete|node-drain)$/;
/** Chaos Mesh actions that act once, at the start, when no duration is given. */
const ONE_SHOT = /^(pod-kill|container-kill)$/;

interface Record_ {
  id?: string;
  phase?: string;
  injectedCount?: number;
  recoveredCount?: number;
  events?: { operation?: string; type?: string; timestamp?: string; message?: string }[];
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
}

interface ChaosState {
  paused: boolean;
  /** The status says the fault is being injected. */
  running: boolean;
  /** Whether the object has any status to tell. */
  statusKnown: boolean;
  /** Pods the records name as injected (`ns/pod`). */
  injected: string[];
  startedAt?: Date;
  endedAt?: Date;
  /** How the status reads, for people. */
  note: string;
}

interface Selection {
  input: TriageInput;
  ref: ComponentRef;
  how: 'record' | 'selector' | 'peer';
  pods: string[];
}

/** Go durations (`30s`, `5m`, `1h30m`, `500ms`) in ms. */
export function goDuration(s: unknown): number | undefined {
  if (typeof s !== 'string' || !s.trim()) return undefined;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let matched = '';
  let m: RegExpExecArray | null;
  while ((m = re.exec(s))) {
    total += Number(m[1]) * (m[2] === 'ms' ? 1 : m[2] === 's' ? 1000 : m[2] === 'm' ? 60_000 : 3600_000);
    matched += m[0];
  }
  return matched === s.trim() ? total : undefined;
}

const date = (x: unknown): Date | undefined => (typeof x === 'string' || x instanceof Date ? (Number.isNaN(new Date(x).getTime()) ? undefined : new Date(x)) : undefined);
const obj = (x: unknown): Record<string, unknown> => (x && typeof x === 'object' ? (x as Record<string, unknown>) : {});

function chaosMeshState(o: CustomObject): ChaosState {
  const status = obj(o.status);
  const exp = obj(status['experiment']);
  const conditions = (status['conditions'] as Condition[] | undefined) ?? [];
  const cond = (type: string) => conditions.find((c) => c.type === type)?.status === 'True';
  const records = ((exp['containerRecords'] ?? exp['records']) as Record_[] | undefined) ?? [];
  const paused = o.metadata.annotations?.['experiment.chaos-mesh.org/pause'] === 'true' || cond('Paused');
  const desired = exp['desiredPhase'] as string | undefined;
  const injectedRecords = records.filter((r) => r.phase === 'Injected' || (r.injectedCount ?? 0) > (r.recoveredCount ?? 0));
  const events = records.flatMap((r) => r.events ?? []);
  const applied = events.filter((e) => e.operation === 'Apply' && e.type !== 'Failed').map((e) => date(e.timestamp)).filter((d): d is Date => !!d);
  const recovered = events.filter((e) => e.operation === 'Recover').map((e) => date(e.timestamp)).filter((d): d is Date => !!d);
  const created = date(o.metadata.creationTimestamp);
  const startedAt = applied.length ? new Date(Math.min(...applied.map((d) => d.getTime()))) : created;
  const duration = goDuration(o.spec?.['duration']);
  const stopped = desired === 'Stop' || (cond('AllRecovered') && !injectedRecords.length);
  let endedAt: Date | undefined;
  if (stopped) endedAt = recovered.length ? new Date(Math.max(...recovered.map((d) => d.getTime()))) : startedAt && duration !== undefined ? new Date(startedAt.getTime() + duration) : undefined;
  else if (startedAt && duration !== undefined) endedAt = new Date(startedAt.getTime() + duration);
  const running = !paused && !stopped && (injectedRecords.length > 0 || cond('AllInjected'));
  const statusKnown = !!desired || records.length > 0 || conditions.length > 0;
  return {
    paused,
    running,
    statusKnown,
    injected: injectedRecords.map((r) => r.id ?? '').filter(Boolean),
    ...(startedAt ? { startedAt } : {}),
    ...(endedAt ? { endedAt } : {}),
    note: paused
      ? 'paused'
      : !statusKnown
        ? 'no status yet'
        : `desiredPhase ${desired ?? 'n/a'}, ${injectedRecords.length} of ${records.length} record${records.length === 1 ? '' : 's'} Injected${cond('AllInjected') ? ', AllInjected' : ''}${cond('AllRecovered') ? ', AllRecovered' : ''}`,
  };
}

function litmusState(o: CustomObject): ChaosState {
  const spec = obj(o.spec);
  const status = obj(o.status);
  const engineState = spec['engineState'] as string | undefined;
  const engineStatus = status['engineStatus'] as string | undefined;
  const experiments = (status['experiments'] as { name?: string; status?: string; verdict?: string; lastUpdateTime?: string }[] | undefined) ?? [];
  const startedAt = date(o.metadata.creationTimestamp);
  const done = engineStatus === 'completed' || engineStatus === 'stopped' || engineState === 'stop';
  const total = Number(envOf(o, 'TOTAL_CHAOS_DURATION'));
  const last = experiments.map((e) => date(e.lastUpdateTime)).filter((d): d is Date => !!d).sort((a, b) => b.getTime() - a.getTime())[0];
  const endedAt = done ? (last ?? (startedAt && Number.isFinite(total) ? new Date(startedAt.getTime() + total * 1000) : undefined)) : startedAt && Number.isFinite(total) && total > 0 ? new Date(startedAt.getTime() + total * 1000) : undefined;
  const running = engineState === 'active' && !done && (experiments.length === 0 ? engineStatus === 'initialized' : experiments.some((e) => /running/i.test(e.status ?? '') || e.verdict === 'Awaited'));
  return {
    paused: false,
    running,
    statusKnown: !!engineStatus || experiments.length > 0,
    injected: [],
    ...(startedAt ? { startedAt } : {}),
    ...(endedAt ? { endedAt } : {}),
    note: `engineState ${engineState ?? 'n/a'}, engineStatus ${engineStatus ?? 'n/a'}${experiments[0] ? `, ${experiments[0].name} ${experiments[0].status ?? ''}${experiments[0].verdict ? ` (verdict ${experiments[0].verdict})` : ''}` : ''}`,
  };
}

/** An env value of the Litmus experiment's components (`TOTAL_CHAOS_DURATION`, `NETWORK_LATENCY`…). */
function envOf(o: CustomObject, name: string): string | undefined {
  const exps = (o.spec?.['experiments'] as { spec?: { components?: { env?: { name?: string; value?: string }[] } } }[] | undefined) ?? [];
  return exps.flatMap((e) => e.spec?.components?.env ?? []).find((e) => e.name === name)?.value;
}

/** The injected action, as the object names it. */
function actionOf(o: CustomObject): string {
  const spec = obj(o.spec);
  if (o.kind === 'ChaosEngine') return ((spec['experiments'] as { name?: string }[] | undefined) ?? [])[0]?.name ?? 'unknown';
  if (typeof spec['action'] === 'string') return spec['action'] as string;
  if (o.kind === 'StressChaos') {
    const s = obj(spec['stressors']);
    const kinds = ['cpu', 'memory'].filter((k) => s[k]);
    return kinds.length ? kinds.map((k) => `stress-${k}`).join(',') : spec['stressngStressors'] ? 'stress-ng' : 'stress';
  }
  if (o.kind === 'TimeChaos') return 'time-offset';
  if (o.kind === 'HTTPChaos') return ['abort', 'delay', 'replace', 'patch'].filter((k) => spec[k] !== undefined && spec[k] !== false).join(',') || 'http';
  return 'unknown';
}

/** What exactly it injects, for people: `delay 300ms ±50ms`, `loss 30%`, `cpu load 100% ×2 workers`. */
function detailOf(o: CustomObject, action: string): { text: string; facts: Record<string, string> } {
  const spec = obj(o.spec);
  if (o.kind === 'NetworkChaos') {
    const delay = obj(spec['delay']);
    if (action === 'delay' && delay['latency']) return { text: `delay ${delay['latency']}${delay['jitter'] ? ` ±${delay['jitter']}` : ''}`, facts: { latency: String(delay['latency']) } };
    const loss = obj(spec['loss']);
    if (action === 'loss' && loss['loss']) return { text: `loss ${loss['loss']}%`, facts: { loss: `${loss['loss']}%` } };
    const corrupt = obj(spec['corrupt']);
    if (action === 'corrupt' && corrupt['corrupt']) return { text: `corrupt ${corrupt['corrupt']}%`, facts: { corrupt: `${corrupt['corrupt']}%` } };
    const bw = obj(spec['bandwidth']);
    if (action === 'bandwidth' && bw['rate']) return { text: `bandwidth ${bw['rate']}`, facts: { rate: String(bw['rate']) } };
    if (action === 'partition') return { text: `partition${spec['direction'] ? ` (direction ${spec['direction']})` : ''}`, facts: {} };
  }
  if (o.kind === 'StressChaos') {
    const s = obj(spec['stressors']);
    const cpu = obj(s['cpu']);
    const mem = obj(s['memory']);
    const parts = [s['cpu'] ? `cpu load ${cpu['load'] ?? 100}% ×${cpu['workers'] ?? 1} workers` : '', s['memory'] ? `memory ${mem['size'] ?? '?'} ×${mem['workers'] ?? 1} workers` : ''].filter(Boolean);
    return { text: parts.join(', '), facts: { ...(s['memory'] && mem['size'] ? { memory: String(mem['size']) } : {}), ...(s['cpu'] ? { cpuLoad: String(cpu['load'] ?? 100) } : {}) } };
  }
  if (o.kind === 'IOChaos') return { text: `${action}${spec['delay'] ? ` ${spec['delay']}` : ''}${spec['errno'] ? ` errno ${spec['errno']}` : ''}${spec['volumePath'] ? ` on ${spec['volumePath']}` : ''}${spec['percent'] ? ` (${spec['percent']}%)` : ''}`, facts: spec['delay'] ? { latency: String(spec['delay']) } : {} };
  if (o.kind === 'TimeChaos' && spec['timeOffset']) return { text: `clock offset ${spec['timeOffset']}`, facts: { timeOffset: String(spec['timeOffset']) } };
  if (o.kind === 'DNSChaos') return { text: `DNS ${action}${Array.isArray(spec['patterns']) ? ` for ${(spec['patterns'] as string[]).join(', ')}` : ''}`, facts: {} };
  if (o.kind === 'HTTPChaos') return { text: `HTTP ${spec['target'] ?? ''} ${action}${spec['delay'] ? ` ${spec['delay']}` : ''}${spec['port'] ? ` on port ${spec['port']}` : ''}`.replace(/\s+/g, ' ').trim(), facts: spec['delay'] ? { latency: String(spec['delay']) } : {} };
  if (o.kind === 'ChaosEngine') {
    const latency = envOf(o, 'NETWORK_LATENCY');
    const loss = envOf(o, 'NETWORK_PACKET_LOSS_PERCENTAGE');
    return { text: [latency ? `latency ${latency} ms` : '', loss ? `loss ${loss}%` : ''].filter(Boolean).join(', '), facts: { ...(latency ? { latency: `${latency}ms` } : {}), ...(loss ? { loss: `${loss}%` } : {}) } };
  }
  return { text: '', facts: {} };
}

interface ChaosSelector {
  namespaces?: string[];
  labelSelectors?: Record<string, string>;
  expressionSelectors?: V1LabelSelectorRequirement[];
  annotationSelectors?: Record<string, string>;
  pods?: Record<string, string[]>;
}

function podsOf(input: TriageInput): string[] {
  return input.kube.pods.map((p: V1Pod) => p.metadata?.name ?? '').filter(Boolean);
}

/** Does a Chaos Mesh selector select this candidate's pods? */
function meshSelects(sel: ChaosSelector | undefined, ownNs: string | undefined, input: TriageInput): string[] | undefined {
  const t = input.kube.target!;
  const template = input.kube.workload?.spec?.template?.metadata;
  const namespaces = sel?.namespaces?.length ? sel.namespaces : [ownNs ?? ''];
  if (!namespaces.includes(t.namespace)) return undefined;
  const pods = podsOf(input);
  if (sel?.pods) {
    const listed = sel.pods[t.namespace] ?? [];
    const hit = listed.filter((p) => pods.includes(p) || p.startsWith(`${t.name}-`));
    return hit.length ? hit : undefined;
  }
  const hasLabels = !!sel?.labelSelectors && Object.keys(sel.labelSelectors).length > 0;
  const hasExpr = !!sel?.expressionSelectors?.length;
  if (hasLabels || hasExpr) {
    if (!selectorMatches({ ...(hasLabels ? { matchLabels: sel!.labelSelectors! } : {}), ...(hasExpr ? { matchExpressions: sel!.expressionSelectors! } : {}) }, template?.labels)) return undefined;
  }
  if (sel?.annotationSelectors && !Object.entries(sel.annotationSelectors).every(([k, v]) => template?.annotations?.[k] === v)) return undefined;
  return pods;
}

/** Litmus `applabel`: `app=checkout`, `app=checkout,tier=web`, `app in (checkout,cart)`. */
function litmusSelects(o: CustomObject, input: TriageInput): string[] | undefined {
  const t = input.kube.target!;
  const app = obj(o.spec?.['appinfo']);
  const ns = (app['appns'] as string | undefined) || o.metadata.namespace;
  if (ns !== t.namespace) return undefined;
  const kind = (app['appkind'] as string | undefined)?.toLowerCase();
  if (kind && kind !== t.kind.toLowerCase()) return undefined;
  const labels = input.kube.workload?.spec?.template?.metadata?.labels ?? {};
  const expr = ((app['applabel'] as string | undefined) ?? '').trim();
  if (!expr) return podsOf(input);
  const set = /^([\w./-]+)\s+in\s+\(([^)]*)\)$/.exec(expr);
  if (set) return set[2]!.split(',').map((v) => v.trim()).includes(labels[set[1]!] ?? '\u0000') ? podsOf(input) : undefined;
  const ok = expr.split(',').every((pair) => {
    const [k, v] = pair.split('=').map((x) => x.trim());
    return !!k && v !== undefined && labels[k] === v;
  });
  return ok ? podsOf(input) : undefined;
}

function selections(input: ClusterTriageInput, o: CustomObject, state: ChaosState): Selection[] {
  const out: Selection[] = [];
  for (const i of input.inputs) {
    const t = i.kube.target;
    if (!t || !i.kube.workload) continue;
    const ref = { kind: t.kind, namespace: t.namespace, name: t.name };
    // The records name the pods that were injected: the strongest tie.
    const mine = podsOf(i);
    const recorded = state.injected.filter((id) => {
      const [ns, pod] = id.split('/');
      if (ns !== t.namespace || !pod) return false;
      const owner = input.cluster.topology.workloadOf(ns, pod);
      return mine.includes(pod) || (owner?.kind === t.kind && owner.name === t.name);
    });
    if (recorded.length) {
      out.push({ input: i, ref, how: 'record', pods: recorded.map((id) => id.split('/')[1]!) });
      continue;
    }
    if (o.kind === 'ChaosEngine') {
      const pods = litmusSelects(o, i);
      if (pods) out.push({ input: i, ref, how: 'selector', pods });
      continue;
    }
    const pods = meshSelects(o.spec?.['selector'] as ChaosSelector | undefined, o.metadata.namespace, i);
    if (pods) {
      out.push({ input: i, ref, how: 'selector', pods });
      continue;
    }
    const target = obj(o.spec?.['target']);
    if (o.kind === 'NetworkChaos' && target['selector']) {
      const peer = meshSelects(target['selector'] as ChaosSelector, o.metadata.namespace, i);
      if (peer) out.push({ input: i, ref, how: 'peer', pods: peer });
    }
  }
  return out;
}

function selectorText(o: CustomObject): string {
  if (o.kind === 'ChaosEngine') {
    const app = obj(o.spec?.['appinfo']);
    return `appinfo ${app['appns'] ?? o.metadata.namespace}/${app['applabel'] ?? '*'}${app['appkind'] ? ` (${app['appkind']})` : ''}`;
  }
  const sel = (o.spec?.['selector'] as ChaosSelector | undefined) ?? {};
  const parts = [
    `namespaces ${(sel.namespaces?.length ? sel.namespaces : [o.metadata.namespace]).join(',')}`,
    sel.labelSelectors ? `labels ${Object.entries(sel.labelSelectors).map(([k, v]) => `${k}=${v}`).join(',')}` : '',
    sel.expressionSelectors?.length ? `expressions ${sel.expressionSelectors.map((e) => `${e.key} ${e.operator} ${(e.values ?? []).join('|')}`).join(', ')}` : '',
    sel.pods ? `pods ${Object.entries(sel.pods).map(([ns, ps]) => `${ns}/${ps.join('|')}`).join(', ')}` : '',
  ].filter(Boolean);
  return parts.join('; ');
}

/** Signs that a kill action hit: containers that restarted, pods created after the start, Killing events. */
function killEvidence(s: Selection, startedAt: Date | undefined): Evidence | undefined {
  const ns = s.ref.namespace;
  const since = (startedAt?.getTime() ?? 0) - SKEW_MS;
  const pods = s.input.kube.pods;
  const restarted = pods.filter((p) =>
    (p.status?.containerStatuses ?? []).some((c) => {
      const fin = c.lastState?.terminated?.finishedAt;
      return (c.restartCount ?? 0) > 0 && (!fin || new Date(fin).getTime() >= since);
    }),
  );
  const fresh = pods.filter((p) => p.metadata?.creationTimestamp && new Date(p.metadata.creationTimestamp).getTime() >= since);
  const killing = s.input.kube.events.find((e) => /^Killing$/.test(e.reason ?? '') && (eventTime(e)?.getTime() ?? 0) >= since && e.involvedObject?.kind === 'Pod' && (e.involvedObject.name ?? '').startsWith(`${s.ref.name}-`));
  if (killing) return eventEvidenceOf(killing);
  if (!restarted.length && !fresh.length) return undefined;
  const p = restarted[0] ?? fresh[0]!;
  return {
    kind: 'object',
    summary: `${restarted.length} pod${restarted.length === 1 ? '' : 's'} of ${s.ref.name} restarted and ${fresh.length} created since the experiment started (e.g. ${p.metadata?.name})`,
    citation: objectCitation('Pod', ns, p.metadata?.name ?? '?', 'status.containerStatuses'),
    ...(startedAt ? { observedAt: startedAt } : {}),
    detail: { restarted: restarted.map((x) => x.metadata?.name), created: fresh.map((x) => x.metadata?.name) },
  };
}

/** The symptom an action should produce: a delay shows as latency, loss/abort/kill as errors. */
function expectedMetric(kind: string, action: string): 'latency_p99' | 'error_ratio' | undefined {
  if (/delay|latency|bandwidth|stress|netem/.test(action)) return 'latency_p99';
  if (/loss|abort|partition|corrupt|kill|failure|delete|fault|error|random/.test(action)) return 'error_ratio';
  return kind === 'HTTPChaos' ? 'error_ratio' : undefined;
}

export const chaosExperiment: ClusterAnalyzer = {
  name: NAME,
  analyze(input: ClusterTriageInput): Finding[] {
    const out: Finding[] = [];
    for (const [kind, objects] of Object.entries(input.cluster.snapshot.custom)) {
      if (!/Chaos$/.test(kind) && kind !== 'ChaosEngine') continue;
      for (const raw of objects) {
        const o = { ...raw, kind: raw.kind ?? kind };
        const f = analyzeOne(input, o);
        if (f) out.push(f);
      }
    }
    return out;
  },
};

function analyzeOne(input: ClusterTriageInput, o: CustomObject): Finding | undefined {
  const state = o.kind === 'ChaosEngine' ? litmusState(o) : chaosMeshState(o);
  const chosen = selections(input, o, state);
  if (!chosen.length) return undefined;
  const ns = o.metadata.namespace;
  const name = o.metadata.name ?? '?';
  const component: ComponentRef = { kind: o.kind, namespace: ns, name };
  const action = actionOf(o);
  const detail = detailOf(o, action);
  const mode = o.spec?.['mode'] as string | undefined;
  const duration = o.spec?.['duration'] as string | undefined;
  const startedAt = state.startedAt;
  const primary = chosen.filter((s) => s.how !== 'peer');
  const targets = (primary.length ? primary : chosen).map((s) => `${s.ref.namespace}/${s.ref.name}`);
  const facts: Record<string, string | number | boolean> = {
    experiment: `${o.kind}/${name}`,
    action,
    target: targets.join(','),
    ...(startedAt ? { startedAt: startedAt.toISOString() } : {}),
    ...(mode ? { mode } : {}),
    ...(duration ? { duration } : {}),
    ...detail.facts,
  };
  const injects = detail.text && detail.text.startsWith(action) ? detail.text : `${action}${detail.text ? ` (${detail.text})` : ''}`;
  const what = `${o.kind} ${ns}/${name} (${injects}${mode ? `, mode ${mode}` : ''})`;
  const objectEvidence: Evidence = {
    kind: 'object',
    summary: `${o.kind} ${ns}/${name}: ${state.note}${state.injected.length ? ` (${state.injected.slice(0, 4).join(', ')})` : ''}${startedAt ? `; started ${clockTime(startedAt)}` : ''}${duration ? `, duration ${duration}` : ''}`,
    citation: objectCitation(o.kind, ns, name, o.kind === 'ChaosEngine' ? 'status' : 'status.experiment'),
    ...(startedAt ? { observedAt: startedAt } : {}),
    detail: { injected: state.injected, running: state.running, paused: state.paused },
  };
  const selectionEvidence: Evidence = {
    kind: 'object',
    summary: `${o.kind} ${name} selects ${selectorText(o)}: ${chosen.map((s) => `${s.ref.kind.toLowerCase()}/${s.ref.name}${s.how === 'peer' ? ' (as the network target)' : s.how === 'record' ? ` (pods ${s.pods.slice(0, 3).join(', ')} injected)` : ''}`).join(', ')}`,
    citation: objectCitation(o.kind, ns, name, o.kind === 'ChaosEngine' ? 'spec.appinfo' : 'spec.selector'),
  };
  const affected = dedupe(chosen.flatMap((s) => targetScope(s.input)));
  const base = { key: `${NAME}:${ns}/${o.kind}/${name}`, analyzer: NAME, family: 'chaos-experiment', component, facts, affected };

  // Not injecting (any more, or yet): considered and cleared.
  const symptomStarts = chosen.map((s) => targetSymptoms(s.input).start).filter((d): d is Date => !!d);
  const firstSymptom = symptomStarts.length ? new Date(Math.min(...symptomStarts.map((d) => d.getTime()))) : undefined;
  const reference = firstSymptom && firstSymptom < input.onset ? firstSymptom : input.onset;
  const ended = state.endedAt && state.endedAt.getTime() < reference.getTime() - ENDED_MS ? state.endedAt : undefined;
  const oneShotOver = o.kind === 'PodChaos' && ONE_SHOT.test(action) && !duration && startedAt && reference.getTime() - startedAt.getTime() > ONE_SHOT_MS;
  const late = startedAt && startedAt.getTime() > input.onset.getTime() + LATE_MS ? startedAt : undefined;
  const stoppedLitmus = o.kind === 'ChaosEngine' && o.spec?.['engineState'] === 'stop';
  if (state.paused || ended || oneShotOver || late || stoppedLitmus) {
    const reason = state.paused
      ? 'the experiment is paused (annotation experiment.chaos-mesh.org/pause: "true")'
      : stoppedLitmus
        ? 'the ChaosEngine is stopped (engineState: stop)'
        : late
          ? `it started at ${clockTime(late)}, ${relativeToOnset(late, input.onset)}`
          : ended
            ? `it ended at ${clockTime(ended)}, ${humanDuration(reference.getTime() - ended.getTime())} before the symptoms began`
            : `its one-shot ${action} ran at ${clockTime(startedAt!)}, ${humanDuration(reference.getTime() - startedAt!.getTime())} before the symptoms`;
    return {
      ...base,
      status: 'ruled_out',
      confidence: 0.05,
      title: `${o.kind} ${name} selects ${targets.join(', ')} but is not injecting`,
      mechanism: `${what} selects ${targets.join(', ')}, but ${reason}.`,
      reason,
      supporting: [],
      refuting: [objectEvidence],
    };
  }

  // Corroboration: the targets' symptoms after the start, and what the action does.
  const supporting: Evidence[] = [objectEvidence, selectionEvidence];
  const refuting: Evidence[] = [];
  const expected = expectedMetric(o.kind, action);
  let corroborated = false;
  let earlier: { s: Selection; sym: Symptoms } | undefined;
  const notes: string[] = [];
  for (const s of chosen) {
    const sym = targetSymptoms(s.input);
    const since = (startedAt?.getTime() ?? 0) - SKEW_MS;
    const before = sym.metrics.filter((m) => startedAt && m.start.getTime() < since - 5 * 60_000).sort((a, b) => a.start.getTime() - b.start.getTime())[0];
    if (before) {
      earlier = { s, sym };
      refuting.push({ ...before.evidence, summary: `${before.evidence.summary} — before the experiment started${startedAt ? ` (${clockTime(startedAt)})` : ''}` });
      continue;
    }
    const after = sym.metrics.filter((m) => !startedAt || m.start.getTime() >= since).sort((a, b) => Number(b.metric === expected) - Number(a.metric === expected));
    if (after[0]) {
      corroborated = true;
      supporting.push(after[0].evidence);
      notes.push(`${s.ref.name}'s ${after[0].metric === 'latency_p99' ? 'p99 latency' : '5xx ratio'} rose ${startedAt ? humanDuration(after[0].start.getTime() - startedAt.getTime()) : ''} after it started`.replace(/\s+/g, ' '));
    }
    const log = sym.logs.find((l) => !startedAt || !l.first || l.first.getTime() >= since);
    if (log) {
      corroborated = true;
      supporting.push(log.evidence);
    }
    if (KILL_ACTIONS.test(action)) {
      const k = killEvidence(s, startedAt);
      if (k) {
        corroborated = true;
        supporting.push(k);
        notes.push(`${s.ref.name}'s pods were restarted or replaced`);
      }
    }
  }
  // A network fault (netem delay, loss, partition) is invisible in the target's own server metrics: its
  // handlers run as fast as ever, the packets wait in the kernel. A clock offset too: the target serves
  // fine, what it stamps (tokens, certificates, leases) is rejected by the others. Its callers see it, so
  // the alerted workloads that depend on a target and whose symptoms began after the start corroborate it.
  const seenByCallers = o.kind === 'NetworkChaos' || o.kind === 'TimeChaos' || /delay|loss|partition|bandwidth|corrupt|duplicate|netem|time-offset/i.test(action);
  if (!corroborated && !earlier && seenByCallers) {
    const { topology, walk } = input.cluster;
    const since = (startedAt?.getTime() ?? 0) - SKEW_MS;
    for (const caller of input.inputs) {
      const t = caller.kube.target;
      // The alerted workloads: a subject itself or behind one (0 hops from what the alert names).
      if (!t || chosen.some((c) => c.input === caller) || walk.reached.get(nodeId(t))?.hops !== 0) continue;
      if (!chosen.some((c) => dependsOn(topology, t, c.ref))) continue;
      const callerSym = targetSymptoms(caller);
      const rise = callerSym.metrics.filter((m) => !startedAt || m.start.getTime() >= since).sort((a, b) => a.start.getTime() - b.start.getTime())[0];
      // A rejection is not always a 5xx (an expired token is a 401, logged as a warning): the caller's
      // failure lines that first appeared after the start count too.
      const log = callerSym.logs.find((l) => !startedAt || !l.first || l.first.getTime() >= since) ?? failureLinesSince(caller, startedAt ? since : undefined);
      if (!rise && log) {
        corroborated = true;
        supporting.push(log.evidence);
        notes.push(`${t.name}, which calls ${chosen.map((c) => c.ref.name).join(', ')}, logs new errors since it started`);
        break;
      }
      if (!rise) continue;
      corroborated = true;
      supporting.push(rise.evidence);
      notes.push(`${t.name}, which calls ${chosen.map((c) => c.ref.name).join(', ')}, saw its ${rise.metric === 'latency_p99' ? 'p99 latency' : '5xx ratio'} rise ${startedAt ? humanDuration(rise.start.getTime() - startedAt.getTime()) : ''} after it started (a ${o.kind === 'TimeChaos' || /time/i.test(action) ? 'clock offset' : 'network fault'} does not show in the target's own server metrics)`.replace(/\s+/g, ' '));
      break;
    }
  }
  const longRunning = startedAt && firstSymptom && firstSymptom.getTime() - startedAt.getTime() > 3600_000 && input.onset.getTime() - startedAt.getTime() > 3 * 3600_000;
  if (longRunning && startedAt && firstSymptom) refuting.push({ ...objectEvidence, summary: `${objectEvidence.summary}: injecting since ${clockTime(startedAt)}, ${humanDuration(firstSymptom.getTime() - startedAt.getTime())} before the symptoms began` });

  // Records that name other pods (mode `one`, a namespace-wide selector) do not show an injection into these.
  const quiet = chosen.every((s) => targetSymptoms(s.input).metricsKnown);
  const injectedIntoTarget = chosen.some((s) => s.how === 'record') || (state.running && !state.injected.length && primary.length > 0);
  let status: Finding['status'];
  let confidence: number;
  if (earlier && !corroborated) {
    status = 'inconclusive';
    confidence = 0.3;
  } else if (longRunning && !injectedIntoTarget) {
    status = 'inconclusive';
    confidence = 0.35;
  } else if (state.running && (injectedIntoTarget || corroborated)) {
    if (refuting.length) {
      status = 'inconclusive';
      confidence = 0.45;
    } else if (corroborated) {
      status = 'supported';
      confidence = injectedIntoTarget ? 0.9 : 0.78;
    } else if (quiet) {
      // Injecting, but the targets' metrics answered and nothing moved: not what hurts.
      status = 'open';
      confidence = 0.5;
      notes.push(`yet ${primary.map((s) => s.ref.name).join(', ')} show${primary.length === 1 ? 's' : ''} no error or latency rise since it started`);
    } else {
      status = 'supported';
      confidence = 0.75;
    }
  } else {
    // Selected, started before the onset and not over, but the status does not say it injected.
    status = 'open';
    confidence = corroborated ? 0.6 : 0.45;
  }
  const peerNote = chosen.some((s) => s.how === 'peer') ? ` Traffic between its pods and ${chosen.filter((s) => s.how === 'peer').map((s) => s.ref.name).join(', ')} (spec.target) is affected too.` : '';
  return {
    ...base,
    status,
    confidence,
    title: `chaos experiment ${o.kind} ${name} injects ${injects} into ${targets.map((t) => t.split('/')[1]).join(', ')}`,
    mechanism:
      `${what} ${state.running ? 'is running' : 'selects the pods but its status does not show an injection'} against ${targets.join(', ')}` +
      (startedAt ? ` since ${clockTime(startedAt)}, ${relativeToOnset(startedAt, input.onset)}` : '') +
      (state.endedAt && state.endedAt > input.onset ? `, until ${clockTime(state.endedAt)}` : '') +
      ` (${state.note}).` +
      (notes.length ? ` ${notes.join('; ')}.` : '') +
      peerNote +
      (refuting.length ? ' But the symptoms do not line up with it (see refuting evidence).' : ' Pause or delete the experiment to stop the fault.'),
    scope: `${targets.join(', ')}${mode && mode !== 'all' ? ` (mode ${mode}: some pods)` : ''} and whoever calls them`,
    supporting,
    refuting,
    ...(status === 'supported' && state.running && !state.paused && o.metadata.namespace
      ? {
          mitigation: {
            action: 'pause_chaos',
            target: { kind: o.kind, namespace: o.metadata.namespace, name },
            params: {},
            command:
              o.kind === 'ChaosEngine'
                ? `kubectl patch chaosengine/${name} -n ${o.metadata.namespace} --type=merge -p '{"spec":{"engineState":"stop"}}'`
                : `kubectl annotate ${o.kind.toLowerCase()}/${name} -n ${o.metadata.namespace} experiment.chaos-mesh.org/pause=true`,
            rationale: `stop ${what} injecting ${injects} into ${targets.join(', ')}; it is ${o.kind === 'ChaosEngine' ? 'stopped' : 'paused'}, not deleted (its owner decides whether it runs again)`,
          },
        }
      : {}),
  };
}

function dedupe(refs: ComponentRef[]): ComponentRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = `${r.kind}/${r.namespace ?? ''}/${r.name}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** What a caller logs when it refuses what the target stamped (a token, a certificate, a signature). */
const REJECTION_TEXT = /reject|invalid|expired|not yet valid|used before issued|denied|unauthori[sz]ed|forbidden/i;

/** A caller's warning or error log template that names a failure and first appeared at `since` or later (its Running pods' logs). */
function failureLinesSince(input: TriageInput, since: number | undefined): { evidence: Evidence } | undefined {
  if (since === undefined) return undefined;
  for (const c of input.kube.containerLogs) {
    const p = c.patterns.find((x) => (x.level === 'error' || x.level === 'warn') && (FAILURE_TEXT.test(x.template) || REJECTION_TEXT.test(x.template)) && x.first && x.first.getTime() >= since && x.count >= 3);
    if (!p) continue;
    return {
      evidence: {
        kind: 'log',
        summary: `[${p.level}] "${p.template.slice(0, 160)}" ×${p.count} in ${c.pod}/${c.container} since ${clockTime(p.first!)}`,
        citation: objectCitation('Pod', input.kube.target?.namespace, c.pod, `log?container=${c.container}`),
        observedAt: p.first!,
      },
    };
  }
  return undefined;
}
