/**
 * The two authentication/authorisation endpoints Vigil calls: TokenRequest
 * (`POST …/serviceaccounts/<sa>/token`, a short-lived token for the SA, with the rules configured
 * for that SA's user name) and SelfSubjectAccessReview (answered from the caller's rules).
 */
import { randomBytes } from 'node:crypto';
import { isAllowed, type Identity, type IdentityBook } from './rbac.js';
import { badRequest } from './status.js';
import { kubeTime } from './writes.js';

export interface TokenRequestInput {
  namespace: string;
  serviceAccount: string;
  body: { spec?: { audiences?: string[]; expirationSeconds?: number } };
  now: Date;
}

/** Issues and registers a token; the API refuses lifetimes under 10 minutes. */
export function issueToken(book: IdentityBook, input: TokenRequestInput): object {
  const { namespace, serviceAccount, body, now } = input;
  const seconds = body.spec?.expirationSeconds ?? 3600;
  if (seconds < 600) throw badRequest(`spec.expirationSeconds: Invalid value: ${seconds}: may not specify a duration less than 10 minutes`);
  const user = `system:serviceaccount:${namespace}:${serviceAccount}`;
  const token = `fake-sa-token.${randomBytes(18).toString('base64url')}`;
  const expires = new Date(now.getTime() + seconds * 1000);
  const groups = ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
  book.add(token, { ...book.byUser(user), user, groups }, expires.getTime());
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: serviceAccount, namespace, creationTimestamp: null },
    spec: { audiences: body.spec?.audiences ?? ['https://kubernetes.default.svc'], expirationSeconds: seconds, boundObjectRef: null },
    status: { token, expirationTimestamp: kubeTime(expires) },
  };
}

interface ReviewBody {
  spec?: { resourceAttributes?: { verb?: string; group?: string; resource?: string; subresource?: string; namespace?: string; name?: string } };
}

export function reviewAccess(actor: Identity, review: ReviewBody): object {
  const ra = review.spec?.resourceAttributes;
  const allowed =
    ra?.verb !== undefined &&
    ra.resource !== undefined &&
    isAllowed(actor, {
      verb: ra.verb,
      group: ra.group ?? '',
      resource: ra.subresource ? `${ra.resource}/${ra.subresource}` : ra.resource,
      ...(ra.namespace ? { namespace: ra.namespace } : {}),
      ...(ra.name ? { name: ra.name } : {}),
    });
  return {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: review.spec ?? {},
    status: allowed ? { allowed: true, reason: 'RBAC: allowed by fake RBAC rules' } : { allowed: false },
  };
}
