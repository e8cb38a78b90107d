import * as k8s from '@kubernetes/client-node';

export interface KubeSettings {
  kubeconfig?: string;
  context?: string;
  inCluster?: boolean;
}

/** Build the reader identity's KubeConfig from settings (in-cluster, a kubeconfig file, or the default chain). */
export function loadKubeConfig(s: KubeSettings): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (s.inCluster) kc.loadFromCluster();
  else if (s.kubeconfig) kc.loadFromFile(s.kubeconfig);
  else kc.loadFromDefault();
  if (s.context) kc.setCurrentContext(s.context);
  return kc;
}

/** A failed read, as data: which call, what the API said. */
export class KubeReadError extends Error {
  constructor(
    readonly what: string,
    readonly status: number | undefined,
    detail: string,
  ) {
    super(`${what}: ${status ? `HTTP ${status} ` : ''}${detail}`);
    this.name = 'KubeReadError';
  }
}

function describeError(what: string, err: unknown): KubeReadError {
  if (err instanceof k8s.ApiException) {
    const body = typeof err.body === 'string' ? safeJson(err.body) : err.body;
    const message = (body as { message?: string } | undefined)?.message ?? String(err.message).split('\n')[0] ?? 'error';
    return new KubeReadError(what, err.code, message);
  }
  return new KubeReadError(what, undefined, err instanceof Error ? err.message : String(err));
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return { message: s.slice(0, 200) };
  }
}

export interface KubeReaderOptions {
  /** Per request, headers and body, in ms (default {@link DEFAULT_KUBE_TIMEOUT_MS}). */
  timeoutMs?: number;
}

/** client-node sets no timeout of its own: a hung API server would hold a read for ever. */
export const DEFAULT_KUBE_TIMEOUT_MS = 15_000;

/**
 * `kc.makeApiClient(type)` plus a per-request timeout. client-node 2.x hands `RequestContext`'s signal
 * to undici's fetch, which then aborts the request and the body read with the signal's reason.
 */
export function makeTimedApiClient<T>(kc: k8s.KubeConfig, type: new (config: k8s.Configuration) => T, timeoutMs: number): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('No active cluster!');
  return new type(
    k8s.createConfiguration({
      baseServer: new k8s.ServerConfiguration(cluster.server, {}),
      authMethods: { default: kc },
      middleware: [k8s.setHeaderMiddleware('User-Agent', 'vigil-sre-agent')],
      promiseMiddleware: [
        {
          pre: async (ctx) => {
            ctx.setSignal(timeoutSignal(timeoutMs));
            return ctx;
          },
          post: async (response) => response,
        },
      ],
    }),
  );
}

/** Aborts after `ms` with a reason that says so (the error message a tool result carries). */
function timeoutSignal(ms: number): AbortSignal {
  const controller = new AbortController();
  const reason = new Error(`the Kubernetes API server did not answer within ${ms} ms`);
  reason.name = 'TimeoutError';
  setTimeout(() => controller.abort(reason), ms).unref();
  return controller.signal;
}

/**
 * The read-only Kubernetes adapter (reader identity). Every method is a GET; errors become
 * KubeReadError with the call named, so callers can record a gap instead of failing the investigation.
 */
export class KubeReader {
  readonly core: k8s.CoreV1Api;
  readonly apps: k8s.AppsV1Api;
  readonly timeoutMs: number;

  constructor(
    readonly kc: k8s.KubeConfig,
    options: KubeReaderOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_KUBE_TIMEOUT_MS;
    this.core = this.makeApiClient(k8s.CoreV1Api);
    this.apps = this.makeApiClient(k8s.AppsV1Api);
  }

  /** An API client under the reader identity, with the reader's request timeout. */
  makeApiClient<T>(type: new (config: k8s.Configuration) => T): T {
    return makeTimedApiClient(this.kc, type, this.timeoutMs);
  }

  /** The API server URL, for citations. */
  get server(): string {
    return this.kc.getCurrentCluster()?.server ?? 'kubernetes';
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw describeError(what, err);
    }
  }

  /** undefined on 404, so "does it exist" is a plain check. */
  private async optional<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof k8s.ApiException && err.code === 404) return undefined;
      throw describeError(what, err);
    }
  }

  listNamespaces() {
    return this.call('list namespaces', () => this.core.listNamespace({ limit: 500 }));
  }
  readDeployment(namespace: string, name: string) {
    return this.optional(`get deployment ${namespace}/${name}`, () => this.apps.readNamespacedDeployment({ namespace, name }));
  }
  readStatefulSet(namespace: string, name: string) {
    return this.optional(`get statefulset ${namespace}/${name}`, () => this.apps.readNamespacedStatefulSet({ namespace, name }));
  }
  readDaemonSet(namespace: string, name: string) {
    return this.optional(`get daemonset ${namespace}/${name}`, () => this.apps.readNamespacedDaemonSet({ namespace, name }));
  }
  listDeployments(namespace?: string) {
    return namespace
      ? this.call(`list deployments in ${namespace}`, () => this.apps.listNamespacedDeployment({ namespace, limit: 500 }))
      : this.call('list deployments (all namespaces)', () => this.apps.listDeploymentForAllNamespaces({ limit: 1000 }));
  }
  listStatefulSets(namespace: string) {
    return this.call(`list statefulsets in ${namespace}`, () => this.apps.listNamespacedStatefulSet({ namespace, limit: 500 }));
  }
  listDaemonSets(namespace: string) {
    return this.call(`list daemonsets in ${namespace}`, () => this.apps.listNamespacedDaemonSet({ namespace, limit: 500 }));
  }
  listReplicaSets(namespace: string, labelSelector?: string) {
    return this.call(`list replicasets in ${namespace}`, () => this.apps.listNamespacedReplicaSet({ namespace, labelSelector, limit: 200 }));
  }
  listPods(namespace: string, labelSelector?: string) {
    return this.call(`list pods in ${namespace}`, () => this.core.listNamespacedPod({ namespace, labelSelector, limit: 2000 }));
  }
  listAllPods() {
    return this.call('list pods (all namespaces)', () => this.core.listPodForAllNamespaces({ limit: 2000 }));
  }
  listServices(namespace: string) {
    return this.call(`list services in ${namespace}`, () => this.core.listNamespacedService({ namespace, limit: 500 }));
  }
  listEvents(namespace: string) {
    return this.call(`list events in ${namespace}`, () => this.core.listNamespacedEvent({ namespace, limit: 500 }));
  }
  listWarningEvents() {
    return this.call('list warning events (all namespaces)', () => this.core.listEventForAllNamespaces({ fieldSelector: 'type=Warning', limit: 500 }));
  }
  /** Helm 3 keeps each release revision as a Secret labelled owner=helm,name=<release>. */
  listHelmReleaseSecrets(namespace: string, release: string) {
    return this.call(`list helm release secrets for ${namespace}/${release}`, () =>
      this.core.listNamespacedSecret({ namespace, labelSelector: `owner=helm,name=${release}`, limit: 100 }),
    );
  }

  /** A container's log text (`GET …/pods/<name>/log`); `previous` is the last terminated instance. */
  readPodLog(namespace: string, name: string, opts: { container?: string; previous?: boolean; tailLines?: number; sinceSeconds?: number; limitBytes?: number; timestamps?: boolean } = {}) {
    return this.call(`get pods/log ${namespace}/${name}`, () => this.core.readNamespacedPodLog({ namespace, name, ...opts }));
  }
}
