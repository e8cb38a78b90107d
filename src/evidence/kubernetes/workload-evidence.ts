/**
 * The Kubernetes evidence about one candidate workload, derived from the cluster snapshot (no list is
 * read twice) plus the few reads that are about that workload alone: its namespace's events, the
 * ConfigMaps/Secrets it reads (metadata and key names), its Helm release history, the TLS Secrets of its
 * namespace (public certificate only) and its containers' logs — the previous log of restarting
 * containers and, bounded, the current log of Running pods (since a little before the onset), because
 * most application errors happen in pods that never restart.
 */
import type { CoreV1Event, V1Pod, V1Secret } from '@kubernetes/client-node';
import { mineTemplates } from '../logs/drain.js';
import type { Redactor } from '../../redact/index.js';
import { createRedactor } from '../../redact/index.js';
import type { ClusterSnapshot } from '../../topology/snapshot.js';
import { SIDECARS } from '../../topology/graph.js';
import type { KubeReader } from './client.js';
import { KubeReadError } from './client.js';
import { emptyKubeEvidence, isUnhealthyPod, type KubeEvidence, type Workload } from './gather.js';
import { decodeHelmHistory } from './helm.js';
import { readConfigRefs, relatedFromListed } from './related.js';
import { parseCertificate, type ContainerLogs, type TlsCertificate } from './surroundings.js';
import type { WorkloadRef } from './target.js';

/** Reads shared by the candidates of one investigation (one per namespace). */
export class NamespaceReads {
  readonly #events = new Map<string, Promise<CoreV1Event[]>>();
  readonly #tls = new Map<string, Promise<V1Secret[]>>();
  readonly gaps: string[] = [];
  constructor(private readonly reader: KubeReader) {}

