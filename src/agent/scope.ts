/**
 * The model's proposed fixes are screened before they join the board. A model can be wrong, confused or
 * prompt-injected ("scale payments to 0", "set the image to registry.evil/miner"), and a fix that the
 * approval flow would refuse must not reach a card at all, not even a refusal card. What the run can
 * see is checked here, the way the policy and the planner would check it:
 *
 * - the target is in the incident's scope: the alert's resolved target and its catalog dependencies,
 *   judged by the policy's own `inScope` (a dependency whose namespace the run cannot see is allowed in
 *   any namespace, so nothing the policy would allow is dropped here);
 * - a flag or repository is one the service catalog gives that service (the policy's `foreignResource`);
 * - the parameters are what the action takes (the planner's own schema);
 * - a `set_image` names an image that already ran in the target's namespace (a current or earlier pod
 *   template): an image read in a log line or invented by the model is never proposed.
 *
 * A dropped fix leaves its hypothesis on the board, with a note saying what was dropped and why. The
 * policy still judges every proposal that gets through (its write bans, rules, approvers and limits are
 * not known to the run).
 */
import type { V1PodTemplateSpec, V1PodSpec } from '@kubernetes/client-node';
import { getAction } from '../actions/registry.js';
import { preliminaryProposal } from '../approvals/policy-input.js';
import { foreignResource, inScope, serviceOf } from '../policy/match.js';
import type { IncidentScope } from '../policy/types.js';
import type { TriageInput } from '../triage/analyzer.js';
import type { Finding, MitigationProposal } from '../triage/types.js';

export interface FixScope {
  /** The incident's namespace (its resolved target's). */
  namespace: string;
  /** The resolved target's workload name: the incident's service. */
  service?: string;
  /** Catalog dependencies; `namespace` when the run saw the dependency's catalog entry. */
  dependencies: { name: string; namespace?: string }[];
  /** `namespace/service` → its catalog flags and repository (the target's and the dependencies' the run saw). */
  owned: NonNullable<IncidentScope['owned']>;
  /** Images of current and earlier pod templates, by namespace. */
  images: Map<string, Set<string>>;
}

/** The incident's scope as the run sees it, from what deterministic triage read. */
export function fixScope(input: TriageInput): FixScope {
  const target = input.kube.target;
  const namespace = target?.namespace ?? '';
  const entries = [input.service, ...(input.cluster?.inputs ?? []).map((i) => i.service)].filter((e) => e !== undefined);
  const owned: FixScope['owned'] = {};
  if (target && input.service) owned[`${namespace}/${target.name}`] = { flags: input.service.flags, ...(input.service.repo ? { repo: input.service.repo } : {}) };
  const dependencies = (input.service?.dependsOn ?? []).map((name) => {
    const entry = entries.find((e) => e.name === name);
    if (entry) owned[`${entry.namespace}/${entry.name}`] = { flags: entry.flags, ...(entry.repo ? { repo: entry.repo } : {}) };
    return entry ? { name, namespace: entry.namespace } : { name };
  });
  return { namespace, ...(target ? { service: target.name } : {}), dependencies, owned, images: imagesSeen(input) };
}

export interface ScreenedFindings {
  findings: Finding[];
  /** One sentence per dropped fix, for the thread. */
  notes: string[];
}

/** The findings with every fix the approval flow would refuse removed (see the module comment). */
export function screenFixes(findings: Finding[], scope: FixScope): ScreenedFindings {
  const notes: string[] = [];
  const out = findings.map((f) => {
    if (!f.mitigation) return f;
    const why = refusal(f.mitigation, f, scope);
    if (!why) return f;
    const { mitigation: _dropped, ...rest } = f;
    const m = f.mitigation;
    notes.push(`The model's proposed fix \`${m.action}\` on ${describe(m)} was dropped before any approval card: ${why}.`);
    return rest;
  });
  return { findings: out, notes };
}

function describe(m: MitigationProposal): string {
  const t = m.target;
  return cut(`${t.namespace ? `${t.namespace}/` : ''}${t.name}`, 120);
}

/** Why the approval flow would refuse this fix, when the run can already tell. */
function refusal(m: MitigationProposal, f: Finding, scope: FixScope): string | undefined {
  const p = preliminaryProposal({ proposal: m, incidentId: '', requestedBy: 'vigil', ...(f.component ? { diagnosedService: f.component.name } : {}) });
  if (!p.target.namespace || !p.target.name) return 'it names no namespaced target';
  const ns = p.target.namespace;
  // A dependency whose namespace the run did not see may live in any: judged as if in this one.
  const services = [
    ...(scope.service ? [scope.service] : []),
    ...scope.dependencies.map((d) => (d.namespace === undefined ? `${ns}/${d.name}` : d.namespace === scope.namespace ? d.name : `${d.namespace}/${d.name}`)),
  ];
  const incident: IncidentScope = { namespace: scope.namespace, services, owned: scope.owned };
  if (!inScope(p, incident)) return `it is outside this incident's scope (${scopeText(scope)})`;
  // Flags and repositories: only where the run knows what the catalog gives the service.
  const service = serviceOf(p);
  const known = (ns === scope.namespace && service === scope.service) || scope.dependencies.some((d) => d.name === service && d.namespace === ns);
  const foreign = known ? foreignResource(p, incident) : undefined;
  if (foreign) return foreign.replace(/^refused: /, '');
  const action = getAction(m.action);
  if (action) {
    const parsed = action.params.safeParse(m.params);
    if (!parsed.success) return cut(`its parameters are not what \`${m.action}\` takes (${parsed.error.issues.map((i) => `${i.path.join('.') || 'params'}: ${i.message}`).join('; ')})`, 300);
  }
  if (m.action === 'set_image') {
    const image = (m.params as { image?: unknown }).image;
    if (typeof image === 'string' && !scope.images.get(ns)?.has(image)) {
      // The image is not repeated: a look-alike reference on the board is one copy-paste from being run.
      return `the image it names never ran in namespace ${ns} (no current or earlier pod template uses it); Vigil proposes only images the workload has run, never one read in a log or a tool result`;
    }
  }
  return undefined;
}

function scopeText(scope: FixScope): string {
  if (!scope.service) return 'the alert resolved to no workload, so nothing is in scope';
  const deps = scope.dependencies.map((d) => `${d.namespace ?? '*'}/${d.name}`);
  return cut([`${scope.namespace}/${scope.service}`, ...deps].join(', '), 200);
}

function imagesSeen(input: TriageInput): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (namespace: string | undefined, spec: V1PodSpec | undefined) => {
    if (!namespace || !spec) return;
    let set = out.get(namespace);
    if (!set) out.set(namespace, (set = new Set()));
    for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) if (c.image) set.add(c.image);
  };
  const template = (o: { metadata?: { namespace?: string }; spec?: { template?: V1PodTemplateSpec } }) => add(o.metadata?.namespace, o.spec?.template?.spec);
  const snapshot = input.cluster?.snapshot;
  if (snapshot) {
    for (const o of [...snapshot.deployments, ...snapshot.statefulSets, ...snapshot.daemonSets, ...snapshot.replicaSets]) template(o);
    for (const p of snapshot.pods) add(p.metadata?.namespace, p.spec);
  }
  for (const i of [input, ...(input.cluster?.inputs ?? [])]) {
    const w = i.kube.workload as { metadata?: { namespace?: string }; spec?: { template?: V1PodTemplateSpec } } | undefined;
    if (w) template(w);
    for (const rs of i.kube.replicaSets) template(rs);
    for (const p of i.kube.pods) add(p.metadata?.namespace, p.spec);
  }
  return out;
}

function cut(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
