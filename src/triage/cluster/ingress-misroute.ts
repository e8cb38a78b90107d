/**
 * `ingress-misroute`: an Ingress rule sends a host or path to the wrong backend. Decided from the
 * Ingress itself and what the alert shows of it:
 * - the Ingress (what the alert names, or on the walk's path) was written shortly before the onset
 *   (managedFields: `kubectl apply`, `kubectl edit`, Argo CD, Helm);
 * - a rule's backend does not fit its path while another Service of the namespace does (`/api` →
 *   `web-frontend`, while `api-gateway` exists), or its backend Service or port does not exist;
 * - the backend it points at is healthy (ready endpoints): the requests land, on the wrong service.
 * - or the change set an ingress-nginx rate limit (`limit-rps`, `limit-rpm`, `limit-connections`): the edge
 *   refuses requests above it while the backends are healthy (facts `annotation`, `value`; no mitigation:
 *   the previous annotations are not known, and a GitOps source would re-apply an edit).
 * Localised to the Ingress. Facts: `ingress`, `host`, `path`, `backend`, `expectedBackend`, `manager`,
 * `changedAt`. Mitigation: `restore_object` puts the Ingress's previous rules back when they are known
 * (a `kubectl edit` after a `kubectl apply`: its last-applied-configuration; an edit after a Helm
 * release: the deployed revision); an applied change (the annotation is the new rules) gets none.
 */
import type { V1Ingress } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, refOfId } from '../../topology/graph.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';
import { changeEvidence, clip, lastChangeBefore } from './common.js';
import { gitSourceOf, GITOPS_MANAGERS, revertPrProposal } from './git-source.js';
import { gatewayRoutes, routeBackends, routeHostnames } from '../../topology/graph.js';
import type { CustomObject } from '../../topology/snapshot.js';
import { restoreObjectProposal } from '../../actions/objects/propose.js';

const WINDOW_MS = 3 * 3600_000;

