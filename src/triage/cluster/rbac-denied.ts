/**
 * `rbac-denied`: a workload's Kubernetes API calls are refused because its ServiceAccount lost a
 * permission. The API server says exactly what was refused, and client-go, controller-runtime, kubectl
 * and the Python/Java clients all log it verbatim (read from the candidates' logs and from the logs of
 * failed Job pods of CronJob/Job candidates):
 *   `pods is forbidden: User "system:serviceaccount:shop:checkout" cannot list resource "pods" in API group "" in the namespace "shop"`
 *   (`… at the cluster scope` for cluster-wide calls; the pre-1.14 form `cannot list pods in the namespace "shop"`;
 *   JSON logs escape the quotes). That gives the ServiceAccount, verb, resource, API group and namespace.
 *
 * The RBAC objects of the snapshot are then evaluated like the authorizer does (RoleBindings of the
 * request's namespace and ClusterRoleBindings; rules matched on verb, API group, resource/subresource
 * and resourceNames) to find what changed:
 * - a RoleBinding/ClusterRoleBinding that no longer lists the ServiceAccount although its role grants
 *   the call, edited recently (managedFields) or whose `kubectl.kubernetes.io/last-applied-configuration`
 *   still lists it → localised to the binding;
 * - a Role/ClusterRole bound to the ServiceAccount that lacks the rule, edited recently → the role;
 * - a binding whose roleRef names a role that does not exist → that (missing) role;
 * - a rollout that switched the pods' `serviceAccountName` → the workload.
 * The most recent of these changes before the first denial wins; without a recent change, the bound
 * role that lacks the rule is named. Current RBAC that grants the call makes the finding inconclusive.
 * A bare `403 Forbidden` from the API (no user, verb or resource in the line) gives only an `open` lead.
 *
 * Facts: `serviceAccount` (`ns/name`), `verb`, `resource` (as the API names it, `pods/log`), `apiGroup`,
 * `namespace` (of the request), `role` (`Kind/name`), `binding` (`Kind/name`), `manager`, `changedAt`,
 * `reason` (`subject_removed` | `rule_missing` | `role_missing` | `service_account_changed` | `no_binding`).
 * No mitigation: RBAC is a security decision.
 */
import type { RbacV1Subject, V1ClusterRole, V1ClusterRoleBinding, V1ObjectMeta, V1PolicyRule, V1Role, V1RoleBinding } from '@kubernetes/client-node';
import type { ChangeEvent } from '../../changes/types.js';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { ClusterAnalyzer, ClusterTriageInput, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { revisions, rolledOutBefore } from '../analyzers/crash-loop.js';
import { targetScope } from '../analyzers/deploy-regression.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { changeEvidence, clip, logEvidence as commonLogEvidence, logHits, objectChanges, type LogHit } from './common.js';

const NAME = 'rbac-denied';
/** A change this long before the first denial can still be what removed the permission. */
const RECENT_MS = 6 * 3600_000;
const SKEW_MS = 120_000;

/** Lines that may carry an API authorization failure. */
const FORBIDDEN = /cannot [\w-]+ resource|is forbidden|\bForbidden\b|\b403\b/i;
/** A bare 403 counts only when the line is about the Kubernetes API. */
const K8S_CONTEXT = /kubernetes|k8s\.io|client-go|kube-?apiserver|serviceaccount|rbac\.authorization|controller-runtime|reflector\.go|leader ?election|informer/i;
/** An access log line of the app's own HTTP server answering 403 is not an API authorization failure. */
const ACCESS_LOG = /"(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) [^"]*" 403\b|\bstatus[=:]"?403\b.*\b(path|uri|route)[=:]/i;
const NEW_FORM = /User "([^"]+)" cannot ([\w-]+) resource "([^"]+)"(?: in API group "([^"]*)")?(?: in the namespace "([^"]+)"| (at the cluster scope))?/;
const OLD_FORM = /User "([^"]+)" cannot ([\w-]+) ([a-z][\w.\/-]*?)(?: in the namespace "([^"]+)"| (at the cluster scope)|[:,;]|$)/;
const NAMED = /([a-z][\w.-]*) "([^"]+)" is forbidden:/;

