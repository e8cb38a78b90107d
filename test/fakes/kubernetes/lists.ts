/**
 * Collection reads: `XxxList` bodies with label/field selectors and `limit`/`continue` pagination,
 * and the watch form of the same request (one ADDED event per matching object, then the stream ends,
 * which client-node's Watch reports as done).
 */
import { apiVersionOf, type ResourceType } from './resources.js';
import { parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';
import { badRequest } from './status.js';
import type { KubeObject, ObjectStore } from './store.js';

export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: string;
  continue?: string;
}

function select(items: KubeObject[], type: ResourceType, query: ListQuery): KubeObject[] {
  try {
    if (query.labelSelector) {
      const match = parseLabelSelector(query.labelSelector);
      items = items.filter((o) => match(o.metadata.labels));
    }
    if (query.fieldSelector) {
      const match = parseFieldSelector(query.fieldSelector, type.kind);
      items = items.filter((o) => match(o as Record<string, unknown>));
    }
    return items;
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(err.message);
    throw err;
  }
}

export function listObjects(store: ObjectStore, type: ResourceType, namespace: string | undefined, query: ListQuery): object {
  const items = select(store.list(type, namespace), type, query);
  let start = 0;
  if (query.continue) {
    try {
      start = (JSON.parse(Buffer.from(query.continue, 'base64url').toString('utf8')) as { start: number }).start;
    } catch {
      throw badRequest('continue key is not valid: illegal base64 data');
    }
  }
  const limit = query.limit ? Number(query.limit) : 0;
  const end = limit > 0 ? Math.min(start + limit, items.length) : items.length;
  const remaining = items.length - end;
  const metadata: Record<string, unknown> = { resourceVersion: store.resourceVersion };
  if (remaining > 0) {
    metadata['continue'] = Buffer.from(JSON.stringify({ start: end, rv: store.resourceVersion })).toString('base64url');
    metadata['remainingItemCount'] = remaining;
  }
  return { kind: `${type.kind}List`, apiVersion: apiVersionOf(type), metadata, items: items.slice(start, end) };
}

export function watchEvents(store: ObjectStore, type: ResourceType, namespace: string | undefined, query: ListQuery): object[] {
  return select(store.list(type, namespace), type, query).map((object) => ({ type: 'ADDED', object }));
}
