/**
 * `mesh-misconfig`: Istio configuration that breaks traffic by itself, for a Service on the walk's path:
 * - a VirtualService route with `fault.abort` or `fault.delay` (injected errors or latency, often left on
 *   after a game day, or re-applied by a sync): localised to the VirtualService;
 * - a route to a DestinationRule subset whose labels no pod of the Service carries (`no healthy upstream`,
 *   Envoy `NR`/`UH`): localised to the DestinationRule;
 * - a route to a host no Service serves: the VirtualService;
 * - a DestinationRule's outlier detection that ejects on one or two errors and may eject (nearly) every host,
 *   edited before the onset or with callers reporting `no healthy upstream`/UH: the DestinationRule;
 * - TLS disabled towards a STRICT-mTLS Service, and a namespace that lost sidecar injection (below);
 * - an AuthorizationPolicy written in the 6 h before the onset that refuses a caller whose logs show
 *   Envoy's `RBAC: access denied` (an ALLOW list without its principal, a DENY naming it).
 * Corroborated by the callers' symptoms and Envoy's `fault filter abort`/`FI` flags in their logs.
 * Facts: `object` (`Kind/name`), `field`, `value`, `manager`, `changedAt`. Mitigation: `restore_object`
 * puts the VirtualService's or DestinationRule's previous spec back when it is known (a `kubectl edit`
 * after a `kubectl apply`, or an edit after a Helm release); a synced or applied change (Argo CD, a
 * `kubectl apply`: the annotation holds the new spec) gets none: fix it at the source.
 */
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, refOfId } from '../../topology/graph.js';
import { hostRefs, serviceOfHost } from '../../topology/references.js';
import type { V1Pod } from '@kubernetes/client-node';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime } from '../time.js';
import type { Finding } from '../types.js';
import type { CustomObject } from '../../topology/snapshot.js';
import { changeEvidence, lastChangeBefore, logEvidence, logHits, type LogHit } from './common.js';
import { restoreObjectProposal } from '../../actions/objects/propose.js';

const FAULT_LOG = /fault filter abort|\bFI\b|fault injected|injected fault/i;

interface Route {
  destination?: { host?: string; subset?: string };
}
interface HttpRoute {
  fault?: { abort?: { httpStatus?: number; percentage?: { value?: number } }; delay?: { fixedDelay?: string; percentage?: { value?: number } } };
  route?: Route[];
}