/** A log hit as evidence, cited the way `kubectl logs` reads it: `api/v1/namespaces/<ns>/pods/<pod>/log?container=<c>`. */
function logEvidence(h: LogHit, what: string): Evidence {
  const e = commonLogEvidence(h, what);
  if (!h.pod || !h.container) return e;
  const previous = /previous=true/.test(h.citation.ref) ? '&previous=true' : '';
  return { ...e, citation: { source: 'kubernetes', ref: `api/v1/namespaces/${h.workload.namespace}/pods/${h.pod}/log?container=${h.container}${previous}` } };
}

interface Denial {
  /** The workload (or CronJob/Job) whose logs show it. */
  owner: ComponentRef;
  /** Its candidate input, for workloads. */
  input?: TriageInput;
  /** The ServiceAccount its pod template runs as. */
  podServiceAccount: string;
  hit: LogHit;
  user?: string;
  sa?: { namespace: string; name: string };
  verb?: string;
  resource?: string;
  group?: string;
  /** The request's namespace; undefined at the cluster scope. */
  namespace?: string;
  clusterScope: boolean;
  objectName?: string;
}

type Binding = { kind: 'RoleBinding'; obj: V1RoleBinding } | { kind: 'ClusterRoleBinding'; obj: V1ClusterRoleBinding };
type RoleObj = { kind: 'Role'; obj: V1Role } | { kind: 'ClusterRole'; obj: V1ClusterRole };

interface Culprit {
  component: ComponentRef;
  reason: 'subject_removed' | 'rule_missing' | 'role_missing' | 'service_account_changed' | 'no_binding';
  what: string;
  change?: ChangeEvent;
  evidence: Evidence[];
  role?: string;
  binding?: string;
  /** How much this candidate is backed besides its change time (last-applied, rules that match). */
  strength: number;
}

/** Parse an authorization failure out of a log line (quotes may be JSON-escaped). */
type Parsed = Omit<Denial, 'owner' | 'input' | 'podServiceAccount' | 'hit'>;

