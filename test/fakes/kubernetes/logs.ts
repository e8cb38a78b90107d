/**
 * Container logs as the kubelet serves them through `GET …/pods/<name>/log`.
 *
 * A world's log text is stored the way `?timestamps=true` returns it: each line may start with an
 * RFC 3339 timestamp and a space. Without `timestamps=true` that prefix is stripped; `sinceSeconds`
 * and `sinceTime` filter on it (lines without a timestamp are always kept).
 */
import { badRequest } from './status.js';

export interface ContainerLogs {
  current: string;
  previous?: string;
}

/** Keyed `<namespace>/<pod>/<container>`. */
export type WorldLogs = Record<string, ContainerLogs>;

export interface LogQuery {
  container?: string;
  previous?: boolean;
  tailLines?: number;
  sinceSeconds?: number;
  sinceTime?: string;
  timestamps?: boolean;
  limitBytes?: number;
}

interface PodLike {
  metadata?: { name?: string; namespace?: string };
  spec?: { containers?: { name: string }[]; initContainers?: { name: string }[] };
}

const STAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) /;

function pickContainer(pod: PodLike, requested: string | undefined): string {
  const name = pod.metadata?.name ?? '';
  const containers = (pod.spec?.containers ?? []).map((c) => c.name);
  const all = [...containers, ...(pod.spec?.initContainers ?? []).map((c) => c.name)];
  if (requested === undefined || requested === '') {
    if (containers.length === 1) return containers[0]!;
    throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`);
  }
  if (!all.includes(requested)) throw badRequest(`container ${requested} is not valid for pod ${name}`);
  return requested;
}

/** The text the real endpoint would answer for `pod` and `query`; throws 400 Status errors like it. */
export function readPodLog(pod: PodLike, logs: WorldLogs, query: LogQuery, now: Date): string {
  const container = pickContainer(pod, query.container);
  const key = `${pod.metadata?.namespace}/${pod.metadata?.name}/${container}`;
  const stream = logs[key];
  let text: string;
  if (query.previous) {
    if (stream?.previous === undefined)
      throw badRequest(`previous terminated container "${container}" in pod "${pod.metadata?.name}" not found`);
    text = stream.previous;
  } else text = stream?.current ?? '';

  let lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const since =
    query.sinceSeconds !== undefined
      ? now.getTime() - query.sinceSeconds * 1000
      : query.sinceTime !== undefined
        ? Date.parse(query.sinceTime)
        : undefined;
  if (since !== undefined) {
    lines = lines.filter((line) => {
      const m = STAMP.exec(line);
      return !m || Date.parse(m[1]!) >= since;
    });
  }
  if (query.tailLines !== undefined) lines = query.tailLines === 0 ? [] : lines.slice(-query.tailLines);
  if (!query.timestamps) lines = lines.map((line) => line.replace(STAMP, ''));
  let out = lines.map((l) => `${l}\n`).join('');
  if (query.limitBytes !== undefined) out = Buffer.from(out).subarray(0, query.limitBytes).toString('utf8');
  return out;
}
