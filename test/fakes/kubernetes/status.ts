/**
 * `metav1.Status` failure bodies worded like kube-apiserver's, so code under test that reads
 * `.code`, `.reason` or the message of an `ApiException` sees what production would show.
 */

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: object[]; retryAfterSeconds?: number };
  code: number;
}

/** Thrown inside the router and turned into a Status response; `detail` (never sent) is what the server knew but did not say. */
export class KubeError extends Error {
  constructor(
    readonly status: StatusBody,
    detail?: string,
  ) {
    super(detail ?? status.message);
  }
}

/** `deployments.apps` or `pods` (core). */
export function qualifiedResource(plural: string, group: string): string {
  return group ? `${plural}.${group}` : plural;
}

function failure(code: number, reason: string, message: string, details?: StatusBody['details']): StatusBody {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
}

export function notFound(plural: string, group: string, name: string): KubeError {
  return new KubeError(
    failure(404, 'NotFound', `${qualifiedResource(plural, group)} "${name}" not found`, { name, group, kind: plural }),
  );
}

export function pathNotFound(): KubeError {
  return new KubeError(failure(404, 'NotFound', 'the server could not find the requested resource', {}));
}

export function unauthorized(): KubeError {
  return new KubeError(failure(401, 'Unauthorized', 'Unauthorized'));
}

export interface ForbiddenInput {
  user: string;
  verb: string;
  /** `deployments` or `deployments/scale`. */
  resource: string;
  group: string;
  namespace?: string;
  name?: string;
}

/** e.g. `deployments.apps "checkout" is forbidden: User "u" cannot patch resource "deployments" in API group "apps" in the namespace "shop"`. */
export function forbidden(input: ForbiddenInput): KubeError {
  const base = input.resource.split('/')[0]!;
  const subject = `${qualifiedResource(base, input.group)}${input.name ? ` "${input.name}"` : ''}`;
  const scope = input.namespace ? `in the namespace "${input.namespace}"` : 'at the cluster scope';
  const message = `${subject} is forbidden: User "${input.user}" cannot ${input.verb} resource "${input.resource}" in API group "${input.group}" ${scope}`;
  return new KubeError(
    failure(403, 'Forbidden', message, { ...(input.name ? { name: input.name } : {}), group: input.group, kind: base }),
  );
}

export function badRequest(message: string): KubeError {
  return new KubeError(failure(400, 'BadRequest', message));
}

export function alreadyExists(plural: string, group: string, name: string): KubeError {
  return new KubeError(
    failure(409, 'AlreadyExists', `${qualifiedResource(plural, group)} "${name}" already exists`, {
      name,
      group,
      kind: plural,
    }),
  );
}

export function conflict(plural: string, group: string, name: string): KubeError {
  return new KubeError(
    failure(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(plural, group)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      { name, group, kind: plural },
    ),
  );
}

/** 422 with one field cause, e.g. a negative replica count. */
export function invalid(kind: string, group: string, name: string, field: string, message: string): KubeError {
  const kindRef = group ? `${kind}.${group}` : kind;
  return new KubeError(
    failure(422, 'Invalid', `${kindRef} "${name}" is invalid: ${field}: ${message}`, {
      name,
      group,
      kind,
      causes: [{ reason: 'FieldValueInvalid', message, field }],
    }),
  );
}

/**
 * A JSON patch that does not apply to the current object (a failed `test` op, a missing path). kube-apiserver
 * answers with `NewGenericServerResponse(422, …)`, whose message is generic: the patch library's own words
 * (`testing value /spec/replicas failed: test failed`) do not reach the client. They stay in `detail`.
 */
export function patchNotApplied(detail: string): KubeError {
  return new KubeError(failure(422, 'Invalid', 'the server rejected our request due to an error in our request', {}), detail);
}

export function unsupportedMediaType(contentType: string): KubeError {
  return new KubeError(
    failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format (${contentType}) - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`,
    ),
  );
}

/** For `failNext`: a generic failure with the reason Kubernetes uses for that code. */
/** What the API server answers on an injected failure; `retryAfterSeconds` as APF's 429 and a 503 during overload carry it. */
export function genericFailure(code: number, retryAfterSeconds?: number): KubeError {
  const reasons: Record<number, string> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    409: 'Conflict',
    410: 'Expired',
    422: 'Invalid',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return new KubeError(failure(code, reasons[code] ?? 'Unknown', `injected failure (HTTP ${code})`, retryAfterSeconds !== undefined ? { retryAfterSeconds } : undefined));
}

export function success(details: StatusBody['details']): StatusBody {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', ...(details ? { details } : {}), code: 200 };
}