export const meshMisconfig: ClusterAnalyzer = {
  name: 'mesh-misconfig',
  analyze(input: ClusterTriageInput): Finding[] {
    const s = input.cluster.snapshot;
    const reached = input.cluster.walk.reached;
    const out: Finding[] = [];
    for (const vs of s.custom['VirtualService'] ?? []) {
      const ns = vs.metadata.namespace ?? '';
      const hosts = ((vs.spec?.['hosts'] as string[] | undefined) ?? []).map((h) => serviceOfHost(h, ns)).filter((x): x is NonNullable<typeof x> => !!x);
      const onPath = hosts.some((h) => reached.has(nodeId({ kind: 'Service', namespace: h.namespace, name: h.name }))) || reached.has(nodeId({ kind: 'VirtualService', namespace: ns, name: vs.metadata.name ?? '' }));
      if (!onPath) continue;
      const http = (vs.spec?.['http'] as HttpRoute[] | undefined) ?? [];
      http.forEach((route, i) => {
        const f = route.fault;
        if (f?.abort || f?.delay) {
          const field = f.abort ? `http[${i}].fault.abort` : `http[${i}].fault.delay`;
          const value = f.abort ? `${f.abort.percentage?.value ?? 100}% HTTP ${f.abort.httpStatus ?? '?'}` : `${f.delay!.percentage?.value ?? 100}% ${f.delay!.fixedDelay ?? '?'}`;
          out.push(finding(input, vs, field, value, `injects ${f.abort ? 'errors' : 'latency'} into ${value} of the requests to ${hosts.map((h) => h.name).join(', ')}`, 0.9));
        }
        for (const r of route.route ?? []) {
          const dest = r.destination;
          if (!dest?.host) continue;
          const svc = serviceOfHost(dest.host, ns);
          if (svc && !s.services.some((x) => x.metadata?.namespace === svc.namespace && x.metadata?.name === svc.name)) {
            out.push(finding(input, vs, `http[${i}].route.destination.host`, dest.host, `routes to ${dest.host}, which no Service serves`, 0.85));
          }
          if (svc && dest.subset) {
            const dr = (s.custom['DestinationRule'] ?? []).find((d) => {
              const h = serviceOfHost(String(d.spec?.['host'] ?? ''), d.metadata.namespace ?? ns);
              return h?.name === svc.name && h.namespace === svc.namespace;
            });
            const subset = ((dr?.spec?.['subsets'] as { name?: string; labels?: Record<string, string> }[] | undefined) ?? []).find((x) => x.name === dest.subset);
            const service = s.services.find((x) => x.metadata?.namespace === svc.namespace && x.metadata?.name === svc.name);
            const pods = s.pods.filter((p) => p.metadata?.namespace === svc.namespace && service?.spec?.selector && Object.entries(service.spec.selector).every(([k, v]) => p.metadata?.labels?.[k] === v));
            const matching = subset?.labels ? pods.filter((p) => Object.entries(subset.labels!).every(([k, v]) => p.metadata?.labels?.[k] === v)) : [];
            if (dr && (!subset || matching.length === 0)) {
              out.push(finding(input, dr, `subsets[${dest.subset}]`, subset ? JSON.stringify(subset.labels ?? {}) : 'missing', `sends ${svc.name}'s traffic to subset ${dest.subset}, ${subset ? `whose labels no pod carries (${Object.entries(subset.labels ?? {}).map(([k, v]) => `${k}=${v}`).join(',')})` : 'which it does not define'}: no healthy upstream`, 0.86));
            }
          }
        }
      });
    }
    // A DestinationRule that turns TLS off towards a Service whose PeerAuthentication requires mTLS: the
    // sidecar of the destination refuses the plain-text connection (callers see 503 with UC/URX, "upstream
    // connect error or disconnect/reset before headers. reset reason: connection termination").
    // The DestinationRules whose host is a Service on the walk's path, with that Service.
    const rulesOnPath = (s.custom['DestinationRule'] ?? []).flatMap((dr) => {
      const svc = serviceOfHost(String(dr.spec?.['host'] ?? ''), dr.metadata.namespace ?? '');
      return svc && reached.has(nodeId({ kind: 'Service', namespace: svc.namespace, name: svc.name })) ? [{ dr, svc }] : [];
    });
    for (const { dr, svc } of rulesOnPath) {
      const policy = dr.spec?.['trafficPolicy'] as { tls?: { mode?: string }; portLevelSettings?: { port?: { number?: number }; tls?: { mode?: string } }[] } | undefined;
      const plain = policy?.tls?.mode === 'DISABLE' ? { field: 'spec.trafficPolicy.tls.mode' } : (() => {
        const i = (policy?.portLevelSettings ?? []).findIndex((p) => p.tls?.mode === 'DISABLE');
        return i >= 0 ? { field: `spec.trafficPolicy.portLevelSettings[${i}].tls.mode` } : undefined;
      })();
      if (!plain) continue;
      const strict = strictPeerAuthentication(s.custom['PeerAuthentication'] ?? [], svc.namespace);
      if (!strict) continue;
      const f = finding(input, dr, plain.field, 'DISABLE', `disables TLS towards ${svc.name}, while PeerAuthentication ${strict.metadata.namespace}/${strict.metadata.name} requires STRICT mTLS there: its sidecars reset every plain-text connection`, 0.88);
      f.supporting.push({ kind: 'object', summary: `PeerAuthentication ${strict.metadata.namespace}/${strict.metadata.name}: mtls.mode = STRICT`, citation: objectCitation('PeerAuthentication', strict.metadata.namespace ?? '', strict.metadata.name ?? '?', 'spec.mtls.mode') });
      f.supporting.push(...logHits(input.inputs, RESET_LOG).slice(0, 2).map((h) => logEvidence(h, 'the callers\' sidecars report it')));
      out.push(f);
    }
    // A DestinationRule whose outlier detection ejects on one or two errors and may eject (nearly) every
    // host: one blip empties the pool, and callers get 503 "no healthy upstream" (Envoy UH) while the
    // pods are Running and Ready. Only when the rule changed before the onset or the callers' sidecars
    // report UH: an old, quiet policy is how the team runs, not the fault.
    for (const { dr, svc } of rulesOnPath) {
      const od = ejectsAll(dr);
      if (!od) continue;
      const change = lastChangeBefore(dr.kind, dr.metadata, input.onset);
      const recent = change && input.onset.getTime() - change.at.getTime() <= OUTLIER_CHANGE_MS;
      const uh = logHits(input.inputs, NO_HEALTHY_LOG).slice(0, 2);
      if (!recent && !uh.length) continue;
      const f = finding(input, dr, od.field, od.value, `ejects a host of ${svc.name} after ${od.errors} error${od.errors === 1 ? '' : 's'} and may eject ${od.maxPercent}% of them: one burst of errors leaves no healthy upstream, and callers get 503 while the pods are Ready`, recent && uh.length ? 0.9 : 0.84);
      f.supporting.push(...uh.map((h) => logEvidence(h, 'the callers\' sidecars find no healthy upstream')));
      out.push(f);
    }
    // A namespace that lost its injection label (istio-injection=enabled, or istio.io/rev) while the mesh
    // injects by namespace and requires STRICT mTLS: pods created since run without the Envoy sidecar, so
    // meshed callers cannot reach them and they cannot reach the mesh. Localised to the Namespace.
    const injected = (labels: Record<string, string> | undefined) => labels?.['istio-injection'] === 'enabled' || !!labels?.['istio.io/rev'];
    const meshedNamespaces = s.namespaces.filter((n) => injected(n.metadata?.labels));
    if (meshedNamespaces.length) {
      const seen = new Set<string>();
      for (const id of reached.keys()) {
        const node = input.cluster.topology.nodes.get(id);
        const ref = node?.ref;
        if (!ref?.namespace || !['Deployment', 'StatefulSet', 'DaemonSet'].includes(ref.kind) || seen.has(ref.namespace)) continue;
        const ns = s.namespaces.find((n) => n.metadata?.name === ref.namespace);
        if (!ns || injected(ns.metadata?.labels) || ns.metadata?.labels?.['istio-injection'] === 'disabled') continue;
        if (!strictPeerAuthentication(s.custom['PeerAuthentication'] ?? [], ref.namespace)) continue;
        const pods = s.pods.filter((p) => p.metadata?.namespace === ref.namespace && (node?.pods ?? []).includes(p.metadata?.name ?? ''));
        const bare = pods.filter((p) => !(p.spec?.containers ?? []).some((c) => c.name === 'istio-proxy') && p.metadata?.annotations?.['sidecar.istio.io/inject'] !== 'false');
        if (!bare.length) continue;
        seen.add(ref.namespace);
        const labelWrite = lastLabelWrite(ns.metadata?.managedFields ?? []);
        const nsName = ref.namespace;
        const supporting: Evidence[] = [
          { kind: 'object', summary: `Namespace ${nsName} has no istio-injection=enabled (or istio.io/rev) label; ${meshedNamespaces.length} other namespace${meshedNamespaces.length === 1 ? '' : 's'} of the mesh have it (${meshedNamespaces.map((n) => n.metadata?.name).slice(0, 3).join(', ')})`, citation: objectCitation('Namespace', undefined, nsName, 'metadata.labels') },
          { kind: 'object', summary: `${bare.length} pod${bare.length === 1 ? '' : 's'} of ${ref.kind.toLowerCase()}/${ref.name} run without the istio-proxy sidecar (${bare.map((p) => p.metadata?.name).slice(0, 3).join(', ')})`, citation: objectCitation('Pod', nsName, bare[0]!.metadata?.name ?? '?', 'spec.containers') },
          ...(labelWrite ? [{ kind: 'managed_fields' as const, summary: `managedFields: \`${labelWrite.manager}\` last wrote Namespace ${nsName}'s labels at ${clockTime(labelWrite.at)} (without istio-injection)`, citation: objectCitation('Namespace', undefined, nsName, `metadata.managedFields[${labelWrite.index}]`), observedAt: labelWrite.at }] : []),
          ...logHits(input.inputs, RESET_LOG).slice(0, 2).map((h) => logEvidence(h, 'the callers\' sidecars report it')),
        ];
        out.push({
          key: `mesh-misconfig:Namespace/${nsName}/injection`,
          analyzer: 'mesh-misconfig',
          family: 'mesh-misconfig',
          status: 'supported',
          confidence: 0.87,
          title: `Namespace ${nsName} lost its sidecar injection label: ${ref.name}'s pods run outside the STRICT mTLS mesh`,
          component: { kind: 'Namespace', name: nsName },
          mechanism: `Namespace ${nsName} no longer carries istio-injection=enabled${labelWrite ? ` (labels last written by \`${labelWrite.manager}\` at ${clockTime(labelWrite.at)})` : ''}, so pods created since start without the Envoy sidecar: ${bare.length} of ${ref.name}'s. The mesh requires STRICT mTLS, so meshed callers' connections to them are reset (503 UF/URX) and they cannot call meshed services. Fix: put the label back at its source${labelWrite ? ` (${labelWrite.manager})` : ''}, then restart ${ref.name} so its pods get the sidecar.`,
          scope: `${ref.name} and every meshed caller of it`,
          affected: [ref],
          facts: { object: `Namespace/${nsName}`, field: 'metadata.labels.istio-injection', ...(labelWrite ? { manager: labelWrite.manager, changedAt: labelWrite.at.toISOString() } : {}) },
          supporting,
          refuting: [],
        });
      }
    }
    out.push(...authorizationDenials(input));
    out.push(...strictAgainstPlaintextCallers(input));
    return out;
  },
};

/** A plain-text client whose connection a STRICT sidecar refuses: Envoy resets it, the client sees a reset. */
const CLIENT_RESET_LOG = /connection reset by peer|ConnectionResetError|ECONNRESET|Connection aborted|upstream connect error|reset before headers|unexpected EOF|EOF while reading/i;
/** A STRICT PeerAuthentication written this long before the onset can still be the cause (a nightly CronJob meets it hours later). */
const STRICT_CHANGE_MS = 24 * 3600_000;

/**
 * A PeerAuthentication set to STRICT (created, or its mode changed) for a namespace whose Services a
 * workload without the Envoy sidecar calls (a CronJob in a namespace outside the mesh, a pod with
 * `sidecar.istio.io/inject: false`): the server's sidecars now refuse its plain-text connections, which
 * the client logs as resets. Needs the write in the 24 h before the onset and the caller's resets;
 * localised to the PeerAuthentication, the refused callers and the Services they call in scope.
 */
function strictAgainstPlaintextCallers(input: ClusterTriageInput): Finding[] {
  const s = input.cluster.snapshot;
  const t = input.cluster.topology;
  const out: Finding[] = [];
  const mode = (p: CustomObject) => (p.spec?.['mtls'] as { mode?: string } | undefined)?.mode;
  for (const pa of (s.custom['PeerAuthentication'] ?? []).filter((p) => mode(p) === 'STRICT' && !p.spec?.['selector'] && p.metadata.namespace !== 'istio-system')) {
    const ns = pa.metadata.namespace ?? '';
    const change = lastChangeBefore(pa.kind, pa.metadata, input.onset);
    if (!change || input.onset.getTime() - change.at.getTime() > STRICT_CHANGE_MS) continue;
    const refused: { caller: ComponentRef; hit: LogHit; called: ComponentRef[] }[] = [];
    for (const c of plaintextClients(input)) {
      if (c.ref.namespace === ns) continue;
      const called = t.outgoing(nodeId(c.ref)).map((e) => refOfId(e.to)).filter((r) => r.kind === 'Service' && r.namespace === ns);
      // Hosts in args and command lines are not graph edges: the cluster DNS name of a Service there counts.
      const named = hostRefs(c.template).map((h) => serviceOfHost(h.host, c.ref.namespace ?? '')).filter((x) => x?.namespace === ns && !x.pod).map((x) => ({ kind: 'Service', namespace: ns, name: x!.name }));
      const services = [...new Map([...called, ...named].map((r) => [nodeId(r), r])).values()];
      if (!services.length) continue;
      const hit = c.hits.find((h) => !h.first || h.first.getTime() >= change.at.getTime() - 60_000);
      if (hit) refused.push({ caller: c.ref, hit, called: services });
    }
    if (!refused.length) continue;
    const name = pa.metadata.name ?? 'default';
    const servers = [...new Map(refused.flatMap((r) => r.called).map((r) => [nodeId(r), r])).values()];
    const serverWorkloads = servers.flatMap((sv) => t.outgoing(nodeId(sv)).filter((e) => e.kind === 'selects').map((e) => refOfId(e.to)));
    const callers = refused.map((r) => r.caller);
    out.push({
      key: `mesh-misconfig:${ns}/PeerAuthentication/${name}/plaintext-callers`,
      analyzer: 'mesh-misconfig',
      family: 'mesh-misconfig',
      status: 'supported',
      confidence: 0.88,
      title: `PeerAuthentication ${ns}/${name} requires STRICT mTLS: ${callers.map((c) => `${c.kind.toLowerCase()}/${c.name}`).join(', ')}, without a sidecar, ${callers.length === 1 ? 'is' : 'are'} refused`,
      component: { kind: 'PeerAuthentication', namespace: ns, name },
      mechanism:
        `PeerAuthentication ${ns}/${name} sets mtls.mode STRICT for every workload of namespace ${ns}; ${change.summary} at ${clockTime(change.at)}. ` +
        `${callers.map((c) => `${c.namespace}/${c.name}`).join(', ')} run${callers.length === 1 ? 's' : ''} without the Envoy sidecar and call${callers.length === 1 ? 's' : ''} ${servers.length ? servers.map((x) => x.name).join(', ') : `Services of ${ns}`} in plain text, which the sidecars there now reset. ` +
        `Fix: set the mode back to PERMISSIVE (at its source${change.actor ? `, ${change.actor}` : ''}) or give the callers a sidecar.`,
      scope: `${callers.map((c) => c.name).join(', ')} (refused) calling ${ns}`,
      affected: [...serverWorkloads, ...servers, ...callers],
      facts: { object: `PeerAuthentication/${name}`, field: 'spec.mtls.mode', value: 'STRICT', manager: change.actor, changedAt: change.at.toISOString() },
      supporting: [
        { kind: 'object', summary: `PeerAuthentication ${ns}/${name}: spec.mtls.mode = STRICT (namespace-wide)`, citation: objectCitation('PeerAuthentication', ns, name, 'spec.mtls.mode') },
        changeEvidence(change, input.onset),
        ...refused.slice(0, 2).map((r) => logEvidence(r.hit, `${r.caller.name} has no istio-proxy sidecar and its connections are reset`)),
      ],
      refuting: [],
    });
  }
  return out;
}

/** A workload that runs without the Envoy sidecar, with its pod template (as text) and its reset lines. */
interface PlainClient {
  ref: ComponentRef;
  template: string;
  hits: LogHit[];
}

/** The investigated workloads and Job owners whose pods run without `istio-proxy` and whose logs show resets. */
function plaintextClients(input: ClusterTriageInput): PlainClient[] {
  const named = (cs: { name?: string }[] | undefined) => (cs ?? []).some((c) => c.name === 'istio-proxy');
  const meshed = (pods: V1Pod[]) => pods.some((p) => named(p.spec?.containers) || named(p.spec?.initContainers));
  const out: PlainClient[] = [];
  for (const i of input.inputs) {
    const c = i.kube.target;
    if (!c || meshed(i.kube.pods)) continue;
    const spec = i.kube.workload?.spec as { template?: { spec?: { containers?: { name?: string }[] } } } | undefined;
    if (named(spec?.template?.spec?.containers)) continue;
    const hits = logHits([i], CLIENT_RESET_LOG);
    if (hits.length) out.push({ ref: { kind: c.kind, namespace: c.namespace, name: c.name }, template: JSON.stringify(spec ?? {}), hits });
  }
  for (const je of input.jobs) {
    if (meshed(je.pods)) continue;
    const cj = je.owner.kind === 'CronJob' ? input.cluster.snapshot.cronJobs.find((x) => x.metadata?.namespace === je.owner.namespace && x.metadata?.name === je.owner.name) : undefined;
    const template = JSON.stringify(cj?.spec?.jobTemplate ?? je.jobs[0]?.spec?.template ?? {});
    const hits: LogHit[] = je.logs.flatMap((l) =>
      l.patterns
        .filter((p) => CLIENT_RESET_LOG.test(p.template) || CLIENT_RESET_LOG.test(p.example))
        .map((p) => ({ workload: je.owner, pod: l.pod, container: l.container, template: p.template, example: p.example, count: p.count, ...(p.first ? { first: p.first } : {}), ...(p.last ? { last: p.last } : {}), citation: objectCitation('Pod', je.owner.namespace, l.pod, `log?container=${l.container}`) })),
    );
    if (hits.length) out.push({ ref: je.owner, template, hits });
  }
  return out;
}

/** Envoy's RBAC filter answers 403 with this body; its access log names the policy (or `none`). */
const RBAC_DENIED = /RBAC: access denied|rbac_access_denied_matched_policy/i;
const AUTHZ_CHANGE_MS = 6 * 3600_000;

/**
 * An AuthorizationPolicy that refuses a caller: an ALLOW policy whose principals omit the caller's
 * ServiceAccount (`cluster.local/ns/<ns>/sa/<sa>`), or a DENY policy that names it, written in the 6 h
 * before the onset, with `RBAC: access denied` in the logs of the callers (or the server's sidecar).
 */
function authorizationDenials(input: ClusterTriageInput): Finding[] {
  const hits = logHits(input.inputs, RBAC_DENIED);
  if (!hits.length) return [];
  const s = input.cluster.snapshot;
  const out: Finding[] = [];
  // Callers whose own logs show the refusal, with the principal their pods run as.
  const callers = [...new Map(hits.map((h) => [`${h.workload.namespace}/${h.workload.name}`, h.workload])).values()].map((w) => {
    const d = [...s.deployments, ...s.statefulSets].find((x) => x.metadata?.namespace === w.namespace && x.metadata?.name === w.name);
    const sa = d?.spec?.template?.spec?.serviceAccountName ?? 'default';
    return { ref: w, principal: `cluster.local/ns/${w.namespace}/sa/${sa}` };
  });
  for (const p of s.custom['AuthorizationPolicy'] ?? []) {
    const ns = p.metadata.namespace ?? '';
    const change = lastChangeBefore('AuthorizationPolicy', p.metadata, input.onset);
    const created = p.metadata.creationTimestamp ? new Date(p.metadata.creationTimestamp as unknown as string) : undefined;
    const at = change?.at ?? created;
    if (!at || input.onset.getTime() - at.getTime() > AUTHZ_CHANGE_MS || at.getTime() > input.onset.getTime() + 120_000) continue;
    const action = String(p.spec?.['action'] ?? 'ALLOW').toUpperCase();
    const rules = (p.spec?.['rules'] as { from?: { source?: { principals?: string[]; namespaces?: string[] } }[] }[] | undefined) ?? [];
    const principals = rules.flatMap((r) => (r.from ?? []).flatMap((f) => f.source?.principals ?? []));
    const namespaces = rules.flatMap((r) => (r.from ?? []).flatMap((f) => f.source?.namespaces ?? []));
    const allowed = (c: { ref: { namespace?: string }; principal: string }) => principals.some((x) => x === '*' || x === c.principal || (x.endsWith('*') && c.principal.startsWith(x.slice(0, -1)))) || namespaces.includes(c.ref.namespace ?? '');
    const denied = callers.filter((c) => (action === 'ALLOW' ? rules.length > 0 && !allowed(c) : action === 'DENY' ? allowed(c) || rules.length === 0 : false) && c.ref.namespace !== ns);
    if (!denied.length) continue;
    const field = action === 'ALLOW' ? 'spec.rules[].from[].source.principals' : 'spec.action';
    const value = action === 'ALLOW' ? `missing ${denied.map((c) => c.principal).join(', ')}` : 'DENY';
    const what = action === 'ALLOW' ? `allows only ${principals.length} principal(s) and not ${denied.map((c) => c.ref.name).join(', ')}: their calls are refused with 403 "RBAC: access denied"` : `denies ${denied.map((c) => c.ref.name).join(', ')}: their calls are refused with 403 "RBAC: access denied"`;
    const f = finding(input, p, field, value, what, change || created ? 0.92 : 0.8);
    if (!change && created) f.facts = { ...f.facts, manager: (p.metadata.managedFields?.[0]?.manager as string | undefined) ?? 'unknown', changedAt: created.toISOString() };
    const selector = (p.spec?.['selector'] as { matchLabels?: Record<string, string> } | undefined)?.matchLabels;
    const protectedServices = s.services.filter((x) => x.metadata?.namespace === ns && (!selector || Object.entries(selector).every(([k, v]) => x.spec?.selector?.[k] === v))).map((x) => ({ kind: 'Service', namespace: ns, name: x.metadata?.name ?? '?' }));
    f.affected = [...denied.flatMap((c) => [c.ref, ...s.services.filter((x) => x.metadata?.namespace === c.ref.namespace && x.metadata?.name === c.ref.name).map((x) => ({ kind: 'Service', namespace: c.ref.namespace, name: x.metadata?.name ?? '?' }))]), ...protectedServices];
    f.supporting.push(...hits.filter((h) => denied.some((c) => c.ref.name === h.workload.name)).slice(0, 2).map((h) => logEvidence(h, 'the callee\'s sidecar refuses it')));
    f.mechanism = `${f.mechanism} Fix: add the caller's principal to the policy at its source${change ? ` (${change.actor})` : ''}, or revert the change.`;
    out.push(f);
  }
  return out;
}

/** The newest managedFields entry that writes metadata.labels. */
function lastLabelWrite(entries: { manager?: string; time?: Date | string; fieldsV1?: unknown }[]): { manager: string; at: Date; index: number } | undefined {
  let best: { manager: string; at: Date; index: number } | undefined;
  entries.forEach((e, index) => {
    const meta = (e.fieldsV1 as Record<string, Record<string, unknown>> | undefined)?.['f:metadata'];
    if (!e.time || !meta || !('f:labels' in meta)) return;
    const at = new Date(e.time);
    if (!best || at > best.at) best = { manager: e.manager ?? 'unknown', at, index };
  });
  return best;
}

/** Envoy with every host ejected or unhealthy: `no healthy upstream`, response flag UH. */
const NO_HEALTHY_LOG = /no healthy upstream|\bUH\b/;
/** An outlier-detection edit this long before the onset can be what emptied the pool. */
const OUTLIER_CHANGE_MS = 6 * 3600_000;

interface OutlierDetection {
  consecutive5xxErrors?: number;
  consecutiveErrors?: number;
  consecutiveGatewayErrors?: number;
  maxEjectionPercent?: number;
}

/**
 * The outlier detection of a DestinationRule (its trafficPolicy, else a port's) that ejects on one or two
 * consecutive errors with maxEjectionPercent of 50 or more (Istio's default is 10%, which keeps most hosts).
 */
export function ejectsAll(dr: CustomObject): { field: string; value: string; errors: number; maxPercent: number } | undefined {
  const policy = dr.spec?.['trafficPolicy'] as { outlierDetection?: OutlierDetection; portLevelSettings?: { outlierDetection?: OutlierDetection }[] } | undefined;
  const candidates: [string, OutlierDetection | undefined][] = [['spec.trafficPolicy.outlierDetection', policy?.outlierDetection], ...(policy?.portLevelSettings ?? []).map((p, i): [string, OutlierDetection | undefined] => [`spec.trafficPolicy.portLevelSettings[${i}].outlierDetection`, p.outlierDetection])];
  for (const [field, od] of candidates) {
    if (!od) continue;
    const errors = Math.min(...[od.consecutive5xxErrors, od.consecutiveErrors, od.consecutiveGatewayErrors].map(Number).filter((n) => Number.isFinite(n) && n > 0));
    const maxPercent = Number(od.maxEjectionPercent ?? 10);
    if (Number.isFinite(errors) && errors <= 2 && maxPercent >= 50) return { field, value: `ejects after ${errors} consecutive error${errors === 1 ? '' : 's'}, maxEjectionPercent ${maxPercent}`, errors, maxPercent };
  }
  return undefined;
}

const RESET_LOG = /upstream connect error or disconnect\/reset before headers|reset reason: connection termination|\bU(C|RX)\b/i;

/** The PeerAuthentication that makes `namespace` STRICT: the namespace's own (without selector), else the mesh-wide one in istio-system. */
function strictPeerAuthentication(list: CustomObject[], namespace: string): CustomObject | undefined {
  const mode = (p: CustomObject) => (p.spec?.['mtls'] as { mode?: string } | undefined)?.mode;
  const own = list.find((p) => p.metadata.namespace === namespace && !p.spec?.['selector']);
  if (own) return mode(own) === 'STRICT' ? own : undefined;
  const mesh = list.find((p) => p.metadata.namespace === 'istio-system' && !p.spec?.['selector']);
  return mesh && mode(mesh) === 'STRICT' ? mesh : undefined;
}

function finding(input: ClusterTriageInput, o: CustomObject, field: string, value: string, what: string, confidence: number): Finding {
  const ns = o.metadata.namespace ?? '';
  const name = o.metadata.name ?? '?';
  const change = lastChangeBefore(o.kind, o.metadata, input.onset);
  const faultLogs = logHits(input.inputs, FAULT_LOG).slice(0, 2);
  const supporting: Evidence[] = [{ kind: 'object', summary: `${o.kind} ${ns}/${name}: ${field} = ${value}`, citation: objectCitation(o.kind, ns, name, field.replace(/\[.*$/, '')) }];
  if (change) supporting.push(changeEvidence(change, input.onset));
  supporting.push(...faultLogs.map((h) => logEvidence(h, 'the mesh reports it')));
  // The Services it configures; the reconcile adds their callers from the graph.
  const hosts = [...((o.spec?.['hosts'] as string[] | undefined) ?? []), ...(typeof o.spec?.['host'] === 'string' ? [o.spec['host'] as string] : [])];
  const affected = hosts.map((h) => serviceOfHost(h, ns)).filter((x): x is NonNullable<typeof x> => !!x).map((h) => ({ kind: 'Service', namespace: h.namespace, name: h.name }));
  return {
    key: `mesh-misconfig:${ns}/${o.kind}/${name}/${field}`,
    analyzer: 'mesh-misconfig',
    family: 'mesh-misconfig',
    status: 'supported',
    confidence,
    title: `${o.kind} ${name} ${what}`,
    component: { kind: o.kind, namespace: ns, name },
    mechanism: `${o.kind} ${ns}/${name} ${what}${change ? `; ${change.summary} at ${clockTime(change.at)}` : ''}.`,
    scope: `the callers of the hosts it configures`,
    affected,
    facts: { object: `${o.kind}/${name}`, field, value, ...(change ? { manager: change.actor, changedAt: change.at.toISOString() } : {}) },
    supporting,
    refuting: [],
    ...(() => {
      const kind = o.kind === 'VirtualService' || o.kind === 'DestinationRule' ? o.kind : undefined;
      const mitigation = kind && restoreObjectProposal(kind, o, `put back ${o.kind.toLowerCase()}/${name}'s spec from before ${change ? `${change.actor}'s change` : 'the edit'}: it ${what}`);
      return mitigation ? { mitigation } : {};
    })(),
  };
}
