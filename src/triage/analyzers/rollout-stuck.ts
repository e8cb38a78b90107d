/**
 * `rollout-stuck`: a Deployment rollout that took serving capacity down or cannot finish, read from the
 * Deployment controller's own status:
 * - condition `Progressing=False` with reason `ProgressDeadlineExceeded` (`ReplicaSet "x" has timed out
 *   progressing.`): the new ReplicaSet did not become available within `progressDeadlineSeconds`;
 * - or, during a rollout (`updatedReplicas < replicas`, old ReplicaSets still holding pods, or the newest
 *   ReplicaSet's pods not Ready), `availableReplicas` far below `spec.replicas` (half or less) with a
 *   strategy that allowed it: `Recreate`, or a RollingUpdate whose `maxUnavailable` resolves to the whole
 *   replica count (`100%`) — the controller scaled the old ReplicaSet down before the new pods were ready
 *   (the `ScalingReplicaSet` events say so).
 *
 * The new pods must be slow to become ready, not broken: containers running but not Ready yet, or still
 * being created. Broken pods belong to other analyzers, so it defers (returns nothing) when the
 * workload's pods show `CrashLoopBackOff`, an image pull failure, a container config error, a recent OOM
 * kill, an init container that fails, pods the scheduler cannot place, a ReplicaSet `FailedCreate`, or
 * `Unhealthy` events that show a misconfigured probe (HTTP 404, a port the container does not declare).
 *
 * Facts (camelCase): `maxUnavailable` / `maxSurge` (as set; the defaults `25%` when unset), `strategy`
 * (`RollingUpdate` | `Recreate`), `availableReplicas`, `desiredReplicas`, `updatedReplicas`, `readyNewPods`,
 * `reason` (`ProgressDeadlineExceeded`, else the Available/Progressing condition reason), `revision`,
 * `previousRevision`, `manager` (field manager of the strategy when it changed recently, else of the pod
 * template), `changedAt` (ISO).
 *
 * Mitigation: `rollout_undo` to the previous revision only when that ReplicaSet is the one that served
 * (it has available pods, or ran for a while before this rollout without failing pods); otherwise none.
 */
import type { CoreV1Event, V1Deployment, V1DeploymentCondition, V1Pod } from '@kubernetes/client-node';
import { describeWriter, writersOf, type FieldWrite } from '../../evidence/kubernetes/managed-fields.js';
import type { Evidence } from '../../evidence/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';
import { clip, containerStatuses, eventAt, eventEvidence, ownerReplicaSet, podContainer, revisionEvidence, revisions, rolledOutBefore, servingScope, undoProposal } from './crash-loop.js';
import { probeTarget } from './failing-probe.js';

const NAME = 'rollout-stuck';
const BROKEN_WAITING = new Set(['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull', 'CreateContainerConfigError', 'CreateContainerError', 'InvalidImageName', 'RunContainerError', 'ErrImageNeverPull']);
/** A previous ReplicaSet that ran this long before the rollout without failing pods is the one that served. */
const SERVED_MS = 30 * 60_000;
/** An init container still running this long is stuck (init-container-stuck's case), not slow. */
const INIT_STUCK_MS = 5 * 60_000;

/** An IntOrString of the rolling update resolved against the replica count (percentages: maxUnavailable rounds down, maxSurge up). */
export function resolveIntOrPercent(v: number | string | undefined, replicas: number, roundUp: boolean): number {
  if (v === undefined) return resolveIntOrPercent('25%', replicas, roundUp);
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v.trim());
  if (!m) return Number(v) || 0;
  const x = (Number(m[1]) * replicas) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

function condition(d: V1Deployment, type: string): V1DeploymentCondition | undefined {
  return (d.status?.conditions ?? []).find((c) => c.type === type);
}