export function parseDenial(line: string): Parsed | undefined {
  const text = line.replace(/\\+"/g, '"');
  const named = NAMED.exec(text);
  let m = NEW_FORM.exec(text);
  let user: string | undefined;
  let verb: string | undefined;
  let resource: string | undefined;
  let group: string | undefined;
  let namespace: string | undefined;
  let clusterScope = false;
  if (m) {
    [, user, verb, resource, group, namespace] = m;
    clusterScope = !!m[6];
  } else if ((m = OLD_FORM.exec(text))) {
    user = m[1];
    verb = m[2];
    const r = m[3]!;
    const dot = r.indexOf('.');
    resource = dot > 0 ? r.slice(0, dot) : r;
    group = dot > 0 ? r.slice(dot + 1) : '';
    namespace = m[4];
    clusterScope = !!m[5];
  } else if (!named) return undefined;
  if (!resource && named) {
    const r = named[1]!;
    const dot = r.indexOf('.');
    resource = dot > 0 ? r.slice(0, dot) : r;
    group = dot > 0 ? r.slice(dot + 1) : '';
  }
  const sa = user ? /^system:serviceaccount:([^:]+):(.+)$/.exec(user) : null;
  return {
    ...(user ? { user } : {}),
    ...(sa ? { sa: { namespace: sa[1]!, name: sa[2]! } } : {}),
    ...(verb ? { verb } : {}),
    ...(resource ? { resource } : {}),
    ...(group !== undefined ? { group } : {}),
    ...(namespace ? { namespace } : {}),
    clusterScope,
    ...(named ? { objectName: named[2]! } : {}),
  };
}

/** The denials in the candidates' logs and in the logs of failed Job pods, best parsed first (the example, the container's last lines, the template). */
function denials(input: ClusterTriageInput): Denial[] {
  const out: Denial[] = [];
  const consider = (hit: LogHit, owner: ComponentRef, podServiceAccount: string, tail: string[], candidate?: TriageInput) => {
    const parsed = [hit.example, ...tail.filter((l) => FORBIDDEN.test(l)), hit.template]
      .map(parseDenial)
      .filter((d): d is Parsed => !!d)
      .sort((a, b) => score(b) - score(a))[0];
    const base = { owner, podServiceAccount, hit, ...(candidate ? { input: candidate } : {}) };
    if (parsed) out.push({ ...base, ...parsed });
    // A bare 403 from the API server: only the workload's own ServiceAccount is known.
    else if (/\b403\b|\bForbidden\b/i.test(hit.example + hit.template) && K8S_CONTEXT.test(hit.example + hit.template) && !ACCESS_LOG.test(hit.example))
      out.push({ ...base, sa: { namespace: owner.namespace ?? '', name: podServiceAccount }, clusterScope: false });
  };
  for (const hit of logHits(input.inputs, FORBIDDEN)) {
    const candidate = input.inputs.find((i) => i.kube.target?.name === hit.workload.name && i.kube.target?.namespace === hit.workload.namespace);
    if (!candidate) continue;
    const tail = candidate.kube.containerLogs.find((c) => c.pod === hit.pod && c.container === hit.container)?.tail ?? [];
    consider(hit, hit.workload, candidate.kube.workload?.spec?.template?.spec?.serviceAccountName ?? 'default', tail, candidate);
  }
  // Batch work (a CronJob running kubectl, an operator's Job) reads the API too.
  for (const je of input.jobs) {
    const owner: ComponentRef = { kind: je.owner.kind, namespace: je.owner.namespace, name: je.owner.name };
    const spec =
      je.owner.kind === 'CronJob'
        ? input.cluster.snapshot.cronJobs.find((c) => c.metadata?.namespace === owner.namespace && c.metadata?.name === owner.name)?.spec?.jobTemplate?.spec?.template?.spec
        : je.jobs[0]?.spec?.template?.spec;
    for (const c of je.logs) {
      for (const p of c.patterns) {
        if (!FORBIDDEN.test(p.template) && !FORBIDDEN.test(p.example)) continue;
        const hit: LogHit = {
          workload: owner,
          pod: c.pod,
          container: c.container,
          template: p.template,
          example: p.example,
          count: p.count,
          ...(p.first ? { first: p.first } : {}),
          ...(p.last ? { last: p.last } : {}),
          citation: { source: 'kubernetes', ref: `api/v1/namespaces/${owner.namespace}/pods/${c.pod}/log?container=${c.container}` },
        };
        consider(hit, owner, spec?.serviceAccountName ?? 'default', c.tail);
      }
    }
  }
  return out;
}

const score = (d: Parsed): number => (d.sa ? 4 : d.user ? 2 : 0) + (d.verb ? 2 : 0) + (d.resource ? 1 : 0) + (d.group !== undefined ? 1 : 0) + (d.namespace || d.clusterScope ? 1 : 0);

// ------------------------------------------------------------------ RBAC, evaluated like the authorizer

function subjectIs(s: RbacV1Subject, sa: { namespace: string; name: string }, bindingNs: string | undefined): boolean {
  if (s.kind === 'ServiceAccount') return s.name === sa.name && (s.namespace ?? bindingNs) === sa.namespace;
  if (s.kind === 'User') return s.name === `system:serviceaccount:${sa.namespace}:${sa.name}`;
  if (s.kind === 'Group') return s.name === 'system:serviceaccounts' || s.name === `system:serviceaccounts:${sa.namespace}` || s.name === 'system:authenticated';
  return false;
}

function ruleAllows(r: V1PolicyRule, d: Denial): boolean {
  if (!d.verb || d.resource === undefined) return false;
  const verbs = r.verbs ?? [];
  if (!verbs.includes('*') && !verbs.includes(d.verb)) return false;
  const groups = r.apiGroups ?? [];
  if (!groups.includes('*') && !groups.includes(d.group ?? '')) return false;
  const [, sub] = d.resource.split('/');
  if (!(r.resources ?? []).some((x) => x === '*' || x === d.resource || (!!sub && x === `*/${sub}`))) return false;
  if (r.resourceNames?.length && (!d.objectName || !r.resourceNames.includes(d.objectName))) return false;
  return true;
}

function rulesText(rules: V1PolicyRule[] | undefined): string {
  if (!rules?.length) return 'no rules';
  return rules
    .slice(0, 4)
    .map((r) => `${(r.verbs ?? []).join(',')} ${(r.resources ?? r.nonResourceURLs ?? []).join(',')}${(r.apiGroups ?? []).filter(Boolean).length ? ` (${(r.apiGroups ?? []).filter(Boolean).join(',')})` : ''}${r.resourceNames?.length ? ` [${r.resourceNames.join(',')}]` : ''}`)
    .join('; ') + (rules.length > 4 ? `; … (${rules.length} rules)` : '');
}

function subjectsText(subjects: RbacV1Subject[] | undefined, bindingNs?: string): string {
  if (!subjects?.length) return 'no subjects';
  return subjects.map((s) => `${s.kind} ${s.kind === 'ServiceAccount' ? `${s.namespace ?? bindingNs}/` : ''}${s.name}`).join(', ');
}

/** The previously applied object, from `kubectl apply`'s annotation (kubectl edit/patch do not update it). */
function lastApplied(meta: V1ObjectMeta | undefined): { subjects?: RbacV1Subject[]; rules?: V1PolicyRule[] } | undefined {
  const raw = meta?.annotations?.['kubectl.kubernetes.io/last-applied-configuration'];
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as { subjects?: RbacV1Subject[]; rules?: V1PolicyRule[] };
  } catch {
    return undefined;
  }
}

