/**
 * From many candidates' findings to one diagnosis: which supported finding is the origin, which are its
 * victims, which are unrelated, with the path from the alert and the scope from the graph. Pure.
 *
 * The rule: a supported finding is a victim when another supported finding sits further down its
 * dependency path (its component depends on the other's, through the service graph) and did not start
 * after it. Origins are the supported findings nothing explains. A victim's hypotheses are ruled out as
 * causes with the origin as the evidence: a change-based one ("its own deploy broke it") is refuted, a
 * symptom ("its pool is full") is kept as true and called a consequence, marked victim. The culprit's own failing pods are never background noise.
 */
import type { ComponentRef, Evidence } from '../evidence/types.js';
import { nodeId, WORKLOAD_KINDS, type Topology } from '../topology/graph.js';
import type { Subject } from '../topology/subjects.js';
import { affectedBy, dependsOn, pathText, type Walk } from '../topology/walk.js';
import type { TriageInput } from './analyzer.js';
import type { RankedChange } from '../changes/types.js';
import { clearChanges } from './clearances.js';
import { withGitRevert } from './cluster/git-source.js';
import { clearConcurrentAlerts, type OtherAlert } from './concurrent-alerts.js';
import type { Finding, HypothesisRole } from './types.js';

export interface ReconcileContext {
  topology: Topology;
  walk: Walk;
  subjects: Subject[];
  onset: Date;
  inputs: TriageInput[];
  /** Every change of the investigation, ranked against what the alert names: look-alikes are cleared from it. */
  changes?: RankedChange[];
  /** Alerts of other incidents near the onset: look-alike failures, cleared once the origin is found. */
  otherAlerts?: OtherAlert[];
}

/** Analyzers whose hypothesis blames the component's own change: ruled out, not merely demoted, when a deeper cause explains it. */
const CHANGE_BLAMING = new Set(['deploy-regression', 'config-change', 'helm-release', 'flag-flip']);
const TIME_FACTS = ['changedAt', 'deployedAt', 'dependencyStart', 'symptomStart', 'since', 'conditionSince', 'limitedSince', 'startedAt'];
const SKEW_MS = 2 * 60_000;
/** Symptoms of load on a workload: a consequence when the origin sits on that same workload. */
const LOAD_SYMPTOMS = new Set(['cpu-throttling', 'load-spike']);
/** Trouble that began this long before the onset stays noise even on the origin's own pods (an old crash loop). */
const NOISE_LONG_BEFORE_MS = 60 * 60_000;

interface Placed {
  f: Finding;
  /** The graph node the finding is about (its component, or the workload its analyzer read). */
  anchor: string;
  /** The workload whose evidence produced it. */
  producer?: string;
}

