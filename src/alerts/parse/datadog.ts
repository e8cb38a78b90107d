/**
 * Datadog monitor notifications in Slack [docs, unverified; fixtures are hand-written]. The title is
 * `[<State> on {<scope tags>}] [P<n>] <monitor name>` (State: Triggered, Warn, Recovered, Re-Triggered, No Data,
 * Re-Notify) as a header block, attachment title or text, followed by the message and a `Tags:` list of
 * `key:value` tags. Kubernetes tags are renamed to the label names the rest of Vigil uses.
 */
import type { AlertParser, ParseContext, ParseResult } from './types.js';
import { buildAlert } from './build.js';

export const datadogParser: AlertParser = {
  name: 'datadog',
  detect({ msg, flat }) {
    return (
      /datadog/i.test(msg.username ?? '') ||
      /datadog/i.test(msg.bot_profile?.name ?? '') ||
      flat.links.some((link) => /\.datadoghq\.(com|eu)\//.test(link))
    );
  },
  parse: parseDatadogPost,
};

const TITLE = /^\s*\[([A-Za-z -]+?)(?: on \{([^}]*)\})?\]\s*(?:\[(P\d)\]\s*)?(.*)$/;
const RESOLVED_STATES = /^(recovered|ok|resolved)$/i;
const TAG_NAMES: Record<string, string> = {
  kube_namespace: 'namespace',
  kube_deployment: 'deployment',
  kube_stateful_set: 'statefulset',
  kube_daemon_set: 'daemonset',
  kube_cronjob: 'cronjob',
  kube_job: 'job_name',
  kube_service: 'service',
  kube_cluster_name: 'cluster',
  kube_container_name: 'container',
  container_name: 'container',
  pod_name: 'pod',
  kube_replica_set: 'replicaset',
  persistentvolumeclaim: 'persistentvolumeclaim',
};

function parseDatadogPost(ctx: ParseContext): ParseResult {
  const { flat } = ctx;
  const match = TITLE.exec(flat.headline);
  const monitor = (match?.[4] ?? flat.headline.replace(/^\s*(triggered|recovered|warn):\s*/i, '')).trim();
  if (!monitor) return { kind: 'malformed', reason: 'Datadog post has no monitor title' };
  const state = match?.[1] ?? /^\s*(triggered|recovered|warn)\b/i.exec(flat.headline)?.[1] ?? 'Triggered';
  const labels: Record<string, string> = {};
  const addTags = (list: string): void => {
    for (const tag of list.split(/[,\s]+/)) {
      const at = tag.indexOf(':');
      if (at <= 0) continue;
      const key = tag.slice(0, at).toLowerCase();
      const value = tag.slice(at + 1).trim();
      if (value) labels[TAG_NAMES[key] ?? key] ??= value;
    }
  };
  if (match?.[2]) addTags(match[2]);
  for (const line of flat.lines) {
    const tags = /^\s*\*?tags\*?:\s*(.*)$/i.exec(line);
    if (tags?.[1]) addTags(tags[1]);
  }
  const parts: Parameters<typeof buildAlert>[1] = {
    source: 'datadog',
    status: RESOLVED_STATES.test(state.trim()) ? 'resolved' : 'firing',
    alertName: monitor,
    labels,
  };
  const priority = match?.[3] ?? /^\s*(P\d)\s*$/m.exec(flat.lines.join('\n'))?.[1];
  if (priority) parts.severity = priority.toLowerCase();
  else if (/^warn/i.test(state)) parts.severity = 'warning';
  const monitorLink = flat.links.find((link) => /\/monitors\/\d+/.test(link));
  if (monitorLink) parts.link = monitorLink;
  return { kind: 'alert', alert: buildAlert(ctx, parts) };
}
