/**
 * `config-change`: a ConfigMap or Secret the target reads (`kube.related` with `usedBy`) was edited
 * shortly before the errors started. Who and when come from managedFields; which keys from the writer's
 * `f:data` entries (an Update takes ownership of the fields it changed) — values are never read.
 *
 * Corroboration: the target's 5xx ratio / p99 latency leaving its baseline after the edit, new error log
 * templates since the onset, or target containers restarting after it. Errors that began before the
 * edit rule it out.
 *
 * Mitigation: an in-place edit did not change the pod template, so `rollout_undo` would roll back to the
 * same config. For a ConfigMap, `restore_config` puts its previous content back (the action finds it in
 * the last-applied annotation or the Helm history, and plans as "previous content unknown" otherwise;
 * the analyzer never reads values); a Secret gets no proposal (Vigil never reads Secret values, so it
 * cannot restore one; the fix is stated in the mechanism). When the config arrived WITH a rollout (the
 * new ReplicaSet references a ConfigMap/Secret the previous one did not), undoing that rollout restores
 * the old reference: `rollout_undo`.
 *
 * Facts (camelCase): `object` (`ConfigMap/checkout-config`), `keys` (comma-separated key names, when
 * managedFields show them), `editor` (field manager, e.g. `kubectl-edit`), `changedAt` (ISO),
 * `usedBy` (how the target reads it: `env`, `envFrom` or `volume`), `via` (the env variable or volume name), and, when a metric corroborates, `metric`, `before`, `after`.
 */
import type { V1ManagedFieldsEntry, V1PodSpec } from '@kubernetes/client-node';
import { configRefs, type RelatedObject } from '../../evidence/kubernetes/related.js';
import { describeWriter } from '../../evidence/kubernetes/managed-fields.js';
import type { Evidence } from '../../evidence/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS, DELAYED_EFFECT_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';
import { fmtLevel, metricLabel, metricWord, moved, symptomAfter, targetScope, targetSymptoms, CLOSE_AFTER_MS, type LogSymptom } from './deploy-regression.js';
import { dependentSymptoms } from '../downstream.js';

// How far back an edit can be the cause (DELAYED_EFFECT_MS): effects wait for traffic, restarts or
// caches to expire, so a fixed hour misses them; confidence falls with the delay instead, and symptoms
// that began before the edit rule it out whatever its age.

/** An edit whose readers loaded it and then served this long without symptoms is cleared by that. */
const SERVED_FINE_MS = 30 * 60_000;

/**
 * Errors that say a configured limit was reached (Redis maxmemory under noeviction, connection caps,
 * quotas): a config that sets the limit breaks nothing until the load fills it, so serving fine for
 * hours after it says nothing against it.
 */
const LIMIT_REACHED = /OOM command not allowed|used memory > 'maxmemory'|max number of clients reached|too many (?:clients|connections)|remaining connection slots are reserved|max_connections|quota exceeded|no space left on device/i;

/** The reader's own gauge at its configured limit (used memory / maxmemory ≥ the summary's threshold) or clients logging a limit, since the edit. */
function limitReached(input: TriageInput, logs: readonly LogSymptom[], since: Date): Evidence | undefined {
  const ratio = input.metrics?.summaries.find((m) => m.id === 'store_memory_ratio' && m.status === 'success');
  const full = ratio?.series.find((x) => (x.last ?? 0) >= (ratio.threshold ?? 0.95));
  if (ratio && full) return { kind: 'metric', summary: `${ratio.title} at ${fmtLevel(full.last, 'ratio')} now: the limit is reached`, citation: ratio.citation };
  const hit = logs.find((l) => LIMIT_REACHED.test(l.template) || LIMIT_REACHED.test(l.example));
  return hit && (!hit.first || hit.first.getTime() >= since.getTime()) ? hit.evidence : undefined;
}

/** Managers that are Kubernetes reconciling, not someone editing config. */
const CONTROLLERS = /^(kube-controller-manager|kubelet|kube-scheduler)/;

/** One dated write to a config object. */
interface ConfigWrite {
  obj: RelatedObject;
  at: Date;
  manager: string;
  operation: string;
  keys: string[];
  index?: number;
  /** True when the object was created (by a rollout that references it), not edited. */
  created: boolean;
}

