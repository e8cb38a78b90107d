/**
 * `rbac-denied` for a cloud API: the workload's pods lost the cloud identity their ServiceAccount gives
 * them, so calls to S3/GCS/Key Vault are refused or find no credentials. Kubernetes binds pods to cloud
 * roles through an annotation on the ServiceAccount that an admission webhook turns into pod env and a
 * projected token:
 *   - EKS IRSA: `eks.amazonaws.com/role-arn` → `AWS_ROLE_ARN`, `AWS_WEB_IDENTITY_TOKEN_FILE`;
 *   - GKE Workload Identity: `iam.gke.io/gcp-service-account` (no env; the metadata server maps it);
 *   - Azure Workload Identity: `azure.workload.identity/client-id` → `AZURE_CLIENT_ID`, `AZURE_FEDERATED_TOKEN_FILE`.
 * When the annotation goes (a chart that renders it from a renamed value, a hand edit, a new
 * ServiceAccount) new pods fall back to the node's identity (`assumed-role/<node-role>/i-…` is not
 * authorized to perform `s3:PutObject`) or to no credentials at all (`Unable to load credentials from any
 * of the providers in the chain`). Nothing restarts; probes pass; the app logs the SDK's words.
 *
 * Read from the candidates' logs (Running pods included): the SDK wordings below. Then, for each
 * workload that logs them, its pod template's ServiceAccount:
 *   - annotation absent, and it was there before (Helm values of the release still or previously hold
 *     it, the last-applied-configuration holds it, or older pods carry the injected env) or the
 *     ServiceAccount was written shortly before the first denial → `annotation_removed`, localised to
 *     the ServiceAccount; supported;
 *   - annotation present but written shortly before the first denial → `annotation_changed`; supported;
 *   - the rollout switched `serviceAccountName` → `service_account_changed`, localised to the workload;
 *   - annotation present and unchanged: the role's cloud-side policy changed, which the cluster cannot
 *     show → an `open` lead on the ServiceAccount.
 * Facts: `serviceAccount` (`ns/name`), `provider` (`aws` | `gcp` | `azure`), `annotation`, `role` (the
 * identity the pods should have), `principal` (the identity the cloud saw, when it says), `verb` (the
 * refused action, `s3:PutObject`), `reason`, `manager`, `changedAt`, `pods`. No mitigation: restoring the
 * annotation is a values change plus a restart, and cloud access is a security decision.
 */
import type { V1Pod, V1ServiceAccount } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { ClusterAnalyzer, ClusterTriageInput, TriageInput } from '../analyzer.js';
import { targetScope } from '../analyzers/deploy-regression.js';
import { revisions } from '../analyzers/crash-loop.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { describeWriter, writersOf } from '../../evidence/kubernetes/managed-fields.js';
import { logEvidence, logHits, type LogHit } from './common.js';

const NAME = 'cloud-identity';
/** A ServiceAccount write this long before the first denial can be what removed the identity. */
const RECENT_MS = 6 * 3600_000;
const SKEW_MS = 120_000;
const REPEATS = 3;

export type CloudProvider = 'aws' | 'gcp' | 'azure';

export const IDENTITY_ANNOTATION: Record<CloudProvider, string> = {
  aws: 'eks.amazonaws.com/role-arn',
  gcp: 'iam.gke.io/gcp-service-account',
  azure: 'azure.workload.identity/client-id',
};
/** The env the provider's webhook injects into pods whose ServiceAccount carries the annotation. */
const INJECTED_ENV: Partial<Record<CloudProvider, string>> = { aws: 'AWS_ROLE_ARN', azure: 'AZURE_CLIENT_ID' };

interface Wording {
  provider: CloudProvider;
  re: RegExp;
  /** `denied`: the cloud refused the call; `no_credentials`: the SDK found no identity to use. */
  what: 'denied' | 'no_credentials';
}

