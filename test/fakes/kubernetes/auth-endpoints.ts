/**
 * The authentication/authorisation endpoints: TokenRequest (`POST …/serviceaccounts/<sa>/token`, a
 * short-lived token for the SA, authorised as that SA's user), SelfSubjectAccessReview and
 * SelfSubjectRulesReview (answered from the caller's own rules), and SubjectAccessReview (answered for
 * the user and groups it names, from the same rules the API server enforces), and SelfSubjectReview
 * (authentication.k8s.io/v1, `kubectl auth whoami`: the caller's user name, groups and extras).
 */
import { randomBytes } from 'node:crypto';
import { allowingRule, serviceAccountUser, userInfoOf, type Identity, type IdentityBook, type PolicyRule, type RequestAttributes } from './rbac.js';
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
  const token = `fake-sa-token.${randomBytes(18).toString('base64url')}`;
  const expires = new Date(now.getTime() + seconds * 1000);
  book.addUser(token, serviceAccountUser(namespace, serviceAccount), expires.getTime());
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: serviceAccount, namespace, creationTimestamp: null },
    spec: { audiences: body.spec?.audiences ?? ['https://kubernetes.default.svc'], expirationSeconds: seconds, boundObjectRef: null },
    status: { token, expirationTimestamp: kubeTime(expires) },
  };
}

interface ReviewSpec {
  resourceAttributes?: { verb?: string; group?: string; resource?: string; subresource?: string; namespace?: string; name?: string };
  nonResourceAttributes?: { verb?: string; path?: string };
  user?: string;
  groups?: string[];
}
interface ReviewBody {
  spec?: ReviewSpec;
}

function attributesOf(spec: ReviewSpec | undefined): RequestAttributes | undefined {
  const ra = spec?.resourceAttributes;
  if (ra) {
    if (ra.verb === undefined || ra.resource === undefined) return undefined;
    return {
      verb: ra.verb,
      group: ra.group ?? '',
      resource: ra.subresource ? `${ra.resource}/${ra.subresource}` : ra.resource,
      ...(ra.namespace ? { namespace: ra.namespace } : {}),
      ...(ra.name ? { name: ra.name } : {}),
    };
  }
  const nra = spec?.nonResourceAttributes;
  return nra?.verb !== undefined && nra.path !== undefined ? { verb: nra.verb, path: nra.path } : undefined;
}

function answer(rules: PolicyRule[], spec: ReviewSpec | undefined): { allowed: boolean; reason?: string } {
  if (spec?.resourceAttributes && spec.nonResourceAttributes) throw badRequest('spec.nonResourceAttributes: Invalid value: "": cannot be specified in combination with resourceAttributes');
  const attrs = attributesOf(spec);
  if (!attrs) throw badRequest('spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified');
  const rule = allowingRule(rules, attrs);
  return rule ? { allowed: true, reason: rule.grantedBy ? `RBAC: allowed by ${rule.grantedBy}` : 'RBAC: allowed by fake RBAC rules' } : { allowed: false };
}

export function reviewAccess(actor: Identity, review: ReviewBody): object {
  return {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: review.spec ?? {},
    status: answer(actor.rules, review.spec),
  };
}

/** A SubjectAccessReview: may `spec.user` (in `spec.groups`) do this? Only the caller's right to ask is checked by the server. */
export function reviewSubjectAccess(book: IdentityBook, review: ReviewBody): object {
  const user = review.spec?.user;
  if (!user && !review.spec?.groups?.length) throw badRequest('spec.user: Invalid value: "": at least one of user or group must be specified');
  const subject = book.resolve(userInfoOf(user ?? '', review.spec?.groups));
  return {
    kind: 'SubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: review.spec ?? {},
    status: answer(subject.rules, review.spec),
  };
}

/** SelfSubjectRulesReview: the rules that apply in `spec.namespace` (and the non-resource ones). */
export function reviewRules(actor: Identity, review: { spec?: { namespace?: string } }): object {
  const ns = review.spec?.namespace;
  if (!ns) throw badRequest('spec.namespace: Required value: no namespace on request');
  const applies = actor.rules.filter((r) => !r.namespaces || r.namespaces.includes('*') || r.namespaces.includes(ns));
  return {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: { namespace: ns },
    status: {
      resourceRules: applies
        .filter((r) => r.resources.length)
        .map((r) => ({ verbs: r.verbs, apiGroups: r.apiGroups, resources: r.resources, ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}) })),
      nonResourceRules: actor.rules.filter((r) => !r.namespaces && r.nonResourceURLs?.length).map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs! })),
      incomplete: false,
    },
  };
}

/** SelfSubjectReview: who the request authenticated as (after impersonation), as kube-apiserver answers it. */
export function reviewSelf(actor: Identity, extra: Record<string, string[]>): object {
  return {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: null },
    status: { userInfo: { username: actor.user, groups: [...new Set([...(actor.groups ?? []), 'system:authenticated'])], ...(Object.keys(extra).length ? { extra } : {}) } },
  };
}