/** `{"f:data": {".": {}, "f:PAYMENTS_URL": {}}}` → [PAYMENTS_URL] (also binaryData/stringData). */
const DNS_SERVER = /^(coredns|kube-dns|node-local-dns)$/;

/** For the cluster DNS server's config: the alerted workloads, which resolve through it (0 hops from the alert). */
function resolvingSubjects(input: TriageInput): { kind: string; namespace: string; name: string }[] {
  const c = input.cluster;
  if (!c) return [];
  return [...c.walk.reached.values()].filter((r) => r.hops === 0 && r.ref.namespace !== input.kube.target?.namespace && ['Deployment', 'StatefulSet', 'DaemonSet'].includes(r.ref.kind)).map((r) => ({ kind: r.ref.kind, namespace: r.ref.namespace ?? '', name: r.ref.name }));
}

export function writtenKeys(fieldsV1: unknown): string[] {
  const f = (fieldsV1 ?? {}) as Record<string, unknown>;
  const keys: string[] = [];
  for (const section of ['f:data', 'f:binaryData', 'f:stringData']) {
    const node = f[section];
    if (typeof node !== 'object' || node === null) continue;
    for (const k of Object.keys(node)) if (k.startsWith('f:')) keys.push(k.slice(2));
  }
  return keys;
}

function editsOf(obj: RelatedObject): ConfigWrite[] {
  return (obj.managedFields ?? [])
    .map((e: V1ManagedFieldsEntry, index) => ({ e, index }))
    .filter(({ e }) => e.time && e.manager && !CONTROLLERS.test(e.manager) && e.subresource !== 'status')
    .map(({ e, index }) => ({ obj, at: new Date(e.time!), manager: e.manager!, operation: e.operation ?? 'Update', keys: writtenKeys(e.fieldsV1), index, created: false }))
    // The first write at creation owns every key: that is the object's birth, not an edit of it.
    .filter((w) => !obj.createdAt || w.at.getTime() - obj.createdAt.getTime() > 1000);
}

/** Config references of a ReplicaSet's pod template, as `Kind/name` strings. */
function refsOf(spec: V1PodSpec | undefined): Set<string> {
  return new Set(configRefs(spec).map((r) => `${r.kind}/${r.name}`));
}

/** The newest ReplicaSet and the one before it (by revision). */
function lastTwoRevisions(input: TriageInput) {
  const rs = input.kube.replicaSets
    .map((r) => ({ r, rev: Number(r.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? 0) }))
    .filter((x) => x.rev > 0)
    .sort((a, b) => b.rev - a.rev);
  return { current: rs[0], previous: rs[1] };
}