function roleOf(input: ClusterTriageInput, b: Binding): RoleObj | undefined {
  const s = input.cluster.snapshot;
  const ref = b.obj.roleRef;
  if (ref.kind === 'ClusterRole') {
    const obj = s.clusterRoles.find((r) => r.metadata?.name === ref.name);
    return obj ? { kind: 'ClusterRole', obj } : undefined;
  }
  const obj = s.roles.find((r) => r.metadata?.namespace === b.obj.metadata?.namespace && r.metadata?.name === ref.name);
  return obj ? { kind: 'Role', obj } : undefined;
}

const refOf = (kind: string, meta: V1ObjectMeta | undefined): ComponentRef => ({ kind, ...(meta?.namespace ? { namespace: meta.namespace } : {}), name: meta?.name ?? '?' });
const nameOf = (kind: string, meta: V1ObjectMeta | undefined): string => `${kind}/${meta?.name ?? '?'}`;
const bindingNs = (b: Binding): string | undefined => (b.kind === 'RoleBinding' ? b.obj.metadata?.namespace : undefined);

function bindingEvidence(b: Binding, why: string): Evidence {
  return {
    kind: 'object',
    summary: `${b.kind} ${b.obj.metadata?.namespace ? `${b.obj.metadata.namespace}/` : ''}${b.obj.metadata?.name}: roleRef ${b.obj.roleRef.kind}/${b.obj.roleRef.name}, subjects ${subjectsText(b.obj.subjects, bindingNs(b))}${why ? ` — ${why}` : ''}`,
    citation: objectCitation(b.kind, b.obj.metadata?.namespace, b.obj.metadata?.name ?? '?', 'subjects'),
  };
}

function roleEvidence(r: RoleObj, why: string): Evidence {
  return {
    kind: 'object',
    summary: `${r.kind} ${r.obj.metadata?.namespace ? `${r.obj.metadata.namespace}/` : ''}${r.obj.metadata?.name} rules: ${rulesText(r.obj.rules)}${why ? ` — ${why}` : ''}`,
    citation: objectCitation(r.kind, r.obj.metadata?.namespace, r.obj.metadata?.name ?? '?', 'rules'),
  };
}

function recentChange(kind: string, meta: V1ObjectMeta | undefined, firstDenial: Date): ChangeEvent | undefined {
  const c = objectChanges(kind, meta).find((x) => x.at.getTime() <= firstDenial.getTime() + SKEW_MS);
  return c && firstDenial.getTime() - c.at.getTime() <= RECENT_MS ? c : undefined;
}

const requestText = (d: Denial): string =>
  `${d.verb ?? '?'} ${d.resource ?? '?'}${d.group ? ` (API group ${d.group})` : ''}${d.objectName ? ` "${d.objectName}"` : ''}${d.clusterScope ? ' at the cluster scope' : d.namespace ? ` in namespace ${d.namespace}` : ''}`;

