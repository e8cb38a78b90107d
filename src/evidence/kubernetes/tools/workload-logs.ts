/**
 * `k8s_workload_logs`: a workload's pods' logs in one call, read the way deterministic triage reads
 * them — the current log of Running pods (not-ready ones first; most application errors happen in pods
 * that never restart) and the previous instance of restarted containers — each bounded by
 * `sinceSeconds` (from a little before the onset), `tailLines` and `limitBytes`, redacted as whole logs,
 * and returned as clustered patterns (Drain templates; error templates; templates new or jumping since
 * the onset), never as raw lines.
 */
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { z } from 'zod';
import { summarizeLogs, type LogsSummary } from '../../logs/summary.js';
import { OTHER_TEMPLATE, type LogLine, type LogPattern } from '../../logs/types.js';
import type { EvidenceTool, ToolResult } from '../../tool.js';
import type { Evidence } from '../../types.js';
import type { KubeReader } from '../client.js';
import { apiPath, attemptRead, builtinKind, KubeObjects, selectorString, toFailure } from '../objects.js';
import { appContainer } from '../workload-evidence.js';
import { parseStamped } from './pod-logs.js';
import { failure, kubeCitation, noData, success } from './result.js';

const WORKLOAD_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'] as const;

const parameters = z.object({
  namespace: z.string().min(1).describe('Namespace.'),
  name: z.string().min(1).describe('Workload.'),
  kind: z.string().optional().describe('Default: the Deployment, StatefulSet or DaemonSet of that name.'),
  container: z.string().optional().describe('Default: the app container (not a sidecar).'),
  maxPods: z.number().int().min(1).max(5).default(3).describe('Running pods read.'),
  sinceSeconds: z.number().int().min(60).max(86_400).optional().describe('Default: from 20 min before the onset.'),
  tailLines: z.number().int().min(10).max(1000).default(400).describe('Newest lines per container.'),
});

/** Per container read: the kubelet stops there. */
export const WORKLOAD_LOG_LIMIT_BYTES = 256 * 1024;
/** Running pods' logs from this long before the onset: the baseline the errors stand out from. */
const LOG_LEAD_MS = 20 * 60_000;
const DEFAULT_SINCE_SECONDS = 30 * 60;
const MAX_PREVIOUS = 2;
const MAX_LISTED = 10;

interface Read {
  pod: string;
  container: string;
  previous: boolean;
  phase?: string;
  ready: boolean;
  restarts: number;
  path: string;
}

