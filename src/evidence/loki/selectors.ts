/**
 * Stream selectors for a workload under the label conventions log shippers use: Promtail's and the
 * Grafana Agent's Kubernetes configs (`app`, `container`, `job="<namespace>/<name>"`), Kubernetes'
 * recommended `app.kubernetes.io/name` (sanitised to `app_kubernetes_io_name`), Loki 3's derived
 * `service_name`, and, last, the pod name prefix.
 */
import type { LogTarget } from './types.js';

/** A LogQL double-quoted string literal (Go syntax: JSON's escapes are a subset it accepts). */
export function quoteLogQL(value: string): string {
  return JSON.stringify(value);
}

/** Escape RE2 metacharacters so a name can sit inside `=~"…"`. */
export function escapeRegex(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function selector(pairs: [string, '=' | '=~', string][]): string {
  return `{${pairs.map(([k, op, v]) => `${k}${op}${quoteLogQL(v)}`).join(', ')}}`;
}

/** Candidate selectors, most specific convention first. */
export function workloadSelectors(t: LogTarget): string[] {
  const ns: [string, '=', string] = ['namespace', '=', t.namespace];
  const out = [
    selector([ns, ['app', '=', t.workload]]),
    selector([ns, ['app_kubernetes_io_name', '=', t.workload]]),
    selector([ns, ['container', '=', t.workload]]),
    selector([['job', '=', `${t.namespace}/${t.workload}`]]),
    selector([ns, ['service_name', '=', t.service ?? t.workload]]),
  ];
  if (t.service && t.service !== t.workload) out.push(selector([ns, ['app', '=', t.service]]));
  // Deployment pods are `<name>-<hash>-<5>`, StatefulSet pods `<name>-<ordinal>`.
  out.push(selector([ns, ['pod', '=~', `${escapeRegex(t.workload)}-[a-z0-9]+(-[a-z0-9]+)?`]]));
  return [...new Set(out)];
}