export const ingressMisroute: ClusterAnalyzer = {
  name: 'ingress-misroute',
  analyze(input: ClusterTriageInput): Finding[] {
    const s = input.cluster.snapshot;
    const out: Finding[] = [];
    for (const ing of s.ingresses) {
      const ns = ing.metadata?.namespace ?? '';
      const id = nodeId({ kind: 'Ingress', namespace: ns, name: ing.metadata?.name ?? '?' });
      if (!input.cluster.walk.reached.has(id)) continue;
      const change = lastChangeBefore('Ingress', ing.metadata, input.onset);
      if (!change || input.onset.getTime() - change.at.getTime() > WINDOW_MS) continue;
      const routes = misroutes(ing, input);
      const limit = routes.length ? undefined : rateLimitSetBy(ing, change.at);
      if (limit) out.push(rateLimitFinding(input, ing, change, limit));
      for (const m of routes) {
        const svcs = s.services.filter((x) => x.metadata?.namespace === ns);
        const backend = svcs.find((x) => x.metadata?.name === m.backend);
        const ep = s.endpoints.find((e) => e.metadata?.namespace === ns && e.metadata?.name === m.backend);
        const ready = (ep?.subsets ?? []).reduce((n, x) => n + (x.addresses ?? []).length, 0);
        const supporting: Evidence[] = [
          changeEvidence(change, input.onset),
          {
            kind: 'object',
            summary: `Ingress ${ns}/${ing.metadata?.name} routes ${m.host ?? '*'}${m.path} to ${m.backend}:${m.port}${m.expected ? `; the namespace's ${m.expected} is the service ${m.path} names` : ''}${!backend ? ' — no such Service' : ''}`,
            citation: objectCitation('Ingress', ns, ing.metadata?.name ?? '?', 'spec.rules'),
          },
        ];
        if (backend) supporting.push({ kind: 'endpoints', summary: `Endpoints ${m.backend}: ${ready} ready — the requests arrive, at the wrong service`, citation: objectCitation('Endpoints', ns, m.backend, 'subsets'), detail: { ready } });
        const probe = input.metrics.find((x) => x.id === 'probe_success' && x.status === 'success' && x.series.some((y) => (y.metric['instance'] ?? '').includes(m.path) && (y.last ?? 1) < 1));
        if (probe) supporting.push({ kind: 'metric', summary: `probe of ${probe.series.find((y) => (y.metric['instance'] ?? '').includes(m.path))?.metric['instance']} fails since the edit`, citation: probe.citation });
        out.push({
          key: `ingress-misroute:${ns}/Ingress/${ing.metadata?.name}`,
          analyzer: 'ingress-misroute',
          family: 'ingress-misroute',
          status: 'supported',
          confidence: m.expected || !backend ? 0.88 : 0.7,
          title: `Ingress ${ing.metadata?.name} routes ${m.host ?? ''}${m.path} to ${m.backend} since ${change.actor}'s change ${humanDuration(input.onset.getTime() - change.at.getTime())} before the alert`,
          component: { kind: 'Ingress', namespace: ns, name: ing.metadata?.name ?? '?' },
          mechanism: `${change.summary} at ${clockTime(change.at)}; its rule ${m.host ?? '*'}${m.path} now points at ${m.backend}:${m.port}${m.expected ? ` instead of ${m.expected}` : ''}${!backend ? ', a Service that does not exist' : ''}, so those requests get the wrong service's answers.`,
          scope: `every request for ${m.host ?? '*'}${m.path}`,
          affected: [
            { kind: 'Ingress', namespace: ns, name: ing.metadata?.name ?? '?' },
            // The service that should get these requests gets none of them; the one that does answers wrongly.
            ...(m.expected ? [{ kind: 'Service', namespace: ns, name: m.expected }, ...behind(input, ns, m.expected)] : []),
            ...(backend ? behind(input, ns, m.backend) : []),
          ],
          facts: {
            ingress: ing.metadata?.name ?? '?',
            ...(m.host ? { host: m.host } : {}),
            path: m.path,
            backend: `${m.backend}:${m.port}`,
            ...(m.expected ? { expectedBackend: expectedPort(input, ns, m.expected) } : {}),
            manager: change.actor,
            changedAt: change.at.toISOString(),
          },
          supporting,
          refuting: [],
          ...(() => {
            const mitigation = restoreObjectProposal('Ingress', ing, `put back ingress/${ing.metadata?.name}'s rules from before ${change.actor}'s change: ${m.path} goes to ${m.backend}:${m.port}${m.expected ? ` instead of ${m.expected}` : ''}`);
            return mitigation ? { mitigation } : {};
          })(),
        });
      }
    }
    for (const route of gatewayRoutes(s)) out.push(...routeFindings(input, route));
    return out;
  },
};

/**
 * A Gateway API route (HTTPRoute, GRPCRoute) changed shortly before the onset whose backendRef names a
 * Service or port that does not exist, or a Service its path does not fit. The implementation refuses an
 * unresolvable backendRef (`ResolvedRefs=False`, BackendNotFound) and, as the spec requires, answers the
 * rule's requests with 500 itself: nothing reaches the backend, whose pods stay healthy and idle.
 */