export function reconcileFindings(findings: Finding[], ctx: ReconcileContext): Finding[] {
  const t = ctx.topology;
  const producerOf = (f: Finding): string | undefined => {
    const c = f.component;
    if (!c) return undefined;
    for (const input of ctx.inputs) {
      const target = input.kube.target;
      if (target && target.namespace === c.namespace && (target.name === c.name || (f.mitigation?.target.name === target.name))) return nodeId(target);
    }
    const m = f.mitigation?.target;
    return m ? nodeId(m) : undefined;
  };
  const placed: Placed[] = findings.map((f) => {
    const producer = producerOf(f);
    return { f, anchor: anchorOf(f, t) ?? producer ?? (f.component ? nodeId(f.component) : ''), ...(producer ? { producer } : {}) };
  });

  const supported = placed.filter((p) => p.f.status === 'supported' && p.anchor);
  const explainedBy = new Map<Placed, Placed>();
  for (const victim of supported) {
    for (const cause of supported) {
      if (cause === victim || !explains(cause, victim, t)) continue;
      // Each explains the other (a Service and the workload it selects): the object beats the workload's
      // symptom, else the stronger finding wins; never both ruled out.
      if (explains(victim, cause, t) && !wins(cause, victim)) continue;
      const prev = explainedBy.get(victim);
      // The deepest explanation wins: one that itself is not explained.
      if (!prev || explains(cause, prev, t)) explainedBy.set(victim, cause);
    }
  }
  // Several unexplained origins: one that began later and hurts only what an earlier one already hurts
  // is a symptom of it (a dependency that looks broken because the real cause broke its callers).
  const unexplained = supported.filter((p) => !explainedBy.has(p));
  for (const later of unexplained) {
    for (const earlier of unexplained) {
      if (earlier === later || explainedBy.has(earlier) || explainedBy.has(later)) continue;
      const te = timeOf(earlier.f);
      const tl = timeOf(later.f);
      if (!te || !tl || tl.getTime() <= te.getTime() + SKEW_MS || later.f.confidence > earlier.f.confidence + 0.05) continue;
      const hurt = new Set([...(earlier.f.affected ?? []).map(nodeId), earlier.anchor]);
      const laterHurts = (later.f.affected ?? []).filter((a) => nodeId(a) !== later.anchor);
      if (laterHurts.length && laterHurts.every((a) => hurt.has(nodeId(a)) || [...hurt].some((h) => dependsOn(t, a, refOf(h))))) explainedBy.set(later, earlier);
    }
  }
  const origins = supported.filter((p) => !explainedBy.has(p));
  // What an origin names as its consequences (load it pushed onto shared infrastructure) is explained by it.
  for (const p of placed) {
    if (p.f.status !== 'supported' && p.f.status !== 'open') continue;
    const cause = origins.find((o) => o !== p && (o.f.consequences ?? []).some((c) => p.f.component && nodeId(c) === nodeId(p.f.component)));
    if (cause) {
      explainedBy.set(p, cause);
      const i = origins.indexOf(p);
      if (i >= 0) origins.splice(i, 1);
    }
  }
  // An open hypothesis on a victim that began after an origin did (the re-login wave's traffic, the
  // pool that filled once the database locked) is a consequence of it too.
  for (const p of placed) {
    if (p.f.status !== 'open' || !p.anchor || !timeOf(p.f)) continue;
    const cause = origins.find((o) => o !== p && explains(o, p, t) && timeOf(o.f) !== undefined);
    if (cause) explainedBy.set(p, cause);
  }
  // Load on the origin's own workload (CPU throttling, a traffic rise) that is not sure of itself is
  // what the origin leaves behind: fewer Ready pods carry the same traffic. Unless it plainly began first.
  for (const p of placed) {
    if ((p.f.status !== 'open' && p.f.status !== 'inconclusive') || !LOAD_SYMPTOMS.has(p.f.analyzer) || explainedBy.has(p)) continue;
    const cause = origins.find((o) => o !== p && o.anchor === p.anchor && o.f.family !== p.f.family && !(timeOf(p.f) && timeOf(o.f) && timeOf(p.f)!.getTime() < timeOf(o.f)!.getTime() - SKEW_MS));
    if (cause) explainedBy.set(p, cause);
  }
  const originAnchors = new Set(origins.map((o) => o.anchor));
  const originWorkloads = new Set(origins.flatMap((o) => [o.anchor, o.producer].filter((x): x is string => !!x)));
  // Objects an origin cites as its evidence (the migration Job holding the lock): part of the cause,
  // so a noise finding about one of them is dropped rather than posted as "unrelated".
  const objectOf = (ref: string) => ref.split('#')[0]!.replace(/\/log(\?.*)?$/, '');
  const originCites = new Set(origins.flatMap((o) => o.f.supporting.map((e) => objectOf(e.citation.ref))));

  const out: Finding[] = [];
  for (const p of placed) {
    let f = p.f;
    // A failing pod of the culprit or of its victims is not noise, unless its trouble predates the onset
    // by far (background-noise reports pods the walk reached only then).
    const troubleSince = f.refuting[0]?.observedAt;
    const longBefore = !!troubleSince && ctx.onset.getTime() - troubleSince.getTime() > NOISE_LONG_BEFORE_MS;
    if (f.analyzer === 'background-noise' && /^noise:(pod|workload):/.test(f.key) && f.component?.namespace && !longBefore) {
      const owner = f.component.kind === 'Pod' ? t.workloadOf(f.component.namespace, f.component.name) : f.component;
      if (owner && (originWorkloads.has(nodeId(owner)) || origins.some((o) => dependsOn(t, owner, refOf(o.anchor))))) continue;
    }
    if (f.status === 'unrelated' && [...f.refuting, ...f.supporting].some((e) => originCites.has(objectOf(e.citation.ref)))) continue;
    const cause = explainedBy.get(p);
    if (cause) {
      const why = `explained further down the path: ${cause.f.title}${pathOf(cause, ctx) ? ` (${pathOf(cause, ctx)})` : ''}`;
      const evidence: Evidence = { kind: 'note', summary: `${cause.f.component ? `${cause.f.component.kind.toLowerCase()}/${cause.f.component.name}` : 'a deeper cause'}: ${cause.f.title}`, citation: cause.f.supporting[0]?.citation ?? { source: 'vigil', ref: cause.f.key } };
      // As a cause it is ruled out either way; a symptom (a full pool, a failing probe) stays true and is
      // said to be a consequence, a change-based claim ("its own deploy broke it") is simply refuted.
      f = CHANGE_BLAMING.has(f.analyzer)
        ? { ...f, status: 'ruled_out', confidence: Math.min(f.confidence, 0.2), reason: why, refuting: [...f.refuting, evidence] }
        : { ...f, status: 'ruled_out', confidence: Math.min(f.confidence, 0.25), reason: `a consequence, not the cause: ${why}`, refuting: [...f.refuting, evidence] };
    }
    const role = roleOf(p, f, { t, origins, originAnchors, walk: ctx.walk });
    const path = pathOf(p, ctx);
    f = { ...f, role, ...(path ? { path } : {}) };
    if (origins.includes(p)) f = { ...f, affected: mergeAffected(f, p, t, ctx) };
    out.push(f);
  }
  // A change claim refuted on a component where another analyzer of its family shows the change's
  // delayed effect ("the deploy is 3 h old" against "that deploy dropped preStop, every scale-down since
  // fails"): the supported one stands, the refutation would contradict it.
  const supportedOn = new Set(out.filter((f) => f.status === 'supported' && f.component).map((f) => `${f.family}|${nodeId(f.component!)}`));
  for (let i = out.length - 1; i >= 0; i--) {
    const f = out[i]!;
    if (f.status === 'ruled_out' && CHANGE_BLAMING.has(f.analyzer) && f.component && supportedOn.has(`${f.family}|${nodeId(f.component)}`)) out.splice(i, 1);
  }
  // A GitOps-applied origin with no fix of its own: revert the PR that put it there.
  for (let i = 0; i < out.length; i++) if (out[i]!.role === 'origin') out[i] = withGitRevert(out[i]!, t.snapshot, ctx.changes ?? [], ctx.onset);
  // Changes near the onset that look like causes and are not: raised, and ruled out with why.
  const originFindings = out.filter((f) => f.role === 'origin' && f.status === 'supported');
  for (const cleared of clearChanges(ctx.changes ?? [], originFindings, out, ctx)) {
    if (out.some((f) => f.key === cleared.key)) continue;
    // The same change already on the board as an open "its deploy broke it": that one is cleared, with the reason.
    const twins = out.map((f, i) => ({ f, i })).filter(({ f }) => f.status === 'open' && CHANGE_BLAMING.has(f.analyzer) && f.family === cleared.family && f.component && cleared.component && nodeId(f.component) === nodeId(cleared.component));
    for (const { f, i } of twins) out[i] = { ...f, status: cleared.status, confidence: Math.min(f.confidence, 0.1), reason: cleared.reason!, refuting: [...f.refuting, ...cleared.refuting] };
    if (!twins.length) out.push(cleared);
  }
  for (const cleared of clearConcurrentAlerts(ctx.otherAlerts ?? [], originFindings, out, ctx)) if (!out.some((f) => f.key === cleared.key)) out.push(cleared);
  return out;
}

