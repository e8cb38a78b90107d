/**
 * `clock-skew`: a node's clock is wrong, and the candidates' pods on it reject what is valid elsewhere:
 * tokens "used before issued" / "not valid yet" (`iat`/`nbf` in the future of a slow clock), certificates
 * "not yet valid" or "expired", signed requests refused as skewed.
 *
 * Measures, best first:
 * - node-exporter's offset, the cluster summary `node_clock_offset` (series labelled `instance` =
 *   `<node address>:9100` or the node name, or `node`), over 1 s; summaries of `node_ntp_offset_seconds`
 *   (the ntp collector: reference minus local clock, the one that shows a free-running clock) and of
 *   chrony's exporter are read the same way when the investigation gathered them;
 * - the node's kubelet events: the kubelet stamps `firstTimestamp` with its own clock, the API server
 *   stamps `metadata.creationTimestamp` with the control plane's, normally within a second; the lower
 *   median of the newest differences is the offset (a positive one: the node is behind);
 * - a container that "started" (kubelet clock) before its pod was scheduled (control-plane clock): the
 *   node is behind by at least the difference (a lower bound, `skewIsLowerBound`).
 * Corroboration: candidate log lines about time, ideally only from pods on that node.
 *
 * Status: a measure over the threshold + time-validation errors from pods on that node → `supported`;
 * a measure alone → `open` (a skew nothing complains about may not be this alert); time errors alone,
 * localised to one node → `open`. A skewed node that runs none of the candidates' pods is `unrelated`.
 * No mitigation: restoring time sync (chrony/timesyncd) or cordoning the node is a human call; restarting
 * the pods puts them back on the same clock.
 *
 * Facts: `node`, `skewSeconds` (rounded integer seconds), `direction` (`behind` | `ahead` when known),
 * `podsOnNode`, `skewSource` (`metric` | `event_timestamps` | `container_start`), `skewIsLowerBound`.
 */
import type { CoreV1Event, V1Node, V1Pod } from '@kubernetes/client-node';
import type { MetricSummary, SeriesSummary } from '../../evidence/prometheus/types.js';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime } from '../time.js';
import type { Finding } from '../types.js';
import { allEvents, clip, eventTime, logHits, type LogHit } from './common.js';
import { allNodes, candidatePods, dedupeRefs, isBound, logHitEvidence, nodeScope, type CandidatePod } from './node-health.js';

const NAME = 'clock-skew';
const DEFAULT_THRESHOLD_S = 1;
/** Event timestamps are whole seconds and delivery takes a moment: less than this is not a skew. */
const EVENT_SKEW_MIN_S = 3;
/** A container start this far before its pod was scheduled is not rounding. */
const START_SKEW_MIN_S = 5;
const EVENTS_SAMPLED = 6;

/**
 * What runtimes log when the local clock disagrees with the issuer's: golang-jwt ("token used before
 * issued", "token is not valid yet"), PyJWT ("The token is not yet valid (iat|nbf)", ImmatureSignatureError),
 * jsonwebtoken ("jwt not active", NotBeforeError), jjwt ("JWT must not be accepted before …"), Go/OpenSSL
 * x509 ("certificate has expired or is not yet valid"), Kerberos ("Clock skew too great"), AWS SigV4
 * ("Signature not yet current", RequestTimeTooSkewed), and plain "clock skew".
 */
const TIME_ERRORS = new RegExp(
  [
    'used before issued',
    'not valid yet',
    'not yet valid',
    'jwt not active',
    'NotBeforeError',
    'ImmatureSignature',
    'must not be accepted before',
    'issued in the future',
    '\\b(iat|nbf)\\b.{0,60}(invalid|future|reject|fail|not yet|before)',
    '(invalid|future|reject\\w*|fail\\w*)\\W{1,3}(claim\\W{1,3})?\\b(iat|nbf)\\b',
    'jwt.{0,80}\\bfuture\\b',
    '\\bfuture\\b.{0,40}jwt',
    // Generic wordings only with a verdict: configs print "allowed clock skew: 30s" at startup.
    'clock skew (too great|detected|exceed\\w*|is too (large|big|high)|of \\d)',
    'clock.{0,20}(drift detected|skewed|out of sync|is behind|is ahead)',
    'time skew (detected|too|exceed\\w*)',
    'RequestTimeTooSkewed',
    'Signature not yet current',
  ].join('|'),
  'i',
);
/** Errors of a clock that runs behind: the other side's times lie in its future. */
const BEHIND = /used before issued|not valid yet|not yet valid|jwt not active|NotBeforeError|Immature|must not be accepted before|issued in the future|\bfuture\b|\bnbf\b|Signature not yet current/i;

