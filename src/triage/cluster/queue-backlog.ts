/**
 * `queue-backlog`: a queue backs up because its consumers stopped consuming (or producers flood it).
 *
 * The symptom is the broker's own gauge, read once per investigation: kafka_exporter's
 * `kafka_consumergroup_lag{consumergroup, topic}` (summaries `queue_lag` / `queue_lag_sum`) or RabbitMQ's
 * `rabbitmq_queue_messages_ready{queue, vhost}` (`queue_depth`, with `queue_consumers`), deviating up
 * from its baseline before (or at) the onset. The consumer is the candidate workload whose env values or
 * args name the consumer group, topic or queue (or whose name does); why it does not consume is read
 * from the cluster, in this order:
 * - `autoscaler_at_zero`: 0 replicas under a KEDA ScaledObject (paused at 0, a trigger that watches
 *   another topic/queue, an activation threshold above the lag, a scaler in error) or an HPA at 0;
 * - `scaled_to_zero`: `spec.replicas` 0, written by hand (managedFields say who and when);
 * - `poison_message`: the consumer's logs repeat a deserialization / processing error on the same
 *   partition and offset (or message id) again and again: the head-of-line record blocks the partition;
 * - `crash_loop`: its containers are in CrashLoopBackOff (the previous log says why);
 * - `processing_errors`: every record fails (the offsets in the error advance);
 * - `rebalance_loop`: the group keeps rebalancing (`max.poll.interval.ms` exceeded, CommitFailedException);
 * - `no_ready_pods`: replicas wanted but none Ready.
 * With none of these, a producer whose request rate rose (or that rolled out or scaled up) just before
 * the lag is the flood (`producer_flood`, localised to the producer); otherwise the finding stays `open`
 * on the consumer. Without any lag metric, a consumer stuck on the same offset is still reported.
 *
 * Facts: `topic` (topic or queue), `consumerGroup`, `lag`, `lagBefore`, `consumer`, `logPattern`, plus
 * `reason` (above), `partition`/`offset` of a poison record, `vhost`, `scaler` (`ScaledObject/name`),
 * `manager`/`changedAt` of the change that stopped it, `revision`/`previousRevision` of a rollout.
 * Mitigation: `rollout_undo` only when a rollout of the consumer right before the lag broke it (and a
 * previous revision exists); nothing otherwise (skipping a record or scaling back is a human decision).
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { ChangeEvent } from '../../changes/types.js';
import { metricEvidence } from '../../evidence/prometheus/evidence.js';
import type { MetricSummary, SeriesSummary } from '../../evidence/prometheus/types.js';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { CustomObject } from '../../topology/snapshot.js';
import type { ClusterAnalyzer, ClusterTriageInput, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { containerStatuses, imageTag, revisionEvidence, revisions, rolledOutBefore, templateContainer, undoProposal, type Revision } from '../analyzers/crash-loop.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';
import { changeEvidence, clip, logEvidence as commonLogEvidence, logHits, objectChanges, type LogHit } from './common.js';

const NAME = 'queue-backlog';
/** A lag that began this long before the onset is background, not this incident. */
const STALE_MS = 6 * 3600_000;
/** A lag that began this long after the onset is a consequence of something else. */
const LATE_MS = 10 * 60_000;
const SKEW_MS = 60_000;
/** A growth smaller than this many messages is noise, whatever the detector says. */
const MIN_GROWTH = 20;

/** Deserialization and processing failures of common clients (Kafka Java/Spring, kafkajs, sarama, confluent-kafka, JSON/protobuf parsers). */
const POISON =
  /SerializationException|DeserializationException|RecordDeserializationException|Error deserializ|(failed|unable|could not|cannot) (to )?deserializ|deserialization (error|fail)|Unknown magic byte|malformed|unexpected token|JSONDecodeError|JsonParseException|JsonMappingException|MismatchedInputException|InvalidProtocolBufferException|cannot unmarshal|invalid character '.{1,4}' (looking for|after|in)|(failed|unable|error) (to )?(process|handl|consum)\w* (the )?(message|record|event|delivery)|error (processing|handling|consuming) (message|record|event)|poison (pill|message)|seek past the record|Error when calling eachMessage/i;
/** A consumer group that keeps rebalancing instead of consuming. */
const REBALANCE =
  /max\.poll\.interval\.ms|CommitFailedException|poll timeout has expired|consumer poll timeout|group is rebalancing|Attempt to heartbeat failed|rebalance (in progress|failed|timeout)|RebalanceInProgress|Revoking previously assigned partitions|leaving group/i;
const ERRORISH = /error|exception|fatal|panic|failed|cannot|unable|refused|timeout/i;

/** Images of brokers (Kafka, RabbitMQ, Redpanda, ZooKeeper, NATS), whose settings name topics without consuming them. */
const BROKER_IMAGE = /(^|\/)(cp-kafka|cp-server|kafka|rabbitmq|redpanda|zookeeper|cp-zookeeper|nats)(:|@|$)|strimzi\/kafka/;
/** Env names that say a setting is about what the workload reads, or what it writes. */
const CONSUMER_SETTING = /GROUP|CONSUM|SUBSCRI|LISTEN|INPUT|SOURCE|INBOUND|(^|_)IN(_|$)|FROM/i;
const PRODUCER_SETTING = /PRODUC|PUBLISH|OUTPUT|SINK|DEST|OUTBOUND|(^|_)OUT(_|$)|(^|_)TO(_|$)|EMIT|SEND/i;

interface Backlog {
  system: 'kafka' | 'rabbitmq';
  /** Topic (Kafka) or queue (RabbitMQ). */
  topic: string;
  group?: string;
  vhost?: string;
  namespace?: string;
  start: Date;
  lag: number | null;
  lagBefore: number | null;
  /** The highest level in the window (above `lag` when the backlog is draining again). */
  peak: number;
  summary: MetricSummary;
  series: SeriesSummary;
  evidence: Evidence;
  /** RabbitMQ: consumers attached to the queue before and now. */
  consumers?: { before: number | null; now: number | null; evidence?: Evidence };
}

interface Match {
  input: TriageInput;
  ref: ComponentRef;
  score: number;
  via: string[];
  role: 'consumer' | 'producer' | 'unknown';
  /** It names the consumer group (only consumers do). */
  groupHit: boolean;
  /** It names the topic or queue under a setting that reads it (`INPUT_TOPIC`, `--consumer-topic`). */
  consumerHint: boolean;
}