/** The graph node a finding is about: its component when the graph knows it (a Pod stands for its workload). */
function anchorOf(f: Finding, t: Topology): string | undefined {
  const c = f.component;
  if (!c) return undefined;
  if (c.kind === 'Pod' && c.namespace) {
    const owner = t.workloadOf(c.namespace, c.name);
    return owner ? nodeId(owner) : undefined;
  }
  return t.has(c) ? nodeId(c) : undefined;
}

/** Does `cause` explain `victim`: the victim depends on the cause's component, and the cause did not start after it. */
function explains(cause: Placed, victim: Placed, t: Topology): boolean {
  const timeOk = () => {
    const a = timeOf(cause.f);
    // The victim's side is when it started to hurt: a deploy 20 min old whose errors began 6 min ago is
    // explained by a cause that changed in between.
    const b = symptomTimeOf(victim.f) ?? timeOf(victim.f);
    return !a || !b || a.getTime() <= b.getTime() + SKEW_MS;
  };
  if (cause.anchor === victim.anchor) {
    // On one component: an object's own finding (a ConfigMap, a flag) explains its workload's symptom.
    return deeperKind(cause.f.component, victim.f.component) && timeOk();
  }
  // A client that overloads a store (a pile-up of CronJob runs, a flood) is the store's cause, never its victim.
  // Also a client whose side of the link is broken (it writes to a store's old primary): the store's
  // own trouble then is the client's doing or beside the point, never its cause.
  const overloads = (f: Finding) => (typeof f.facts?.['overloads'] === 'string' ? f.facts['overloads'] : typeof f.facts?.['clientSideOf'] === 'string' ? f.facts['clientSideOf'] : undefined);
  if (overloads(victim.f) && overloads(victim.f) === cause.f.component?.name) return false;
  if (overloads(cause.f) && overloads(cause.f) === victim.f.component?.name) return timeOk();
  // A workload that names its victims (a preemptor evicting other workloads' pods) explains their findings.
  const named = typeof cause.f.facts?.['victims'] === 'string' ? cause.f.facts['victims'].split(',') : [];
  if (victim.f.component && named.includes(victim.f.component.name) && (cause.f.affected ?? []).some((a) => nodeId(a) === nodeId(victim.f.component!))) return timeOk();
  const victimRef = refOf(victim.anchor);
  const causeRef = refOf(cause.anchor);
  // A full connection pool is explained by what sits behind the pool (its data store, or the store's
  // node, disk, network), never by another workload the victim merely calls over HTTP: a callee's
  // errors do not hold JDBC connections.
  if (victim.f.facts?.['metric'] === 'db_pool_saturation' && cause.f.component && (WORKLOAD_KINDS.has(cause.f.component.kind) || cause.f.component.kind === 'Service') && !isStore(cause.f)) return false;
  if (dependsOn(t, victimRef, causeRef)) return timeOk();
  // A finding about something outside the graph (a feature flag, a repository) read from a workload
  // explains that workload's symptoms and those of whoever depends on it.
  if (!t.has(cause.f.component ?? { kind: '', name: '' }) && cause.producer && (cause.producer === victim.anchor || dependsOn(t, victimRef, refOf(cause.producer)))) return timeOk();
  // An object that is not a workload (a quota, a webhook, a node) explains the workloads it names as hurt.
  if (cause.f.component && !WORKLOAD_KINDS.has(cause.f.component.kind) && (cause.f.affected ?? []).some((a) => nodeId(a) === victim.anchor || dependsOn(t, victimRef, a))) return timeOk();
  return false;
}

