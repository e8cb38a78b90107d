/**
 * `endpoints-mismatch`: the target's Service has no ready endpoints although the target's pods are
 * Running and Ready — the Service does not select them (selector `app: checkout-v2` vs pod label
 * `app: checkout`), or its named targetPort matches no container port, so the endpoints controller
 * publishes nothing and callers get connection refused / 503.
 *
 * The Service is the one named like the workload or named by the alert (`service` label or a bare value).
 * Who changed the selector comes from the Service's managedFields (owner of `f:spec.f:selector`), or,
 * for a label edit on the workload side, from the owner of the template labels. Scaled to zero explains
 * empty endpoints on its own (scaled-to-zero's finding): then this returns nothing. The fix is a Service
 * (or template label) edit. Mitigation: when the Service was edited and its previous spec is known (its
 * last-applied-configuration, or the deployed Helm revision after a later edit), `restore_object` puts
 * its previous selector/ports back; a template-label edit gets none (the mechanism says what to set).
 *
 * Facts (camelCase):
 * - `service`, `selector` (`app=checkout-v2`), `podLabels` (`app=checkout,pod-template-hash=…`)
 * - `mismatchedKey`, `serviceValue`, `podValue` (`<missing>` when the pods lack the key)
 * - `targetPort`, `containerPorts` (numbers, `8080,9464`), `containerPortNames` for a port mismatch: a named
 *   targetPort no container declares (no endpoints), or a numeric one the pods do not listen on (endpoints
 *   look fine, connections are refused)
 * - `manager`, `changedAt`: who last wrote the selector (or template labels) and when
 * - `readyPods`: target pods Running and Ready
 */
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { KubeEvidence } from '../../evidence/kubernetes/gather.js';
import { describeWriter, writersOf } from '../../evidence/kubernetes/managed-fields.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { restoreObjectProposal } from '../../actions/objects/propose.js';

const labelsText = (l: Record<string, string> | undefined) => Object.entries(l ?? {}).map(([k, v]) => `${k}=${v}`).join(',');