  events(ns: string): Promise<CoreV1Event[]> {
    if (!this.#events.has(ns)) this.#events.set(ns, this.reader.listEvents(ns).then((r) => r.items ?? [], (err) => (this.gap(err), [])));
    return this.#events.get(ns)!;
  }

  tlsSecrets(ns: string): Promise<V1Secret[]> {
    if (!this.#tls.has(ns))
      this.#tls.set(
        ns,
        this.reader.core.listNamespacedSecret({ namespace: ns, fieldSelector: 'type=kubernetes.io/tls', limit: 100 }).then(
          (r) => r.items ?? [],
          (err) => (this.gap(err, `list tls secrets in ${ns}`), []),
        ),
      );
    return this.#tls.get(ns)!;
  }

  private gap(err: unknown, what = 'kubernetes'): void {
    this.gaps.push(err instanceof KubeReadError ? err.message : `${what}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
}

export interface WorkloadEvidenceOptions {
  redactor?: Redactor;
  reads: NamespaceReads;
  /** Now, for the log window. */
  now?: Date;
  /** Read the current logs of Running pods too (default true). */
  runningLogs?: boolean;
  /**
   * Start the log window here instead of a little before the onset: an object the workload depends on
   * changed earlier (a topic's retention, a ConfigMap) and its effect may have shown long before anyone
   * alerted. Bounded by the caller.
   */
  logsSince?: Date;
}

const MAX_FAILING_LOGS = 4;
const MAX_RUNNING_PODS = 2;
const TAIL_LINES = 400;
/** With a window widened to an earlier change: enough lines to reach back to it through a chatty log. */
const WIDE_TAIL_LINES = 2000;
const LIMIT_BYTES = 512 * 1024;
/** Running pods' logs from this long before the onset: the baseline the errors stand out from. */
const LOG_LEAD_MS = 20 * 60_000;

function selects(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

function findWorkload(s: ClusterSnapshot, t: WorkloadRef): Workload | undefined {
  const list = t.kind === 'Deployment' ? s.deployments : t.kind === 'StatefulSet' ? s.statefulSets : s.daemonSets;
  return (list as Workload[]).find((w) => w.metadata?.namespace === t.namespace && w.metadata?.name === t.name);
}

export async function workloadEvidence(reader: KubeReader, snapshot: ClusterSnapshot, target: WorkloadRef, onset: Date, opts: WorkloadEvidenceOptions): Promise<KubeEvidence> {
  const ev = emptyKubeEvidence(onset, reader.server);
  const ns = target.namespace;
  ev.target = target;
  ev.unhealthyPods = snapshot.pods.filter(isUnhealthyPod);
  ev.warningEvents = snapshot.warningEvents;
  ev.nodes = snapshot.nodes;
  ev.storageClasses = snapshot.storageClasses;
  ev.namespacePods = snapshot.pods.filter((p) => p.metadata?.namespace === ns);
  const endpointsByName = new Map(snapshot.endpoints.filter((e) => e.metadata?.namespace === ns).map((e) => [e.metadata?.name ?? '', e]));
  ev.namespaceServices = snapshot.services.filter((s) => s.metadata?.namespace === ns).map((service) => ({ service, endpoints: endpointsByName.get(service.metadata?.name ?? '') }));
  ev.pvcs = snapshot.pvcs.filter((p) => p.metadata?.namespace === ns);
  ev.networkPolicies = snapshot.networkPolicies.filter((p) => p.metadata?.namespace === ns);
  ev.ingresses = snapshot.ingresses.filter((i) => i.metadata?.namespace === ns);
  ev.hpas = snapshot.hpas.filter((h) => h.metadata?.namespace === ns && h.spec?.scaleTargetRef?.name === target.name);
  ev.events = await opts.reads.events(ns);

  ev.workload = findWorkload(snapshot, target);
  if (!ev.workload) {
    ev.gaps.push(`get ${target.kind.toLowerCase()} ${ns}/${target.name}: not in the cluster`);
    return ev;
  }
  const podLabels = ev.workload.spec?.template?.metadata?.labels;
  const matchLabels = ev.workload.spec?.selector?.matchLabels;
  const uid = ev.workload.metadata?.uid;
  // By uid where the reference carries one (a recreated Deployment of the same name owns new ReplicaSets only), else by kind and name.
  ev.replicaSets = snapshot.replicaSets.filter((r) => r.metadata?.namespace === ns && (r.metadata?.ownerReferences ?? []).some((o) => (o.uid && uid ? o.uid === uid : o.kind === target.kind && o.name === target.name)));
  ev.pods = ev.namespacePods.filter((p) => selects(matchLabels, p.metadata?.labels));
  ev.services = ev.namespaceServices.filter(({ service }) => selects(service.spec?.selector, podLabels));

  // Who calls the target: workloads in the namespace whose env names one of its services.
  const hosts = ev.services.flatMap(({ service }) => {
    const n = service.metadata!.name!;
    return [`${n}.${ns}.svc`, `${n}.${ns}`, `//${n}:`, `//${n}/`];
  });
  for (const d of snapshot.deployments.filter((x) => x.metadata?.namespace === ns)) {
    if (d.metadata?.name === target.name) continue;
    for (const c of d.spec?.template?.spec?.containers ?? []) {
      const hit = (c.env ?? []).find((e) => e.value && hosts.some((h) => e.value!.includes(h)));
      if (hit) {
        ev.dependents.push({ kind: 'Deployment', name: d.metadata!.name!, via: `env ${hit.name}` });
        break;
      }
    }
  }

  const [related, helm, certificates, logs] = await Promise.all([
    readConfigRefs(reader, ns, ev.workload.spec?.template?.spec, (what, err) => ev.gaps.push(err instanceof Error ? `${what}: ${err.message.split('\n')[0]}` : what)),
    readHelm(reader, ev),
    readCertificates(ev, opts.reads),
    readLogs(reader, ev, onset, opts),
  ]);
  ev.related = [...related, ...relatedFromListed(ns, ev.networkPolicies, ev.hpas)];
  if (helm) ev.helm = helm;
  ev.certificates = certificates;
  ev.containerLogs = logs;
  return ev;
}

async function readHelm(reader: KubeReader, ev: KubeEvidence): Promise<KubeEvidence['helm']> {
  const release = ev.workload?.metadata?.annotations?.['meta.helm.sh/release-name'];
  if (!release || !ev.target) return undefined;
  try {
    const secrets = await reader.listHelmReleaseSecrets(ev.target.namespace, release);
    const { revisions, errors } = decodeHelmHistory(secrets.items);
    ev.gaps.push(...errors);
    return { release, revisions };
  } catch (err) {
    ev.gaps.push(err instanceof KubeReadError ? err.message : String(err));
    return undefined;
  }
}

async function readCertificates(ev: KubeEvidence, reads: NamespaceReads): Promise<TlsCertificate[]> {
  const ns = ev.target!.namespace;
  const out: TlsCertificate[] = [];
  for (const secret of await reads.tlsSecrets(ns)) {
    const crt = secret.data?.['tls.crt'];
    const parsed = crt ? parseCertificate(Buffer.from(crt, 'base64').toString('utf8')) : undefined;
    if (!parsed) continue;
    const name = secret.metadata!.name!;
    const usedBy = ev.ingresses.filter((i) => (i.spec?.tls ?? []).some((t) => t.secretName === name)).map((i) => i.metadata!.name!);
    out.push({ secret: name, namespace: ns, usedBy, ...parsed });
  }
  return out;
}

/** The app container of a pod: kubectl's default-container annotation, else the first that is not a known sidecar. */
export function appContainer(p: V1Pod): string | undefined {
  const annotated = p.metadata?.annotations?.['kubectl.kubernetes.io/default-container'];
  if (annotated) return annotated;
  const names = (p.spec?.containers ?? []).map((c) => c.name);
  return names.find((n) => !SIDECARS.has(n)) ?? names[0];
}

async function readLogs(reader: KubeReader, ev: KubeEvidence, onset: Date, opts: WorkloadEvidenceOptions): Promise<ContainerLogs[]> {
  const ns = ev.target!.namespace;
  const wanted: { pod: string; container: string; previous: boolean }[] = [];
  for (const p of ev.pods) {
    for (const c of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) {
      if ((c.restartCount ?? 0) > 0 || c.state?.waiting?.reason === 'CrashLoopBackOff') wanted.push({ pod: p.metadata!.name!, container: c.name, previous: (c.restartCount ?? 0) > 0 });
      else if (c.state?.running && c.ready === false && (p.status?.initContainerStatuses ?? []).some((i) => i.name === c.name)) wanted.push({ pod: p.metadata!.name!, container: c.name, previous: false });
    }
  }
  const failing = wanted.slice(0, MAX_FAILING_LOGS);
  const running: { pod: string; container: string; previous: boolean }[] = [];
  if (opts.runningLogs !== false) {
    // Not ready pods first (they show the failure), then the others; one app container each.
    const pods = [...ev.pods].filter((p) => p.status?.phase === 'Running').sort((a, b) => Number(isReady(a)) - Number(isReady(b)));
    for (const p of pods) {
      const container = appContainer(p);
      if (!container || failing.some((f) => f.pod === p.metadata?.name && f.container === container && !f.previous)) continue;
      running.push({ pod: p.metadata!.name!, container, previous: false });
      if (running.length >= MAX_RUNNING_PODS) break;
    }
  }
  const now = opts.now ?? new Date();
  const from = Math.min(onset.getTime() - LOG_LEAD_MS, opts.logsSince?.getTime() ?? Infinity);
  const sinceSeconds = Math.max(60, Math.ceil((now.getTime() - from) / 1000));
  const wide = from < onset.getTime() - LOG_LEAD_MS;
  const redactor = opts.redactor ?? createRedactor();
  const out: ContainerLogs[] = [];
  await Promise.all(
    [...failing, ...running].map(async (c) => {
      let text: string;
      try {
        text = await reader.readPodLog(ns, c.pod, {
          container: c.container,
          previous: c.previous,
          tailLines: wide && !c.previous ? WIDE_TAIL_LINES : TAIL_LINES,
          timestamps: true,
          limitBytes: LIMIT_BYTES,
          ...(c.previous ? {} : { sinceSeconds }),
        });
      } catch (err) {
        if (!(err instanceof KubeReadError && err.status === 400)) ev.gaps.push(err instanceof KubeReadError ? err.message : String(err));
        return;
      }
      if (typeof text !== 'string' || !text) return;
      const stamped = text.split('\n').filter(Boolean).map((l) => {
        const m = /^(\d{4}-\d{2}-\d{2}T\S+)\s(.*)$/.exec(l);
        return m ? { ts: new Date(m[1]!), line: m[2]! } : { line: l };
      });
      // Redacted as a whole log before mining: a key printed over several lines shows only in context.
      const redacted = redactor.redactLines(stamped.map((l) => l.line));
      const lines = stamped.map((l, i) => ({ ...l, line: redacted[i]! }));
      out.push({ ...c, running: !c.previous && failing.every((f) => f.pod !== c.pod || f.container !== c.container), patterns: mineTemplates(lines, { maxPatterns: 20 }), tail: lines.slice(-5).map((l) => l.line) });
    }),
  );
  const order = [...failing, ...running].map((c) => `${c.pod}/${c.container}/${c.previous}`);
  return out.sort((a, b) => order.indexOf(`${a.pod}/${a.container}/${a.previous}`) - order.indexOf(`${b.pod}/${b.container}/${b.previous}`));
}

function isReady(p: V1Pod): boolean {
  return (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}
