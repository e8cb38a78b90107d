import type { Citation } from '../../evidence/types.js';

/**
 * Evidence you can click: turns a citation into a URL a person can open (a Prometheus graph, a Grafana
 * Explore view, a GitHub commit/PR/deployment, a Slack message, a Kubernetes console page) or, for a
 * Kubernetes object with no console configured, the exact `kubectl get … -o yaml` that shows it. Pure: the
 * settings come from the config (`linkSettings` in src/config) and are handed in.
 */
export interface LinkSettings {
  /** Where people open Prometheus (PROMETHEUS_PUBLIC_URL): `/graph?g0.expr=…`. */
  prometheusUrl?: string;
  /** Grafana base URL (GRAFANA_URL): Explore links for PromQL and LogQL, preferred over Prometheus' own UI. */
  grafanaUrl?: string;
  /** Grafana datasource uids for the Explore links (GRAFANA_PROMETHEUS_DATASOURCE, GRAFANA_LOKI_DATASOURCE). */
  grafanaPrometheusDatasource?: string;
  grafanaLokiDatasource?: string;
  /** GitHub web base (GITHUB_WEB_URL, default https://github.com), for citations that carry an API path only. */
  githubUrl?: string;
  /** The Slack workspace URL (SLACK_WORKSPACE_URL, https://acme.slack.com), for message permalinks. */
  slackWorkspaceUrl?: string;
  /**
   * A console URL template for Kubernetes objects (VIGIL_KUBE_CONSOLE_URL), with `{namespace}`, `{kind}`
   * (lower case), `{plural}`, `{group}`, `{name}`; without it the citation shows the kubectl command.
   */
  kubeConsoleUrl?: string;
  /** Whether a Kubernetes citation without a URL shows `kubectl get … -o yaml` (default true). */
  kubectl?: boolean;
}

/** What a card shows for a citation: a URL to open, or a command to run. */
export interface CitationTarget {
  url?: string;
  command?: string;
}

const trimSlash = (u: string): string => u.replace(/\/+$/, '');

/** `3600s` for Prometheus' range input; at least one second. */
function rangeSeconds(range: { from: Date; to: Date }): number {
  return Math.max(1, Math.ceil((range.to.getTime() - range.from.getTime()) / 1000));
}

/** Prometheus' classic graph page: `/graph?g0.expr=…&g0.tab=0&g0.range_input=…s&g0.end_input=…`. */
export function prometheusGraphUrl(base: string, promql: string, range?: { from: Date; to: Date }): string {
  const q = new URLSearchParams({ 'g0.expr': promql, 'g0.tab': '0' });
  if (range) {
    q.set('g0.range_input', `${rangeSeconds(range)}s`);
    q.set('g0.end_input', range.to.toISOString().slice(0, 19).replace('T', ' '));
  }
  return `${trimSlash(base)}/graph?${q.toString()}`;
}

/** Grafana Explore (`/explore?schemaVersion=1&panes=…`) for a PromQL or LogQL query over the range. */
export function grafanaExploreUrl(base: string, datasource: string, expr: string, range?: { from: Date; to: Date }): string {
  const panes = {
    vigil: {
      datasource,
      queries: [{ refId: 'A', expr, datasource: { uid: datasource } }],
      range: range ? { from: String(range.from.getTime()), to: String(range.to.getTime()) } : { from: 'now-1h', to: 'now' },
    },
  };
  const q = new URLSearchParams({ schemaVersion: '1', panes: JSON.stringify(panes), orgId: '1' });
  return `${trimSlash(base)}/explore?${q.toString()}`;
}

/** `/repos/o/r/commits/<sha>` → `https://github.com/o/r/commit/<sha>`; pulls → `pull/<n>`; deployments → `deployments`. */
export function githubWebUrl(base: string, apiPath: string): string | undefined {
  const m = /^\/?repos\/([\w.-]+)\/([\w.-]+)\/(commits|pulls|deployments)\/([\w.-]+)/.exec(apiPath);
  if (!m) return undefined;
  const [, owner, repo, what, id] = m;
  const root = `${trimSlash(base)}/${owner}/${repo}`;
  if (what === 'commits') return `${root}/commit/${id}`;
  if (what === 'pulls') return `${root}/pull/${id}`;
  return `${root}/deployments`;
}

/** `C0123/1700000000.000100` (or `slack:C0123/…`) → `https://acme.slack.com/archives/C0123/p1700000000000100`. */
export function slackPermalink(workspace: string, ref: string): string | undefined {
  const m = /^(?:slack:)?([CGD][A-Z0-9]{2,})\/(\d{9,11})\.(\d{6})$/.exec(ref.trim());
  if (!m) return undefined;
  return `${trimSlash(workspace)}/archives/${m[1]}/p${m[2]}${m[3]}`;
}