function routeFindings(input: ClusterTriageInput, route: CustomObject): Finding[] {
  const s = input.cluster.snapshot;
  const ns = route.metadata.namespace ?? '';
  const name = route.metadata.name ?? '?';
  const ref: ComponentRef = { kind: route.kind, namespace: ns, name };
  if (!input.cluster.walk.reached.has(nodeId(ref))) return [];
  const change = lastChangeBefore(route.kind, route.metadata, input.onset);
  const refused = unresolvedRefs(route);
  const changedAt = change?.at ?? refused?.at;
  if (!changedAt || input.onset.getTime() - changedAt.getTime() > WINDOW_MS) return [];
  const host = routeHostnames(route)[0];
  const out: Finding[] = [];
  const seen = new Set<number>();
  for (const b of routeBackends(route)) {
    if (seen.has(b.rule)) continue;
    const svc = s.services.find((x) => x.metadata?.namespace === b.namespace && x.metadata?.name === b.name);
    const ports = svc?.spec?.ports ?? [];
    const portMissing = !!svc && b.port !== undefined && !ports.some((p) => p.port === b.port);
    // A route port that is a targetPort of the Service: the container port was written for the Service port.
    const meant = portMissing ? ports.find((p) => String(p.targetPort ?? '') === String(b.port)) : undefined;
    const words = (b.path ?? '').split(/[/_.-]+/).filter((w) => w.length >= 2 && !/^v\d+$|^api$/.test(w));
    const fits = (n: string) => words.some((w) => n.split('-').includes(w.toLowerCase()));
    const expectedSvc = svc && !portMissing && words.length && !fits(b.name) ? s.services.find((x) => x.metadata?.namespace === b.namespace && x.metadata?.name !== b.name && fits(x.metadata?.name ?? '')) : undefined;
    if (svc && !portMissing && !expectedSvc) continue;
    seen.add(b.rule);
    const backend = `${b.name}${b.port !== undefined ? `:${b.port}` : ''}`;
    const expected = meant ? `${b.name}:${meant.port}` : expectedSvc ? expectedPort(input, b.namespace, expectedSvc.metadata?.name ?? '') : undefined;
    const why = !svc ? `there is no Service ${b.namespace}/${b.name}` : portMissing ? `Service ${b.name} has no port ${b.port} (ports ${ports.map((p) => p.port).join(', ')})${meant ? `; ${b.port} is the container port behind its port ${meant.port}` : ''}` : `the path names ${expectedSvc!.metadata?.name}`;
    const where = `${host ?? '*'}${b.path ?? ''}`;
    const actor = change?.actor ?? 'an unknown writer';
    const source = change && GITOPS_MANAGERS.test(change.actor) ? gitSourceOf(input.changes, ref, route.metadata, change.at) : undefined;
    const supporting: Evidence[] = [
      ...(change ? [changeEvidence(change, input.onset)] : []),
      ...(source ? [{ kind: 'change' as const, summary: `${source.pr.summary} in ${source.repo}${source.sync ? `; ${source.sync.summary}` : ''}`, citation: source.pr.citation, observedAt: source.mergedAt }] : []),
      { kind: 'object', summary: `${route.kind} ${ns}/${name} rule ${b.rule} sends ${where} to ${backend}: ${why}`, citation: objectCitation(route.kind, ns, name, `spec.rules[${b.rule}]`) },
      ...(svc ? [{ kind: 'object' as const, summary: `Service ${b.namespace}/${b.name} ports: ${ports.map((p) => `${p.port}${p.name ? ` (${p.name}` : ' ('}→ ${p.targetPort ?? p.port})`).join(', ')}`, citation: objectCitation('Service', b.namespace, b.name, 'spec.ports') }] : []),
      ...(refused ? [{ kind: 'object' as const, summary: `${route.kind} status: ResolvedRefs=False (${refused.reason}) since ${clockTime(refused.at)}: "${clip(refused.message, 200)}"`, citation: objectCitation(route.kind, ns, name, 'status.parents'), observedAt: refused.at }] : []),
    ];
    const callers = input.cluster.topology.incoming(nodeId(ref)).filter((e) => e.kind === 'calls').map((e) => refOfId(e.from));
    out.push({
      key: `ingress-misroute:${ns}/${route.kind}/${name}/rule-${b.rule}`,
      analyzer: 'ingress-misroute',
      family: 'ingress-misroute',
      status: 'supported',
      confidence: refused || !svc || portMissing ? 0.9 : 0.72,
      title: `${route.kind} ${name} sends ${where} to ${backend}${portMissing ? `, a port Service ${b.name} does not have` : !svc ? ', a Service that does not exist' : ` instead of ${expected}`}, since ${actor}'s change ${humanDuration(input.onset.getTime() - changedAt.getTime())} before the alert`,
      component: ref,
      mechanism: `${change ? `${change.summary} at ${clockTime(change.at)}` : `${route.kind} ${name} changed at ${clockTime(changedAt)}`}${source ? ` (PR #${source.number}${source.title ? ` "${source.title}"` : ''} in ${source.repo})` : ''}; its rule for ${where} now points at ${backend}: ${why}. ${svc && !expectedSvc ? `The gateway cannot resolve the backend and answers those requests itself (500 under the Gateway API spec); ${b.name}'s pods stay healthy and get none of them.` : !svc ? 'The gateway has no backend for those requests and answers them itself (500).' : `Those requests reach ${b.name}, which answers them wrongly.`}`,
      scope: `every request for ${where}${callers.length ? `; callers: ${callers.map((c) => c.name).join(', ')}` : ''}`,
      affected: [ref, ...callers, ...(svc ? [{ kind: 'Service', namespace: b.namespace, name: b.name }, ...behind(input, b.namespace, b.name)] : []), ...(expectedSvc ? [{ kind: 'Service', namespace: b.namespace, name: expectedSvc.metadata?.name ?? '?' }] : [])],
      facts: {
        route: name,
        ...(host ? { host } : {}),
        ...(b.path ? { path: b.path } : {}),
        backend,
        ...(expected ? { expectedBackend: expected } : {}),
        manager: actor,
        changedAt: changedAt.toISOString(),
        ...(source ? { pr: String(source.number), repo: source.repo } : {}),
      },
      supporting,
      refuting: [],
      ...(source ? { mitigation: revertPrProposal(source, ref, `changed ${route.kind} ${name}'s ${where} backend to ${backend}`) } : {}),
    });
  }
  return out;
}