interface MetricSkew {
  seconds: number;
  current: number | null;
  peak: number;
  since?: Date;
  direction?: 'behind' | 'ahead';
  summary: MetricSummary;
  series: SeriesSummary;
}

interface EventSkew {
  /** Positive: the node's clock is behind the control plane's. */
  seconds: number;
  events: CoreV1Event[];
}

interface StartSkew {
  seconds: number;
  pod: V1Pod;
  scheduledAt: Date;
  startedAt: Date;
}

/** Summaries that measure a node's clock offset: the gathered `node_clock_offset`, and ntp/chrony offsets when present. */
function offsetSummaries(input: ClusterTriageInput): MetricSummary[] {
  const all = [...input.metrics, ...input.inputs.flatMap((i) => i.metrics?.summaries ?? [])];
  const seen = new Set<MetricSummary>();
  return all.filter((m) => {
    if (seen.has(m) || m.status !== 'success') return false;
    seen.add(m);
    return m.id === 'node_clock_offset' || /node_ntp_offset_seconds|node_timex_offset_seconds|chrony_tracking_(last_offset|system_time)_seconds/.test(m.query);
  });
}

/** `10.40.0.12:9100`, `node-2:9100`, `node-2`, `node-2.dc1.internal` → the Node (by name or by any of its addresses). */
export function nodeOfInstance(nodes: V1Node[], labels: Record<string, string>): V1Node | undefined {
  const values = [labels['node'], labels['instance'], labels['nodename'], labels['kubernetes_node']].filter((x): x is string => !!x);
  for (const raw of values) {
    const host = raw.replace(/^\[?([^\]]+?)\]?(:\d+)?$/, '$1');
    const n = nodes.find((x) => x.metadata?.name === host || (x.status?.addresses ?? []).some((a) => a.address === host));
    if (n) return n;
    const short = host.split('.')[0] ?? '';
    if (/[a-z]/i.test(short)) {
      const m = nodes.find((x) => x.metadata?.name?.split('.')[0] === short);
      if (m) return m;
    }
  }
  return undefined;
}