/** A Kubernetes object named by a citation ref (`apis/apps/v1/namespaces/shop/deployments/checkout#…`). */
export interface KubeObjectRef {
  group: string;
  plural: string;
  namespace?: string;
  name: string;
  fragment?: string;
}

/** Parses an object path as `objectCitation` writes it; undefined for lists, queries and anything else. */
export function parseObjectRef(ref: string): KubeObjectRef | undefined {
  const [path = '', fragment] = ref.trim().split('#', 2);
  const m = /^\/?(?:api\/v1|apis\/([a-z0-9.-]+)\/[a-z0-9]+)\/(?:namespaces\/([a-z0-9.-]+)\/)?([a-z0-9]+)\/([a-z0-9][a-z0-9.:-]*)$/.exec(path);
  if (!m) return undefined;
  const [, group = '', namespace, plural, name] = m;
  if (plural === 'namespaces' && namespace) return undefined;
  return { group, plural: plural!, name: name!, ...(namespace ? { namespace } : {}), ...(fragment ? { fragment } : {}) };
}

const SHELL_SAFE = /^[A-Za-z0-9._:/-]+$/;

/** `kubectl get deployments.apps checkout -n shop -o yaml` — the exact read a person can run (`describe` for a Secret). */
export function kubectlGet(o: KubeObjectRef): string | undefined {
  if (![o.group, o.plural, o.name, o.namespace ?? 'x'].every((s) => s === '' || SHELL_SAFE.test(s))) return undefined;
  const resource = o.group ? `${o.plural}.${o.group}` : o.plural;
  const ns = o.namespace ? ` -n ${o.namespace}` : '';
  // A Secret's YAML is its data: `describe` shows the keys and sizes a reviewer needs, never the values.
  if (resource === 'secrets') return `kubectl describe secrets ${o.name}${ns}`;
  return `kubectl get ${resource} ${o.name}${ns} -o yaml`;
}

function fillTemplate(template: string, o: KubeObjectRef): string {
  const kind = o.plural.replace(/ies$/, 'y').replace(/(ses|xes)$/, (s) => s.slice(0, -2)).replace(/s$/, '');
  const values: Record<string, string> = { namespace: o.namespace ?? '', kind, plural: o.plural, group: o.group || 'core', name: o.name };
  return template.replace(/\{(namespace|kind|plural|group|name)\}/g, (_, k: string) => encodeURIComponent(values[k] ?? ''));
}

/** Where a citation can be seen: its own URL when it has one, else one built from the settings. */
export function citationTarget(c: Citation, s: LinkSettings = {}): CitationTarget {
  if (c.url) return { url: c.url };
  const source = c.source.toLowerCase();
  if (source === 'prometheus') {
    if (s.grafanaUrl && s.grafanaPrometheusDatasource) return { url: grafanaExploreUrl(s.grafanaUrl, s.grafanaPrometheusDatasource, c.ref, c.range) };
    if (s.prometheusUrl) return { url: prometheusGraphUrl(s.prometheusUrl, c.ref, c.range) };
    return {};
  }
  if (source === 'loki') {
    if (s.grafanaUrl && s.grafanaLokiDatasource) return { url: grafanaExploreUrl(s.grafanaUrl, s.grafanaLokiDatasource, c.ref, c.range) };
    return {};
  }
  if (source === 'github') {
    const url = githubWebUrl(s.githubUrl ?? 'https://github.com', c.ref);
    return url ? { url } : {};
  }
  if (source === 'slack') {
    const url = s.slackWorkspaceUrl ? slackPermalink(s.slackWorkspaceUrl, c.ref) : undefined;
    return url ? { url } : {};
  }
  if (source === 'kubernetes') {
    const o = parseObjectRef(c.ref);
    if (!o) return {};
    if (s.kubeConsoleUrl) return { url: fillTemplate(s.kubeConsoleUrl, o) };
    if (s.kubectl === false) return {};
    const command = kubectlGet(o);
    return command ? { command } : {};
  }
  return {};
}

/** The citation with what `citationTarget` found filled in (`url`, or `command`); unchanged otherwise. */
export function linkCitation<C extends Citation>(c: C, s: LinkSettings = {}): C {
  const t = citationTarget(c, s);
  if (t.url && !c.url) return { ...c, url: t.url };
  if (t.command) return { ...c, command: t.command };
  return c;
}