interface Poison {
  hit: LogHit;
  partition?: string;
  offset?: string;
  messageId?: string;
  /** Lines (the pattern's first example and the container's last lines) naming the same record. */
  sameRecord: number;
  /** Lines naming other records: the consumer moves on, every record fails. */
  otherRecords: number;
  topic?: string;
}

interface Stall {
  reason: 'autoscaler_at_zero' | 'scaled_to_zero' | 'poison_message' | 'crash_loop' | 'processing_errors' | 'rebalance_loop' | 'no_ready_pods';
  /** What is wrong, as a clause: `is stuck on a poison message at orders-0@4711`. */
  what: string;
  evidence: Evidence[];
  facts: Record<string, string | number | boolean>;
  change?: ChangeEvent;
  logPattern?: string;
  /** When the stall showed first (a log line, a change), if known. */
  at?: Date;
  /** The poison record, as `orders-2@4711`. */
  record?: string;
  confidence: number;
}

/** A log hit as evidence, cited the way `kubectl logs` reads it: `api/v1/namespaces/<ns>/pods/<pod>/log?container=<c>`. */
function logEvidence(h: LogHit, what: string): Evidence {
  const e = commonLogEvidence(h, what);
  if (!h.pod || !h.container) return e;
  const previous = /previous=true/.test(h.citation.ref) ? '&previous=true' : '';
  return { ...e, citation: { source: 'kubernetes', ref: `api/v1/namespaces/${h.workload.namespace}/pods/${h.pod}/log?container=${h.container}${previous}` } };
}

/** The part of a long template that says what failed: from the token holding the match on (timestamps, thread and logger dropped). */
function messageOf(template: string, re: RegExp): string {
  if (template.length <= 120) return template;
  const m = re.exec(template);
  if (!m) return clip(template, 200);
  const start = template.lastIndexOf(' ', m.index) + 1;
  return clip(template.slice(start), 200);
}

const num = (x: number | null | undefined): number | null => (x === null || x === undefined || !Number.isFinite(x) ? null : Math.round(x));
const refOf = (i: TriageInput): ComponentRef => ({ kind: i.kube.target!.kind, namespace: i.kube.target!.namespace, name: i.kube.target!.name });
const fmtN = (x: number | null): string => (x === null ? 'n/a' : x.toLocaleString('en-US'));

export const queueBacklog: ClusterAnalyzer = {
  name: NAME,
  analyze(input: ClusterTriageInput): Finding[] {
    const backlogs = growingBacklogs(input);
    if (!backlogs.length) return logsOnly(input);
    // One finding per consumer workload (a consumer may lag on several topics), or per group/queue without one.
    const groups = new Map<string, { consumer?: Match; producers: Match[]; backlogs: Backlog[] }>();
    for (const b of backlogs) {
      const matches = matchWorkloads(input.inputs, b);
      const consumer = pickConsumer(input, matches, b);
      const producers = matches.filter((m) => m !== consumer && !m.groupHit && !m.consumerHint);
      const key = consumer ? `${consumer.ref.kind}/${consumer.ref.namespace}/${consumer.ref.name}` : `${b.system}/${b.group ?? ''}/${b.topic}`;
      const g = groups.get(key) ?? { ...(consumer ? { consumer } : {}), producers: [], backlogs: [] };
      g.backlogs.push(b);
      for (const p of producers) if (!g.producers.some((x) => x.ref.name === p.ref.name && x.ref.namespace === p.ref.namespace)) g.producers.push(p);
      groups.set(key, g);
    }
    const out: Finding[] = [];
    for (const g of groups.values()) {
      g.backlogs.sort((a, c) => (c.lag ?? 0) - (a.lag ?? 0));
      out.push(g.consumer ? consumerFinding(input, g.consumer, g.backlogs, g.producers) : orphanFinding(input, g.backlogs));
    }
    return out;
  },
};

// ------------------------------------------------------------------ the symptom

function isGrowing(s: SeriesSummary): { start: Date; before: number | null; now: number | null; peak: number } | undefined {
  const before = num(s.baseline?.median ?? s.first);
  const now = num(s.last ?? s.max);
  let start: Date | undefined;
  if (s.deviationStart && s.deviationDirection === 'up') start = s.deviationStart;
  else {
    const jump = s.changePoints.find((c) => c.after > c.before * 1.5 && c.after - c.before >= MIN_GROWTH);
    if (jump) start = jump.at;
  }
  if (!start) return undefined;
  const peak = num(Math.max(s.last ?? 0, s.max ?? 0));
  if (peak === null || peak - (before ?? 0) < MIN_GROWTH || (before !== null && before > 0 && peak < before * 1.5)) return undefined;
  return { start, before, now, peak };
}

/** Lag or depth series that grew from their baseline, starting before (or right at) the onset. */
function growingBacklogs(input: ClusterTriageInput): Backlog[] {
  const onset = input.onset.getTime();
  const named = new Set(
    [input.alert.labels, ...(input.alert.members ?? []).map((m) => m.labels)].flatMap((l) => [l['consumergroup'], l['consumer_group'], l['topic'], l['queue']]).filter((x): x is string => !!x),
  );
  const found = new Map<string, Backlog>();
  for (const summary of input.metrics) {
    if (summary.status !== 'success') continue;
    const system = summary.id === 'queue_lag' || summary.id === 'queue_lag_sum' ? 'kafka' : summary.id === 'queue_depth' ? 'rabbitmq' : undefined;
    if (!system) continue;
    for (const s of summary.series) {
      const topic = system === 'kafka' ? s.metric['topic'] : s.metric['queue'];
      if (!topic) continue;
      const group = system === 'kafka' ? s.metric['consumergroup'] : undefined;
      const g = isGrowing(s);
      if (!g) continue;
      if (g.start.getTime() < onset - STALE_MS || g.start.getTime() > onset + LATE_MS) continue;
      const key = `${system}/${group ?? ''}/${topic}/${s.metric['vhost'] ?? ''}`;
      if (found.has(key)) continue; // queue_lag and queue_lag_sum report the same group and topic
      const evidence = metricEvidence({ ...summary, series: [s] })[0] ?? {
        kind: 'metric' as const,
        summary: `${summary.title} ${group ? `of group ${group} ` : ''}on ${topic} rose from ${fmtN(g.before)} to ${fmtN(g.now)} since ${clockTime(g.start)}`,
        citation: summary.citation,
        observedAt: g.start,
      };
      found.set(key, {
        system,
        topic,
        ...(group ? { group } : {}),
        ...(s.metric['vhost'] ? { vhost: s.metric['vhost'] } : {}),
        ...(s.metric['namespace'] ? { namespace: s.metric['namespace'] } : {}),
        start: g.start,
        lag: g.now,
        lagBefore: g.before,
        peak: g.peak,
        summary,
        series: s,
        evidence,
      });
    }
  }
  // RabbitMQ: did the queue's consumers go away?
  const consumers = input.metrics.find((m) => m.id === 'queue_consumers' && m.status === 'success');
  for (const b of found.values()) {
    if (b.system !== 'rabbitmq' || !consumers) continue;
    const s = consumers.series.find((x) => x.metric['queue'] === b.topic && (!b.vhost || !x.metric['vhost'] || x.metric['vhost'] === b.vhost));
    if (!s) continue;
    const before = num(s.baseline?.median ?? s.first);
    const now = num(s.last);
    b.consumers = { before, now, ...(metricEvidence({ ...consumers, series: [s] })[0] ? { evidence: metricEvidence({ ...consumers, series: [s] })[0]! } : {}) };
    if (!b.consumers.evidence && now !== null) b.consumers.evidence = { kind: 'metric', summary: `RabbitMQ consumers on queue ${b.topic}: ${now} (before ${before ?? 'n/a'})`, citation: consumers.citation };
  }
  const all = [...found.values()];
  const alerted = all.filter((b) => named.has(b.topic) || (b.group && named.has(b.group)));
  return alerted.length ? alerted : all;
}