function metricSkews(input: ClusterTriageInput, nodes: V1Node[]): Map<string, MetricSkew> {
  const best = new Map<string, MetricSkew>();
  for (const summary of offsetSummaries(input)) {
    const threshold = summary.threshold ?? DEFAULT_THRESHOLD_S;
    for (const series of summary.series) {
      const name = nodeOfInstance(nodes, series.metric)?.metadata?.name;
      if (!name) continue;
      const peak = Math.max(Math.abs(series.max ?? 0), Math.abs(series.min ?? 0));
      if (peak < threshold) continue;
      const current = series.last === null ? null : Math.abs(series.last);
      const seconds = current !== null && current >= threshold ? current : peak;
      // ntp/chrony offsets are reference − local: positive means the local clock is behind. abs() drops the sign.
      const signed = series.last ?? series.max ?? 0;
      const direction = /abs\(/.test(summary.query) || !/node_ntp_offset_seconds|chrony_tracking/.test(summary.query) ? undefined : signed > 0 ? 'behind' : 'ahead';
      const shift = [...series.changePoints].reverse().find((c) => Math.abs(c.after) >= threshold && Math.abs(c.before) < threshold);
      const since = shift?.at ?? series.deviationStart;
      const prev = best.get(name);
      if (prev && prev.seconds >= seconds) continue;
      best.set(name, { seconds, current, peak, ...(since ? { since } : {}), ...(direction ? { direction } : {}), summary, series });
    }
  }
  return best;
}

/** Nodes whose offset series stayed under the threshold. */
function metricHealthy(input: ClusterTriageInput, nodes: V1Node[]): Set<string> {
  const out = new Set<string>();
  for (const summary of offsetSummaries(input)) {
    const threshold = summary.threshold ?? DEFAULT_THRESHOLD_S;
    for (const series of summary.series) {
      const n = nodeOfInstance(nodes, series.metric)?.metadata?.name;
      if (n && Math.max(Math.abs(series.max ?? 0), Math.abs(series.min ?? 0)) < threshold) out.add(n);
    }
  }
  return out;
}

/** The kubelet's events of a node: its clock in `firstTimestamp`, the API server's in `creationTimestamp`. */
function eventSkews(events: CoreV1Event[]): Map<string, EventSkew> {
  const byNode = new Map<string, CoreV1Event[]>();
  for (const e of events) {
    const host = e.source?.component === 'kubelet' ? e.source.host : e.reportingComponent === 'kubelet' ? e.reportingInstance : undefined;
    if (!host || !e.firstTimestamp || !e.metadata?.creationTimestamp) continue;
    // Only single occurrences: a recurring event the kubelet re-creates after the API's event TTL keeps its old firstTimestamp.
    if ((e.count ?? 1) > 1 || (e.lastTimestamp && Math.abs(new Date(e.lastTimestamp).getTime() - new Date(e.firstTimestamp).getTime()) > 2000)) continue;
    byNode.set(host, [...(byNode.get(host) ?? []), e]);
  }
  const out = new Map<string, EventSkew>();
  for (const [node, evs] of byNode) {
    // The newest events: a clock that was stepped (a reboot on a bad RTC) only shows after the step.
    const newest = evs.sort((a, b) => new Date(b.metadata!.creationTimestamp!).getTime() - new Date(a.metadata!.creationTimestamp!).getTime()).slice(0, EVENTS_SAMPLED);
    if (newest.length < 2) continue;
    const diffs = newest.map((e) => ({ e, d: (new Date(e.metadata!.creationTimestamp!).getTime() - new Date(e.firstTimestamp!).getTime()) / 1000 })).sort((a, b) => a.d - b.d);
    const est = diffs[Math.floor((diffs.length - 1) / 2)]!.d;
    const agreeing = diffs.filter((x) => Math.abs(x.d - est) <= 2);
    if (Math.abs(est) < EVENT_SKEW_MIN_S || agreeing.length < 2) continue;
    out.set(node, { seconds: est, events: agreeing.map((x) => x.e) });
  }
  return out;
}

/** A container started (kubelet clock) before the scheduler bound its pod (control-plane clock): the node is behind by at least that. */
function startSkew(events: CoreV1Event[], pods: CandidatePod[]): StartSkew | undefined {
  let worst: StartSkew | undefined;
  for (const { pod } of pods) {
    const ns = pod.metadata?.namespace;
    const name = pod.metadata?.name;
    const cond = (pod.status?.conditions ?? []).find((c) => c.type === 'PodScheduled' && c.status === 'True');
    const ev = events.find((e) => e.reason === 'Scheduled' && e.involvedObject?.name === name && (e.involvedObject?.namespace ?? e.metadata?.namespace) === ns);
    const scheduled = [ev ? eventTime(ev) : undefined, cond?.lastTransitionTime ? new Date(cond.lastTransitionTime) : undefined].filter((d): d is Date => !!d).sort((a, b) => b.getTime() - a.getTime())[0];
    if (!scheduled) continue;
    for (const c of pod.status?.containerStatuses ?? []) {
      const started = c.state?.running?.startedAt ?? c.state?.terminated?.startedAt;
      if (!started) continue;
      const lag = (scheduled.getTime() - new Date(started).getTime()) / 1000;
      if (lag >= START_SKEW_MIN_S && (!worst || lag > worst.seconds)) worst = { seconds: lag, pod, scheduledAt: scheduled, startedAt: new Date(started) };
    }
  }
  return worst;
}

export const clockSkew: ClusterAnalyzer = {
  name: NAME,
  analyze(input: ClusterTriageInput): Finding[] {
    const nodes = allNodes(input);
    if (!nodes.length) return [];
    const pods = candidatePods(input);
    const podByName = new Map<string, V1Pod>();
    for (const p of [...pods.map((c) => c.pod), ...input.cluster.snapshot.pods]) {
      const k = `${p.metadata?.namespace}/${p.metadata?.name}`;
      if (!podByName.has(k)) podByName.set(k, p);
    }
    const nodeOfHit = (h: LogHit) => (h.pod ? podByName.get(`${h.workload.namespace}/${h.pod}`)?.spec?.nodeName : undefined);
    const events = allEvents(input);
    const hits = logHits(input.inputs, TIME_ERRORS);
    const metrics = metricSkews(input, nodes);
    const fine = metricHealthy(input, nodes);
    const fromEvents = eventSkews(events);

    const names = new Set<string>([...metrics.keys(), ...fromEvents.keys(), ...hits.map(nodeOfHit).filter((n): n is string => !!n)]);
    const out: Finding[] = [];
    for (const name of names) {
      if (!nodes.some((n) => n.metadata?.name === name)) continue;
      const metric = metrics.get(name);
      const evSkew = fromEvents.get(name);
      const on = pods.filter((p) => p.pod.spec?.nodeName === name && isBound(p.pod));
      const component: ComponentRef = { kind: 'Node', name };
      const key = `${NAME}:/Node/${name}`;
      const metricEv: Evidence | undefined = metric
        ? {
            kind: 'metric',
            summary: `${metric.summary.title} for ${name} (${labelText(metric.series.metric)}): ${fmtSeconds(metric.current ?? metric.peak)} now, peak ${fmtSeconds(metric.peak)}${metric.series.baseline ? `, baseline ${fmtSeconds(Math.abs(metric.series.baseline.median))}` : ''}${metric.since ? `, over the threshold since ${clockTime(metric.since)}` : ''}`,
            citation: metric.summary.citation,
            ...(metric.since ? { observedAt: metric.since } : {}),
            detail: { metric: metric.series.metric, last: metric.series.last, max: metric.series.max, min: metric.series.min, baseline: metric.series.baseline },
          }
        : undefined;
      const evEv: Evidence | undefined = evSkew ? eventSkewEvidence(evSkew, name) : undefined;

      if (!on.length) {
        if (!metric) continue;
        const seconds = metric.seconds;
        out.push({
          key,
          analyzer: NAME,
          family: 'clock-skew',
          status: 'unrelated',
          confidence: 0.05,
          title: `node ${name}'s clock is off by ${Math.round(seconds)} s`,
          component,
          mechanism: `Node ${name}'s clock is off by ${fmtSeconds(seconds)}.`,
          reason: 'it runs none of the pods of the workloads this alert reaches',
          facts: { node: name, skewSeconds: Math.round(seconds), podsOnNode: 0 },
          supporting: [],
          refuting: [metricEv!],
        });
        continue;
      }

      const onNode = hits.filter((h) => nodeOfHit(h) === name);
      const elsewhere = hits.filter((h) => {
        const n = nodeOfHit(h);
        return n !== undefined && n !== name;
      });
      // Loki hits name the workload, not the pod: they count for a workload with pods on this node.
      const workloadOnly = hits.filter((h) => !h.pod && on.some((p) => p.workload.namespace === h.workload.namespace && p.workload.name === h.workload.name));
      const onNodeCount = onNode.reduce((n, h) => n + h.count, 0);
      const elsewhereCount = elsewhere.reduce((n, h) => n + h.count, 0);
      const localised = onNode.length > 0 && elsewhereCount < onNodeCount;
      // The errors must come from this node's pods (or, for Loki, from their workload) and not mostly from elsewhere.
      const corroborating = localised || (onNode.length === 0 && elsewhere.length === 0) || (onNode.length > 0 && (metric || evSkew)) ? [...onNode, ...workloadOnly] : [];
      const start = startSkew(events, on);
      if (!metric && !evSkew && !start && !localised) continue; // errors everywhere, no measure: not one node's clock
      if (!metric && !corroborating.length) continue; // event stamps alone (late delivery after a partition looks the same): too weak to report

      // The skew: the metric, else the kubelet's event stamps, else the container-start lower bound.
      const source = metric ? 'metric' : evSkew ? 'event_timestamps' : start ? 'container_start' : undefined;
      const seconds = metric ? metric.seconds : evSkew ? Math.abs(evSkew.seconds) : start ? start.seconds : undefined;
      const direction: 'behind' | 'ahead' | undefined =
        metric?.direction ?? (evSkew ? (evSkew.seconds > 0 ? 'behind' : 'ahead') : start ? 'behind' : corroborating.some((h) => BEHIND.test(h.template) || BEHIND.test(h.example)) ? 'behind' : undefined);

      const supporting: Evidence[] = [];
      if (metricEv) supporting.push(metricEv);
      if (evEv) supporting.push(evEv);
      if (start) supporting.push(startEvidence(start, name));
      supporting.push(...corroborating.slice(0, 3).map((h) => logHitEvidence(h, `time-validation errors${h.pod ? ` on ${name}` : ''}`)));
      const refuting: Evidence[] = [];
      if (elsewhere.length) {
        const e = elsewhere[0]!;
        const ev = { ...logHitEvidence(e), summary: `${logHitEvidence(e).summary} — on node ${nodeOfHit(e)}` };
        (elsewhereCount >= onNodeCount ? refuting : supporting).push(ev);
      }
      const others = [...fine].filter((n) => n !== name);
      if (metric && others.length) supporting.push({ kind: 'metric', summary: `other nodes' clocks within ${metric.summary.threshold ?? DEFAULT_THRESHOLD_S} s: ${others.slice(0, 6).join(', ')}`, citation: metric.summary.citation });

      let status: Finding['status'];
      let confidence: number;
      if (metric || evSkew) {
        status = corroborating.length ? 'supported' : 'open';
        confidence = !corroborating.length ? (metric ? 0.5 : 0.4) : localised && !elsewhere.length ? (metric ? 0.9 : 0.85) : localised ? 0.8 : 0.65;
      } else if (start) {
        status = localised ? 'supported' : 'open';
        confidence = localised ? 0.75 : 0.4;
      } else {
        status = 'open';
        confidence = 0.45;
      }
      // A replica that arrived on the bad clock issues tokens every other replica finds "not valid yet":
      // then the errors come from elsewhere, yet begin when that pod started. (Errors that were there
      // before it came are the healthy nodes' own trouble.) The pod's start is stamped by the skewed
      // kubelet, so the comparison allows the skew itself.
      const firstError = hits.map((h) => h.first?.getTime()).filter((x): x is number => x !== undefined).sort((a, b) => a - b)[0];
      const newcomer = on.find((p) => {
        const started = p.pod.status?.startTime ? new Date(p.pod.status.startTime).getTime() : undefined;
        if (started === undefined || firstError === undefined || !metric) return false;
        const slack = metric.seconds * 1000 + 60_000;
        return (!metric.since || started >= metric.since.getTime() - slack) && firstError >= started - slack && firstError - started <= 30 * 60_000 &&
          hits.some((h) => h.workload.namespace === p.workload.namespace && h.workload.name === p.workload.name);
      });
      const issuesAhead = !!metric && metric.seconds >= 30 && others.length > 0 && !!newcomer;
      if (issuesAhead && status !== 'supported') {
        status = 'supported';
        confidence = 0.86;
        supporting.push(...hits.filter((h) => !corroborating.includes(h)).slice(0, 2).map((h) => logHitEvidence(h, 'time-validation errors of the same workload')));
        refuting.length = 0;
      }
      // Pods on other nodes fail as often: evidence both ways.
      if (status === 'supported' && refuting.length && !issuesAhead) {
        status = 'inconclusive';
        confidence = Math.min(confidence, 0.5);
      }

      const workloads = dedupeRefs([...on].sort((a, b) => Number(b.analysed) - Number(a.analysed)).map((p) => p.workload));
      const who = workloads.map((w) => `${w.kind.toLowerCase()}/${w.name}`).join(', ');
      const podNames = on.map((p) => p.pod.metadata?.name).join(', ');
      const skewText = seconds !== undefined ? `${source === 'container_start' ? 'at least ' : ''}${fmtSeconds(seconds)} ${direction ?? 'off'}` : 'wrong';
      const errorCount = corroborating.reduce((n, h) => n + h.count, 0);
      const facts: Record<string, string | number | boolean> = { node: name, podsOnNode: on.length };
      if (seconds !== undefined) facts['skewSeconds'] = Math.round(seconds);
      if (source) facts['skewSource'] = source;
      if (source === 'container_start') facts['skewIsLowerBound'] = true;
      if (direction) facts['direction'] = direction;
      out.push({
        key,
        analyzer: NAME,
        family: 'clock-skew',
        status,
        confidence,
        title: `node ${name}'s clock is ${skewText}${corroborating.length ? `: pods of ${who} on it fail time checks ("${phrase(corroborating[0]!)}")` : ''}`,
        component,
        mechanism:
          `Node ${name}'s clock is ${skewText}` +
          (metric ? `${metric.since ? ` since ${clockTime(metric.since)}` : ''} (measured: ${metric.summary.title.toLowerCase()})` : evSkew ? ` (its kubelet's event timestamps against the API server's)` : start ? ` (a container on it started before its pod was scheduled)` : '') +
          `; it runs ${on.length} pod(s) of ${who} (${podNames}).` +
          (evSkew && metric ? ` Its kubelet's event timestamps agree (${Math.round(Math.abs(evSkew.seconds))} s ${evSkew.seconds > 0 ? 'behind' : 'ahead'}).` : '') +
          (corroborating.length
            ? ` Those pods log time-validation errors (${errorCount}×, "${clip(corroborating[0]!.template, 120)}")${elsewhere.length ? `; pods on other nodes log them ${elsewhereCount >= onNodeCount ? 'as often, so the clock may not be the whole story' : 'far less'}` : onNode.length ? ', pods on other nodes do not' : ''}: ` +
              (direction === 'behind' ? 'tokens and certificates issued by correct clocks look issued in the future there.' : direction === 'ahead' ? 'valid tokens and certificates look expired there.' : 'what other nodes accept is refused there.')
            : seconds !== undefined
              ? ' No log line of the candidates complains about time, so the skew may not be what the alert sees.'
              : '') +
          (!metric && !offsetSummaries(input).length ? ' No node clock-offset metric was available (node-exporter ntp/timex collectors).' : '') +
          (!metric && fine.has(name) ? ` The clock-offset metric reads normal for ${name}: node_timex_offset_seconds is the kernel PLL's residual, fed only by a running NTP daemon, and cannot show a clock that was stepped or runs free (node_ntp_offset_seconds, the ntp collector, can).` : '') +
          ' Restoring time sync on the node (chrony/timesyncd, then stepping the clock) or cordoning it and moving the pods is a human decision; restarting the pods puts them back on the same clock.',
        scope: `pods of ${who} on ${name} fail what depends on time; their replicas on other nodes are fine`,
        affected: nodeScope(input, workloads),
        facts,
        supporting,
        refuting,
      });
    }
    return out;
  },
};

/** The words of a log line that say what failed (`used before issued`), for a title. */
function phrase(h: LogHit): string {
  const m = TIME_ERRORS.exec(h.example) ?? TIME_ERRORS.exec(h.template);
  return clip(m?.[0] ?? h.template, 60);
}

function eventSkewEvidence(s: EventSkew, node: string): Evidence {
  const e = s.events[0]!;
  return {
    kind: 'event',
    summary: `kubelet events of ${node} are stamped ${Math.round(Math.abs(s.seconds))} s ${s.seconds > 0 ? 'before' : 'after'} the API server recorded them (${s.events.length} events, e.g. ${e.reason} firstTimestamp ${clockTime(new Date(e.firstTimestamp!))}, created ${clockTime(new Date(e.metadata!.creationTimestamp!))}): the node's clock is ${s.seconds > 0 ? 'behind' : 'ahead'}`,
    citation: objectCitation('Event', e.metadata?.namespace ?? e.involvedObject?.namespace, e.metadata?.name ?? '?'),
    observedAt: new Date(e.metadata!.creationTimestamp!),
    detail: { events: s.events.map((x) => `${x.metadata?.namespace}/${x.metadata?.name}`), seconds: s.seconds },
  };
}

function startEvidence(s: StartSkew, node: string): Evidence {
  return {
    kind: 'object',
    summary: `pod ${s.pod.metadata?.name} on ${node}: container startedAt ${clockTime(s.startedAt)} (kubelet clock) is ${Math.round(s.seconds)} s before the pod was scheduled at ${clockTime(s.scheduledAt)} (control-plane clock)`,
    citation: objectCitation('Pod', s.pod.metadata?.namespace, s.pod.metadata?.name ?? '?', 'status.containerStatuses'),
    observedAt: s.scheduledAt,
  };
}

function labelText(m: Record<string, string>): string {
  return ['instance', 'node'].filter((k) => m[k]).map((k) => `${k}="${m[k]}"`).join(', ') || 'series';
}

function fmtSeconds(x: number): string {
  return Math.abs(x) >= 10 ? `${Math.round(x)} s` : `${Number(x.toPrecision(3))} s`;
}