const STORE_NAME = /postgres|postgis|pg(?:-|$)|mysql|mariadb|mongo|redis|valkey|memcache|cassandra|scylla|elastic|opensearch|clickhouse|cockroach|(?:^|-)db(?:-|$)|database|sql/i;
const STORE_FAMILIES = new Set(['database-degraded', 'disk-full', 'storage-unavailable']);

/** A finding about a data store: its family says so, or the workload is named like one. */
function isStore(f: Finding): boolean {
  return STORE_FAMILIES.has(f.family ?? '') || STORE_NAME.test(f.component?.name ?? '');
}

/** Of two findings that explain each other, which one is the cause. */
function wins(a: Placed, b: Placed): boolean {
  const objA = !!a.f.component && !WORKLOAD_KINDS.has(a.f.component.kind);
  const objB = !!b.f.component && !WORKLOAD_KINDS.has(b.f.component.kind);
  if (objA !== objB) return objA;
  if (a.f.confidence !== b.f.confidence) return a.f.confidence > b.f.confidence;
  return a.f.key < b.f.key;
}

/** A non-workload component (ConfigMap, NetworkPolicy, Node, FeatureFlag…) is the deeper cause of its workload's finding. */
function deeperKind(cause: ComponentRef | undefined, victim: ComponentRef | undefined): boolean {
  if (!cause || !victim) return false;
  return !WORKLOAD_KINDS.has(cause.kind) && WORKLOAD_KINDS.has(victim.kind);
}