/** A parent's `ResolvedRefs=False` condition: the implementation refused a backendRef. */
function unresolvedRefs(route: CustomObject): { reason: string; message: string; at: Date } | undefined {
  const parents = ((route.status?.['parents'] as { conditions?: { type?: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string }[] }[] | undefined) ?? []);
  for (const p of parents) {
    const c = (p.conditions ?? []).find((x) => x.type === 'ResolvedRefs' && x.status === 'False');
    const at = c?.lastTransitionTime ? new Date(c.lastTransitionTime) : undefined;
    if (c && at && !Number.isNaN(at.getTime())) return { reason: c.reason ?? 'unresolved', message: c.message ?? '', at };
  }
  return undefined;
}

interface Misroute {
  host?: string;
  path: string;
  backend: string;
  port: string;
  expected?: string;
}

/** Rules whose backend does not fit: a missing Service, or a path named for another Service of the namespace. */
function misroutes(ing: V1Ingress, input: ClusterTriageInput): Misroute[] {
  const ns = ing.metadata?.namespace ?? '';
  const services = input.cluster.snapshot.services.filter((s) => s.metadata?.namespace === ns).map((s) => s.metadata?.name ?? '');
  const out: Misroute[] = [];
  for (const rule of ing.spec?.rules ?? []) {
    for (const p of rule.http?.paths ?? []) {
      const backend = p.backend?.service?.name;
      if (!backend) continue;
      const port = String(p.backend?.service?.port?.number ?? p.backend?.service?.port?.name ?? '');
      const path = p.path ?? '/';
      const words = path.split(/[/_.-]+/).filter((w) => w.length >= 2 && !/^v\d+$/.test(w));
      const fits = (svc: string) => words.some((w) => svc.split('-').includes(w.toLowerCase()));
      const expected = !fits(backend) ? services.find((svc) => svc !== backend && fits(svc)) : undefined;
      if (!services.includes(backend) || expected) out.push({ ...(rule.host ? { host: rule.host } : {}), path, backend, port, ...(expected ? { expected } : {}) });
    }
  }
  return out;
}

/** ingress-nginx's rate-limit annotations (per client IP; over the limit it answers 503 by default, `limit-req-status-code`). */
const RATE_LIMITS = ['limit-rps', 'limit-rpm', 'limit-connections'].map((k) => `nginx.ingress.kubernetes.io/${k}`);

/**
 * A rate-limit annotation written by the Ingress's latest change: the managedFields entry stamped at that
 * change owns it. Its effect waits for traffic, so the edge refuses requests while every backend is healthy.
 */