/** What the AWS, Google and Azure SDKs print (Java, Go, Python, Node.js, .NET wordings). */
export const CLOUD_WORDINGS: readonly Wording[] = [
  { provider: 'aws', what: 'denied', re: /is not authorized to perform: [\w-]+:\w+|\bAccessDenied(?:Exception)?\b[^\n]{0,200}(?:amazonaws|S3|sts|arn:aws)|(?:amazonaws|S3Exception|arn:aws)[^\n]{0,300}\bAccessDenied\b|Not authorized to perform sts:AssumeRoleWithWebIdentity|\bInvalidIdentityToken\b|\bWebIdentityErr\b/i },
  { provider: 'aws', what: 'no_credentials', re: /Unable to load credentials from any of the providers in the chain|NoCredentialProviders: no valid providers in chain|no EC2 IMDS role found|Could not load credentials from any providers|NoCredentialsError: Unable to locate credentials|Unable to locate credentials|CredentialsProviderError|failed to refresh cached credentials/i },
  { provider: 'gcp', what: 'denied', re: /Permission '[\w.]+' denied on resource|does not have [\w.]+ access to|iam\.serviceAccounts\.getAccessToken[^\n]{0,80}denied|Request had insufficient authentication scopes|\bgserviceaccount\.com\b[^\n]{0,200}(?:403|denied|PERMISSION_DENIED)|PERMISSION_DENIED[^\n]{0,200}gserviceaccount\.com/i },
  { provider: 'gcp', what: 'no_credentials', re: /Could not automatically determine credentials|Could not load the default credentials|google: could not find default credentials/i },
  { provider: 'azure', what: 'denied', re: /\bAADSTS\d{5,}\b|AuthorizationPermissionMismatch|does not have authorization to perform action '[\w./-]+'/i },
  { provider: 'azure', what: 'no_credentials', re: /ManagedIdentityCredential authentication unavailable|DefaultAzureCredential failed to retrieve a token|WorkloadIdentityCredential authentication unavailable/i },
];

const ANY = new RegExp(CLOUD_WORDINGS.map((w) => w.re.source).join('|'), 'i');

/** Which provider's identity failed in a log line, and how, if any. */
export function cloudDenial(text: string): Wording | undefined {
  return CLOUD_WORDINGS.find((w) => w.re.test(text));
}

/** The refused action (`s3:PutObject`, `storage.objects.create`, `Microsoft.Storage/…/write`) and the principal the cloud saw. */
export function deniedCall(text: string): { verb?: string; principal?: string } {
  const verb =
    /is not authorized to perform: ([\w-]+:[\w*]+)/i.exec(text)?.[1] ??
    /Permission '([\w.]+)' denied/i.exec(text)?.[1] ??
    /does not have ([\w.]+) access/i.exec(text)?.[1] ??
    /perform action '([\w./-]+)'/i.exec(text)?.[1];
  const principal =
    /User: (arn:aws:(?:sts|iam)::\d+:[\w-]+\/[\w+=,.@-]+)(?:\/[\w.-]+)?/i.exec(text)?.[1] ??
    /([\w-]+@[\w-]+\.iam\.gserviceaccount\.com|[\w-]+-compute@developer\.gserviceaccount\.com)/i.exec(text)?.[1];
  return { ...(verb ? { verb } : {}), ...(principal ? { principal } : {}) };
}

/** Every value stored under `key` anywhere in a (Helm values) tree. */
function valuesUnder(tree: unknown, key: string, out: string[] = []): string[] {
  if (!tree || typeof tree !== 'object') return out;
  for (const [k, v] of Object.entries(tree as Record<string, unknown>)) {
    if (k === key && typeof v === 'string' && v) out.push(v);
    else valuesUnder(v, key, out);
  }
  return out;
}

function podEnv(p: V1Pod, name: string): string | undefined {
  for (const c of p.spec?.containers ?? []) for (const e of c.env ?? []) if (e.name === name && e.value) return e.value;
  return undefined;
}

interface Known {
  /** The identity the pods should have, and where that comes from. */
  role?: string;
  from?: string;
  evidence: Evidence[];
}

