/**
 * `topic-config` (family `config-change`): a hand edit of a Kafka topic's configuration (Strimzi
 * `KafkaTopic.spec.config`) that broke its consumers or producers. The edit lands at once (the topic
 * operator applies it in seconds) but its effect may wait: a retention cut deletes the segments a lagging
 * consumer has not read at the brokers' next retention check, and the consumer's committed offset falls
 * off the log (`Fetch position … is out of range`, `Resetting offset`); with `auto.offset.reset=latest`
 * it skips the backlog silently — lag drops to zero, nothing crashes, the data is gone.
 *
 * Decided from the KafkaTopic the walk reached (a candidate consumes or produces it): the managedFields
 * entry that wrote `spec.config` keys, the value before (its last-applied-configuration) and after, and
 * the consumers' logs since the edit. Facts: `object`, `topic`, `keys`, `before`, `after`, `editor`,
 * `changedAt`. No catalog action: deleted segments cannot come back from Kafka (restore the value, then
 * replay the gap from the source of truth).
 */
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, refOfId } from '../../topology/graph.js';
import type { CustomObject } from '../../topology/snapshot.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';
import { changeEvidence, lastChangeBefore, logEvidence, logHits } from './common.js';

/** An edit this old can still be the cause: retention and compaction act on their own schedule. */
const WINDOW_MS = 12 * 3600_000;

/** Topic settings whose change breaks clients, the direction that hurts, and what the clients log when it does. */
const RISKY: Record<string, { worse: 'lower' | 'higher' | 'any'; symptom: RegExp; effect: string }> = {
  'retention.ms': { worse: 'lower', symptom: /out of range|Resetting offset|OffsetOutOfRange|offset reset/i, effect: 'the brokers delete segments older than the new retention at their next check; a consumer further behind than that loses its position and resets' },
  'retention.bytes': { worse: 'lower', symptom: /out of range|Resetting offset|OffsetOutOfRange/i, effect: 'the brokers delete the oldest segments over the new size; a lagging consumer loses its position and resets' },
  'cleanup.policy': { worse: 'any', symptom: /out of range|Resetting offset|compact/i, effect: 'compaction or deletion now applies to records consumers still need' },
  'max.message.bytes': { worse: 'lower', symptom: /RecordTooLarge|MESSAGE_TOO_LARGE|message is larger/i, effect: 'producers sending larger records are refused' },
  'min.insync.replicas': { worse: 'higher', symptom: /NotEnoughReplicas|NOT_ENOUGH_REPLICAS/i, effect: 'producers with acks=all are refused while fewer replicas are in sync' },
};

interface Edit {
  key: string;
  before?: string;
  after?: string;
}

/** The `spec.config` keys the change's managedFields entry wrote, with the values before (last-applied) and now. */
function editedKeys(topic: CustomObject, at: Date): Edit[] {
  const entry = (topic.metadata.managedFields ?? []).find((m) => m.time && Math.abs(new Date(m.time).getTime() - at.getTime()) < 1000 && !m.subresource);
  const config = ((entry?.fieldsV1 as { 'f:spec'?: { 'f:config'?: Record<string, unknown> } } | undefined)?.['f:spec']?.['f:config']) ?? {};
  const keys = Object.keys(config).filter((k) => k.startsWith('f:')).map((k) => k.slice(2));
  const now = (topic.spec?.['config'] as Record<string, unknown> | undefined) ?? {};
  let applied: Record<string, unknown> = {};
  try {
    const raw = topic.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'];
    applied = raw ? ((JSON.parse(raw) as { spec?: { config?: Record<string, unknown> } }).spec?.config ?? {}) : {};
  } catch {
    // An unreadable annotation: the value before is unknown.
  }
  return keys.map((key) => ({ key, ...(applied[key] !== undefined ? { before: String(applied[key]) } : {}), ...(now[key] !== undefined ? { after: String(now[key]) } : {}) }));
}

function worse(e: Edit): boolean {
  const r = RISKY[e.key];
  if (!r) return false;
  if (r.worse === 'any') return e.before !== e.after;
  const b = Number(e.before);
  const a = Number(e.after);
  if (!Number.isFinite(a)) return false;
  if (!Number.isFinite(b)) return true; // changed with no earlier value known: still the suspect
  return r.worse === 'lower' ? a < b : a > b;
}