export function rateLimitSetBy(ing: V1Ingress, at: Date): { annotation: string; value: string; burst?: string } | undefined {
  const entry = (ing.metadata?.managedFields ?? []).find((m) => m.time && Math.abs(new Date(m.time).getTime() - at.getTime()) < 1000);
  const owned = ((entry?.fieldsV1 as { 'f:metadata'?: { 'f:annotations'?: Record<string, unknown> } } | undefined)?.['f:metadata']?.['f:annotations']) ?? {};
  const annotations = ing.metadata?.annotations ?? {};
  const annotation = RATE_LIMITS.find((k) => annotations[k] !== undefined && `f:${k}` in owned);
  if (!annotation) return undefined;
  const burst = annotations['nginx.ingress.kubernetes.io/limit-burst-multiplier'];
  return { annotation, value: String(annotations[annotation]), ...(burst ? { burst } : {}) };
}

function rateLimitFinding(input: ClusterTriageInput, ing: V1Ingress, change: NonNullable<ReturnType<typeof lastChangeBefore>>, limit: { annotation: string; value: string; burst?: string }): Finding {
  const ns = ing.metadata?.namespace ?? '';
  const name = ing.metadata?.name ?? '?';
  const key = limit.annotation.split('/')[1]!;
  const host = ing.spec?.rules?.find((r) => r.host)?.host;
  const backends = [...new Set((ing.spec?.rules ?? []).flatMap((r) => (r.http?.paths ?? []).map((p) => p.backend?.service?.name).filter((x): x is string => !!x)))];
  const what = `${key}: "${limit.value}"${limit.burst ? ` (burst ×${limit.burst})` : ''}`;
  return {
    key: `ingress-misroute:${ns}/Ingress/${name}/rate-limit`,
    analyzer: 'ingress-misroute',
    family: 'ingress-misroute',
    status: 'supported',
    confidence: 0.84,
    title: `Ingress ${name} rate-limits every client to ${what} since ${change.actor}'s change ${humanDuration(input.onset.getTime() - change.at.getTime())} before the alert`,
    component: { kind: 'Ingress', namespace: ns, name },
    mechanism: `${change.summary} at ${clockTime(change.at)} set ${limit.annotation}="${limit.value}": ingress-nginx refuses what each client address sends above it (503 by default), before the requests reach ${backends.join(', ') || 'the backends'}, which stay healthy. Behind a CDN or load balancer many users share one address.`,
    scope: `every request for ${host ?? name} over the limit`,
    affected: [{ kind: 'Ingress', namespace: ns, name }, ...backends.flatMap((b) => [{ kind: 'Service', namespace: ns, name: b }, ...behind(input, ns, b)])],
    facts: { ingress: name, ...(host ? { host } : {}), annotation: limit.annotation, value: limit.value, manager: change.actor, changedAt: change.at.toISOString() },
    supporting: [changeEvidence(change, input.onset), { kind: 'object', summary: `Ingress ${ns}/${name}: ${limit.annotation} = "${limit.value}"${limit.burst ? `, limit-burst-multiplier = "${limit.burst}"` : ''}`, citation: objectCitation('Ingress', ns, name, 'metadata.annotations') }],
    refuting: [],
  };
}

/** The workloads a Service selects. */
function behind(input: ClusterTriageInput, ns: string, service: string): ComponentRef[] {
  const t = input.cluster.topology;
  return t.outgoing(nodeId({ kind: 'Service', namespace: ns, name: service })).filter((e) => e.kind === 'selects').map((e) => refOfId(e.to));
}

/** `api-gateway:8080`: the Service with its first port, as a backend is written. */
function expectedPort(input: ClusterTriageInput, ns: string, service: string): string {
  const svc = input.cluster.snapshot.services.find((s) => s.metadata?.namespace === ns && s.metadata?.name === service);
  const port = svc?.spec?.ports?.[0]?.port;
  return port ? `${service}:${port}` : service;
}
