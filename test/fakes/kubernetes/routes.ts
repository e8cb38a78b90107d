/**
 * URL → what is asked for, following kube-apiserver's path layout:
 *   /api/v1/[namespaces/<ns>/]<plural>[/<name>[/<subresource>]]
 *   /apis/<group>/<version>/[namespaces/<ns>/]<plural>[/<name>[/<subresource>]]
 * plus the discovery documents /api, /apis, /api/v1 and /apis/<group>/<version>.
 */
import type { ResourceRegistry, ResourceType } from './resources.js';
import { pathNotFound } from './status.js';

export type Route =
  | { kind: 'discovery'; body: object }
  | {
      kind: 'resource';
      type: ResourceType;
      /** Set for namespaced requests; undefined for cluster scope and all-namespaces lists. */
      namespace?: string;
      name?: string;
      subresource?: string;
    };

export function parseRoute(pathname: string, registry: ResourceRegistry): Route {
  const parts = pathname.split('/').filter((p) => p !== '').map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length === 1) return { kind: 'discovery', body: registry.apiVersions() };
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    if (parts.length === 1) return { kind: 'discovery', body: registry.apiGroupList() };
    if (parts.length === 2) throw pathNotFound();
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else throw pathNotFound();

  if (rest.length === 0) {
    const list = registry.apiResourceList(group, version);
    if (!list) throw pathNotFound();
    return { kind: 'discovery', body: list };
  }

  // namespaces/<ns>/<plural>… is a namespaced request unless <plural> is a subresource of Namespace.
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const type = registry.byPlural(group, version, rest[2]!);
    if (type?.namespaced) {
      if (rest.length > 5) throw pathNotFound();
      return {
        kind: 'resource',
        type,
        namespace: rest[1]!,
        ...(rest[3] !== undefined ? { name: rest[3] } : {}),
        ...(rest[4] !== undefined ? { subresource: rest[4] } : {}),
      };
    }
  }
  const type = registry.byPlural(group, version, rest[0]!);
  if (!type || rest.length > 3) throw pathNotFound();
  if (type.namespaced && rest.length > 1) throw pathNotFound();
  return {
    kind: 'resource',
    type,
    ...(rest[1] !== undefined ? { name: rest[1] } : {}),
    ...(rest[2] !== undefined ? { subresource: rest[2] } : {}),
  };
}

/** The RBAC verb of a request: GET on a collection is `list` (or `watch`), on an object `get`. */
export function verbOf(method: string, hasName: boolean, watch: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return watch ? 'watch' : hasName ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}