function isReady(p: V1Pod): boolean {
  return p.status?.phase === 'Running' && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The Deployment behind a pod: its ReplicaSet owner's name without the template hash. */
function ownerWorkload(p: V1Pod): { kind: string; name: string } | undefined {
  const o = p.metadata?.ownerReferences?.find((r) => r.controller) ?? p.metadata?.ownerReferences?.[0];
  if (!o) return undefined;
  if (o.kind === 'ReplicaSet') return { kind: 'Deployment', name: o.name.replace(/-[a-z0-9]{6,10}$/, '') };
  return { kind: o.kind, name: o.name };
}

/** Workloads in the namespace whose pods' env points at the Service's DNS name. */
function callersOf(kube: KubeEvidence, service: string, ns: string): ComponentRef[] {
  const hosts = [`${service}.${ns}.svc`, `${service}.${ns}:`, `//${service}:`, `//${service}/`];
  const out = new Map<string, ComponentRef>();
  for (const d of kube.dependents) out.set(`${d.kind}/${d.name}`, { kind: d.kind, namespace: ns, name: d.name });
  for (const p of kube.namespacePods) {
    const hit = (p.spec?.containers ?? []).some((c) => (c.env ?? []).some((e) => e.value && hosts.some((h) => e.value!.includes(h))));
    const owner = hit ? ownerWorkload(p) : undefined;
    if (owner && owner.name !== kube.target?.name) out.set(`${owner.kind}/${owner.name}`, { ...owner, namespace: ns });
  }
  return [...out.values()];
}

function hasReadyAddresses(ep: { subsets?: { addresses?: unknown[] }[] } | undefined): boolean {
  return (ep?.subsets ?? []).some((s) => (s.addresses ?? []).length > 0);
}

/** The Services this alert is about: named like the workload, or named by the alert. */
function candidateServices(kube: KubeEvidence, alertNames: string[]): KubeEvidence['namespaceServices'] {
  const t = kube.target!;
  const names = new Set([t.name, ...alertNames]);
  const byName = kube.namespaceServices.filter(({ service }) => names.has(service.metadata?.name ?? ''));
  const selecting = kube.services.filter(({ service }) => !byName.some((b) => b.service.metadata?.name === service.metadata?.name));
  return [...byName, ...selecting];
}

function ingressesFor(kube: KubeEvidence, service: string, ns: string): ComponentRef[] {
  return kube.ingresses
    .filter((i) => (i.spec?.rules ?? []).some((r) => (r.http?.paths ?? []).some((p) => p.backend?.service?.name === service)))
    .map((i) => ({ kind: 'Ingress', namespace: ns, name: i.metadata?.name ?? '?' }));
}

export const endpointsMismatch: Analyzer = {
  name: 'endpoints-mismatch',
  analyze({ kube, onset, alert }: TriageInput): Finding[] {
    const t = kube.target;
    const w = kube.workload;
    if (!t || !w) return [];
    // Scaled to zero: nothing to select, empty endpoints are expected (scaled-to-zero explains them).
    if ((w.spec as { replicas?: number } | undefined)?.replicas === 0) return [];
    const podLabels = w.spec?.template?.metadata?.labels ?? {};
    const ready = kube.pods.filter(isReady);
    if (ready.length === 0) return [];
    const alertNames = [alert.labels['service'], ...alert.labelValues].filter((v): v is string => !!v);
    const out: Finding[] = [];

    for (const { service, endpoints } of candidateServices(kube, alertNames)) {
      // A Service the alert names that selects another workload's pods is that workload's, not this one's.
      if (selectsOthers(kube, service)) continue;
      if (hasReadyAddresses(endpoints)) {
        const closed = closedPort(kube, service, ready, onset);
        if (closed) out.push(closed);
        continue;
      }
      const selector = service.spec?.selector;
      if (!selector || Object.keys(selector).length === 0) continue; // selector-less Services have hand-made Endpoints
      const finding = mismatch(kube, service, selector, podLabels, ready, onset) ?? portMismatch(kube, service, ready, onset);
      if (finding) out.push(finding);
    }
    return out;
  },
};

/** The Service's selector matches pods of the namespace that are not the target's. */
function selectsOthers(kube: KubeEvidence, service: V1Service): boolean {
  const selector = service.spec?.selector;
  if (!selector || !Object.keys(selector).length) return false;
  const mine = new Set(kube.pods.map((p) => p.metadata?.uid ?? p.metadata?.name));
  return kube.namespacePods.some((p) => !mine.has(p.metadata?.uid ?? p.metadata?.name) && Object.entries(selector).every(([k, v]) => p.metadata?.labels?.[k] === v));
}

function endpointsEvidence(ns: string, name: string): Evidence {
  return { kind: 'endpoints', summary: `Endpoints ${name}: no ready addresses`, citation: objectCitation('Endpoints', ns, name, 'subsets') };
}

function readyEvidence(ns: string, ready: V1Pod[], labels: Record<string, string>): Evidence {
  return {
    kind: 'object',
    summary: `${ready.length} pod(s) Running and Ready (${ready.map((p) => p.metadata?.name).join(', ')}) with labels ${labelsText(labels)}`,
    citation: objectCitation('Pod', ns, ready[0]!.metadata?.name ?? '?', 'metadata.labels'),
  };
}

function mismatch(kube: KubeEvidence, service: V1Service, selector: Record<string, string>, podLabels: Record<string, string>, ready: V1Pod[], onset: Date): Finding | undefined {
  const t = kube.target!;
  const name = service.metadata?.name ?? '?';
  const diff = Object.entries(selector).filter(([k, v]) => (ready[0]!.metadata?.labels ?? podLabels)[k] !== v);
  if (diff.length === 0) return undefined;
  const [key, value] = diff[0]!;
  const podValue = (ready[0]!.metadata?.labels ?? podLabels)[key];

  // Who moved: the Service's selector writer, or the workload's template-labels writer — the newer one.
  const svcWriter = writersOf(service.metadata?.managedFields, ['spec', 'selector'])[0];
  const tplWriter = writersOf(kube.workload?.metadata?.managedFields, ['spec', 'template', 'metadata', 'labels'])[0];
  const writer = [svcWriter && { w: svcWriter, on: 'Service' as const }, tplWriter && { w: tplWriter, on: t.kind }]
    .filter((x): x is NonNullable<typeof x> => !!x)
    .sort((a, b) => (b.w.time?.getTime() ?? 0) - (a.w.time?.getTime() ?? 0))[0];
  const recent = writer?.w.time ? onset.getTime() - writer.w.time.getTime() <= CHANGE_WINDOW_MS : false;

  const supporting: Evidence[] = [
    {
      kind: 'object',
      summary: `Service ${name} selects ${labelsText(selector)}; the pods carry ${key}=${podValue ?? '<missing>'} (selector wants ${key}=${value})`,
      citation: objectCitation('Service', t.namespace, name, 'spec.selector'),
      detail: { selector, podLabels: ready[0]!.metadata?.labels ?? podLabels },
    },
    endpointsEvidence(t.namespace, name),
    readyEvidence(t.namespace, ready, ready[0]!.metadata?.labels ?? podLabels),
  ];
  if (writer) {
    const citation = writer.on === 'Service' ? objectCitation('Service', t.namespace, name, `metadata.managedFields[${writer.w.index}]`) : objectCitation(t.kind, t.namespace, t.name, `metadata.managedFields[${writer.w.index}]`);
    supporting.push({
      kind: 'managed_fields',
      summary: `managedFields: \`${writer.w.manager}\` (${describeWriter(writer.w)}) last wrote ${writer.on === 'Service' ? `service/${name} spec.selector` : `${t.kind.toLowerCase()}/${t.name} template labels`}${writer.w.time ? ` at ${clockTime(writer.w.time)}` : ''}`,
      citation,
      observedAt: writer.w.time,
      detail: { manager: writer.w.manager, operation: writer.w.operation, time: writer.w.time?.toISOString() ?? null },
    });
  }
  const callers = callersOf(kube, name, t.namespace);
  const facts: Record<string, string | number | boolean> = {
    service: name,
    selector: labelsText(selector),
    podLabels: labelsText(ready[0]!.metadata?.labels ?? podLabels),
    mismatchedKey: key,
    serviceValue: value,
    podValue: podValue ?? '<missing>',
    readyPods: ready.length,
    ...(writer ? { manager: writer.w.manager, editedObject: writer.on } : {}),
    ...(writer?.w.time ? { changedAt: writer.w.time.toISOString() } : {}),
  };
  const fix =
    writer?.on === t.kind
      ? `Restore the pod template label ${key}=${value} on ${t.kind.toLowerCase()}/${t.name} (or change the Service selector to ${key}=${podValue})`
      : `Set the selector of service/${name} back to ${key}=${podValue ?? '<the pods\' value>'} (kubectl edit service/${name} -n ${t.namespace})`;
  return {
    key: `endpoints-mismatch:${t.namespace}/Service/${name}`,
    analyzer: 'endpoints-mismatch',
    status: 'supported',
    confidence: writer && recent ? 0.95 : 0.9,
    title: `Service ${name} selects no pods: selector ${key}=${value}, pods have ${key}=${podValue ?? '<missing>'}`,
    component: { kind: 'Service', namespace: t.namespace, name },
    mechanism:
      `service/${name} in ${t.namespace} selects ${labelsText(selector)}, but the ${ready.length} Ready pod(s) of ${t.name} carry ${key}=${podValue ?? '<no such label>'}, so its Endpoints are empty` +
      (writer ? `; ${writer.on === 'Service' ? 'the selector was' : 'the template labels were'} last written by \`${describeWriter(writer.w)}\` (field manager \`${writer.w.manager}\`)${writer.w.time ? ` at ${clockTime(writer.w.time)}, ${relativeToOnset(writer.w.time, onset)}` : ''}` : '') +
      `. ${fix}.`,
    scope: `every request to service/${name} fails (no endpoints) although ${t.name} is healthy${callers.length ? `; callers affected: ${callers.map((c) => c.name).join(', ')}` : ''}`,
    affected: [{ kind: 'Service', namespace: t.namespace, name }, ...callers, ...ingressesFor(kube, name, t.namespace)],
    facts,
    supporting,
    refuting: [],
    ...withRestore(writer?.on === 'Service' ? service : undefined, `put back service/${name}'s selector from before the edit: the pods of ${t.name} carry ${key}=${podValue ?? '<missing>'}`),
  };
}

/** `8086,9464`: the container ports by number, as people compare them with a targetPort. */
const portNumbers = (ports: { containerPort: number }[]) => [...new Set(ports.map((p) => p.containerPort))].join(',');

/**
 * A numeric targetPort the pods do not listen on: the endpoints controller publishes the pods (a number
 * is used as is), so Endpoints look healthy, but every connection to podIP:targetPort is refused (Istio:
 * 503 UF). Declared container ports are a convention, not a firewall, so this is supported only when
 * `spec.ports` was written recently; an old one is open.
 */
function closedPort(kube: KubeEvidence, service: V1Service, ready: V1Pod[], onset: Date): Finding | undefined {
  const t = kube.target!;
  const name = service.metadata?.name ?? '?';
  const ports = (ready[0]!.spec?.containers ?? []).flatMap((c) => c.ports ?? []);
  if (!ports.length) return undefined;
  const bad = (service.spec?.ports ?? []).find((p) => {
    const n = typeof p.targetPort === 'number' ? p.targetPort : /^\d+$/.test(String(p.targetPort ?? '')) ? Number(p.targetPort) : p.targetPort === undefined ? p.port : undefined;
    return n !== undefined && !ports.some((c) => c.containerPort === n);
  });
  if (!bad) return undefined;
  const target = typeof bad.targetPort === 'number' || /^\d+$/.test(String(bad.targetPort ?? '')) ? Number(bad.targetPort) : bad.port;
  const writer = writersOf(service.metadata?.managedFields, ['spec', 'ports'])[0];
  const recent = !!writer?.time && onset.getTime() - writer.time.getTime() <= 12 * 3600_000 && writer.time.getTime() <= onset.getTime() + 120_000;
  const callers = callersOf(kube, name, t.namespace);
  const portsText = ports.map((p) => `${p.name ? `${p.name}:` : ''}${p.containerPort}/${p.protocol ?? 'TCP'}`).join(', ');
  return {
    key: `endpoints-mismatch:${t.namespace}/Service/${name}`,
    analyzer: 'endpoints-mismatch',
    status: recent ? 'supported' : 'open',
    confidence: recent ? 0.9 : 0.45,
    title: `Service ${name} sends traffic to port ${target}, where ${t.name}'s pods do not listen`,
    component: { kind: 'Service', namespace: t.namespace, name },
    mechanism:
      `service/${name} port ${bad.port} → targetPort ${target}, but the pods of ${t.name} listen on ${portsText}: the endpoints list the Ready pods, and every connection to them on ${target} is refused` +
      (writer?.time ? `; spec.ports was last written by \`${describeWriter(writer)}\` (field manager \`${writer.manager}\`) at ${clockTime(writer.time)}, ${relativeToOnset(writer.time, onset)}` : '') +
      `. Set targetPort back to ${ports[0]!.name ?? ports[0]!.containerPort} (kubectl edit service/${name} -n ${t.namespace}).`,
    scope: `every request to service/${name}${callers.length ? `; callers affected: ${callers.map((c) => c.name).join(', ')}` : ''}`,
    affected: [{ kind: 'Service', namespace: t.namespace, name }, { kind: t.kind, namespace: t.namespace, name: t.name }, ...callers, ...ingressesFor(kube, name, t.namespace)],
    facts: { service: name, port: bad.port, targetPort: target, containerPorts: portNumbers(ports), readyPods: ready.length, ...(writer?.time ? { manager: writer.manager, changedAt: writer.time.toISOString() } : {}) },
    supporting: [
      { kind: 'object', summary: `Service ${name} port ${bad.port} → targetPort ${target}; containers listen on ${portsText}`, citation: objectCitation('Service', t.namespace, name, 'spec.ports') },
      ...(writer?.time ? [{ kind: 'managed_fields' as const, summary: `managedFields: \`${writer.manager}\` (${describeWriter(writer)}) wrote spec.ports at ${clockTime(writer.time)}`, citation: objectCitation('Service', t.namespace, name, `metadata.managedFields[${writer.index}]`), observedAt: writer.time }] : []),
      readyEvidence(t.namespace, ready, ready[0]!.metadata?.labels ?? {}),
    ],
    refuting: recent ? [] : [{ kind: 'note', summary: `spec.ports of ${name} has not changed recently; the app may listen on an undeclared port`, citation: objectCitation('Service', t.namespace, name, 'metadata.managedFields') }],
    ...withRestore(recent ? service : undefined, `put back service/${name}'s ports from before the edit: the pods listen on ${portsText}, not ${target}`),
  };
}

function portMismatch(kube: KubeEvidence, service: V1Service, ready: V1Pod[], onset: Date): Finding | undefined {
  const t = kube.target!;
  const name = service.metadata?.name ?? '?';
  const containers = ready[0]!.spec?.containers ?? [];
  const ports = containers.flatMap((c) => c.ports ?? []);
  const portsText = ports.map((p) => `${p.name ? `${p.name}:` : ''}${p.containerPort}/${p.protocol ?? 'TCP'}`).join(', ');
  // Only a NAMED targetPort that no container declares empties the Endpoints; a number is used as is.
  const bad = (service.spec?.ports ?? []).find((p) => typeof p.targetPort === 'string' && !/^\d+$/.test(p.targetPort) && !ports.some((c) => c.name === p.targetPort));
  if (!bad) return undefined;
  const writer = writersOf(service.metadata?.managedFields, ['spec', 'ports'])[0];
  const callers = callersOf(kube, name, t.namespace);
  return {
    key: `endpoints-mismatch:${t.namespace}/Service/${name}`,
    analyzer: 'endpoints-mismatch',
    status: 'supported',
    confidence: 0.9,
    title: `Service ${name}: targetPort "${String(bad.targetPort)}" matches no container port`,
    component: { kind: 'Service', namespace: t.namespace, name },
    mechanism:
      `service/${name} port ${bad.port} targets the named port "${String(bad.targetPort)}", but the pods of ${t.name} declare ${portsText || 'no ports'}, so the endpoints controller publishes no address` +
      (writer?.time ? `; spec.ports last written by \`${describeWriter(writer)}\` at ${clockTime(writer.time)}, ${relativeToOnset(writer.time, onset)}` : '') +
      `. Set targetPort to one of the container ports (${portsText || 'none declared'}) or name the container port "${String(bad.targetPort)}".`,
    scope: `every request to service/${name} fails${callers.length ? `; callers affected: ${callers.map((c) => c.name).join(', ')}` : ''}`,
    affected: [{ kind: 'Service', namespace: t.namespace, name }, ...callers, ...ingressesFor(kube, name, t.namespace)],
    facts: { service: name, targetPort: String(bad.targetPort), containerPorts: portNumbers(ports), containerPortNames: ports.map((p) => p.name).filter(Boolean).join(','), readyPods: ready.length, ...(writer?.time ? { manager: writer.manager, changedAt: writer.time.toISOString() } : {}) },
    supporting: [
      { kind: 'object', summary: `Service ${name} port ${bad.port} → targetPort ${String(bad.targetPort)}; containers declare ${portsText || 'nothing'}`, citation: objectCitation('Service', t.namespace, name, 'spec.ports') },
      endpointsEvidence(t.namespace, name),
      readyEvidence(t.namespace, ready, ready[0]!.metadata?.labels ?? {}),
    ],
    refuting: [],
    ...withRestore(writer ? service : undefined, `put back service/${name}'s ports from before the edit: no container port is named "${String(bad.targetPort)}"`),
  };
}

/** `restore_object` for the edited Service, when its previous spec is known (actions/objects/propose.ts). */
function withRestore(service: V1Service | undefined, rationale: string): Pick<Finding, 'mitigation'> {
  const m = service && restoreObjectProposal('Service', service, rationale);
  return m ? { mitigation: m } : {};
}
