import type { CoreV1Event, V1Deployment, V1Endpoints, V1Pod, V1ReplicaSet, V1Service, V1StatefulSet, V1DaemonSet } from '@kubernetes/client-node';
import type { Alert } from '../../alerts/types.js';
import type { Redactor } from '../../redact/index.js';
import type { KubeReader } from './client.js';
import { KubeReadError } from './client.js';
import { decodeHelmHistory, type HelmRevision } from './helm.js';
import { readConfigRefs, relatedFromListed, type RelatedObject } from './related.js';
import { emptySurroundings, readSurroundings, type KubeSurroundings } from './surroundings.js';
import { resolveTarget, type WorkloadRef } from './target.js';

export type Workload = V1Deployment | V1StatefulSet | V1DaemonSet;

/** What the Kubernetes reads found around one alert: the target workload, its surroundings, and the cluster's other trouble. */
export interface KubeEvidence extends KubeSurroundings {
  onset: Date;
  target?: WorkloadRef;
  workload?: Workload;
  replicaSets: V1ReplicaSet[];
  pods: V1Pod[];
  /** Services selecting the workload's pods, with their Endpoints. */
  services: { service: V1Service; endpoints?: V1Endpoints }[];
  /** Events in the target's namespace. */
  events: CoreV1Event[];
  helm?: { release: string; revisions: HelmRevision[] };
  /** ConfigMaps/Secrets it reads, NetworkPolicies of its namespace, HPAs scaling it (metadata only). */
  related: RelatedObject[];
  /** Workloads in the namespace whose config references the target's service DNS name. */
  dependents: { kind: string; name: string; via: string }[];
  /** Pods anywhere that are not healthy (waiting/crashing), for the noise check. */
  unhealthyPods: V1Pod[];
  /** Warning events anywhere. */
  warningEvents: CoreV1Event[];
  /** Reads that failed, as sentences for the board's "could not check" line. */
  gaps: string[];
  /** Base URL of the API server, for citations. */
  server: string;
}

function selectorString(labels: Record<string, string> | undefined): string | undefined {
  if (!labels) return undefined;
  return Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',');
}

function selects(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

const BAD_WAITING = new Set(['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull', 'CreateContainerConfigError', 'RunContainerError', 'InvalidImageName']);

export function isUnhealthyPod(p: V1Pod): boolean {
  if (p.status?.phase === 'Failed' || p.status?.phase === 'Pending') return true;
  return (p.status?.containerStatuses ?? []).some((c) => (c.state?.waiting?.reason && BAD_WAITING.has(c.state.waiting.reason)) || (c.restartCount ?? 0) >= 5);
}

/** Evidence with nothing read yet (and why, in `gaps`). */
export function emptyKubeEvidence(onset: Date, server: string, gaps: string[] = []): KubeEvidence {
  return {
    ...emptySurroundings(),
    onset,
    replicaSets: [],
    pods: [],
    services: [],
    events: [],
    related: [],
    dependents: [],
    unhealthyPods: [],
    warningEvents: [],
    gaps,
    server,
  };
}

/**
 * Read everything the deterministic analyzers need, tolerating partial failure: a failed read becomes a
 * gap, never an exception, so the first card still lands with what could be read.
 */
export async function gatherKubeEvidence(reader: KubeReader, alert: Alert, onset: Date, opts: { redactor?: Redactor } = {}): Promise<KubeEvidence> {
  const ev = emptyKubeEvidence(onset, reader.server);
  const attempt = async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await fn();
    } catch (err) {
      ev.gaps.push(err instanceof KubeReadError ? err.message : `kubernetes: ${String(err)}`);
      return undefined;
    }
  };

  ev.target = await attempt(() => resolveTarget(alert, reader));
  const [allPods, warnings] = await Promise.all([attempt(() => reader.listAllPods()), attempt(() => reader.listWarningEvents())]);
  ev.unhealthyPods = (allPods?.items ?? []).filter(isUnhealthyPod);
  ev.warningEvents = warnings?.items ?? [];
  const t = ev.target;
  if (!t) return ev;

  const read = t.kind === 'Deployment' ? () => reader.readDeployment(t.namespace, t.name) : t.kind === 'StatefulSet' ? () => reader.readStatefulSet(t.namespace, t.name) : () => reader.readDaemonSet(t.namespace, t.name);
  ev.workload = await attempt(read);
  if (!ev.workload) return ev;

  const podLabels = ev.workload.spec?.template?.metadata?.labels;
  const matchLabels = ev.workload.spec?.selector?.matchLabels;
  const ownsPod = (p: V1Pod) => selects(matchLabels, p.metadata?.labels);
  const selector = selectorString(matchLabels);
  // The namespace is listed once (surroundings): the workload's pods, Services and Endpoints are derived from it.
  const [rs, events, deployments, surroundings] = await Promise.all([
    t.kind === 'Deployment' ? attempt(() => reader.listReplicaSets(t.namespace, selector)) : Promise.resolve(undefined),
    attempt(() => reader.listEvents(t.namespace)),
    attempt(() => reader.listDeployments(t.namespace)),
    readSurroundings(reader, t.namespace, { name: t.name, ownsPod }, attempt, opts.redactor),
  ]);
  Object.assign(ev, surroundings);
  const uid = ev.workload.metadata?.uid;
  ev.replicaSets = (rs?.items ?? []).filter((r) => !uid || (r.metadata?.ownerReferences ?? []).some((o) => o.uid === uid));
  ev.pods = ev.namespacePods.filter(ownsPod);
  ev.events = events?.items ?? [];
  ev.services = ev.namespaceServices.filter(({ service }) => selects(service.spec?.selector, podLabels));

  // Who calls the target: workloads whose env mentions one of its services' DNS names.
  const hosts = ev.services.flatMap(({ service }) => {
    const n = service.metadata!.name!;
    return [`${n}.${t.namespace}.svc`, `${n}.${t.namespace}`, `//${n}:`, `//${n}/`];
  });
  for (const d of deployments?.items ?? []) {
    if (d.metadata?.name === t.name) continue;
    for (const c of d.spec?.template?.spec?.containers ?? []) {
      const hit = (c.env ?? []).find((e) => e.value && hosts.some((h) => e.value!.includes(h)));
      if (hit) {
        ev.dependents.push({ kind: 'Deployment', name: d.metadata!.name!, via: `env ${hit.name}` });
        break;
      }
    }
  }

  ev.related = [
    ...(await readConfigRefs(reader, t.namespace, ev.workload.spec?.template?.spec, (what, err) =>
      ev.gaps.push(err instanceof Error ? `${what}: ${err.message.split('\n')[0]}` : what),
    )),
    ...relatedFromListed(t.namespace, ev.networkPolicies, ev.hpas),
  ];

  const release = ev.workload.metadata?.annotations?.['meta.helm.sh/release-name'];
  if (release) {
    const secrets = await attempt(() => reader.listHelmReleaseSecrets(t.namespace, release));
    if (secrets) {
      const { revisions, errors } = decodeHelmHistory(secrets.items);
      ev.gaps.push(...errors);
      ev.helm = { release, revisions };
    }
  }
  return ev;
}