/** Every candidate object that may have taken the permission away, with its change when it has one. */
function culprits(input: ClusterTriageInput, d: Denial, firstDenial: Date): { list: Culprit[]; granting: { b: Binding; r: RoleObj }[]; bound: Binding[] } {
  const s = input.cluster.snapshot;
  const sa = d.sa!;
  const reqNs = d.clusterScope ? undefined : (d.namespace ?? sa.namespace);
  const inScope: Binding[] = [
    ...(reqNs ? s.roleBindings.filter((b) => b.metadata?.namespace === reqNs).map((obj): Binding => ({ kind: 'RoleBinding', obj })) : []),
    ...s.clusterRoleBindings.map((obj): Binding => ({ kind: 'ClusterRoleBinding', obj })),
  ];
  const bound = inScope.filter((b) => (b.obj.subjects ?? []).some((x) => subjectIs(x, sa, bindingNs(b))));
  const granting = bound.map((b) => ({ b, r: roleOf(input, b) })).filter((x): x is { b: Binding; r: RoleObj } => !!x.r && (x.r.obj.rules ?? []).some((rule) => ruleAllows(rule, d)));
  const list: Culprit[] = [];
  const saText = `ServiceAccount ${sa.namespace}/${sa.name}`;

  for (const b of bound) {
    const r = roleOf(input, b);
    const roleName = `${b.obj.roleRef.kind}/${b.obj.roleRef.name}`;
    if (!r) {
      const ns = b.obj.roleRef.kind === 'Role' ? b.obj.metadata?.namespace : undefined;
      list.push({
        component: { kind: b.obj.roleRef.kind, ...(ns ? { namespace: ns } : {}), name: b.obj.roleRef.name },
        reason: 'role_missing',
        what: `${b.kind} ${b.obj.metadata?.name} binds ${saText} to ${roleName}, which does not exist (deleted or never created)`,
        evidence: [bindingEvidence(b, `${roleName} not found`)],
        role: roleName,
        binding: nameOf(b.kind, b.obj.metadata),
        strength: 2,
      });
      continue;
    }
    if ((r.obj.rules ?? []).some((rule) => ruleAllows(rule, d))) continue;
    const change = recentChange(r.kind, r.obj.metadata, firstDenial);
    const before = lastApplied(r.obj.metadata);
    const removed = (before?.rules ?? []).some((rule) => ruleAllows(rule, d));
    list.push({
      component: refOf(r.kind, r.obj.metadata),
      reason: 'rule_missing',
      what: `${r.kind} ${r.obj.metadata?.name}, bound to ${saText} by ${b.kind} ${b.obj.metadata?.name}, has no rule for ${requestText(d)}${removed ? ' (its last-applied configuration still had one: the rule was removed by an edit)' : ''}`,
      ...(change ? { change } : {}),
      evidence: [
        roleEvidence(r, `no rule allows ${d.verb} ${d.resource}`),
        bindingEvidence(b, ''),
        ...(removed ? [{ kind: 'object' as const, summary: `${r.kind} ${r.obj.metadata?.name}: last-applied-configuration still allows ${d.verb} ${d.resource}`, citation: objectCitation(r.kind, r.obj.metadata?.namespace, r.obj.metadata?.name ?? '?', 'metadata.annotations') }] : []),
      ],
      role: nameOf(r.kind, r.obj.metadata),
      binding: nameOf(b.kind, b.obj.metadata),
      strength: removed ? 3 : 1,
    });
  }

  // Bindings whose role grants the call but that no longer list the ServiceAccount.
  for (const b of inScope) {
    if (bound.includes(b)) continue;
    const r = roleOf(input, b);
    if (!r || !(r.obj.rules ?? []).some((rule) => ruleAllows(rule, d))) continue;
    // The API server's own bindings (reconciled at every start) are nobody's edit.
    if (/^system:/.test(b.obj.metadata?.name ?? '') || b.obj.metadata?.labels?.['kubernetes.io/bootstrapping'] === 'rbac-defaults') continue;
    const before = lastApplied(b.obj.metadata);
    const listed = (before?.subjects ?? []).some((x) => subjectIs(x, sa, bindingNs(b)));
    const change = recentChange(b.kind, b.obj.metadata, firstDenial);
    const related = [sa.name, d.owner.name].some((n) => !!n && n.length >= 3 && n !== 'default' && (b.obj.metadata?.name ?? '').includes(n));
    // A recently edited RoleBinding of the request's namespace may be it; a cluster-wide one must name the ServiceAccount's app or have listed it.
    if (!listed && !related && !(change && b.kind === 'RoleBinding')) continue;
    list.push({
      component: refOf(b.kind, b.obj.metadata),
      reason: 'subject_removed',
      what: `${b.kind} ${b.obj.metadata?.name} grants ${b.obj.roleRef.kind}/${b.obj.roleRef.name} (which allows ${d.verb} ${d.resource}) but no longer lists ${saText} among its subjects (${subjectsText(b.obj.subjects, bindingNs(b))})${listed ? '; its last-applied configuration still lists it' : ''}`,
      ...(change ? { change } : {}),
      evidence: [
        bindingEvidence(b, `${saText} is not a subject`),
        roleEvidence(r, `allows ${d.verb} ${d.resource}`),
        ...(listed ? [{ kind: 'object' as const, summary: `${b.kind} ${b.obj.metadata?.name}: last-applied-configuration lists ${saText}`, citation: objectCitation(b.kind, b.obj.metadata?.namespace, b.obj.metadata?.name ?? '?', 'metadata.annotations') }] : []),
      ],
      role: `${b.obj.roleRef.kind}/${b.obj.roleRef.name}`,
      binding: nameOf(b.kind, b.obj.metadata),
      strength: (listed ? 3 : 0) + (related ? 1 : 0) + (change ? 1 : 0),
    });
  }

  // A rollout that switched the pods to another ServiceAccount.
  const kube = d.input?.kube;
  const { current, previous } = kube ? revisions(kube) : {};
  const saOf = (spec: { serviceAccountName?: string; serviceAccount?: string } | undefined) => spec?.serviceAccountName ?? spec?.serviceAccount ?? 'default';
  if (kube && current && previous && kube.target && rolledOutBefore(current, firstDenial)) {
    const now = saOf(current.replicaSet.spec?.template?.spec);
    const was = saOf(previous.replicaSet.spec?.template?.spec);
    if (now !== was && now === sa.name) {
      const t = kube.target;
      list.push({
        component: { kind: t.kind, namespace: t.namespace, name: t.name },
        reason: 'service_account_changed',
        what: `the rollout to revision ${current.revision} switched ${t.name}'s pods from ServiceAccount ${was} to ${now}, which is not granted ${requestText(d)}`,
        change: {
          at: current.createdAt ?? firstDenial,
          actor: 'deployment-controller',
          kind: 'rollout',
          target: { kind: t.kind, namespace: t.namespace, name: t.name },
          source: 'kubernetes',
          summary: `rollout to revision ${current.revision} (serviceAccountName ${was} → ${now})`,
          citation: objectCitation('ReplicaSet', t.namespace, current.name, 'spec.template.spec.serviceAccountName'),
        },
        evidence: [],
        binding: '',
        strength: 2,
      });
    }
  }
  return { list, granting, bound };
}

