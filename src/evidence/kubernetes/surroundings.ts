import { X509Certificate } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import type {
  V1Endpoints,
  V1Ingress,
  V1NetworkPolicy,
  V1Node,
  V1PersistentVolumeClaim,
  V1Pod,
  V1Service,
  V1StorageClass,
  V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import { mineTemplates } from '../logs/drain.js';
import type { LogPattern } from '../logs/types.js';
import { createRedactor, type Redactor } from '../../redact/index.js';
import type { KubeReader } from './client.js';
import { withSlices } from './endpoint-slices.js';

/** Logs of a target container that restarted or is failing, mined into templates. */
export interface ContainerLogs {
  pod: string;
  container: string;
  previous: boolean;
  /** The current log of a container that is not restarting (a Running pod's errors). */
  running?: boolean;
  patterns: LogPattern[];
  /** The last lines (unredacted here; findings redact before anything leaves). */
  tail: string[];
}

/** A TLS certificate found in a `kubernetes.io/tls` Secret (public `tls.crt` only; the key is never read). */
export interface TlsCertificate {
  secret: string;
  namespace: string;
  subject: string;
  sans: string[];
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  /** Ingresses that serve it. */
  usedBy: string[];
}

/** The surroundings the analyzers need beyond the workload itself. */
export interface KubeSurroundings {
  namespacePods: V1Pod[];
  namespaceServices: { service: V1Service; endpoints?: V1Endpoints }[];
  nodes: V1Node[];
  pvcs: V1PersistentVolumeClaim[];
  storageClasses: V1StorageClass[];
  hpas: V2HorizontalPodAutoscaler[];
  networkPolicies: V1NetworkPolicy[];
  ingresses: V1Ingress[];
  certificates: TlsCertificate[];
  containerLogs: ContainerLogs[];
}

export const emptySurroundings = (): KubeSurroundings => ({
  namespacePods: [],
  namespaceServices: [],
  nodes: [],
  pvcs: [],
  storageClasses: [],
  hpas: [],
  networkPolicies: [],
  ingresses: [],
  certificates: [],
  containerLogs: [],
});

const MAX_LOG_CONTAINERS = 4;
const TAIL_LINES = 300;

/** Pods of the target whose containers restarted or wait in a failure state: their logs explain why. */
function failingContainers(pods: V1Pod[]): { pod: string; container: string; previous: boolean }[] {
  const out: { pod: string; container: string; previous: boolean }[] = [];
  for (const p of pods) {
    for (const c of p.status?.containerStatuses ?? []) {
      if ((c.restartCount ?? 0) > 0 || c.state?.waiting?.reason === 'CrashLoopBackOff') {
        out.push({ pod: p.metadata!.name!, container: c.name, previous: (c.restartCount ?? 0) > 0 });
      }
    }
  }
  return out.slice(0, MAX_LOG_CONTAINERS);
}

export function parseCertificate(pem: string): Omit<TlsCertificate, 'secret' | 'namespace' | 'usedBy'> | undefined {
  try {
    const cert = new X509Certificate(pem);
    return {
      subject: cert.subject.replace(/\n/g, ', '),
      sans: (cert.subjectAltName ?? '').split(/,\s*/).filter(Boolean).map((s) => s.replace(/^DNS:/, '')),
      issuer: cert.issuer.replace(/\n/g, ', '),
      notBefore: new Date(cert.validFrom),
      notAfter: new Date(cert.validTo),
    };
  } catch {
    return undefined;
  }
}

/**
 * Read the namespace and cluster around the target. Each read is independent: a failure (e.g. the
 * reader may not list nodes) becomes a gap and the rest still arrives.
 */
export async function readSurroundings(
  reader: KubeReader,
  namespace: string,
  workload: { name: string; ownsPod: (p: V1Pod) => boolean },
  attempt: <T>(fn: () => Promise<T>) => Promise<T | undefined>,
  redactor: Redactor = createRedactor(),
): Promise<KubeSurroundings> {
  const s = emptySurroundings();
  const net = reader.makeApiClient(k8s.NetworkingV1Api);
  const as = reader.makeApiClient(k8s.AutoscalingV2Api);
  const storage = reader.makeApiClient(k8s.StorageV1Api);
  const discovery = reader.makeApiClient(k8s.DiscoveryV1Api);
  const [pods, services, endpoints, nodes, pvcs, classes, hpas, policies, ingresses, tlsSecrets, slices] = await Promise.all([
    attempt(() => reader.listPods(namespace)),
    attempt(() => reader.listServices(namespace)),
    // One list of the namespace's Endpoints, joined to Services by name (not a GET per Service).
    attempt(() => reader.core.listNamespacedEndpoints({ namespace, limit: 500 })),
    attempt(() => reader.core.listNode({ limit: 500 })),
    attempt(() => reader.core.listNamespacedPersistentVolumeClaim({ namespace, limit: 200 })),
    attempt(() => storage.listStorageClass({ limit: 100 })),
    attempt(() => as.listNamespacedHorizontalPodAutoscaler({ namespace, limit: 200 })),
    attempt(() => net.listNamespacedNetworkPolicy({ namespace, limit: 200 })),
    attempt(() => net.listNamespacedIngress({ namespace, limit: 200 })),
    attempt(() => reader.core.listNamespacedSecret({ namespace, fieldSelector: 'type=kubernetes.io/tls', limit: 100 })),
    attempt(() => discovery.listNamespacedEndpointSlice({ namespace, limit: 1000 })),
  ]);
  s.namespacePods = pods?.items ?? [];
  s.nodes = nodes?.items ?? [];
  s.pvcs = pvcs?.items ?? [];
  s.storageClasses = classes?.items ?? [];
  s.hpas = (hpas?.items ?? []).filter((h) => h.spec?.scaleTargetRef?.name === workload.name);
  s.networkPolicies = policies?.items ?? [];
  s.ingresses = ingresses?.items ?? [];

  const endpointsByName = new Map(withSlices(endpoints?.items ?? [], slices?.items ?? []).map((e) => [e.metadata?.name ?? '', e]));
  s.namespaceServices = (services?.items ?? []).map((service) => ({ service, endpoints: endpointsByName.get(service.metadata?.name ?? '') }));

  for (const secret of tlsSecrets?.items ?? []) {
    const crt = secret.data?.['tls.crt'];
    const parsed = crt ? parseCertificate(Buffer.from(crt, 'base64').toString('utf8')) : undefined;
    if (!parsed) continue;
    const name = secret.metadata!.name!;
    const usedBy = s.ingresses.filter((i) => (i.spec?.tls ?? []).some((t) => t.secretName === name)).map((i) => i.metadata!.name!);
    s.certificates.push({ secret: name, namespace, usedBy, ...parsed });
  }

  for (const c of failingContainers(s.namespacePods.filter(workload.ownsPod))) {
    const text = await attempt(() =>
      reader.core.readNamespacedPodLog({ namespace, name: c.pod, container: c.container, previous: c.previous, tailLines: TAIL_LINES, timestamps: true }),
    );
    if (typeof text !== 'string') continue;
    const stamped = text.split('\n').filter(Boolean).map((l) => {
      const m = /^(\d{4}-\d{2}-\d{2}T\S+)\s(.*)$/.exec(l);
      return m ? { ts: new Date(m[1]!), line: m[2]! } : { line: l };
    });
    // Redacted as a whole log before mining: a key printed over several lines shows only in context.
    const redacted = redactor.redactLines(stamped.map((l) => l.line));
    const lines = stamped.map((l, i) => ({ ...l, line: redacted[i]! }));
    s.containerLogs.push({ ...c, patterns: mineTemplates(lines, { maxPatterns: 15 }), tail: lines.slice(-5).map((l) => l.line) });
  }
  return s;
}