// ------------------------------------------------------------------ who consumes, who produces

function wordIn(value: string, name: string): boolean {
  if (!name || !value) return false;
  return new RegExp(`(^|[^A-Za-z0-9_.-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^A-Za-z0-9_.-])`, 'i').test(value);
}

function settings(containers: V1Container[]): { name: string; value: string }[] {
  return containers.flatMap((c) => [
    ...(c.env ?? []).filter((e) => e.value).map((e) => ({ name: e.name, value: e.value! })),
    ...[...(c.command ?? []), ...(c.args ?? [])].map((a, i, all) => ({ name: argName(a, all[i - 1]), value: a })),
  ]);
}

/** The flag an argument belongs to: `--group orders-cg` and `--group=orders-cg` both name `--group`. */
function argName(arg: string, before: string | undefined): string {
  if (/^--?[\w.-]+=/.test(arg)) return arg.split('=')[0]!;
  if (before && /^--?[\w.-]+$/.test(before)) return before;
  return 'args';
}

/** Candidates whose configuration names the group, topic or queue (or whose name does), scored. */
function matchWorkloads(inputs: TriageInput[], b: Backlog): Match[] {
  const out: Match[] = [];
  for (const input of inputs) {
    const t = input.kube.target;
    const w = input.kube.workload;
    if (!t || !w) continue;
    // The broker itself names its topics (KAFKA_CREATE_TOPICS) and queues; it is not their consumer.
    if ((w.spec?.template?.spec?.containers ?? []).some((c) => BROKER_IMAGE.test(c.image ?? ''))) continue;
    let score = 0;
    const via: string[] = [];
    let consumerHint = false;
    let producerHint = false;
    let groupHit = false;
    for (const s of settings(w.spec?.template?.spec?.containers ?? [])) {
      const shown = `${s.name}=${clip(s.value, 60)}`;
      if (b.group && wordIn(s.value, b.group)) {
        score += 3;
        groupHit = true;
        via.push(shown);
      } else if (wordIn(s.value, b.topic)) {
        if (PRODUCER_SETTING.test(s.name) && !CONSUMER_SETTING.test(s.name)) producerHint = true;
        else {
          score += CONSUMER_SETTING.test(s.name) ? 3 : 2;
          if (CONSUMER_SETTING.test(s.name)) consumerHint = true;
        }
        via.push(shown);
      }
    }
    const name = t.name.toLowerCase();
    if (name === b.group?.toLowerCase() || name === b.topic.toLowerCase()) {
      score += 2;
      if (name === b.group?.toLowerCase()) groupHit = true;
      via.push(`its name ${t.name}`);
    } else if (name.length >= 4 && (b.group?.toLowerCase().includes(name) || (b.group && name.includes(b.group.toLowerCase())))) {
      score += 1;
      groupHit = true;
      via.push(`its name ${t.name} ~ group ${b.group}`);
    }
    if (!via.length) continue;
    const role = groupHit || consumerHint || (score > 0 && !producerHint) ? 'consumer' : producerHint && score === 0 ? 'producer' : 'unknown';
    out.push({ input, ref: refOf(input), score, via, role, groupHit, consumerHint });
  }
  return out;
}

/**
 * The consumer: a workload that names the group beats one that only names the topic (producers name it
 * too); among close scores, the one that visibly does not consume.
 */
function pickConsumer(input: ClusterTriageInput, matches: Match[], b: Backlog): Match | undefined {
  const consumers = matches.filter((m) => m.role !== 'producer');
  const byGroup = consumers.filter((m) => m.groupHit || m.consumerHint);
  const pool = (byGroup.length ? byGroup : consumers).sort((a, c) => c.score - a.score);
  const top = pool[0];
  if (!top) return undefined;
  const close = pool.filter((m) => m.score >= top.score - 1);
  return close.find((m) => diagnose(input, m, b, b.start)) ?? top;
}

// ------------------------------------------------------------------ why the consumer does not consume