export const configChange: Analyzer = {
  name: 'config-change',
  analyze(input: TriageInput): Finding[] {
    const t = input.kube.target;
    if (!t) return [];
    const onset = input.onset.getTime();
    const inWindow = (d: Date) => onset - d.getTime() <= DELAYED_EFFECT_MS && d.getTime() <= onset + 2 * 60_000;
    const configs = input.kube.related.filter((o): o is RelatedObject & { kind: 'ConfigMap' | 'Secret' } => (o.kind === 'ConfigMap' || o.kind === 'Secret') && !!o.usedBy);
    const { current, previous } = lastTwoRevisions(input);
    const rolledIn = current && previous ? [...refsOf(current.r.spec?.template?.spec)].filter((r) => !refsOf(previous.r.spec?.template?.spec).has(r)) : [];

    const writes: ConfigWrite[] = [];
    for (const obj of configs) {
      writes.push(...editsOf(obj).filter((w) => inWindow(w.at)));
      if (rolledIn.includes(`${obj.kind}/${obj.name}`) && obj.createdAt && inWindow(obj.createdAt)) {
        const creator = obj.managedFields?.[0];
        writes.push({ obj, at: obj.createdAt, manager: creator?.manager ?? 'unknown', operation: creator?.operation ?? 'Update', keys: obj.keys ?? [], ...(creator ? { index: 0 } : {}), created: true });
      }
    }
    if (!writes.length) return [];

    // The target's own symptoms, or, when it shows none, those of whoever depends on it.
    const own = targetSymptoms(input);
    const theirs = dependentSymptoms(input);
    const downstream = own.metrics.length || own.logs.length ? undefined : theirs;
    const symptoms = downstream && (downstream.metrics.length || downstream.logs.length) ? downstream : own;
    const whose = symptoms === downstream ? `${downstream!.from.join(', ')} (which depend${downstream!.from.length === 1 ? 's' : ''} on ${t.name})` : t.name;
    const out: Finding[] = [];
    // Newest write per object: that is the one that can explain the onset.
    const newest = new Map<string, ConfigWrite>();
    for (const w of writes.sort((a, b) => b.at.getTime() - a.at.getTime())) if (!newest.has(`${w.obj.kind}/${w.obj.name}`)) newest.set(`${w.obj.kind}/${w.obj.name}`, w);

    for (const w of newest.values()) {
      const { obj } = w;
      const component = { kind: obj.kind, namespace: obj.namespace, name: obj.name };
      const objectName = `${obj.kind}/${obj.name}`;
      const who = describeWriter({ manager: w.manager, operation: w.operation });
      const keys = w.keys.filter((k) => k !== '.');
      const keyText = keys.length ? ` (key${keys.length > 1 ? 's' : ''} ${keys.join(', ')})` : '';
      const writeEvidence: Evidence = {
        kind: 'managed_fields',
        summary: w.created
          ? `${objectName} created ${clockTime(w.at)} by \`${w.manager}\` and referenced by ${t.name}'s new ReplicaSet ${current?.r.metadata?.name ?? ''}`.trim()
          : `managedFields: \`${w.manager}\` (${w.operation}) wrote ${keys.length ? keys.map((k) => `data.${k}`).join(', ') : 'data'} of ${objectName} at ${clockTime(w.at)} (values not shown)`,
        citation: objectCitation(obj.kind, obj.namespace, obj.name, w.index !== undefined ? `metadata.managedFields[${w.index}]` : 'metadata.creationTimestamp'),
        observedAt: w.at,
        detail: { manager: w.manager, operation: w.operation, keys, usedBy: obj.usedBy ?? null },
      };
      const timing = symptomAfter(symptoms, w.at);
      const restarts = input.kube.pods.flatMap((p) =>
        (p.status?.containerStatuses ?? [])
          .filter((c) => c.lastState?.terminated?.finishedAt && new Date(c.lastState.terminated.finishedAt).getTime() >= w.at.getTime())
          .map((c) => ({ pod: p.metadata?.name ?? '?', container: c.name, restarts: c.restartCount ?? 0, reason: c.lastState!.terminated!.reason ?? 'terminated' })),
      );
      const restartEvidence: Evidence[] = restarts.slice(0, 2).map((r) => ({
        kind: 'object',
        summary: `pod ${r.pod}: container ${r.container} restarted after the edit (${r.restarts} restarts, last ${r.reason})`,
        citation: objectCitation('Pod', t.namespace, r.pod, 'status.containerStatuses'),
      }));
      // A restart or rollout of the reader after the edit is how the new values got loaded (`kubectl edit`
      // then `kubectl rollout restart`): part of this change, not a separate suspect.
      const applied = input.changes.find(
        (c) => c.source === 'kubernetes' && (c.kind === 'rollout' || c.kind === 'edit') && c.target.kind === t.kind && c.target.name === t.name && c.target.namespace === t.namespace &&
          c.at.getTime() >= w.at.getTime() && c.at.getTime() <= onset + 2 * 60_000,
      );
      if (applied) restartEvidence.unshift({ kind: 'change', summary: `${applied.summary} at ${clockTime(applied.at)}, ${humanDuration(applied.at.getTime() - w.at.getTime())} after the edit: its pods loaded the new ${obj.kind}`, citation: applied.citation, observedAt: applied.at });
      const facts: Record<string, string | number> = {
        object: objectName,
        ...(keys.length ? { keys: keys.join(',') } : {}),
        editor: w.manager,
        changedAt: w.at.toISOString(),
        ...(obj.usedBy ? readMode(obj.usedBy) : {}),
        // The same answer in the words of the object's family (a CoreDNS Corefile edit is a DNS fault too).
        ...(obj.kind === 'ConfigMap' ? { configMap: obj.name, manager: w.manager, ...(keys.length === 1 ? { key: keys[0]! } : {}) } : {}),
      };
      const key = `config-change:${obj.namespace}/${obj.kind}/${obj.name}`;
      const title = `${objectName} edited by \`${who}\`${keyText} ${relativeToOnset(w.at, input.onset)}`;
      const mechanism0 = `${objectName}, which ${t.name} reads (${obj.usedBy}), was ${w.created ? 'introduced by a rollout' : `edited${keyText} by \`${who}\` (field manager \`${w.manager}\`)`}${w.created ? keyText : ''} at ${clockTime(w.at)}, ${relativeToOnset(w.at, input.onset)}`;

      // The edit cleared by its timing: kept on the board as ruled out, with what clears it.
      const ruledOut = (mechanismTail: string, reason: string, refuting: Evidence[]): Finding => ({
        key,
        analyzer: 'config-change',
        status: 'ruled_out',
        confidence: 0.05,
        title,
        component,
        mechanism: `${mechanism0}; ${mechanismTail}`,
        reason,
        facts,
        supporting: [writeEvidence],
        refuting,
      });
      if (timing.relation === 'before' && timing.earlierMetric) {
        const m = timing.earlierMetric;
        out.push(ruledOut('but the symptoms began earlier.', `${metricWord(m.metric)} started at ${clockTime(m.start)}, ${humanDuration(w.at.getTime() - m.start.getTime())} BEFORE ${objectName} was edited`, [m.evidence]));
        continue;
      }

      const first = timing.metricsAfter[0];
      const delay = timing.delayMs ?? 0;
      // The pods that loaded the new values served for a long while before anything went wrong: the edit
      // is not what broke them (something nearer the symptoms did). Loaded = the restart that applied it, else
      // the first pod started after the edit; when no pod has loaded it yet its effect may still be waiting.
      const startedSince = input.kube.pods
        .map((p) => (p.status?.startTime ? new Date(p.status.startTime) : undefined))
        .filter((d): d is Date => !!d && d.getTime() >= w.at.getTime())
        .sort((a, b) => a.getTime() - b.getTime())[0];
      const loadedAt = applied?.at ?? startedSince;
      const symptomsAt = timing.delayMs !== undefined ? new Date(w.at.getTime() + timing.delayMs) : undefined;
      const limit = limitReached(input, [...own.logs, ...theirs.logs], w.at);
      if (loadedAt && symptomsAt && symptomsAt.getTime() - loadedAt.getTime() > SERVED_FINE_MS && !limit) {
        const served = humanDuration(symptomsAt.getTime() - loadedAt.getTime());
        out.push(
          ruledOut(
            `${t.name} loaded it at ${clockTime(loadedAt)} and served for ${served} before the symptoms began at ${clockTime(symptomsAt)}.`,
            `${t.name} ran with the edited ${objectName} from ${clockTime(loadedAt)} for ${served} before the symptoms began (${clockTime(symptomsAt)})`,
            [...timing.metricsAfter.slice(0, 1).map((m) => m.evidence), ...timing.logsAfter.slice(0, 1).map((l) => l.evidence)],
          ),
        );
        continue;
      }
      // An edit long before the symptoms is a candidate only with nothing of its own in between.
      const aged = onset - w.at.getTime() > CHANGE_WINDOW_MS;
      // An old edit explains today's errors only when something ties them: pods that (re)started after it
      // and read the new values, or error lines that name a key it wrote.
      const podsSince = input.kube.pods.filter((p) => p.status?.startTime && new Date(p.status.startTime).getTime() >= w.at.getTime()).length;
      const namesKey = keys.length > 0 && timing.logsAfter.some((l) => keys.some((k) => l.template.includes(k) || l.example.includes(k)));
      const tied = restarts.length > 0 || podsSince > 0 || namesKey || !!applied;
      const corroborated = aged ? !!(first || timing.logsAfter.length) && tied : (first && delay <= CLOSE_AFTER_MS) || timing.logsAfter.length > 0 || restarts.length > 0;
      const mitigation: MitigationProposal | undefined =
        w.created && current && previous
          ? {
              action: 'rollout_undo',
              target: { kind: t.kind, namespace: t.namespace, name: t.name },
              params: { toRevision: previous.rev },
              command: `kubectl rollout undo ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace} --to-revision=${previous.rev}`,
              rationale: `revision ${previous.rev} references the previous ${obj.kind} and ran without these errors`,
            }
          : !w.created && obj.kind === 'ConfigMap'
            ? {
                action: 'restore_config',
                target: { kind: 'ConfigMap', namespace: obj.namespace, name: obj.name },
                params: { kind: 'ConfigMap', name: obj.name },
                command: `kubectl patch configmap/${obj.name} -n ${obj.namespace} --type=json -p '[{"op":"replace","path":"/data","value":<its data before the edit>}]'`,
                rationale: `put back ${objectName}'s content from before \`${who}\`'s edit at ${clockTime(w.at)}${obj.usedBy?.startsWith('env') ? `; ${t.name} reads it as env, so it needs a restart after` : ''}`,
              }
            : undefined;
      const fix = w.created
        ? `Undoing the rollout brings back the previous ${obj.kind.toLowerCase()} reference.`
        : `Fix: restore the previous value${keys.length > 1 ? 's' : ''}${keys.length ? ` of ${keys.join(', ')}` : ''} in ${objectName} (${obj.kind === 'ConfigMap' ? 'the proposed restore_config puts back the content from before the edit when the cluster still knows it; otherwise ' : ''}from source control, or \`kubectl edit ${obj.kind.toLowerCase()} ${obj.name} -n ${obj.namespace}\`)${obj.usedBy?.startsWith('env') ? ` and restart ${t.name}: env from a ${obj.kind} is read only at start` : ''}. A rollout undo would not help: the pod template did not change.`;
      const symptomText = first
        ? `; ${whose}'s ${metricLabel(first.metric)} ${moved(first)} from ${fmtLevel(first.before, first.unit)} to ${fmtLevel(first.after, first.unit)} starting ${clockTime(first.start)}`
        : timing.logsAfter.length
          ? `; new error logs since: "${timing.logsAfter[0]!.template.slice(0, 120)}"`
          : restarts.length
            ? `; ${restarts.length} container${restarts.length > 1 ? 's' : ''} restarted after it`
            : '';
      const appliedText = applied ? ` ${t.name} was restarted at ${clockTime(applied.at)} (${applied.actor}), which loaded it.` : '';
      const limitText = limit ? ` Its effect waited for load: ${limit.summary.replace(/^"|"$/g, '')} — a limit or policy this edit sets holds only until it is reached.` : '';
      out.push({
        key,
        analyzer: 'config-change',
        status: corroborated ? 'supported' : 'open',
        confidence: corroborated ? (first && timing.logsAfter.length ? 0.87 : 0.84) + (w.created ? 0.01 : 0) - (aged ? 0.1 : 0) : 0.55,
        title,
        component,
        mechanism: `${mechanism0}${symptomText}.${appliedText}${limitText} ${fix}`,
        scope: `${t.name} (every pod reading ${objectName})${input.kube.dependents.length ? `; callers affected: ${input.kube.dependents.map((d) => d.name).join(', ')}` : ''}`,
        affected: [...targetScope(input), ...(DNS_SERVER.test(t.name) ? resolvingSubjects(input) : [])],
        facts: {
          ...facts,
          ...(first ? { metric: first.metric, ...(first.before !== null ? { before: first.before } : {}), ...(first.after !== null ? { after: first.after } : {}) } : {}),
        },
        supporting: [writeEvidence, ...(limit ? [limit] : []), ...timing.metricsAfter.slice(0, 3).map((m) => m.evidence), ...timing.logsAfter.slice(0, 3).map((l) => l.evidence), ...restartEvidence],
        refuting: [],
        ...(mitigation ? { mitigation } : {}),
      });
    }
    return out;
  },
};

/** `volume config` → usedBy `volume`, via `config`; `env PAYMENTS_URL` → `env`, `PAYMENTS_URL`. */
function readMode(usedBy: string): { usedBy: string; via?: string } {
  const [mode, ...rest] = usedBy.replace(/\s*\(missing!\)$/, '').split(' ');
  return { usedBy: mode!, ...(rest.length ? { via: rest.join(' ') } : {}) };
}
