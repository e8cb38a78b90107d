/** Kubernetes Events grouped the way an SRE reads them: one line per reason and object, newest first. */
import type { CoreV1Event } from '@kubernetes/client-node';
import { isoTime, timeMs } from '../objects.js';

export interface EventGroup {
  type: string;
  reason: string;
  /** `Pod shop/checkout-7d9f8b6c5-4xk2p` */
  object: string;
  /** Sum of the events' `count` (or series count). */
  count: number;
  firstSeen?: string;
  lastSeen?: string;
  /** The newest event's message. */
  message: string;
  source?: string;
}

/** Newest time an event was seen: lastTimestamp, series, eventTime, then creation. */
export function eventLastSeen(e: CoreV1Event): number | undefined {
  return timeMs(e.lastTimestamp) ?? timeMs(e.series?.lastObservedTime) ?? timeMs(e.eventTime) ?? timeMs(e.metadata?.creationTimestamp);
}

export function eventFirstSeen(e: CoreV1Event): number | undefined {
  return timeMs(e.firstTimestamp) ?? timeMs(e.eventTime) ?? timeMs(e.metadata?.creationTimestamp);
}

function objectName(e: CoreV1Event): string {
  const io = e.involvedObject ?? {};
  const ns = io.namespace ? `${io.namespace}/` : '';
  return `${io.kind ?? '?'} ${ns}${io.name ?? '?'}`;
}

/** Deduplicate by type+reason+object, summing counts; newest group first. */
export function groupEvents(events: CoreV1Event[]): EventGroup[] {
  const groups = new Map<string, { g: EventGroup; first?: number; last?: number }>();
  for (const e of events) {
    const key = `${e.type ?? ''}|${e.reason ?? ''}|${objectName(e)}`;
    const first = eventFirstSeen(e);
    const last = eventLastSeen(e);
    const count = e.series?.count ?? e.count ?? 1;
    const cur = groups.get(key);
    if (!cur) {
      groups.set(key, {
        g: {
          type: e.type ?? 'Normal',
          reason: e.reason ?? '',
          object: objectName(e),
          count,
          message: e.message ?? '',
          ...(e.source?.component || e.reportingComponent ? { source: e.source?.component || e.reportingComponent } : {}),
        },
        ...(first !== undefined ? { first } : {}),
        ...(last !== undefined ? { last } : {}),
      });
      continue;
    }
    cur.g.count += count;
    if (first !== undefined && (cur.first === undefined || first < cur.first)) cur.first = first;
    if (last !== undefined && (cur.last === undefined || last >= cur.last)) {
      cur.last = last;
      cur.g.message = e.message ?? cur.g.message;
    }
  }
  return [...groups.values()]
    .sort((a, b) => (b.last ?? 0) - (a.last ?? 0))
    .map(({ g, first, last }) => ({
      ...g,
      ...(first !== undefined ? { firstSeen: isoTime(new Date(first))! } : {}),
      ...(last !== undefined ? { lastSeen: isoTime(new Date(last))! } : {}),
    }));
}