function ready(p: V1Pod): boolean {
  return (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** `orders-0` → topic `orders`, partition `0`. */
function splitPartition(s: string): { topic?: string; partition: string } {
  const m = /^(.*)-(\d+)$/.exec(s);
  return m ? { topic: m[1]!, partition: m[2]! } : { partition: s };
}

/** The record a log line names: partition/offset (Kafka clients), or a message id (AMQP consumers). */
export function recordOf(line: string): { topic?: string; partition?: string; offset?: string; messageId?: string } | undefined {
  const text = line.replace(/\\"/g, '"');
  let m = /partition\s+([\w.-]+?)\s+at offset\s+(\d+)/i.exec(text); // Kafka Java client
  if (m) return { ...splitPartition(m[1]!), offset: m[2]! };
  m = /\b([A-Za-z][\w.]*(?:-[\w.]+)*-\d+)@(\d+)\b/.exec(text); // Spring Kafka `orders-0@4711`
  if (m) return { ...splitPartition(m[1]!), offset: m[2]! };
  const topic = /"?topic"?\s*[=:]\s*"?([\w.-]+)/i.exec(text)?.[1];
  const partition = /"?partition"?\s*[=:]\s*"?(\d+)/i.exec(text)?.[1];
  const offset = /"?offset"?\s*[=:]\s*"?(\d+)/i.exec(text)?.[1];
  if (offset) return { ...(topic ? { topic } : {}), ...(partition ? { partition } : {}), offset };
  const id = /"?(?:message[_ -]?id|msg[_-]?id|messageId)"?\s*[=:]\s*"?([\w:.-]{3,})/i.exec(text)?.[1];
  return id ? { ...(topic ? { topic } : {}), messageId: id } : undefined;
}

const recordKey = (r: { partition?: string; offset?: string; messageId?: string }): string | undefined =>
  r.offset ? `${r.partition ?? '?'}@${r.offset}` : r.messageId ? `id:${r.messageId}` : undefined;

/** The consumer's repeated processing failure, and whether it is stuck on one record. */
function poisonOf(input: TriageInput): Poison | undefined {
  const hits = logHits([input], POISON).filter((h) => h.count >= 3);
  let best: Poison | undefined;
  for (const hit of hits) {
    const rec = recordOf(hit.example) ?? recordOf(hit.template);
    const key = rec ? recordKey(rec) : undefined;
    let same = key ? 1 : 0;
    let other = 0;
    const tail = input.kube.containerLogs.find((c) => c.pod === hit.pod && c.container === hit.container)?.tail ?? [];
    for (const line of tail) {
      if (!POISON.test(line)) continue;
      const r = recordOf(line);
      const k = r ? recordKey(r) : undefined;
      if (!k || !key) continue;
      if (k === key) same++;
      else other++;
    }
    const p: Poison = { hit, ...(rec?.partition ? { partition: rec.partition } : {}), ...(rec?.offset ? { offset: rec.offset } : {}), ...(rec?.messageId ? { messageId: rec.messageId } : {}), ...(rec?.topic ? { topic: rec.topic } : {}), sameRecord: same, otherRecords: other };
    const rank = (x: Poison) => (x.sameRecord >= 2 && x.otherRecords === 0 ? 2 : x.offset || x.messageId ? 1 : 0) * 1e6 + x.hit.count;
    if (!best || rank(p) > rank(best)) best = p;
  }
  return best;
}

const stuck = (p: Poison): boolean => p.sameRecord >= 2 && p.otherRecords === 0;
const recordText = (p: Poison): string => (p.offset ? `${p.topic ? `${p.topic}-` : p.partition ? 'partition ' : ''}${p.partition ?? ''}${p.offset ? `@${p.offset}` : ''}` : `message ${p.messageId}`);

function scaledObjectOf(input: ClusterTriageInput, ref: ComponentRef): CustomObject | undefined {
  return (input.cluster.snapshot.custom['ScaledObject'] ?? []).find((so) => {
    const t = so.spec?.['scaleTargetRef'] as { name?: string; kind?: string } | undefined;
    return so.metadata.namespace === ref.namespace && t?.name === ref.name && (t.kind ?? 'Deployment') === ref.kind;
  });
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

/** Why a KEDA ScaledObject holds the consumer at 0, in words, when the object says. */
function kedaWhy(so: CustomObject, b: Backlog): { why: string; field: string } {
  const ann = so.metadata.annotations ?? {};
  if (ann['autoscaling.keda.sh/paused-replicas'] !== undefined) return { why: `it is paused at ${ann['autoscaling.keda.sh/paused-replicas']} replicas (annotation autoscaling.keda.sh/paused-replicas)`, field: 'metadata.annotations' };
  if (ann['autoscaling.keda.sh/paused'] === 'true') return { why: 'it is paused (annotation autoscaling.keda.sh/paused: "true")', field: 'metadata.annotations' };
  const spec = so.spec ?? {};
  if (spec['maxReplicaCount'] === 0) return { why: 'its maxReplicaCount is 0', field: 'spec.maxReplicaCount' };
  const triggers = (spec['triggers'] as { type?: string; metadata?: Record<string, string> }[] | undefined) ?? [];
  const mine = triggers.filter((t) => (b.system === 'kafka' ? t.type === 'kafka' : t.type === 'rabbitmq'));
  if (mine.length) {
    const watches = mine.some((t) => {
      const md = t.metadata ?? {};
      const topicOk = b.system === 'kafka' ? !md['topic'] || md['topic'] === b.topic : md['queueName'] === b.topic;
      const groupOk = b.system !== 'kafka' || !md['consumerGroup'] || !b.group || md['consumerGroup'] === b.group;
      return topicOk && groupOk;
    });
    if (!watches) {
      const md = mine[0]!.metadata ?? {};
      const watched = b.system === 'kafka' ? `topic ${md['topic'] ?? '(all)'} of group ${md['consumerGroup'] ?? '?'}` : `queue ${md['queueName'] ?? '?'}`;
      return { why: `its ${mine[0]!.type} trigger watches ${watched}, not ${b.group ? `group ${b.group} on ` : ''}${b.topic}: the backlog never activates it`, field: 'spec.triggers' };
    }
    const t = mine[0]!.metadata ?? {};
    const activation = Number(t['activationLagThreshold'] ?? t['activationValue'] ?? NaN);
    if (Number.isFinite(activation) && b.lag !== null && activation > b.lag) return { why: `its activation threshold (${activation}) is above the lag (${fmtN(b.lag)}), so it never scales from 0`, field: 'spec.triggers' };
  }
  const conditions = ((so.status?.['conditions'] as Condition[] | undefined) ?? []);
  const notReady = conditions.find((c) => c.type === 'Ready' && c.status === 'False');
  if (notReady) return { why: `it is not Ready (${notReady.reason ?? ''}${notReady.message ? `: ${clip(notReady.message, 140)}` : ''}): the scaler cannot read the lag`, field: 'status.conditions' };
  const inactive = conditions.find((c) => c.type === 'Active' && c.status === 'False');
  if (inactive) return { why: `KEDA reports it inactive (${inactive.reason ?? ''}${inactive.message ? `: ${clip(inactive.message, 140)}` : ''}) although the backlog grows`, field: 'status.conditions' };
  return { why: `its minReplicaCount is ${spec['minReplicaCount'] ?? 0} and it has not scaled the consumer up`, field: 'spec' };
}

function diagnose(cluster: ClusterTriageInput, m: Match, b: Backlog, lagStart: Date): Stall | undefined {
  const { input, ref } = m;
  const kube = input.kube;
  const w = kube.workload!;
  const ns = ref.namespace;
  const replicas = (w.spec as { replicas?: number } | undefined)?.replicas;
  const status = (w.status ?? {}) as { readyReplicas?: number; availableReplicas?: number; replicas?: number };
  const workloadEvidence: Evidence = {
    kind: 'object',
    summary: `${ref.kind.toLowerCase()}/${ref.name}: spec.replicas ${replicas ?? 'n/a'}, ${status.readyReplicas ?? 0} ready`,
    citation: objectCitation(ref.kind, ns, ref.name, 'spec.replicas'),
    detail: { specReplicas: replicas ?? null, readyReplicas: status.readyReplicas ?? 0 },
  };

  if (replicas === 0) {
    const so = scaledObjectOf(cluster, ref);
    const hpa = cluster.cluster.snapshot.hpas.find((h) => h.metadata?.namespace === ns && h.spec?.scaleTargetRef?.name === ref.name && (h.spec.scaleTargetRef.kind ?? 'Deployment') === ref.kind);
    const scaleChange = objectChanges(ref.kind, w.metadata).find((c) => c.kind === 'scale' && c.at.getTime() <= lagStart.getTime() + 10 * 60_000);
    if (so) {
      const { why, field } = kedaWhy(so, b);
      const soChange = objectChanges('ScaledObject', so.metadata).find((c) => c.at.getTime() <= lagStart.getTime() + 10 * 60_000);
      const change = soChange && lagStart.getTime() - soChange.at.getTime() <= STALE_MS ? soChange : undefined;
      const evidence: Evidence[] = [
        workloadEvidence,
        { kind: 'object', summary: `ScaledObject ${ns}/${so.metadata.name} scales ${ref.name}: ${why}`, citation: objectCitation('ScaledObject', ns, so.metadata.name ?? '?', field) },
      ];
      if (change) evidence.push(changeEvidence(change, cluster.onset));
      return {
        reason: 'autoscaler_at_zero',
        what: `is held at 0 replicas by KEDA ScaledObject ${so.metadata.name}: ${why}`,
        evidence,
        facts: { scaler: `ScaledObject/${so.metadata.name}` },
        ...(change ? { change, at: change.at } : {}),
        confidence: change || field !== 'spec' ? 0.88 : 0.8,
      };
    }
    if (hpa && ((hpa.spec?.minReplicas ?? 1) === 0 || hpa.status?.desiredReplicas === 0)) {
      const change = objectChanges('HorizontalPodAutoscaler', hpa.metadata).find((c) => c.at.getTime() <= lagStart.getTime() + 10 * 60_000);
      return {
        reason: 'autoscaler_at_zero',
        what: `is held at 0 replicas by HPA ${hpa.metadata?.name} (minReplicas ${hpa.spec?.minReplicas ?? 1}, desired ${hpa.status?.desiredReplicas ?? 'n/a'})`,
        evidence: [
          workloadEvidence,
          { kind: 'object', summary: `HPA ${ns}/${hpa.metadata?.name}: minReplicas ${hpa.spec?.minReplicas ?? 1}, current ${hpa.status?.currentReplicas ?? 0}, desired ${hpa.status?.desiredReplicas ?? 0}`, citation: objectCitation('HorizontalPodAutoscaler', ns, hpa.metadata?.name ?? '?', 'status') },
          ...(change ? [changeEvidence(change, cluster.onset)] : []),
        ],
        facts: { scaler: `HorizontalPodAutoscaler/${hpa.metadata?.name}` },
        ...(change ? { change, at: change.at } : {}),
        confidence: 0.85,
      };
    }
    const evidence = [workloadEvidence];
    if (scaleChange) evidence.push(changeEvidence(scaleChange, cluster.onset));
    return {
      reason: 'scaled_to_zero',
      what: `is scaled to 0 replicas${scaleChange ? ` (${scaleChange.actor} at ${clockTime(scaleChange.at)})` : ''}: nothing consumes`,
      evidence,
      facts: {},
      ...(scaleChange ? { change: scaleChange, at: scaleChange.at } : {}),
      confidence: scaleChange ? 0.9 : 0.85,
    };
  }

  const poison = poisonOf(input);
  const looping = kube.pods.flatMap((p) => containerStatuses(p).filter((c) => c.state?.waiting?.reason === 'CrashLoopBackOff').map((c) => ({ pod: p, status: c })));
  const poisonEvidence = (p: Poison): Evidence[] => [
    logEvidence(p.hit, stuck(p) ? `the same record ${recordText(p)} fails again and again` : 'processing error'),
  ];
  if (poison && (stuck(poison) || (!poison.otherRecords && (poison.offset || poison.messageId) && poison.hit.count >= 5))) {
    const evidence = poisonEvidence(poison);
    if (looping[0]) evidence.push(podEvidence(ns, looping[0].pod, looping[0].status.name));
    return {
      reason: 'poison_message',
      record: recordText(poison),
      what: `is stuck on a poison message: ${recordText(poison)} fails to process (×${poison.hit.count}${looping.length ? ', and the container crashes on it' : ''}) and the consumer retries it instead of moving on`,
      evidence,
      facts: { ...(poison.partition ? { partition: poison.partition } : {}), ...(poison.offset ? { offset: poison.offset } : {}), ...(poison.messageId ? { messageId: poison.messageId } : {}) },
      logPattern: messageOf(poison.hit.template, POISON),
      ...(poison.hit.first ? { at: poison.hit.first } : {}),
      confidence: stuck(poison) ? 0.9 : 0.82,
    };
  }
  if (looping.length) {
    const pods = [...new Set(looping.map((l) => l.pod.metadata?.name ?? '?'))];
    const cause = poison?.hit ?? logHits([input], ERRORISH).find((h) => /previous=true/.test(h.citation.ref)) ?? logHits([input], ERRORISH)[0];
    const term = looping[0]!.status.lastState?.terminated;
    return {
      reason: 'crash_loop',
      what: `is crash-looping (${pods.length} pod${pods.length === 1 ? '' : 's'} in CrashLoopBackOff${term?.exitCode !== undefined ? `, exit code ${term.exitCode}` : ''}${cause ? `: "${clip(cause.template, 100)}"` : ''})`,
      evidence: [podEvidence(ns, looping[0]!.pod, looping[0]!.status.name), ...(cause ? [logEvidence(cause, 'crash cause')] : [])],
      facts: {},
      ...(cause ? { logPattern: messageOf(cause.template, poison ? POISON : ERRORISH) } : {}),
      ...(term?.finishedAt ? { at: new Date(term.finishedAt) } : {}),
      // The backlog is the crash loop's consequence: the crash-loop finding on the same consumer names the
      // mechanism and leads; this one still stands when the consumer was not a candidate of its own.
      confidence: 0.8,
    };
  }
  if (poison) {
    return {
      reason: 'processing_errors',
      what: `fails to process records (×${poison.hit.count}${poison.otherRecords ? ', on every record: the offsets in the error advance' : ''}): "${clip(poison.hit.template, 100)}"`,
      evidence: poisonEvidence(poison),
      facts: {},
      logPattern: messageOf(poison.hit.template, POISON),
      ...(poison.hit.first ? { at: poison.hit.first } : {}),
      confidence: 0.8,
    };
  }
  const rebalance = logHits([input], REBALANCE).filter((h) => h.count >= 3)[0];
  if (rebalance) {
    return {
      reason: 'rebalance_loop',
      what: `keeps rebalancing instead of consuming (×${rebalance.count}: "${clip(rebalance.template, 100)}"): processing a batch takes longer than max.poll.interval.ms, the broker evicts the member and the partitions move`,
      evidence: [logEvidence(rebalance, 'rebalance loop')],
      facts: {},
      logPattern: messageOf(rebalance.template, REBALANCE),
      ...(rebalance.first ? { at: rebalance.first } : {}),
      confidence: 0.8,
    };
  }
  const wanted = replicas ?? status.replicas ?? kube.pods.length;
  if (wanted > 0 && !kube.pods.some(ready) && (kube.pods.length > 0 || (status.readyReplicas ?? 0) === 0)) {
    const p = kube.pods[0];
    const waiting = p ? containerStatuses(p).find((c) => c.state?.waiting?.reason)?.state?.waiting?.reason : undefined;
    return {
      reason: 'no_ready_pods',
      what: `has no ready pods (${kube.pods.length} of ${wanted} wanted exist${p ? `, ${p.status?.phase ?? 'unknown'}${waiting ? `/${waiting}` : ''}` : ''})`,
      evidence: [workloadEvidence, ...(p ? [podEvidence(ns, p, containerStatuses(p)[0]?.name)] : [])],
      facts: {},
      confidence: 0.85,
    };
  }
  return undefined;
}

function podEvidence(ns: string | undefined, p: V1Pod, container?: string): Evidence {
  const s = containerStatuses(p).find((c) => c.name === container) ?? containerStatuses(p)[0];
  const term = s?.lastState?.terminated ?? s?.state?.terminated;
  return {
    kind: 'object',
    summary: `pod ${p.metadata?.name}: ${p.status?.phase ?? 'unknown'}${s ? `, ${s.name} ${s.state?.waiting?.reason ?? (s.state?.running ? 'running' : 'not running')}${s.ready ? ' ready' : ' not ready'}, ${s.restartCount ?? 0} restarts` : ''}${term ? `, last terminated ${term.reason ?? ''} exit ${term.exitCode}` : ''}`,
    citation: objectCitation('Pod', ns, p.metadata?.name ?? '?', 'status.containerStatuses'),
    ...(term?.finishedAt ? { observedAt: new Date(term.finishedAt) } : {}),
  };
}

// ------------------------------------------------------------------ findings

function backlogFacts(b: Backlog): Record<string, string | number | boolean> {
  return {
    topic: b.topic,
    ...(b.group ? { consumerGroup: b.group } : {}),
    ...(b.vhost ? { vhost: b.vhost } : {}),
    ...(b.lag !== null ? { lag: b.lag } : {}),
    ...(b.lagBefore !== null ? { lagBefore: b.lagBefore } : {}),
  };
}

function backlogText(b: Backlog, onset: Date): string {
  const since = `since ${clockTime(b.start)} (${relativeToOnset(b.start, onset)})`;
  const to = b.lag !== null && b.peak > b.lag * 2 ? `${fmtN(b.peak)} (now ${fmtN(b.lag)}, draining)` : fmtN(b.lag);
  return b.system === 'kafka'
    ? `consumer lag of group ${b.group ?? '?'} on topic ${b.topic} rose from ${fmtN(b.lagBefore)} to ${to} messages ${since}`
    : `queue ${b.topic}${b.vhost ? ` (vhost ${b.vhost})` : ''} grew from ${fmtN(b.lagBefore)} to ${to} ready messages ${since}`;
}

function consumersText(b: Backlog): string {
  const c = b.consumers;
  if (!c || c.now === null) return '';
  return c.now === 0 ? `; no consumer is attached to the queue any more (${c.before ?? '?'} before)` : `; ${c.now} consumer${c.now === 1 ? '' : 's'} still attached`;
}

function affectedOf(m: Match): ComponentRef[] {
  const kube = m.input.kube;
  return [
    m.ref,
    ...kube.services.map(({ service }) => ({ kind: 'Service', namespace: m.ref.namespace, name: service.metadata?.name ?? '?' })),
    ...kube.dependents.map((d) => ({ kind: d.kind, namespace: m.ref.namespace, name: d.name })),
  ];
}

function rolloutCause(kube: TriageInput['kube'], at: Date): { current: Revision; previous: Revision } | undefined {
  const { current, previous } = revisions(kube);
  return current && previous && rolledOutBefore(current, at) ? { current, previous } : undefined;
}

function imageDiff(kube: TriageInput['kube'], r: { current: Revision; previous: Revision }): string {
  const name = r.current.replicaSet.spec?.template?.spec?.containers?.[0]?.name;
  if (!name) return '';
  const a = templateContainer(r.previous.replicaSet, name)?.image;
  const b = templateContainer(r.current.replicaSet, name)?.image ?? templateContainer(kube.workload, name)?.image;
  return a && b && a !== b ? `image ${imageTag(a)} → ${imageTag(b)}` : '';
}

function consumerFinding(input: ClusterTriageInput, m: Match, backlogs: Backlog[], producers: Match[]): Finding {
  const b = backlogs[0]!;
  const lagStart = new Date(Math.min(...backlogs.map((x) => x.start.getTime())));
  const kube = m.input.kube;
  const stall = diagnose(input, m, b, lagStart);
  const lagEvidence = [...backlogs.map((x) => x.evidence), ...(b.consumers?.evidence ? [b.consumers.evidence] : [])];
  const configEvidence: Evidence = {
    kind: 'object',
    summary: `${m.ref.kind.toLowerCase()}/${m.ref.name} consumes ${b.topic}${b.group ? ` as group ${b.group}` : ''} (${m.via.slice(0, 3).join('; ')})`,
    citation: objectCitation(m.ref.kind, m.ref.namespace, m.ref.name, 'spec.template.spec.containers'),
  };
  const key = `${NAME}:${m.ref.namespace}/${m.ref.kind}/${m.ref.name}`;
  const facts: Record<string, string | number | boolean> = { ...backlogFacts(b), consumer: m.ref.name };
  const what = backlogText(b, input.onset) + consumersText(b);

  if (!stall) {
    const flood = producerFlood(input, producers, b, lagStart);
    if (flood) return flood;
    return {
      key,
      analyzer: NAME,
      family: 'queue-backlog',
      status: 'open',
      confidence: b.consumers?.now === 0 ? 0.6 : 0.45,
      title: `${b.system === 'kafka' ? `lag of ${b.group ?? b.topic}` : `queue ${b.topic}`} grows; consumer ${m.ref.name} looks healthy`,
      component: m.ref,
      mechanism: `The ${what}. ${m.ref.kind} ${m.ref.namespace}/${m.ref.name} consumes it and has ${kube.pods.filter(ready).length} ready pod${kube.pods.filter(ready).length === 1 ? '' : 's'}, no crash loop and no repeated processing error in the logs read: it consumes slower than producers write (slow processing or a slow dependency, a traffic surge) — not decided from the evidence.`,
      scope: `${b.topic} backs up; work queued there is delayed for whoever depends on ${m.ref.name}`,
      affected: affectedOf(m),
      facts: { ...facts, reason: 'undetermined' },
      supporting: [...lagEvidence, configEvidence],
      refuting: [],
    };
  }

  facts['reason'] = stall.reason;
  Object.assign(facts, stall.facts);
  if (stall.logPattern) facts['logPattern'] = stall.logPattern;
  if (stall.change) {
    facts['manager'] = stall.change.actor;
    facts['changedAt'] = stall.change.at.toISOString();
  }
  const supporting: Evidence[] = [...lagEvidence, configEvidence, ...stall.evidence];
  // A rollout of the consumer right before the backlog (or its first error) that brought the failure.
  const byRollout = ['poison_message', 'crash_loop', 'processing_errors', 'rebalance_loop', 'no_ready_pods'].includes(stall.reason);
  const rollout = byRollout ? rolloutCause(kube, stall.at && stall.at < lagStart ? stall.at : lagStart) : undefined;
  let mitigation: MitigationProposal | undefined;
  if (rollout) {
    const diff = imageDiff(kube, rollout);
    supporting.push(revisionEvidence(kube, rollout.current, input.onset, diff));
    Object.assign(facts, { revision: rollout.current.revision, previousRevision: rollout.previous.revision, ...(rollout.current.createdAt ? { changedAt: rollout.current.createdAt.toISOString() } : {}) });
    mitigation = undoProposal(kube, rollout.previous, `revision ${rollout.previous.revision} consumed ${b.topic} before revision ${rollout.current.revision} rolled out; roll back so the backlog drains while the consumer is fixed`);
  }
  const confidence = Math.min(0.92, stall.confidence + (rollout ? 0.02 : 0));
  return {
    key,
    analyzer: NAME,
    family: 'queue-backlog',
    status: 'supported',
    confidence,
    title: `${m.ref.name} ${titleOf(stall)}: ${b.system === 'kafka' ? `lag of ${b.group ?? '?'} on ${b.topic}` : `queue ${b.topic}`} ${fmtN(b.lagBefore)} → ${fmtN(b.lag)}`,
    component: m.ref,
    mechanism:
      `The ${what}: ${m.ref.kind.toLowerCase()}/${m.ref.name}, which consumes it, ${stall.what}.` +
      (rollout ? ` It began with the rollout to revision ${rollout.current.revision}${rollout.current.createdAt ? ` at ${clockTime(rollout.current.createdAt)}` : ''}${imageDiff(kube, rollout) ? ` (${imageDiff(kube, rollout)})` : ''}.` : '') +
      (backlogs.length > 1 ? ` It also lags on ${backlogs.slice(1).map((x) => x.topic).join(', ')}.` : ''),
    scope: `messages on ${backlogs.map((x) => x.topic).join(', ')} are not processed (${fmtN(b.lag)} waiting and growing); whatever depends on ${m.ref.name}'s output is stale`,
    affected: affectedOf(m),
    facts,
    supporting,
    refuting: [],
    ...(mitigation ? { mitigation } : {}),
  };
}

function titleOf(s: Stall): string {
  switch (s.reason) {
    case 'autoscaler_at_zero':
      return 'held at 0 replicas by its autoscaler';
    case 'scaled_to_zero':
      return `scaled to 0${s.change ? ` by ${s.change.actor}` : ''}`;
    case 'poison_message':
      return `stuck on a poison message${s.record ? ` at ${s.record}` : ''}`;
    case 'crash_loop':
      return 'crash-looping';
    case 'processing_errors':
      return 'fails every message';
    case 'rebalance_loop':
      return 'stuck in a rebalance loop';
    case 'no_ready_pods':
      return 'has no ready pods';
  }
}

/** A producer whose rate rose, or that rolled out or scaled up, right before the lag while the consumer is healthy. */
function producerFlood(input: ClusterTriageInput, producers: Match[], b: Backlog, lagStart: Date): Finding | undefined {
  const rateMetric = input.metrics.find((s) => s.status === 'success' && /produce|messages_in|publish/i.test(s.id));
  const topicRate = rateMetric?.series.find((s) => (s.metric['topic'] === b.topic || s.metric['queue'] === b.topic) && s.deviationDirection === 'up' && s.deviationStart && s.deviationStart.getTime() <= lagStart.getTime() + SKEW_MS);
  for (const p of producers) {
    const rate = p.input.metrics?.summaries.find((s) => s.id === 'request_rate' && s.status === 'success');
    const rose = rate?.series.find((s) => s.deviationDirection === 'up' && s.deviationStart && Math.abs(s.deviationStart.getTime() - lagStart.getTime()) <= 15 * 60_000);
    const { current } = revisions(p.input.kube);
    const rolled = current && rolledOutBefore(current, lagStart) ? current : undefined;
    const scaleUp = objectChanges(p.ref.kind, p.input.kube.workload?.metadata).find((c) => c.kind === 'scale' && lagStart.getTime() - c.at.getTime() <= CHANGE_WINDOW_MS && c.at.getTime() <= lagStart.getTime() + SKEW_MS);
    if (!rose && !topicRate && !rolled && !scaleUp) continue;
    const supporting: Evidence[] = [b.evidence];
    if (topicRate && rateMetric) supporting.push(...metricEvidence({ ...rateMetric, series: [topicRate] }).slice(0, 1));
    if (rose && rate) supporting.push(...metricEvidence({ ...rate, series: [rose] }).slice(0, 1));
    if (rolled) supporting.push(revisionEvidence(p.input.kube, rolled, input.onset, ''));
    if (scaleUp) supporting.push(changeEvidence(scaleUp, input.onset));
    supporting.push({ kind: 'object', summary: `${p.ref.kind.toLowerCase()}/${p.ref.name} writes to ${b.topic} (${p.via.slice(0, 2).join('; ')})`, citation: objectCitation(p.ref.kind, p.ref.namespace, p.ref.name, 'spec.template.spec.containers') });
    const measured = !!(rose || topicRate);
    const change = scaleUp;
    return {
      key: `${NAME}:${p.ref.namespace}/${p.ref.kind}/${p.ref.name}`,
      analyzer: NAME,
      family: 'queue-backlog',
      status: measured ? 'supported' : 'open',
      confidence: measured ? 0.7 : 0.5,
      title: `${p.ref.name} floods ${b.topic}: ${b.group ? `lag of ${b.group}` : 'depth'} ${fmtN(b.lagBefore)} → ${fmtN(b.lag)}`,
      component: p.ref,
      mechanism: `The ${backlogText(b, input.onset)} while its consumers show no failure; ${p.ref.kind.toLowerCase()}/${p.ref.name}, which writes to ${b.topic}, ${[rose ? 'receives more requests (its request rate rose at the same time)' : '', topicRate ? `the produce rate of ${b.topic} rose from ${fmtN(num(topicRate.baseline?.median))}` : '', rolled ? `rolled out revision ${rolled.revision}${rolled.createdAt ? ` at ${clockTime(rolled.createdAt)}` : ''}` : '', scaleUp ? `was scaled (${scaleUp.actor} at ${clockTime(scaleUp.at)})` : ''].filter(Boolean).join(', and ')} just before: producers write faster than the consumers drain.`,
      scope: `${b.topic} backs up; processing of everything queued behind the surge is delayed`,
      affected: [p.ref, ...producers.filter((x) => x !== p).map((x) => x.ref)],
      facts: { ...backlogFacts(b), reason: 'producer_flood', producer: p.ref.name, ...(change ? { manager: change.actor, changedAt: change.at.toISOString() } : {}) },
      supporting,
      refuting: [],
    };
  }
  return undefined;
}

/** A growing backlog whose consumer is not among the candidates: the symptom, localised to nothing yet. */
function orphanFinding(input: ClusterTriageInput, backlogs: Backlog[]): Finding {
  const b = backlogs[0]!;
  const name = b.group ?? b.topic;
  return {
    key: `${NAME}:${b.namespace ?? ''}/${b.system === 'kafka' ? 'ConsumerGroup' : 'Queue'}/${name}`,
    analyzer: NAME,
    family: 'queue-backlog',
    status: 'open',
    confidence: b.consumers?.now === 0 ? 0.55 : 0.4,
    title: `${b.system === 'kafka' ? `lag of ${b.group ?? '?'} on ${b.topic}` : `queue ${b.topic}`} grows (${fmtN(b.lagBefore)} → ${fmtN(b.lag)}); its consumer is not among the candidates`,
    mechanism: `The ${backlogText(b, input.onset)}${consumersText(b)}. No candidate workload names ${b.group ? `group ${b.group} or ` : ''}${b.topic} in its env or args, so why it stopped consuming is not known.`,
    scope: `messages on ${b.topic} wait unprocessed`,
    affected: [],
    facts: backlogFacts(b),
    supporting: [b.evidence, ...(b.consumers?.evidence ? [b.consumers.evidence] : [])],
    refuting: [],
  };
}

/** No lag metric at all: a consumer whose logs show it stuck on one record is still a backlog. */
function logsOnly(input: ClusterTriageInput): Finding[] {
  const known = input.metrics.some((m) => (m.id === 'queue_lag' || m.id === 'queue_lag_sum' || m.id === 'queue_depth') && m.status === 'success' && m.series.length > 0);
  if (known) return [];
  const out: Finding[] = [];
  for (const i of input.inputs) {
    if (!i.kube.target || !i.kube.workload) continue;
    const p = poisonOf(i);
    if (!p || !p.offset || !stuck(p) || p.hit.count < 3) continue;
    if (p.hit.last && input.onset.getTime() - p.hit.last.getTime() > CHANGE_WINDOW_MS) continue;
    const ref = refOf(i);
    const m: Match = { input: i, ref, score: 0, via: [], role: 'consumer', groupHit: false, consumerHint: true };
    const topic = p.topic;
    const rollout = rolloutCause(i.kube, p.hit.first ?? input.onset);
    const supporting: Evidence[] = [logEvidence(p.hit, `the same record ${recordText(p)} fails again and again`)];
    const facts: Record<string, string | number | boolean> = { ...(topic ? { topic } : {}), consumer: ref.name, reason: 'poison_message', ...(p.partition ? { partition: p.partition } : {}), offset: p.offset, logPattern: messageOf(p.hit.template, POISON) };
    if (rollout) {
      supporting.push(revisionEvidence(i.kube, rollout.current, input.onset, imageDiff(i.kube, rollout)));
      Object.assign(facts, { revision: rollout.current.revision, previousRevision: rollout.previous.revision });
    }
    out.push({
      key: `${NAME}:${ref.namespace}/${ref.kind}/${ref.name}`,
      analyzer: NAME,
      family: 'queue-backlog',
      status: 'supported',
      confidence: 0.72,
      title: `${ref.name} stuck on a poison message at ${recordText(p)}`,
      component: ref,
      mechanism: `${ref.kind} ${ref.namespace}/${ref.name} fails on the same record ${recordText(p)} again and again (×${p.hit.count}${p.hit.first ? ` since ${clockTime(p.hit.first)}` : ''}: "${clip(p.hit.template, 120)}"): the partition cannot advance past it, so its backlog grows. No consumer-lag metric was available to measure it.`,
      scope: `${topic ? `partition ${p.partition ?? '?'} of ${topic}` : 'its input'} is not processed; whatever depends on ${ref.name}'s output is stale`,
      affected: affectedOf(m),
      facts,
      supporting,
      refuting: [],
      ...(rollout ? { mitigation: undoProposal(i.kube, rollout.previous, `revision ${rollout.previous.revision} processed these records before revision ${rollout.current.revision}; roll back while the consumer is fixed`) } : {}),
    });
  }
  return out;
}