export const rbacDenied: ClusterAnalyzer = {
  name: NAME,
  analyze(input: ClusterTriageInput): Finding[] {
    const all = denials(input).filter((d) => !d.hit.last || input.onset.getTime() - d.hit.last.getTime() <= CHANGE_WINDOW_MS);
    // One finding per ServiceAccount (RBAC is per ServiceAccount), from its most frequent denial.
    const bySa = new Map<string, Denial[]>();
    for (const d of all) {
      const k = d.sa ? `${d.sa.namespace}/${d.sa.name}` : `user:${d.user ?? '?'}:${d.owner.name}`;
      bySa.set(k, [...(bySa.get(k) ?? []), d]);
    }
    const out = new Map<string, Finding>();
    for (const ds of bySa.values()) {
      ds.sort((a, b) => score(b) - score(a) || b.hit.count - a.hit.count);
      const f = finding(input, ds);
      if (!f) continue;
      const seen = out.get(f.key);
      if (seen) {
        for (const a of f.affected ?? []) if (!seen.affected?.some((x) => x.kind === a.kind && x.name === a.name && x.namespace === a.namespace)) seen.affected?.push(a);
        seen.supporting.push(...f.supporting.filter((e) => e.kind === 'log'));
      } else out.set(f.key, f);
    }
    return [...out.values()];
  },
};