export function k8sWorkloadLogsTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_workload_logs',
    description:
      'All of a workload\'s pods\' logs in one call, as patterns: error templates first, then templates new or jumping since the onset (counts before/after), from 20 minutes before the onset; restarted containers\' previous instance included.',
    parameters,
    effect: 'read',
    async execute(p, ctx): Promise<ToolResult> {
      const objects = new KubeObjects(reader);
      const wanted = p.kind ? builtinKind(p.kind)?.kind : undefined;
      if (p.kind && !WORKLOAD_KINDS.includes(wanted as (typeof WORKLOAD_KINDS)[number])) {
        return { status: 'error', citation: kubeCitation(`${p.namespace}/${p.kind}/${p.name}`), error: `kind "${p.kind}" has no pods of its own here: use Deployment, StatefulSet or DaemonSet (the topology tool names the workload behind a Service or Pod).` };
      }
      let workload: V1Deployment | undefined;
      let info = KubeObjects.kind(wanted ?? 'Deployment');
      for (const kind of wanted ? [wanted] : WORKLOAD_KINDS) {
        info = KubeObjects.kind(kind);
        try {
          workload = await objects.get<V1Deployment>(info, p.namespace, p.name);
          break;
        } catch (err) {
          const f = toFailure(err, 'get', info.plural, p.namespace);
          if (f.status !== 404) return failure(kubeCitation(apiPath(info, p.namespace, p.name)), f, ctx);
        }
      }
      if (!workload) {
        const kinds = wanted ? wanted : WORKLOAD_KINDS.join(', ');
        return noData(kubeCitation(apiPath(info, p.namespace, p.name)), `no ${kinds} named "${p.name}" in namespace ${p.namespace}. If that is a Service or a pod, call topology to find its workload, then call k8s_workload_logs with that name.`);
      }
      const selector = selectorString(workload.spec?.selector);
      const podInfo = KubeObjects.kind('Pod');
      const now = ctx.now;
      const onset = ctx.investigation?.onset;
      const sinceSeconds = p.sinceSeconds ?? (onset ? Math.max(60, Math.ceil((now.getTime() - (onset.getTime() - LOG_LEAD_MS)) / 1000)) : DEFAULT_SINCE_SECONDS);
      const listCitation = kubeCitation(`${apiPath(podInfo, p.namespace)}?labelSelector=${selector} → log?sinceSeconds=${sinceSeconds}&tailLines=${p.tailLines}&limitBytes=${WORKLOAD_LOG_LIMIT_BYTES}`);
      if (!selector) return noData(listCitation, `${info.kind} ${p.namespace}/${p.name} has no pod selector`);
      let pods: V1Pod[];
      try {
        pods = (await objects.list<V1Pod>(podInfo, { namespace: p.namespace, labelSelector: selector, limit: 500 })).items;
      } catch (err) {
        return failure(listCitation, err, ctx, 'list', 'pods', p.namespace);
      }
      const reads = choose(pods, p, sinceSeconds);
      if (reads.length === 0) {
        const phases = pods.map((x) => `${x.metadata?.name} ${x.status?.phase ?? '?'}`).slice(0, MAX_LISTED);
        return noData(listCitation, `${info.kind} ${p.namespace}/${p.name} has no Running pod and no restarted container to read${pods.length ? ` (pods: ${phases.join(', ')})` : ' (no pods: check its replicas with k8s_describe)'}`);
      }

      const current: LogLine[] = [];
      const previous: LogLine[] = [];
      const perPod: Record<string, unknown>[] = [];
      const evidence: Evidence[] = [];
      let forbidden: unknown;
      await Promise.all(
        reads.map(async (r) => {
          let text: string;
          try {
            text = await attemptRead('get', 'pods/log', p.namespace, () =>
              reader.readPodLog(p.namespace, r.pod, { container: r.container, previous: r.previous, tailLines: p.tailLines, limitBytes: WORKLOAD_LOG_LIMIT_BYTES, timestamps: true, ...(r.previous ? {} : { sinceSeconds }) }),
            );
          } catch (err) {
            const f = toFailure(err, 'get', 'pods/log', p.namespace);
            if (f.status === 403) forbidden = f;
            perPod.push({ ...podFacts(r), error: ctx.redactor.redactText(f.serverMessage).slice(0, 200) });
            return;
          }
          const raw = typeof text === 'string' ? text.split('\n').filter((l) => l !== '') : [];
          const stamped = raw.map(parseStamped);
          // Redacted as a whole log before mining: a key printed over several lines goes entirely.
          const redacted = ctx.redactor.redactLines(stamped.map((l) => l.line));
          const lines = stamped.map((l, i) => ({ ...l, line: redacted[i]! }));
          (r.previous ? previous : current).push(...lines);
          const bytes = Buffer.byteLength(typeof text === 'string' ? text : '');
          const cut = bytes >= WORKLOAD_LOG_LIMIT_BYTES - 1024 ? 'limitBytes' : raw.length >= p.tailLines ? 'tailLines' : undefined;
          perPod.push({ ...podFacts(r), lines: raw.length, ...(cut ? { cutAt: cut } : {}) });
          evidence.push({
            kind: 'log',
            summary: `${raw.length} log lines from ${r.pod}/${r.container}${r.previous ? ' (previous instance)' : ''}`,
            citation: kubeCitation(r.path),
            observedAt: now,
          });
        }),
      );
      if (current.length + previous.length === 0) {
        if (forbidden) return failure(listCitation, forbidden, ctx, 'get', 'pods/log', p.namespace);
        return noData(listCitation, `no log lines from ${reads.map((r) => `${r.pod}/${r.container}${r.previous ? ' (previous)' : ''}`).join(', ')} in the last ${sinceSeconds}s`);
      }
      const order = reads.map((r) => `${r.pod}/${r.container}/${r.previous}`);
      perPod.sort((a, b) => order.indexOf(`${a['pod']}/${a['container']}/${!!a['previous']}`) - order.indexOf(`${b['pod']}/${b['container']}/${!!b['previous']}`));
      const window = { from: new Date(now.getTime() - sinceSeconds * 1000), to: now };
      const byTime = (a: LogLine, b: LogLine) => (a.ts?.getTime() ?? 0) - (b.ts?.getTime() ?? 0);
      const cur = current.length ? summarizeLogs(current.sort(byTime), { maxPatterns: 12, exampleLength: 200, ...(onset ? { onset } : {}), range: window }) : undefined;
      const prev = previous.length ? summarizeLogs(previous.sort(byTime), { maxPatterns: 8, exampleLength: 200 }) : undefined;
      const data = {
        workload: `${info.kind}/${p.namespace}/${p.name}`,
        selector,
        // tailLines and limitBytes are in the cite.
        window: { sinceSeconds, from: window.from.toISOString() },
        pods: perPod,
        ...(pods.length > reads.length ? { podsNotRead: pods.length - new Set(reads.map((r) => r.pod)).size } : {}),
        ...(cur ? { current: { lines: cur.totalLines, patterns: merged(cur, 12), ...(cur.patterns.length > 12 ? { otherTemplates: cur.patterns.length - 12 } : {}) } } : {}),
        ...(prev ? { previousInstances: { lines: prev.totalLines, patterns: merged(prev, 8) } } : {}),
      };
      const top = cur?.errorPatterns[0] ?? prev?.errorPatterns[0];
      if (top) evidence.unshift({ kind: 'log', summary: `most frequent error ×${top.count}: ${top.template.slice(0, 200)}`, citation: listCitation, observedAt: now });
      return success(listCitation, data, ctx, evidence);
    },
  };
}