/** What says the ServiceAccount had (or should have) the annotation: Helm values, last-applied, older pods' env. */
function knownIdentity(input: TriageInput, sa: V1ServiceAccount, provider: CloudProvider): Known {
  const key = IDENTITY_ANNOTATION[provider];
  const ns = sa.metadata?.namespace ?? '';
  const name = sa.metadata?.name ?? '';
  const evidence: Evidence[] = [];
  const revs = [...(input.kube.helm?.revisions ?? [])].sort((a, b) => b.revision - a.revision);
  for (const r of revs) {
    const v = valuesUnder(r.values, key)[0];
    if (!v) continue;
    evidence.push({
      kind: 'object',
      summary: `Helm release ${r.name} revision ${r.revision} (${r.chart}, ${r.status}) sets ${key}: ${v} in its values`,
      citation: objectCitation('Secret', r.namespace, r.secretName, 'data.release'),
      ...(r.deployedAt ? { observedAt: r.deployedAt } : {}),
    });
    return { role: v, from: `Helm values of revision ${r.revision}`, evidence };
  }
  const applied = sa.metadata?.annotations?.['kubectl.kubernetes.io/last-applied-configuration'];
  if (applied) {
    try {
      const v = (JSON.parse(applied) as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations?.[key];
      if (v) {
        evidence.push({ kind: 'object', summary: `serviceaccount/${name} last-applied-configuration still has ${key}: ${v}`, citation: objectCitation('ServiceAccount', ns, name, 'metadata.annotations') });
        return { role: v, from: 'its last-applied-configuration', evidence };
      }
    } catch {
      /* not JSON: no history from it */
    }
  }
  const envName = INJECTED_ENV[provider];
  const older = envName ? input.kube.pods.find((p) => podEnv(p, envName)) : undefined;
  if (older && envName) {
    const v = podEnv(older, envName)!;
    evidence.push({ kind: 'object', summary: `pod ${older.metadata?.name} (older) still carries the injected ${envName}=${v}`, citation: objectCitation('Pod', ns, older.metadata?.name ?? '?', 'spec.containers') });
    return { role: v, from: `the env of pod ${older.metadata?.name}`, evidence };
  }
  return { evidence };
}

export const cloudIdentity: ClusterAnalyzer = {
  name: NAME,
  analyze(input: ClusterTriageInput): Finding[] {
    const out: Finding[] = [];
    const all = logHits(input.inputs, ANY);
    for (const wl of input.inputs) {
      const t = wl.kube.target;
      const w = wl.kube.workload;
      if (!t || !w) continue;
      const hits = all.filter((h) => h.workload.namespace === t.namespace && h.workload.name === t.name);
      const count = hits.reduce((n, h) => n + h.count, 0);
      if (count < REPEATS) continue;
      const firsts = hits.map((h) => h.first?.getTime()).filter((x): x is number => x !== undefined);
      const firstDenial = firsts.length ? new Date(Math.min(...firsts)) : input.onset;
      // Denials that began long before the onset are a standing problem, not this incident.
      if (input.onset.getTime() - firstDenial.getTime() > RECENT_MS) continue;
      const kinds = hits.map((h) => ({ h, w: cloudDenial(`${h.example} ${h.template}`)! })).filter((x) => x.w);
      const provider = mostCommon(kinds.map((x) => x.w.provider));
      if (!provider) continue;
      const saName = w.spec?.template?.spec?.serviceAccountName ?? w.spec?.template?.spec?.serviceAccount ?? 'default';
      const sa = input.cluster.snapshot.serviceAccounts.find((s) => s.metadata?.namespace === t.namespace && s.metadata?.name === saName);
      const f = finding(input, wl, saName, sa, provider, kinds, firstDenial);
      if (!f) continue;
      out.push(f);
      if (f.status === 'supported') out.push(cloudLookAlike(f, provider, kinds));
    }
    return out;
  },
};

const CLOUD_HOST: Record<CloudProvider, string> = { aws: 'amazonaws.com', gcp: 'googleapis.com', azure: 'azure.com' };

/**
 * "Is S3 down?": the look-alike every responder asks first, ruled out with what clears it — the cloud
 * answered (it refused this identity, or the SDK never had one to present), so the service is up.
 */
function cloudLookAlike(f: Finding, provider: CloudProvider, kinds: { h: LogHit; w: Wording }[]): Finding {
  const verb = typeof f.facts?.['verb'] === 'string' ? f.facts['verb'] : undefined;
  const service = provider === 'aws' && verb?.includes(':') ? `${verb.split(':')[0]}.${CLOUD_HOST.aws}` : provider === 'gcp' && verb?.includes('.') ? `${verb.split('.')[0]}.${CLOUD_HOST.gcp}` : CLOUD_HOST[provider];
  const denied = kinds.find((k) => k.w.what === 'denied');
  return {
    key: `external-dependency:/ExternalService/${service}:cloud-identity`,
    analyzer: NAME,
    family: 'external-dependency',
    status: 'ruled_out',
    confidence: 0.05,
    title: `${service} (the cloud API) is failing`,
    component: { kind: 'ExternalService', name: service },
    mechanism: `${f.component?.name ?? 'the workload'}'s calls to ${service} fail.`,
    reason: denied
      ? `${service} answers: it refuses the identity the pods present${f.facts?.['principal'] ? ` (${String(f.facts['principal'])})` : ''}, which is an identity problem on our side, not an outage`
      : `the calls never reach ${service}: the SDK finds no credentials to sign them with`,
    facts: { host: service },
    supporting: [],
    refuting: kinds.slice(0, 1).map((k) => logEvidence(k.h, 'the cloud answered')),
  };
}

/**
 * The last write to the ServiceAccount's metadata before the first denial, Helm's included: a chart that
 * stops rendering the annotation removes it in Helm's own three-way merge, so Helm is the writer here.
 */
function lastWrite(sa: V1ServiceAccount, until: Date): { actor: string; how: string; at: Date; index: number } | undefined {
  const w = writersOf(sa.metadata?.managedFields, ['metadata']).find((x) => x.time && !x.subresource && x.time.getTime() <= until.getTime() + SKEW_MS);
  return w?.time ? { actor: w.manager, how: describeWriter(w), at: w.time, index: w.index } : undefined;
}

function mostCommon<T>(xs: T[]): T | undefined {
  const n = new Map<T, number>();
  for (const x of xs) n.set(x, (n.get(x) ?? 0) + 1);
  return [...n.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}

function finding(input: ClusterTriageInput, wl: TriageInput, saName: string, sa: V1ServiceAccount | undefined, provider: CloudProvider, kinds: { h: LogHit; w: Wording }[], firstDenial: Date): Finding | undefined {
  const t = wl.kube.target!;
  const key = IDENTITY_ANNOTATION[provider];
  const saRef: ComponentRef = { kind: 'ServiceAccount', namespace: t.namespace, name: saName };
  const current = sa?.metadata?.annotations?.[key];
  const change = sa ? lastWrite(sa, firstDenial) : undefined;
  const recent = !!change && firstDenial.getTime() - change.at.getTime() <= RECENT_MS;
  const call = kinds.map((k) => deniedCall(`${k.h.example} ${k.h.template}`)).reduce((a, b) => ({ verb: a.verb ?? b.verb, principal: a.principal ?? b.principal }), {} as { verb?: string; principal?: string });
  const pods = [...new Set(kinds.map((k) => k.h.pod).filter((p): p is string => !!p))];
  const logs = kinds.slice(0, 3).map((k) => logEvidence(k.h, k.w.what === 'denied' ? `${provider.toUpperCase()} refused the call` : `${provider.toUpperCase()} SDK found no credentials`));

  // The rollout moved the pods to another ServiceAccount: the workload changed, not the account.
  const { current: rev, previous } = revisions(wl.kube);
  const prevSa = previous?.replicaSet.spec?.template?.spec?.serviceAccountName ?? (previous ? 'default' : undefined);
  if (rev && prevSa && prevSa !== saName && rev.createdAt && firstDenial.getTime() - rev.createdAt.getTime() <= RECENT_MS && rev.createdAt.getTime() <= firstDenial.getTime() + SKEW_MS) {
    return build({
      reason: 'service_account_changed',
      component: { kind: t.kind, namespace: t.namespace, name: t.name },
      status: 'supported',
      confidence: 0.88,
      title: `${t.name}'s rollout moved its pods from ServiceAccount ${prevSa} to ${saName}${current ? '' : `, which has no ${key}`}: its ${provider.toUpperCase()} calls are refused`,
      mechanism: `revision ${rev.revision} of ${t.kind.toLowerCase()}/${t.name} runs as ServiceAccount ${saName} (revision ${previous!.revision} ran as ${prevSa}); ${current ? `${saName} maps to ${current}` : `${saName} carries no ${key}`}, so the pods lost the cloud identity they had. Fix: put serviceAccountName back to ${prevSa} (or give ${saName} the role).`,
      extra: { previousServiceAccount: prevSa, changedAt: rev.createdAt.toISOString() },
      evidence: [{ kind: 'change', summary: `rollout to revision ${rev.revision} at ${clockTime(rev.createdAt)} switched serviceAccountName ${prevSa} → ${saName}`, citation: objectCitation('ReplicaSet', t.namespace, rev.name, 'spec.template.spec.serviceAccountName'), observedAt: rev.createdAt }],
    });
  }
  if (!sa) return undefined;
  const known = knownIdentity(wl, sa, provider);
  const changeEv: Evidence[] = change ? [{ kind: 'managed_fields', summary: `managedFields: \`${change.actor}\` (${change.how}) last wrote serviceaccount/${saName} metadata at ${clockTime(change.at)} (${relativeToOnset(change.at, input.onset)})`, citation: objectCitation('ServiceAccount', t.namespace, saName, `metadata.managedFields[${change.index}]`), observedAt: change.at }] : [];
  if (!current) {
    const history = known.role !== undefined;
    if (!history && !recent) return undefined; // never had one: a setup gap, not this incident
    const envName = INJECTED_ENV[provider];
    const without = envName ? wl.kube.pods.filter((p) => !podEnv(p, envName)).map((p) => p.metadata?.name ?? '?') : [];
    return build({
      reason: 'annotation_removed',
      component: saRef,
      status: 'supported',
      confidence: recent && history ? 0.93 : 0.86,
      title: `ServiceAccount ${saName} lost its ${key} annotation${change ? ` (${change.actor}, ${relativeToOnset(change.at, input.onset)})` : ''}: ${t.name}'s ${provider.toUpperCase()} calls ${kinds.some((k) => k.w.what === 'denied') ? 'are refused' : 'find no credentials'}`,
      mechanism:
        `serviceaccount/${saName} in ${t.namespace} has no ${key}${known.role ? ` although ${known.from} give${known.from?.startsWith('the env') ? 's' : ''} ${known.role}` : ''}` +
        (change ? `; it was last written by \`${change.actor}\` at ${clockTime(change.at)}, ${relativeToOnset(change.at, input.onset)}` : '') +
        `. Without it the ${provider === 'aws' ? 'EKS pod identity webhook' : provider === 'azure' ? 'workload identity webhook' : 'GKE metadata server'} gives new pods no ${provider === 'gcp' ? 'mapped Google service account' : 'web-identity token'}, so they fall back to ${call.principal ? call.principal : "the node's identity or none"}` +
        `${call.verb ? ` and ${call.verb} is refused` : ''}${without.length ? ` (${without.length} pod(s) without ${envName}: ${without.slice(0, 3).join(', ')})` : ''}. ` +
        `Fix: restore the annotation${known.role ? ` (${key}: ${known.role})` : ''} through the chart values or a helm rollback, then restart ${t.kind.toLowerCase()}/${t.name} so the webhook injects the identity again; rolling back the image alone keeps the account without it.`,
      extra: { ...(change ? { manager: change.actor, changedAt: change.at.toISOString() } : {}), ...(without.length ? { podsWithoutIdentity: without.length } : {}) },
      role: known.role,
      evidence: [
        { kind: 'object', summary: `serviceaccount/${saName} annotations: ${Object.keys(sa.metadata?.annotations ?? {}).filter((k) => k !== 'kubectl.kubernetes.io/last-applied-configuration').join(', ') || 'none'} (no ${key})`, citation: objectCitation('ServiceAccount', t.namespace, saName, 'metadata.annotations') },
        ...changeEv,
        ...known.evidence,
      ],
    });
  }
  if (recent && change) {
    return build({
      reason: 'annotation_changed',
      component: saRef,
      status: 'supported',
      confidence: 0.85,
      title: `ServiceAccount ${saName}'s ${key} was rewritten ${relativeToOnset(change.at, input.onset)} (${change.actor}); ${t.name}'s ${provider.toUpperCase()} calls are refused since`,
      mechanism: `serviceaccount/${saName} maps to ${current}${known.role && known.role !== current ? ` (${known.from} give ${known.role})` : ''}; it was written by \`${change.actor}\` at ${clockTime(change.at)} and the denials began ${relativeToOnset(firstDenial, input.onset)}${call.verb ? `: ${call.verb} is refused` : ''}. Fix: put the annotation back to the role the workload's policy is attached to, then restart ${t.name}.`,
      extra: { manager: change.actor, changedAt: change.at.toISOString(), annotationValue: current },
      role: known.role && known.role !== current ? known.role : current,
      evidence: [{ kind: 'object', summary: `serviceaccount/${saName} ${key}: ${current}`, citation: objectCitation('ServiceAccount', t.namespace, saName, 'metadata.annotations') }, ...changeEv, ...known.evidence],
    });
  }
  return build({
    reason: 'cloud_policy',
    component: saRef,
    status: 'open',
    confidence: 0.4,
    title: `${t.name}'s ${provider.toUpperCase()} calls are refused although ServiceAccount ${saName} still maps to ${current}: the role's cloud-side policy may have changed`,
    mechanism: `serviceaccount/${saName} carries ${key}: ${current}, unchanged, and the pods log denials${call.verb ? ` for ${call.verb}` : ''}; what the role may do lives in the cloud's IAM, which the cluster cannot show. Check the role's policy and its recent changes (CloudTrail / audit logs).`,
    extra: {},
    role: current,
    evidence: [{ kind: 'object', summary: `serviceaccount/${saName} ${key}: ${current} (not changed recently)`, citation: objectCitation('ServiceAccount', t.namespace, saName, 'metadata.annotations') }],
  });

  function build(o: { reason: string; component: ComponentRef; status: Finding['status']; confidence: number; title: string; mechanism: string; extra: Record<string, string | number>; role?: string | undefined; evidence: Evidence[] }): Finding {
    const facts: Record<string, string | number> = {
      serviceAccount: `${t.namespace}/${saName}`,
      provider,
      annotation: key,
      reason: o.reason,
      ...(o.role ? { role: o.role } : {}),
      ...(call.principal ? { principal: call.principal } : {}),
      ...(call.verb ? { verb: call.verb } : {}),
      ...(pods.length ? { pods: pods.join(',') } : {}),
      firstSeen: firstDenial.toISOString(),
      ...o.extra,
    };
    return {
      key: `rbac-denied:${o.component.namespace}/${o.component.kind}/${o.component.name}:cloud`,
      analyzer: NAME,
      family: 'rbac-denied',
      status: o.status,
      confidence: o.confidence,
      title: o.title,
      component: o.component,
      mechanism: o.mechanism,
      scope: `every ${provider.toUpperCase()} call of ${t.name} (${pods.length || 'its'} pod(s)); what depends on it fails while the rest of the app serves`,
      affected: [...(o.component.kind === 'ServiceAccount' ? [o.component] : []), ...targetScope(wl)],
      facts,
      supporting: [...logs, ...o.evidence],
      refuting: [],
    };
  }
}
