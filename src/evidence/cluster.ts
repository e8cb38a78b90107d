/**
 * Evidence about the cluster around the candidates, read once per investigation: volume usage of
 * their claims, clock offsets and conntrack use of their nodes, consumer lag of the queues the alert or
 * their config names, CoreDNS failures, and the Jobs of CronJob/Job candidates with the logs of their
 * failed pods. Every read is bounded and every failure is a gap.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Redactor } from '../redact/index.js';
import type { JobEvidence } from '../triage/analyzer.js';
import type { ClusterSnapshot } from '../topology/snapshot.js';
import type { Reached } from '../topology/walk.js';
import { mineTemplates } from './logs/drain.js';
import type { KubeReader } from './kubernetes/client.js';
import type { ContainerLogs } from './kubernetes/surroundings.js';
import { appContainer } from './kubernetes/workload-evidence.js';
import { escapeLabelValue, escapeRegex as escapeRegexOnly, type CatalogEntry } from './prometheus/catalog.js';
import type { PrometheusClient } from './prometheus/client.js';
import { gatherMetrics } from './prometheus/gather.js';
import type { MetricSummary } from './prometheus/types.js';

/** A regex literal inside a PromQL double-quoted string: regex metacharacters escaped, then the string's own escapes. */
const escapeRegex = (v: string): string => escapeLabelValue(escapeRegexOnly(v));

export interface ClusterEvidence {
  metrics: MetricSummary[];
  jobs: JobEvidence[];
  gaps: string[];
}

const MAX_JOBS = 3;

export async function gatherClusterEvidence(
  opts: { kube: KubeReader; prometheus?: PrometheusClient; redactor: Redactor; now: Date },
  snapshot: ClusterSnapshot,
  reached: Reached[],
  subjectLabels: Record<string, string>[],
  onset: Date,
): Promise<ClusterEvidence> {
  const gaps: string[] = [];
  const [metrics, jobs] = await Promise.all([
    opts.prometheus ? clusterMetrics(opts.prometheus, snapshot, reached, subjectLabels, onset, opts.now).catch((err) => (gaps.push(`prometheus: ${String(err)}`), [])) : Promise.resolve([]),
    jobEvidence(opts.kube, snapshot, reached, opts.redactor, gaps),
  ]);
  return { metrics, jobs, gaps };
}