/** Running pods (not ready first), one app container each, then the previous instance of restarted containers. */
function choose(pods: V1Pod[], p: z.infer<typeof parameters>, sinceSeconds: number): Read[] {
  const podInfo = KubeObjects.kind('Pod');
  const ready = (x: V1Pod) => (x.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  const restarts = (x: V1Pod) => (x.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
  const base = (x: V1Pod, container: string, previous: boolean): Read => {
    const name = x.metadata?.name ?? '?';
    const query = [`container=${container}`, previous ? 'previous=true' : `sinceSeconds=${sinceSeconds}`, `tailLines=${p.tailLines}`, `limitBytes=${WORKLOAD_LOG_LIMIT_BYTES}`].join('&');
    return { pod: name, container, previous, ...(x.status?.phase ? { phase: x.status.phase } : {}), ready: ready(x), restarts: restarts(x), path: `${apiPath(podInfo, x.metadata?.namespace, name)}/log?${query}` };
  };
  const running = pods.filter((x) => x.status?.phase === 'Running').sort((a, b) => Number(ready(a)) - Number(ready(b)) || restarts(b) - restarts(a));
  const out: Read[] = [];
  for (const x of running) {
    const container = p.container ?? appContainer(x);
    if (!container || !(x.spec?.containers ?? []).some((c) => c.name === container)) continue;
    out.push(base(x, container, false));
    if (out.length >= p.maxPods) break;
  }
  let prev = 0;
  for (const x of [...pods].sort((a, b) => restarts(b) - restarts(a))) {
    for (const c of x.status?.containerStatuses ?? []) {
      if ((c.restartCount ?? 0) === 0 || (p.container && c.name !== p.container) || prev >= MAX_PREVIOUS) continue;
      out.push(base(x, c.name, true));
      prev++;
    }
  }
  return out;
}

function podFacts(r: Read): Record<string, unknown> {
  return { pod: r.pod, container: r.container, ...(r.previous ? { previous: true } : {}), ...(r.phase ? { phase: r.phase } : {}), ready: r.ready, restarts: r.restarts };
}

/**
 * One list per summary, each template once: error templates first, then the ones new or jumping since
 * the onset (with their counts before/after), then the most frequent others.
 */
function merged(sum: LogsSummary, max: number): Record<string, unknown>[] {
  const changes = new Map(sum.newSinceOnset.map((c) => [c.template, c.change]));
  const seen = new Set<string>();
  const ordered: LogPattern[] = [];
  const add = (x: LogPattern) => {
    if (seen.has(x.template)) return;
    seen.add(x.template);
    ordered.push(x);
  };
  for (const x of sum.errorPatterns) add(x);
  for (const x of sum.newSinceOnset) add(x);
  for (const x of sum.patterns) add(x);
  return ordered.slice(0, max).map((x) => {
    const change = changes.get(x.template);
    return {
      template: x.template,
      count: x.count,
      ...(x.level ? { level: x.level } : {}),
      ...(x.first ? { first: x.first.toISOString() } : {}),
      ...(x.last ? { last: x.last.toISOString() } : {}),
      ...(change ? { sinceOnset: change.kind, before: change.countBefore, after: change.countAfter } : {}),
      // An example says more than its template only where the template hides words (`<*>`, a cut) or it is
      // an error or warning; a line whose placeholders are times and numbers is read from the template.
      ...(x.template !== x.example && (/<\*>|…/.test(x.template) || x.level === 'error' || x.level === 'warn' || x.template === OTHER_TEMPLATE) ? { example: x.example } : {}),
    };
  });
}