/** `3600000` ms as people say it. */
function msWords(v: string | undefined): string {
  const n = Number(v);
  if (!v || !Number.isFinite(n) || n <= 0) return v ?? '?';
  return `${v} (${humanDuration(n)})`;
}

export const topicConfig: ClusterAnalyzer = {
  name: 'topic-config',
  analyze(input: ClusterTriageInput): Finding[] {
    const out: Finding[] = [];
    for (const topic of input.cluster.snapshot.custom['KafkaTopic'] ?? []) {
      const ref: ComponentRef = { kind: 'KafkaTopic', namespace: topic.metadata.namespace, name: topic.metadata.name ?? '?' };
      const id = nodeId(ref);
      if (!input.cluster.walk.reached.has(id)) continue;
      const change = lastChangeBefore('KafkaTopic', topic.metadata, input.onset);
      if (!change || input.onset.getTime() - change.at.getTime() > WINDOW_MS) continue;
      const edits = editedKeys(topic, change.at).filter(worse);
      if (!edits.length) continue;
      const name = String(topic.spec?.['topicName'] ?? ref.name);
      const clients = input.cluster.topology.incoming(id).filter((e) => e.kind === 'consumes').map((e) => refOfId(e.from));
      const clientInputs = input.inputs.filter((i) => i.kube.target && clients.some((c) => c.namespace === i.kube.target!.namespace && c.name === i.kube.target!.name));
      const symptom = new RegExp(edits.map((e) => RISKY[e.key]!.symptom.source).join('|'), 'i');
      const hits = logHits(clientInputs, symptom).filter((h) => !h.first || h.first.getTime() >= change.at.getTime() - 60_000);
      const edit = edits[0]!;
      const isTime = edit.key.endsWith('.ms');
      const valueText = (v: string | undefined) => (isTime ? msWords(v) : (v ?? '?'));
      const supporting: Evidence[] = [
        changeEvidence(change, input.onset),
        {
          kind: 'object',
          summary: `KafkaTopic ${ref.namespace}/${ref.name} (topic ${name}): ${edits.map((e) => `${e.key} ${valueText(e.before)} → ${valueText(e.after)}`).join(', ')}${edit.before !== undefined ? ' (before: its last-applied-configuration)' : ''}`,
          citation: objectCitation('KafkaTopic', ref.namespace, ref.name, 'spec.config'),
        },
        ...hits.slice(0, 2).map((h) => logEvidence(h, `${h.workload.name} since the edit`)),
      ];
      const hitWorkloads = [...new Set(hits.map((h) => `${h.workload.kind}/${h.workload.namespace}/${h.workload.name}`))];
      out.push({
        key: `config-change:${ref.namespace}/KafkaTopic/${ref.name}`,
        analyzer: 'topic-config',
        family: 'config-change',
        status: hits.length ? 'supported' : 'open',
        confidence: hits.length ? 0.88 : 0.45,
        title: `${change.actor} changed topic ${name}'s ${edits.map((e) => e.key).join(', ')} ${edit.before !== undefined ? `from ${valueText(edit.before)} ` : ''}to ${valueText(edit.after)}, ${humanDuration(input.onset.getTime() - change.at.getTime())} before the alert`,
        component: ref,
        mechanism: `${change.summary} at ${clockTime(change.at)}: ${edits.map((e) => `${e.key} ${valueText(e.before)} → ${valueText(e.after)}`).join(', ')}. ${RISKY[edit.key]!.effect}.${hits.length ? ` ${hitWorkloads.map((w) => w.split('/')[2]).join(', ')} logged it from ${clockTime(hits.map((h) => h.first).filter((d): d is Date => !!d).sort((a, b) => a.getTime() - b.getTime())[0] ?? change.at)}: "${hits[0]!.example.slice(0, 160)}".` : ''} Records already deleted cannot be read back from Kafka: put the value back, then replay the gap from the source of truth.`,
        scope: `every client of topic ${name}${clients.length ? `: ${clients.map((c) => c.name).join(', ')}` : ''}`,
        affected: [ref, ...clients],
        facts: {
          object: `KafkaTopic/${ref.name}`,
          topic: name,
          keys: edits.map((e) => e.key).join(','),
          ...(edit.before !== undefined ? { before: edit.before } : {}),
          ...(edit.after !== undefined ? { after: edit.after } : {}),
          editor: change.actor,
          changedAt: change.at.toISOString(),
        },
        supporting,
        refuting: [],
      });
    }
    return out;
  },
};