async function clusterMetrics(client: PrometheusClient, s: ClusterSnapshot, reached: Reached[], subjectLabels: Record<string, string>[], onset: Date, now: Date): Promise<MetricSummary[]> {
  const namespaces = [...new Set(reached.map((r) => r.ref.namespace).filter((n): n is string => !!n))];
  const nodes = [...new Set(reached.filter((r) => r.ref.kind === 'Node').map((r) => r.ref.name))];
  const entries: CatalogEntry[] = [];
  if (namespaces.length) {
    const ns = namespaces.map(escapeRegex).join('|');
    entries.push({
      id: 'pvc_usage',
      title: 'Volume used / capacity',
      template: `max by (namespace, persistentvolumeclaim) (kubelet_volume_stats_used_bytes{namespace=~"${ns}"} / kubelet_volume_stats_capacity_bytes{namespace=~"${ns}"})`,
      unit: 'ratio',
      badWhen: 'high',
      threshold: 0.95,
    });
    entries.push({ id: 'pvc_used_bytes', title: 'Volume used bytes', template: `max by (namespace, persistentvolumeclaim) (kubelet_volume_stats_used_bytes{namespace=~"${ns}"})`, unit: 'bytes', badWhen: 'high' });
    entries.push({ id: 'pvc_capacity_bytes', title: 'Volume capacity bytes', template: `max by (namespace, persistentvolumeclaim) (kubelet_volume_stats_capacity_bytes{namespace=~"${ns}"})`, unit: 'bytes', badWhen: 'low' });
    entries.push({
      id: 'process_fds',
      title: 'Open file descriptors / limit',
      template: `max by (namespace, pod) (process_open_fds{namespace=~"${ns}"} / process_max_fds{namespace=~"${ns}"})`,
      unit: 'ratio',
      badWhen: 'high',
      threshold: 0.9,
    });
    // The two sides of that ratio, so a finding can say "4096 of 4096", not only "100%".
    entries.push({ id: 'process_open_fds', title: 'Open file descriptors', template: `max by (namespace, pod) (process_open_fds{namespace=~"${ns}"})`, unit: 'count', badWhen: 'high' });
    entries.push({ id: 'process_max_fds', title: 'File descriptor limit', template: `max by (namespace, pod) (process_max_fds{namespace=~"${ns}"})`, unit: 'count', badWhen: 'low' });
  }
  // node-exporter's `instance` is the node's address or its name, depending on relabelling: ask by both.
  const addresses = s.nodes.filter((n) => !nodes.length || nodes.includes(n.metadata?.name ?? '')).flatMap((n) => [n.metadata?.name ?? '', ...(n.status?.addresses ?? []).map((a) => a.address)]).filter(Boolean);
  if (addresses.length) {
    const inst = addresses.map(escapeRegex).join('|');
    entries.push({
      id: 'node_clock_offset',
      title: 'Node clock offset (seconds)',
      template: `max by (instance) (abs(node_timex_offset_seconds{instance=~"(${inst})(:[0-9]+)?"})) or max by (node) (abs(node_timex_offset_seconds{node=~"${inst}"}))`,
      unit: 'seconds',
      badWhen: 'high',
      threshold: 1,
    });
    // node_timex_offset_seconds is the kernel's residual correction (±0.5 s at most); an NTP exporter's offset shows a stepped clock, sign kept.
    entries.push({
      id: 'node_ntp_offset',
      title: 'Node clock offset from NTP (seconds)',
      template: `max by (instance) (node_ntp_offset_seconds{instance=~"(${inst})(:[0-9]+)?"}) or max by (node) (node_ntp_offset_seconds{node=~"${inst}"})`,
      unit: 'seconds',
      badWhen: 'high',
      threshold: 1,
    });
    entries.push({
      id: 'node_conntrack',
      title: 'Node conntrack entries / limit',
      template: `max by (instance) (node_nf_conntrack_entries{instance=~"(${inst})(:[0-9]+)?"} / node_nf_conntrack_entries_limit{instance=~"(${inst})(:[0-9]+)?"}) or max by (node) (node_nf_conntrack_entries{node=~"${inst}"} / node_nf_conntrack_entries_limit{node=~"${inst}"})`,
      unit: 'ratio',
      badWhen: 'high',
      threshold: 0.9,
    });
    // The absolute numbers too: "262144 of 262144" is what a responder compares with nf_conntrack_max.
    entries.push({ id: 'node_conntrack_entries', title: 'Node conntrack entries', template: `max by (instance) (node_nf_conntrack_entries{instance=~"(${inst})(:[0-9]+)?"}) or max by (node) (node_nf_conntrack_entries{node=~"${inst}"})`, unit: 'entries', badWhen: 'high' });
    entries.push({ id: 'node_conntrack_limit', title: 'Node conntrack limit', template: `max by (instance) (node_nf_conntrack_entries_limit{instance=~"(${inst})(:[0-9]+)?"}) or max by (node) (node_nf_conntrack_entries_limit{node=~"${inst}"})`, unit: 'entries', badWhen: 'low' });
  }
  const groups = [...new Set(subjectLabels.flatMap((l) => [l['consumergroup'], l['consumer_group'], l['group']]).filter((x): x is string => !!x))];
  const topics = [...new Set(subjectLabels.flatMap((l) => [l['topic'], l['messaging_destination_name']]).filter((x): x is string => !!x))];
  const queues = [...new Set(subjectLabels.map((l) => l['queue']).filter((x): x is string => !!x))];
  const lagFilter = [groups.length ? `consumergroup=~"${groups.map(escapeRegex).join('|')}"` : '', topics.length ? `topic=~"${topics.map(escapeRegex).join('|')}"` : ''].filter(Boolean).join(',');
  entries.push({ id: 'queue_lag', title: 'Kafka consumer group lag', template: `sum by (consumergroup, topic) (kafka_consumergroup_lag{${lagFilter}})`, unit: 'messages', badWhen: 'high' });
  entries.push({ id: 'queue_lag_sum', title: 'Kafka consumer group lag (summed)', template: `sum by (consumergroup, topic) (kafka_consumergroup_lag_sum{${lagFilter}})`, unit: 'messages', badWhen: 'high' });
  entries.push({
    id: 'queue_depth',
    title: 'RabbitMQ messages ready',
    template: `sum by (queue, vhost) (rabbitmq_queue_messages_ready${queues.length ? `{queue=~"${queues.map(escapeRegex).join('|')}"}` : ''})`,
    unit: 'messages',
    badWhen: 'high',
  });
  entries.push({ id: 'queue_consumers', title: 'RabbitMQ consumers', template: `sum by (queue, vhost) (rabbitmq_queue_consumers${queues.length ? `{queue=~"${queues.map(escapeRegex).join('|')}"}` : ''})`, unit: 'consumers', badWhen: 'low' });
  entries.push({
    id: 'coredns_errors',
    title: 'CoreDNS SERVFAIL/REFUSED answers per second',
    template: 'sum by (rcode) (rate(coredns_dns_responses_total{rcode=~"SERVFAIL|REFUSED"}[1m]))',
    unit: 'req/s',
    badWhen: 'high',
  });
  entries.push({ id: 'cert_expiry', title: 'Certificate expiry (cert-manager)', template: 'min by (name, namespace) (certmanager_certificate_expiration_timestamp_seconds) - time()', unit: 'seconds', badWhen: 'low', threshold: 0 });
  entries.push({ id: 'probe_success', title: 'Blackbox probe success', template: 'min by (instance) (probe_success)', unit: 'ratio', badWhen: 'low', threshold: 0.5 });
  const { summaries } = await gatherMetrics(client, { namespace: namespaces[0] ?? '', workload: '' }, onset, { now, catalog: entries, maxSeries: 20 });
  return summaries.filter((m) => m.status !== 'no_data' || m.id === 'queue_lag');
}