function isReady(p: V1Pod): boolean {
  return (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Why the new pods are not ready, when another analyzer owns that reason. */
function brokenReason(kube: TriageInput['kube'], onset: Date): string | undefined {
  for (const p of kube.pods) {
    for (const s of containerStatuses(p)) {
      const w = s.state?.waiting?.reason;
      if (w && BROKEN_WAITING.has(w)) return `${p.metadata?.name}: ${s.name} ${w}`;
      const term = s.lastState?.terminated ?? s.state?.terminated;
      const at = term?.finishedAt ? new Date(term.finishedAt) : undefined;
      if (term?.reason === 'OOMKilled' && at && onset.getTime() - at.getTime() <= CHANGE_WINDOW_MS) return `${p.metadata?.name}: ${s.name} OOMKilled`;
      if ((s.restartCount ?? 0) >= 3 && term && term.exitCode !== 0) return `${p.metadata?.name}: ${s.name} restarted ${s.restartCount} times`;
    }
    // Init containers that failed (the pod is stuck in Init): init-container-stuck.
    if ((p.status?.initContainerStatuses ?? []).some((s) => (s.restartCount ?? 0) > 0 || (s.state?.terminated && s.state.terminated.exitCode !== 0))) return `${p.metadata?.name}: init container failing`;
    // An init container running for minutes: the pod waits in Init for a dependency (init-container-stuck).
    if ((p.status?.initContainerStatuses ?? []).some((s) => s.state?.running?.startedAt && onset.getTime() - new Date(s.state.running.startedAt).getTime() >= INIT_STUCK_MS)) return `${p.metadata?.name}: stuck in Init`;
    if ((p.status?.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.status === 'False')) return `${p.metadata?.name}: unschedulable`;
  }
  const names = new Set(kube.pods.map((p) => p.metadata?.name));
  const rsNames = new Set(kube.replicaSets.map((r) => r.metadata?.name));
  for (const e of kube.events) {
    const at = eventAt(e);
    if (!at || onset.getTime() - at.getTime() > CHANGE_WINDOW_MS) continue;
    if (e.reason === 'FailedCreate' && e.involvedObject?.kind === 'ReplicaSet' && rsNames.has(e.involvedObject.name)) return `ReplicaSet ${e.involvedObject.name}: FailedCreate`;
    if (e.reason === 'FailedScheduling' && e.involvedObject?.kind === 'Pod' && names.has(e.involvedObject.name)) return `${e.involvedObject.name}: FailedScheduling`;
    if (e.reason === 'Unhealthy' && e.involvedObject?.kind === 'Pod' && names.has(e.involvedObject.name) && misconfiguredProbe(e, kube.pods)) return `${e.involvedObject.name}: misconfigured probe`;
  }
  return undefined;
}

/** An Unhealthy event that shows the probe, not the app, is wrong: 404, or a port the container does not declare. */
function misconfiguredProbe(e: CoreV1Event, pods: V1Pod[]): boolean {
  const msg = e.message ?? '';
  if (/statuscode: 404/i.test(msg)) return true;
  const pod = pods.find((p) => p.metadata?.name === e.involvedObject?.name);
  const containerName = /spec\.containers\{([^}]+)\}/.exec(e.involvedObject?.fieldPath ?? '')?.[1] ?? pod?.spec?.containers?.[0]?.name;
  const c = pod && containerName ? podContainer(pod, containerName) : undefined;
  if (!c) return false;
  const kind = /^(Readiness|Liveness|Startup)/.exec(msg)?.[1]?.toLowerCase();
  const probe = kind === 'liveness' ? c.livenessProbe : kind === 'startup' ? c.startupProbe : c.readinessProbe;
  const target = probeTarget(probe, c);
  if (target.portSpec && target.port === undefined) return true;
  const declared = (c.ports ?? []).map((p) => p.containerPort);
  const port = Number(/:(\d+)[/"]/.exec(msg)?.[1] ?? target.port);
  return /connection refused/i.test(msg) && declared.length > 0 && !!port && !declared.includes(port);
}

export const rolloutStuck: Analyzer = {
  name: NAME,
  analyze(input: TriageInput): Finding[] {
    const { kube, onset } = input;
    const t = kube.target;
    if (!t || t.kind !== 'Deployment' || !kube.workload) return [];
    const d = kube.workload as V1Deployment;
    const desired = d.spec?.replicas ?? 1;
    if (desired === 0) return [];
    const st = d.status;
    // Without the controller's status there is nothing to read (a partial read, not a zero).
    if (!st || (st.observedGeneration === undefined && st.replicas === undefined && !st.conditions?.length)) return [];
    const available = st.availableReplicas ?? 0;
    const updated = st.updatedReplicas ?? 0;
    const total = st.replicas ?? 0;
    const progressing = condition(d, 'Progressing');
    const availableCond = condition(d, 'Available');
    const deadline = progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded';

    const strategy = d.spec?.strategy?.type ?? 'RollingUpdate';
    const rolling = d.spec?.strategy?.rollingUpdate;
    const maxUnavailable = strategy === 'Recreate' ? undefined : (rolling?.maxUnavailable ?? '25%');
    const maxSurge = strategy === 'Recreate' ? undefined : (rolling?.maxSurge ?? '25%');
    let unavailableAllowed = strategy === 'Recreate' ? desired : resolveIntOrPercent(maxUnavailable, desired, false);
    const surgeAllowed = strategy === 'Recreate' ? 0 : resolveIntOrPercent(maxSurge, desired, true);
    if (strategy !== 'Recreate' && unavailableAllowed === 0 && surgeAllowed === 0) unavailableAllowed = 1; // what the controller does
    const allowsOutage = unavailableAllowed >= desired;

    const { current, previous } = revisions(kube);
    const newPods = current ? kube.pods.filter((p) => ownerReplicaSet(p) === current.name) : [];
    const oldPods = current ? kube.pods.filter((p) => ownerReplicaSet(p) && ownerReplicaSet(p) !== current.name) : [];
    const readyNew = newPods.filter(isReady);
    const inRollout =
      updated < desired ||
      total > updated ||
      progressing?.reason === 'ReplicaSetUpdated' ||
      progressing?.reason === 'NewReplicaSetCreated' ||
      (rolledOutBefore(current, onset) && newPods.some((p) => !isReady(p)));
    const far = available < desired && available <= Math.floor(desired / 2);
    if (!deadline && !(inRollout && far)) return [];

    const broken = brokenReason(kube, onset);
    if (broken) return [];

    const component = { kind: t.kind, namespace: t.namespace, name: t.name };
    const key = `${NAME}:${t.namespace}/${t.kind}/${t.name}`;
    const reason = deadline ? 'ProgressDeadlineExceeded' : availableCond?.status === 'False' ? (availableCond.reason ?? 'MinimumReplicasUnavailable') : (progressing?.reason ?? 'MinimumReplicasUnavailable');

    // Who started it: a recent write of the strategy, else the newest hand-made write of the pod template.
    const recent = (w: FieldWrite | undefined) => !!w?.time && onset.getTime() - w.time.getTime() <= CHANGE_WINDOW_MS && w.time.getTime() - onset.getTime() <= 2 * 60_000;
    const notController = (w: FieldWrite) => !/^(kube-controller-manager|deployment-controller)$/.test(w.manager);
    const strategyWriter = writersOf(d.metadata?.managedFields, ['spec', 'strategy']).filter(notController)[0];
    const templateWriter = writersOf(d.metadata?.managedFields, ['spec', 'template']).filter(notController)[0];
    const strategyChanged = recent(strategyWriter);
    const writer = strategyChanged ? strategyWriter : recent(templateWriter) ? templateWriter : undefined;
    const changedAt = writer?.time ?? current?.createdAt;

    const facts: Record<string, string | number | boolean> = {
      strategy,
      availableReplicas: available,
      desiredReplicas: desired,
      updatedReplicas: updated,
      reason,
    };
    if (maxUnavailable !== undefined) facts['maxUnavailable'] = maxUnavailable;
    if (maxSurge !== undefined) facts['maxSurge'] = maxSurge;
    if (current) {
      facts['revision'] = current.revision;
      facts['readyNewPods'] = readyNew.length;
    }
    if (previous) facts['previousRevision'] = previous.revision;
    if (writer) facts['manager'] = writer.manager;
    if (changedAt) facts['changedAt'] = changedAt.toISOString();

    const conds = [progressing, availableCond].filter((c): c is V1DeploymentCondition => !!c);
    const supporting: Evidence[] = [
      {
        kind: 'object',
        summary:
          `deployment ${t.name}: ${available}/${desired} available, ${updated} updated, ${total} total` +
          (conds.length ? `; ${conds.map((c) => `${c.type}=${c.status} ${c.reason ?? ''}${c.message ? ` ("${clip(c.message, 120)}")` : ''}`).join('; ')}` : ''),
        citation: objectCitation('Deployment', t.namespace, t.name, 'status'),
        ...(progressing?.lastUpdateTime ? { observedAt: new Date(progressing.lastUpdateTime) } : {}),
        detail: { availableReplicas: available, desiredReplicas: desired, updatedReplicas: updated, replicas: total, conditions: conds.map((c) => ({ type: c.type, status: c.status, reason: c.reason ?? null })) },
      },
      {
        kind: 'object',
        summary:
          strategy === 'Recreate'
            ? `strategy Recreate: every old pod is stopped before any new one starts`
            : `strategy RollingUpdate maxUnavailable ${maxUnavailable} (${unavailableAllowed} of ${desired} pods may be unavailable), maxSurge ${maxSurge} (${surgeAllowed} extra)${d.spec?.progressDeadlineSeconds ? `, progressDeadlineSeconds ${d.spec.progressDeadlineSeconds}` : ''}`,
        citation: objectCitation('Deployment', t.namespace, t.name, 'spec.strategy'),
        detail: { strategy, maxUnavailable: maxUnavailable ?? null, maxSurge: maxSurge ?? null, unavailableAllowed, surgeAllowed },
      },
    ];
    if (current) supporting.push(revisionEvidence(kube, current, onset, `${readyNew.length}/${newPods.length} new pods Ready`));
    if (writer) {
      supporting.push({
        kind: 'managed_fields',
        summary: `managedFields: manager \`${writer.manager}\` (${describeWriter(writer)}) ${writer.operation} owns spec.${strategyChanged ? 'strategy' : 'template'}${writer.time ? ` (${clockTime(writer.time)}, ${relativeToOnset(writer.time, onset)})` : ''}`,
        citation: objectCitation('Deployment', t.namespace, t.name, `metadata.managedFields[${writer.index}]`),
        ...(writer.time ? { observedAt: writer.time } : {}),
        detail: { manager: writer.manager, operation: writer.operation, time: writer.time?.toISOString() ?? null },
      });
    }
    // The controller's own account: "Scaled down replica set X to 0 from 4".
    const scaling = kube.events
      .filter((e) => e.reason === 'ScalingReplicaSet' && e.involvedObject?.kind === 'Deployment' && e.involvedObject.name === t.name)
      .filter((e) => {
        const at = eventAt(e);
        return !!at && onset.getTime() - at.getTime() <= CHANGE_WINDOW_MS;
      })
      .sort((a, b) => (eventAt(a)?.getTime() ?? 0) - (eventAt(b)?.getTime() ?? 0));
    const scaledDown = scaling.find((e) => /Scaled down replica set \S+ to 0\b/.test(e.message ?? ''));
    for (const e of (scaledDown ? [scaledDown, ...scaling.filter((x) => x !== scaledDown && /Scaled up/.test(x.message ?? '')).slice(0, 1)] : scaling.slice(-2))) {
      supporting.push(eventEvidence(e, `event ScalingReplicaSet on deployment/${t.name}: "${clip(e.message ?? '', 160)}"${eventAt(e) ? ` (${clockTime(eventAt(e)!)})` : ''}`));
    }

    // The new pods: running but not Ready yet, or still being created.
    const slow = newPods.filter((p) => !isReady(p));
    const starting = slow.filter((p) => (p.status?.containerStatuses ?? []).some((s) => s.state?.running));
    const creating = slow.filter((p) => !starting.includes(p));
    const oldest = slow.map((p) => (p.metadata?.creationTimestamp ? new Date(p.metadata.creationTimestamp) : undefined)).filter((x): x is Date => !!x).sort((a, b) => a.getTime() - b.getTime())[0];
    const restarts = slow.flatMap((p) => p.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
    if (slow.length) {
      const p = slow[0]!;
      supporting.push({
        kind: 'object',
        summary: `${slow.length} of ${newPods.length} new pods not Ready: ${starting.length} running without passing readiness, ${creating.length} still being created${oldest ? `; the oldest started ${clockTime(oldest)} (${relativeToOnset(oldest, onset)})` : ''}; ${restarts ? `${restarts} restart${restarts === 1 ? '' : 's'}` : 'no restarts'}, no crash`,
        citation: objectCitation('Pod', t.namespace, p.metadata?.name ?? '?', 'status.conditions'),
        detail: { pods: slow.map((x) => x.metadata?.name), running: starting.length, creating: creating.length },
      });
    }
    const readiness = kube.events
      .filter((e) => e.reason === 'Unhealthy' && e.involvedObject?.kind === 'Pod' && slow.some((p) => p.metadata?.name === e.involvedObject?.name) && /^Readiness probe/.test(e.message ?? ''))
      .sort((a, b) => (b.count ?? 1) - (a.count ?? 1))[0];
    if (readiness) supporting.push(eventEvidence(readiness));

    const { scope, affected, evidence, readyEndpoints } = servingScope(kube, `${t.name} serves with ${available} of ${desired} replicas available while the rollout to revision ${current?.revision ?? '?'} waits for its pods`);
    supporting.push(...evidence.filter((e) => (e.detail?.['ready'] as number) === 0));

    // Was the previous ReplicaSet the one serving? It still has available pods, or ran a while before this rollout without failing pods.
    const prevAvailable = previous?.replicaSet.status?.availableReplicas ?? 0;
    const prevPods = previous ? kube.pods.filter((p) => ownerReplicaSet(p) === previous.name) : [];
    const prevFailing = prevPods.some((p) => !isReady(p));
    const prevRan = !!previous?.createdAt && !!current?.createdAt && current.createdAt.getTime() - previous.createdAt.getTime() >= SERVED_MS;
    const previousServed = !!previous && !prevFailing && (prevAvailable > 0 || prevRan);

    const age = changedAt ? onset.getTime() - changedAt.getTime() : undefined;
    const stale = age !== undefined && age > 6 * 60 * 60_000;
    let status: Finding['status'];
    let confidence: number;
    if (allowsOutage && far && inRollout) {
      status = stale ? 'open' : 'supported';
      confidence = stale ? 0.5 : 0.9;
    } else if (deadline) {
      status = stale ? 'open' : 'supported';
      confidence = stale ? 0.5 : far ? 0.88 : 0.8;
    } else {
      status = 'open';
      confidence = 0.6;
    }

    const mitigation: MitigationProposal | undefined =
      previous && previousServed && status !== 'open'
        ? undoProposal(
            kube,
            previous,
            `revision ${previous.revision} (ReplicaSet ${previous.name}) served before this rollout${prevAvailable ? ` and still has ${prevAvailable} available pod${prevAvailable === 1 ? '' : 's'}` : ''}; rolling back restores capacity while the new pods' slow start is fixed${allowsOutage ? ` — and set a maxUnavailable below ${desired} (e.g. 25%) so the next rollout keeps pods serving` : ''}`,
          )
        : undefined;

    const how =
      strategy === 'Recreate'
        ? 'its strategy is Recreate, so the controller stopped every old pod before starting the new ones'
        : allowsOutage
          ? `its rolling update allows maxUnavailable ${maxUnavailable} (${unavailableAllowed} of ${desired}), so the controller scaled the old ReplicaSet down at once instead of waiting for new pods to be ready`
          : `its rolling update allows ${unavailableAllowed} unavailable and ${surgeAllowed} surge pods`;
    const mechanism =
      `The rollout of deployment/${t.name}${current ? ` to revision ${current.revision}` : ''}${changedAt ? ` (started ${clockTime(changedAt)}${writer ? ` by \`${describeWriter(writer)}\`` : ''}, ${relativeToOnset(changedAt, onset)})` : ''} ` +
      (deadline ? `exceeded its progress deadline (${progressing?.message ? `"${clip(progressing.message, 120)}"` : 'ProgressDeadlineExceeded'}) ` : 'is not complete ') +
      `with ${available} of ${desired} replicas available: ${how}` +
      (slow.length ? `; the new pods are slow to become ready (${readyNew.length}/${newPods.length} Ready${oldest ? `, the oldest for ${humanDuration(Math.max(0, onset.getTime() - oldest.getTime()))}` : ''}), not crashing` : '') +
      (readyEndpoints === 0 ? `; the Service has no ready endpoints` : '') +
      (oldPods.length ? `; ${oldPods.length} old pod${oldPods.length === 1 ? '' : 's'} remain` : '') +
      (stale ? `. The rollout started ${humanDuration(age!)} before the alert, so it may not be what changed` : '') +
      '.';

    return [
      {
        key,
        analyzer: NAME,
        family: 'rollout-stuck',
        status,
        confidence,
        title: `${t.name} rollout${current ? ` to revision ${current.revision}` : ''} ${deadline ? 'exceeded its progress deadline' : 'took capacity down'}: ${available}/${desired} available${allowsOutage ? ` (${strategy === 'Recreate' ? 'Recreate' : `maxUnavailable ${maxUnavailable}`})` : ''}`,
        component,
        mechanism,
        scope,
        affected: [component, ...affected],
        facts,
        supporting,
        refuting: [],
        ...(mitigation ? { mitigation } : {}),
      },
    ];
  },
};
