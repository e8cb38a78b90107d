import type { V1Pod } from '@kubernetes/client-node';
import { z } from 'zod';
import { MAX_TOOL_RESULT_BYTES, type EvidenceTool } from '../../tool.js';
import { mineTemplates } from '../../logs/drain.js';
import type { LogLine } from '../../logs/types.js';
import type { KubeReader } from '../client.js';
import { apiPath, attemptRead, isoTime, KubeObjects, toFailure } from '../objects.js';
import { failure, kubeCitation, noData, success } from './result.js';

const parameters = z.object({
  namespace: z.string().min(1).describe('Namespace.'),
  pod: z.string().min(1).describe('Pod.'),
  container: z.string().optional().describe("Default: the pod's default container."),
  previous: z.boolean().default(false).describe('The previous (crashed) instance.'),
  tailLines: z.number().int().min(1).max(2000).default(200).describe('Newest lines read.'),
  sinceSeconds: z.number().int().min(1).optional().describe('Only lines of the last N seconds.'),
});

/** The container the kubelet would pick: kubectl's default-container annotation, else the first one. */
function pickContainer(pod: V1Pod, requested: string | undefined): string | undefined {
  if (requested) return requested;
  return pod.metadata?.annotations?.['kubectl.kubernetes.io/default-container'] ?? pod.spec?.containers?.[0]?.name;
}

/** Bytes read per call at most (the kubelet stops there): 2,000 long lines are not worth more. */
export const POD_LOG_LIMIT_BYTES = 512 * 1024;

const STAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) /;

/** `timestamps=true` prefixes each line with the kubelet's RFC 3339 receive time. */
export function parseStamped(raw: string): LogLine {
  const m = STAMP.exec(raw);
  return m ? { ts: new Date(m[1]!), line: raw.slice(m[0].length) } : { line: raw };
}

/** Newest lines that fit in `budget` bytes, oldest dropped first (logs matter most at their end). */
export function newestLinesWithin(lines: string[], budget: number): { lines: string[]; dropped: number } {
  const out: string[] = [];
  let size = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.length > 1000 ? `${lines[i]!.slice(0, 1000)}…` : lines[i]!;
    size += Buffer.byteLength(line) + 4;
    if (size > budget) break;
    out.unshift(line);
  }
  return { lines: out, dropped: lines.length - out.length };
}

export function k8sPodLogsTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_pod_logs',
    description:
      'One pod container\'s logs as line patterns (count, first/last time, level, one example), the last lines, and its state and last termination. previous=true reads the crashed instance of a restarting container.',
    parameters,
    effect: 'read',
    // k8s_workload_logs reads every pod of a workload (previous instances too); this is for one pod.
    onDemand: 'one pod container\'s logs, its last lines and last termination',
    async execute(p, ctx) {
      const podInfo = KubeObjects.kind('Pod');
      const podCitation = kubeCitation(apiPath(podInfo, p.namespace, p.pod));
      let pod: V1Pod;
      try {
        pod = await new KubeObjects(reader).get<V1Pod>(podInfo, p.namespace, p.pod);
      } catch (err) {
        return failure(podCitation, err, ctx, 'get', 'pods', p.namespace);
      }
      const container = pickContainer(pod, p.container);
      const query = [`container=${container ?? ''}`, p.previous ? 'previous=true' : '', `tailLines=${p.tailLines}`, p.sinceSeconds ? `sinceSeconds=${p.sinceSeconds}` : '', `limitBytes=${POD_LOG_LIMIT_BYTES}`].filter(Boolean).join('&');
      const citation = kubeCitation(`${apiPath(podInfo, p.namespace, p.pod)}/log?${query}`);
      const status = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])].find((c) => c.name === container);
      const last = status?.lastState?.terminated;
      const state = status?.state?.waiting
        ? { waiting: status.state.waiting.reason, message: status.state.waiting.message }
        : status?.state?.terminated
          ? { terminated: status.state.terminated.reason, exitCode: status.state.terminated.exitCode, finishedAt: isoTime(status.state.terminated.finishedAt) }
          : status?.state?.running
            ? { running: true, startedAt: isoTime(status.state.running.startedAt) }
            : undefined;
      const containerFacts = {
        container,
        ...(status ? { ready: status.ready, restarts: status.restartCount } : {}),
        ...(state ? { state } : {}),
        ...(last ? { lastTermination: { reason: last.reason, exitCode: last.exitCode, ...(isoTime(last.startedAt) ? { startedAt: isoTime(last.startedAt) } : {}), ...(isoTime(last.finishedAt) ? { finishedAt: isoTime(last.finishedAt) } : {}) } } : {}),
      };
      let text: string;
      try {
        text = await attemptRead('get', 'pods/log', p.namespace, () =>
          reader.readPodLog(p.namespace, p.pod, {
            ...(container ? { container } : {}),
            previous: p.previous,
            tailLines: p.tailLines,
            ...(p.sinceSeconds ? { sinceSeconds: p.sinceSeconds } : {}),
            limitBytes: POD_LOG_LIMIT_BYTES,
            timestamps: true,
          }),
        );
      } catch (err) {
        const f = toFailure(err, 'get', 'pods/log', p.namespace);
        // The API answers 400 when there is no previous instance: that is "nothing to read", not a fault.
        if (f.status === 400 && /previous terminated container/.test(f.serverMessage)) return noData(citation, ctx.redactor.redactText(f.serverMessage));
        return failure(citation, f, ctx);
      }
      const all = text.split('\n').filter((l) => l !== '').map(parseStamped);
      if (all.length === 0) return noData(citation, `no log lines for ${p.namespace}/${p.pod}/${container ?? '?'}${p.previous ? ' (previous)' : ''}${p.sinceSeconds ? ` in the last ${p.sinceSeconds}s` : ''}`);
      // Redacted as a whole log (timestamps already stripped), so a key printed over several lines goes entirely.
      const redactedLines = ctx.redactor.redactLines(all.map((l) => l.line));
      const redacted: LogLine[] = all.map((l, i) => ({ ...l, line: redactedLines[i]! }));
      const patterns = mineTemplates(redacted, { maxPatterns: 25, exampleLength: 240 }).map((t) => ({
        template: t.template,
        count: t.count,
        ...(t.level ? { level: t.level } : {}),
        ...(t.first ? { first: t.first.toISOString() } : {}),
        ...(t.last ? { last: t.last.toISOString() } : {}),
        example: t.example,
      }));
      // Patterns say what kept happening; the tail says how it ended (a stack trace, the last error).
      const budget = Math.floor((ctx.maxBytes ?? MAX_TOOL_RESULT_BYTES) * 0.3);
      const { lines: tail, dropped } = newestLinesWithin(redacted.slice(-40).map((l) => (l.ts ? `${l.ts.toISOString()} ${l.line}` : l.line)), budget);
      // A short log is all in the tail: its patterns need no example of their own.
      const whole = tail.length === all.length;
      const data = {
        ...containerFacts,
        previous: p.previous,
        lineCount: all.length,
        patterns: whole ? patterns.map(({ example: _e, ...rest }) => rest) : patterns,
        lastLines: tail,
        ...(dropped ? { lastLinesDropped: dropped } : {}),
      };
      const result = success(citation, data, ctx, [
        {
          kind: 'log',
          summary: `${all.length} log lines (${patterns.length} patterns) from ${p.namespace}/${p.pod}/${container ?? '?'}${p.previous ? ' (previous instance)' : ''}${last ? `; last terminated ${last.reason ?? ''} exit ${last.exitCode}` : ''}`,
          citation,
          observedAt: ctx.now,
        },
      ]);
      return result;
    },
  };
}