/** When a finding's symptoms began, when it says (`symptomStart`). */
function symptomTimeOf(f: Finding): Date | undefined {
  const v = f.facts?.['symptomStart'];
  return typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v) ? new Date(v) : undefined;
}

function timeOf(f: Finding): Date | undefined {
  const times = TIME_FACTS.map((k) => f.facts?.[k]).filter((v): v is string => typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v)).map((v) => new Date(v));
  return times.length ? new Date(Math.min(...times.map((d) => d.getTime()))) : undefined;
}

function roleOf(p: Placed, f: Finding, ctx: { t: Topology; origins: Placed[]; originAnchors: Set<string>; walk: Walk }): HypothesisRole {
  if (f.status === 'unrelated') return 'unrelated';
  if (ctx.origins.includes(p)) return 'origin';
  if (!p.anchor) return 'unrelated';
  if (ctx.originAnchors.has(p.anchor) || (p.producer && ctx.originAnchors.has(p.producer) && f.status !== 'ruled_out')) return f.status === 'ruled_out' ? 'unrelated' : 'origin';
  const ref = refOf(p.anchor);
  if (ctx.origins.some((o) => dependsOn(ctx.t, ref, refOf(o.anchor)))) return 'victim';
  if (ctx.walk.starts.some((s) => s.id === p.anchor) && ctx.origins.length) return 'victim';
  return 'unrelated';
}

function pathOf(p: Placed, ctx: ReconcileContext): string | undefined {
  const reached = ctx.walk.reached.get(p.anchor) ?? (p.producer ? ctx.walk.reached.get(p.producer) : undefined);
  if (!reached) return undefined;
  const steps = [...reached.path];
  const c = p.f.component;
  if (c && nodeId(c) !== reached.id) steps.push({ ref: c });
  return steps.length > 1 ? pathText(steps) : undefined;
}

/** The analyzer's scope, then what the graph says depends on the origin (its readers, callers, front doors). */
function mergeAffected(f: Finding, p: Placed, t: Topology, ctx: ReconcileContext): ComponentRef[] {
  const seen = new Set<string>();
  const out: ComponentRef[] = [];
  const add = (r: ComponentRef) => {
    const id = nodeId(r);
    if (seen.has(id)) return;
    seen.add(id);
    out.push(r);
  };
  for (const r of f.affected ?? []) add(r);
  // The origin workload is itself affected: its pods are the ones failing (or misbehaving).
  if (f.component && WORKLOAD_KINDS.has(f.component.kind)) add(f.component);
  // A workload the analyzer saw failing hurts its own callers and front doors (one step: their Services and callers).
  for (const r of f.affected ?? []) if (WORKLOAD_KINDS.has(r.kind) && t.has(r)) for (const x of affectedBy(r, t, { limit: 8 }).filter((x) => x.kind !== 'Job')) add(x);
  const from = f.component && t.has(f.component) ? f.component : p.producer ? refOf(p.producer) : undefined;
  if (from) {
    if (WORKLOAD_KINDS.has(from.kind) && from !== f.component) add(from);
    for (const r of affectedBy(from, t, { limit: 30 })) add(r);
  }
  // What the alert names is affected by definition when it depends on the origin.
  for (const s of ctx.subjects) if (from && nodeId(s.ref) !== nodeId(from) && (!f.component || nodeId(s.ref) !== nodeId(f.component)) && dependsOn(t, s.ref, from)) add(s.ref);
  // An Ingress hurt by its controller (or a gateway) fails for the Services behind it: their traffic is refused at the edge.
  for (const r of [...out]) if (r.kind === 'Ingress' && t.outgoing(nodeId(r)).some((e) => e.kind === 'served-by' && seen.has(e.to))) for (const e of t.outgoing(nodeId(r))) if (e.kind === 'routes') add(refOf(e.to));
  // The autoscaler of an affected workload reacts to the fault (scales out, hits its ceiling): in scope too.
  for (const r of [...out]) if (WORKLOAD_KINDS.has(r.kind)) for (const e of t.outgoing(nodeId(r))) if (e.kind === 'scaled-by') add(refOf(e.to));
  return out.slice(0, 40);
}

function refOf(id: string): ComponentRef {
  const [kind, namespace, ...name] = id.split('/');
  return { kind: kind!, ...(namespace ? { namespace } : {}), name: name.join('/') };
}