function finding(input: ClusterTriageInput, ds: Denial[]): Finding | undefined {
  const d = ds[0]!;
  const t = d.owner;
  const owners = [...new Map(ds.map((x) => [`${x.owner.kind}/${x.owner.namespace}/${x.owner.name}`, x])).values()];
  const workloads = owners.map((x) => x.owner);
  const affected = dedupe(owners.flatMap((x) => (x.input ? targetScope(x.input) : [x.owner])));
  const firstTimes = ds.map((x) => x.hit.first).filter((x): x is Date => !!x);
  const firstDenial = firstTimes.length ? new Date(Math.min(...firstTimes.map((x) => x.getTime()))) : input.onset;
  const count = ds.reduce((n, x) => n + x.hit.count, 0);
  const logs = ds.slice(0, 3).map((x) => logEvidence(x.hit, 'API call refused'));
  const others = [...new Set(ds.slice(1).filter((x) => x.verb && x.resource).map(requestText))].filter((x) => x !== requestText(d));
  const facts: Record<string, string | number | boolean> = {
    ...(d.sa ? { serviceAccount: `${d.sa.namespace}/${d.sa.name}` } : d.user ? { user: d.user } : {}),
    ...(d.verb ? { verb: d.verb } : {}),
    ...(d.resource ? { resource: d.resource } : {}),
    ...(d.group !== undefined ? { apiGroup: d.group } : {}),
    ...(d.namespace ? { namespace: d.namespace } : {}),
  };
  const who = d.sa ? `ServiceAccount ${d.sa.namespace}/${d.sa.name}` : `user ${d.user ?? '?'}`;
  const since = firstTimes.length ? ` since ${clockTime(firstDenial)}` : '';
  const denied = `${workloads.map((w) => w.name).join(', ')}'s Kubernetes API calls are refused: ${who} cannot ${requestText(d)} (×${count}${since})${others.length ? `; also ${others.slice(0, 3).join('; ')}` : ''}`;

  if (!d.sa || !d.verb || !d.resource) {
    // A 403 without the authorizer's sentence (or a user that is not a ServiceAccount): a lead, not a diagnosis.
    const sa = d.sa;
    return {
      key: `${NAME}:${t.namespace}/ServiceAccount/${sa?.name ?? d.user ?? 'unknown'}`,
      analyzer: NAME,
      family: 'rbac-denied',
      status: 'open',
      confidence: d.verb ? 0.5 : 0.4,
      title: `${t.name} gets 403 Forbidden from the Kubernetes API`,
      ...(sa ? { component: { kind: 'ServiceAccount', namespace: sa.namespace, name: sa.name } } : {}),
      mechanism: `${t.name} logs authorization failures from the Kubernetes API (×${count}${since}: "${clip(d.hit.example || d.hit.template, 160)}"); its pods run as ServiceAccount ${t.namespace}/${d.podServiceAccount}. The line does not say which verb and resource were refused, so the RBAC object cannot be named.`,
      scope: `${t.name}'s features that call the Kubernetes API fail`,
      affected,
      facts,
      supporting: logs,
      refuting: [],
    };
  }

  const { list, granting, bound } = culprits(input, d, firstDenial);
  if (granting.length) {
    const g = granting[0]!;
    return {
      key: `${NAME}:${g.b.obj.metadata?.namespace ?? ''}/${g.b.kind}/${g.b.obj.metadata?.name}`,
      analyzer: NAME,
      family: 'rbac-denied',
      status: 'inconclusive',
      confidence: 0.3,
      title: `${t.name} was refused ${d.verb} ${d.resource}, but current RBAC grants it`,
      component: refOf(g.b.kind, g.b.obj.metadata),
      mechanism: `${denied}. Yet ${g.b.kind} ${g.b.obj.metadata?.name} binds ${who} to ${g.r.kind}/${g.r.obj.metadata?.name}, which allows it now: the permission may have been restored since, or the call goes to another API server.`,
      scope: `${t.name}'s calls to the Kubernetes API`,
      affected,
      facts: { ...facts, role: nameOf(g.r.kind, g.r.obj.metadata), binding: nameOf(g.b.kind, g.b.obj.metadata) },
      supporting: logs,
      refuting: [bindingEvidence(g.b, 'binds the ServiceAccount'), roleEvidence(g.r, `allows ${d.verb} ${d.resource}`)],
    };
  }

  // The most recent change before the first denial wins; then the best-backed candidate.
  const changed = list.filter((c) => c.change).sort((a, b) => b.change!.at.getTime() - a.change!.at.getTime());
  const pick = changed[0] ?? [...list].sort((a, b) => b.strength - a.strength || rank(a) - rank(b))[0];
  if (!pick) {
    const sa = d.sa;
    return {
      key: `${NAME}:${sa.namespace}/ServiceAccount/${sa.name}`,
      analyzer: NAME,
      family: 'rbac-denied',
      status: 'open',
      confidence: 0.55,
      title: `${t.name}: ServiceAccount ${sa.name} has no binding that allows ${d.verb} ${d.resource}`,
      component: { kind: 'ServiceAccount', namespace: sa.namespace, name: sa.name },
      mechanism: `${denied}. No RoleBinding in ${d.namespace ?? sa.namespace} or ClusterRoleBinding binds ${who}${bound.length ? ' to a role that grants it' : ''}, and none that grants it shows a recent edit: a binding may have been deleted, or the permission was never granted.`,
      scope: `${t.name}'s calls to the Kubernetes API`,
      affected,
      facts: { ...facts, reason: 'no_binding' },
      supporting: [...logs, ...bound.map((b) => bindingEvidence(b, 'binds the ServiceAccount'))],
      refuting: [],
    };
  }
  Object.assign(facts, { reason: pick.reason, ...(pick.role ? { role: pick.role } : {}), ...(pick.binding ? { binding: pick.binding } : {}) });
  if (pick.change) Object.assign(facts, { manager: pick.change.actor, changedAt: pick.change.at.toISOString() });
  const supporting = [...logs, ...pick.evidence, ...(pick.change ? [changeEvidence(pick.change, input.onset)] : [])];
  const c = pick.component;
  const confidence = pick.change ? (pick.strength >= 2 || pick.reason === 'rule_missing' ? 0.9 : 0.86) : pick.strength >= 3 ? 0.85 : pick.reason === 'role_missing' ? 0.8 : 0.72;
  return {
    key: `${NAME}:${c.namespace ?? ''}/${c.kind}/${c.name}`,
    analyzer: NAME,
    family: 'rbac-denied',
    status: 'supported',
    confidence,
    title: `${titleOf(pick)}: ${t.name} cannot ${d.verb} ${d.resource}`,
    component: c,
    mechanism: `${denied}. ${capitalise(pick.what)}${pick.change ? `; ${pick.change.summary} at ${clockTime(pick.change.at)}, ${relativeToOnset(pick.change.at, input.onset)}` : ''}.`,
    scope: `${workloads.map((w) => w.name).join(', ')}: every feature that needs to ${d.verb} ${d.resource} fails`,
    affected,
    facts,
    supporting,
    refuting: [],
  };
}

function rank(c: Culprit): number {
  return ['subject_removed', 'rule_missing', 'role_missing', 'service_account_changed', 'no_binding'].indexOf(c.reason);
}

function titleOf(c: Culprit): string {
  switch (c.reason) {
    case 'subject_removed':
      return `${c.component.kind} ${c.component.name} no longer binds the ServiceAccount${c.change ? ` (${c.change.actor})` : ''}`;
    case 'rule_missing':
      return `${c.component.kind} ${c.component.name} lacks the rule${c.change ? ` (edited by ${c.change.actor})` : ''}`;
    case 'role_missing':
      return `${c.component.kind} ${c.component.name} is missing`;
    case 'service_account_changed':
      return `${c.component.name} rolled out with another ServiceAccount`;
    case 'no_binding':
      return 'no binding';
  }
}

function capitalise(s: string): string {
  return s ? s[0]!.toUpperCase() + s.slice(1) : s;
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
