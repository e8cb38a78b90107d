import type { Evidence } from '../../evidence/types.js';
import { describeWriter, writersOf } from '../../evidence/kubernetes/managed-fields.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';

/** `Scaled down replica set checkout-7d9f8b6c5 to 0 from 3` → 3 (the count before the drop). */
const SCALED_DOWN = /Scaled down replica set \S+ to 0 from (\d+)/;

/**
 * A Deployment/StatefulSet whose desired replicas are 0: nothing serves. Who set it comes from
 * managedFields (the manager owning spec.replicas and whether it wrote through the scale subresource),
 * which is what tells a `kubectl scale` apart from a Helm release or an autoscaler.
 */
export const scaledToZero: Analyzer = {
  name: 'scaled-to-zero',
  analyze({ kube, onset, cluster }: TriageInput): Finding[] {
    const w = kube.workload;
    const t = kube.target;
    if (!w || !t || t.kind === 'DaemonSet') return [];
    const replicas = (w.spec as { replicas?: number } | undefined)?.replicas;
    if (replicas !== 0) return [];

    const status = (w.status ?? {}) as { readyReplicas?: number; availableReplicas?: number };
    const supporting: Evidence[] = [];
    const component = { kind: t.kind, namespace: t.namespace, name: t.name };
    const writer = writersOf(w.metadata?.managedFields, ['spec', 'replicas'])[0];
    const who = writer ? describeWriter(writer) : 'an unknown client';
    if (writer) {
      supporting.push({
        kind: 'managed_fields',
        summary: `managedFields: manager \`${writer.manager}\` ${writer.operation}${writer.subresource ? ` via /${writer.subresource}` : ''} owns spec.replicas${writer.time ? ` (${clockTime(writer.time)})` : ''}`,
        citation: objectCitation(t.kind, t.namespace, t.name, `metadata.managedFields[${writer.index}]`),
        observedAt: writer.time,
        detail: { manager: writer.manager, operation: writer.operation, subresource: writer.subresource ?? null, time: writer.time?.toISOString() ?? null },
      });
    }
    supporting.push({
      kind: 'object',
      summary: `${t.kind.toLowerCase()}/${t.name}: spec.replicas = 0, ${status.readyReplicas ?? 0} ready`,
      citation: objectCitation(t.kind, t.namespace, t.name, 'spec.replicas'),
      detail: { specReplicas: 0, readyReplicas: status.readyReplicas ?? 0, availableReplicas: status.availableReplicas ?? 0 },
    });

    const current = kube.replicaSets.find((rs) => rs.metadata?.annotations?.['deployment.kubernetes.io/revision'] === w.metadata?.annotations?.['deployment.kubernetes.io/revision']) ?? kube.replicaSets[0];
    if (current) {
      supporting.push({
        kind: 'object',
        summary: `ReplicaSet ${current.metadata?.name}: ${current.status?.readyReplicas ?? 0}/${current.spec?.replicas ?? 0} ready`,
        citation: objectCitation('ReplicaSet', t.namespace, current.metadata?.name ?? '?', 'status'),
      });
    }

    let previous: number | undefined;
    for (const e of kube.events) {
      const m = SCALED_DOWN.exec(e.message ?? '');
      if (m && e.involvedObject?.name === t.name) {
        previous = Number(m[1]);
        const at = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp;
        supporting.push({
          kind: 'event',
          summary: `event ${e.reason}: "${e.message}"${at ? ` (${clockTime(new Date(at))})` : ''}`,
          citation: objectCitation('Event', t.namespace, e.metadata?.name ?? '?'),
          observedAt: at ? new Date(at) : undefined,
        });
      }
    }
    // Charts name it replicaCount (the helm create default) or replicas (prometheus-adapter, many operators).
    const helmReplicas = kube.helm?.revisions[0]?.values['replicaCount'] ?? kube.helm?.revisions[0]?.values['replicas'];
    previous ??= typeof helmReplicas === 'number' && helmReplicas > 0 ? helmReplicas : undefined;

    const emptyServices = kube.services.filter(({ endpoints }) => !(endpoints?.subsets ?? []).some((s) => (s.addresses ?? []).length > 0));
    for (const { service } of emptyServices) {
      supporting.push({
        kind: 'endpoints',
        summary: `Endpoints ${service.metadata?.name}: no ready addresses`,
        citation: objectCitation('Endpoints', t.namespace, service.metadata?.name ?? '?'),
      });
    }

    // An aggregated API this workload serves (prometheus-adapter's custom metrics, KEDA's external
    // metrics): while it has no endpoints every HPA reading it is frozen, which is how a scale-down hours
    // ago hurts only now, at the first peak the HPAs cannot follow.
    const apis = (cluster?.snapshot.apiServices ?? []).filter((a) => a.spec?.service?.namespace === t.namespace && kube.services.some(({ service }) => service.metadata?.name === a.spec?.service?.name));
    const down = apis.filter((a) => (a.status?.conditions ?? []).some((c) => c.type === 'Available' && c.status === 'False'));
    const groups = new Set(down.map((a) => a.spec?.group).filter((g): g is string => !!g));
    const frozen = (cluster?.snapshot.hpas ?? []).filter((h) => {
      const cond = (h.status?.conditions ?? []).find((c) => c.type === 'ScalingActive' && c.status === 'False');
      return !!cond && [...groups].some((g) => (cond.message ?? '').includes(g) || (h.spec?.metrics ?? []).some((m) => (g === 'custom.metrics.k8s.io' && (m.type === 'Pods' || m.type === 'Object')) || (g === 'external.metrics.k8s.io' && m.type === 'External')));
    });
    for (const a of down) {
      const c = (a.status?.conditions ?? []).find((x) => x.type === 'Available');
      supporting.push({ kind: 'object', summary: `APIService ${a.metadata?.name}: Available=False (${c?.reason ?? '?'}): "${c?.message ?? ''}"`, citation: objectCitation('APIService', undefined, a.metadata?.name ?? '?', 'status.conditions'), ...(c?.lastTransitionTime ? { observedAt: new Date(c.lastTransitionTime) } : {}) });
    }
    for (const h of frozen.slice(0, 4)) {
      const c = (h.status?.conditions ?? []).find((x) => x.type === 'ScalingActive');
      supporting.push({ kind: 'object', summary: `HPA ${h.metadata?.namespace}/${h.metadata?.name}: ScalingActive=False (${c?.reason ?? '?'}), stuck at ${h.status?.currentReplicas ?? '?'} replica(s)`, citation: objectCitation('HorizontalPodAutoscaler', h.metadata?.namespace, h.metadata?.name ?? '?', 'status.conditions') });
    }
    const when = writer?.time;
    const recent = when ? onset.getTime() - when.getTime() <= CHANGE_WINDOW_MS : false;
    const biting = down.length > 0 && frozen.length > 0;
    const callers = kube.dependents.map((d) => d.name);
    const serviceNames = emptyServices.map(({ service }) => service.metadata?.name).filter(Boolean);
    const scope =
      serviceNames.length > 0
        ? `${t.name} has no ready endpoints (Service ${serviceNames.join(', ')} selects 0 pods), so every request to ${t.name} fails${callers.length ? `; callers affected: ${callers.join(', ')}` : ''}`
        : `${t.name} runs no pods, so nothing it serves is available`;
    const restoreTo = previous ?? 1;

    return [
      {
        key: `scaled-to-zero:${t.namespace}/${t.kind}/${t.name}`,
        analyzer: 'scaled-to-zero',
        status: 'supported',
        confidence: writer && recent ? 0.95 : biting ? 0.92 : 0.75,
        title: `${t.name} scaled to 0 by \`${who}\`${writer ? ` (field manager ${writer.manager}${when ? `, ${clockTime(when)}` : ''})` : ''}`,
        component,
        mechanism:
          `${t.kind.toLowerCase()}/${t.name} in ${t.namespace} has spec.replicas = 0` +
          (writer ? `, set by \`${who}\` (field manager \`${writer.manager}\`${writer.subresource ? `, ${writer.subresource} subresource` : ''})` : '') +
          (when ? ` at ${clockTime(when)}, ${relativeToOnset(when, onset)}` : '') +
          (previous ? `; it ran ${previous} replicas before` : '') +
          (biting ? `. It serves ${down.map((a) => `APIService ${a.metadata?.name}`).join(', ')}, now unavailable, so ${frozen.length} HPA(s) (${frozen.map((h) => h.metadata?.name).join(', ')}) cannot read their metrics and stay frozen at their current replicas: the scale-down bites when load rises` : '') +
          '.',
        scope,
        affected: [
          ...emptyServices.map(({ service }) => ({ kind: 'Service', namespace: t.namespace, name: service.metadata?.name ?? '?' })),
          ...down.map((a) => ({ kind: 'APIService', name: a.metadata?.name ?? '?' })),
          ...frozen.flatMap((h) => [
            { kind: 'HorizontalPodAutoscaler', namespace: h.metadata?.namespace ?? '', name: h.metadata?.name ?? '?' },
            ...(h.spec?.scaleTargetRef?.name ? [{ kind: h.spec.scaleTargetRef.kind ?? 'Deployment', namespace: h.metadata?.namespace ?? '', name: h.spec.scaleTargetRef.name }] : []),
          ]),
          ...kube.dependents.map((d) => ({ kind: d.kind, namespace: t.namespace, name: d.name })),
        ],
        facts: {
          replicas: 0,
          ...(previous !== undefined ? { previousReplicas: previous } : {}),
          ...(writer ? { manager: writer.manager, operation: writer.operation } : {}),
          ...(writer?.subresource ? { subresource: writer.subresource } : {}),
          ...(when ? { changedAt: when.toISOString() } : {}),
        },
        supporting,
        refuting: [],
        mitigation: {
          action: 'scale',
          target: component,
          params: { replicas: restoreTo },
          command: `kubectl scale ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace} --replicas=${restoreTo}`,
          rationale: previous
            ? `restore the ${previous} replicas it ran before the scale-down`
            : 'bring back at least one replica (the previous count is unknown)',
        },
      },
    ];
  },
};