/** The Jobs of each CronJob/Job candidate, newest first, their pods, and the logs of the newest failed pod. */
async function jobEvidence(reader: KubeReader, s: ClusterSnapshot, reached: Reached[], redactor: Redactor, gaps: string[]): Promise<JobEvidence[]> {
  const owners = reached.filter((r) => r.ref.kind === 'CronJob' || r.ref.kind === 'Job');
  return Promise.all(
    owners.slice(0, 4).map(async (r) => {
      const ns = r.ref.namespace ?? '';
      const jobs = s.jobs
        .filter((j) => j.metadata?.namespace === ns && (r.ref.kind === 'Job' ? j.metadata?.name === r.ref.name : (j.metadata?.ownerReferences ?? []).some((o) => o.kind === 'CronJob' && o.name === r.ref.name)))
        .sort((a, b) => new Date(b.metadata?.creationTimestamp ?? 0).getTime() - new Date(a.metadata?.creationTimestamp ?? 0).getTime())
        .slice(0, 6);
      const names = new Set(jobs.map((j) => j.metadata?.name));
      const pods = s.pods.filter((p) => p.metadata?.namespace === ns && (p.metadata?.ownerReferences ?? []).some((o) => o.kind === 'Job' && names.has(o.name)));
      const failed = pods.filter(podFailed).slice(0, MAX_JOBS);
      const logs: ContainerLogs[] = [];
      for (const p of failed) {
        const container = failedContainer(p) ?? appContainer(p);
        if (!container) continue;
        try {
          const text = await reader.readPodLog(ns, p.metadata!.name!, { container, tailLines: 300, timestamps: true, limitBytes: 256 * 1024 });
          const stamped = String(text).split('\n').filter(Boolean).map((l) => {
            const m = /^(\d{4}-\d{2}-\d{2}T\S+)\s(.*)$/.exec(l);
            return m ? { ts: new Date(m[1]!), line: m[2]! } : { line: l };
          });
          const redacted = redactor.redactLines(stamped.map((l) => l.line));
          const lines = stamped.map((l, i) => ({ ...l, line: redacted[i]! }));
          logs.push({ pod: p.metadata!.name!, container, previous: false, patterns: mineTemplates(lines, { maxPatterns: 15 }), tail: lines.slice(-8).map((l) => l.line) });
        } catch (err) {
          gaps.push(`get pods/log ${ns}/${p.metadata?.name}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
        }
      }
      return { owner: { kind: r.ref.kind as 'CronJob' | 'Job', namespace: ns, name: r.ref.name }, jobs, pods, logs };
    }),
  );
}

function podFailed(p: V1Pod): boolean {
  return p.status?.phase === 'Failed' || [...(p.status?.containerStatuses ?? []), ...(p.status?.initContainerStatuses ?? [])].some((c) => (c.state?.terminated?.exitCode ?? 0) !== 0 || (c.lastState?.terminated?.exitCode ?? 0) !== 0);
}

function failedContainer(p: V1Pod): string | undefined {
  return [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])].find((c) => (c.state?.terminated?.exitCode ?? 0) !== 0 || (c.lastState?.terminated?.exitCode ?? 0) !== 0)?.name;
}

export { escapeLabelValue };
