/**
 * A ServiceAccount's cloud-identity annotation (IRSA role ARN, GKE/Azure workload identity) removed or
 * rewritten: the pods' cloud calls are refused or find no credentials. Synthetic inputs, each provider's
 * SDK wording; the look-alike "the cloud API is down" is ruled out.
 */
import type { V1Deployment, V1ManagedFieldsEntry, V1Pod, V1ReplicaSet, V1ServiceAccount } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { emptyKubeEvidence, type KubeEvidence } from '../../../src/evidence/kubernetes/gather.js';
import type { HelmRevision } from '../../../src/evidence/kubernetes/helm.js';
import type { ContainerLogs } from '../../../src/evidence/kubernetes/surroundings.js';
import type { ClusterTriageInput, TriageInput } from '../../../src/triage/analyzer.js';
import { cloudDenial, cloudIdentity, deniedCall } from '../../../src/triage/cluster/cloud-identity.js';
import { buildTopology } from '../../../src/topology/graph.js';
import { emptySnapshot, type ClusterSnapshot } from '../../../src/topology/snapshot.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000);

const AWS_DENIED =
  'ERROR 1 --- [nio-8080-exec-7] c.l.upload.S3ObjectStore : PutObject failed: software.amazon.awssdk.services.s3.model.S3Exception: User: arn:aws:sts::731562048913:assumed-role/prod-general-node/i-0d4b7e2a9c1f3e586 is not authorized to perform: s3:PutObject on resource: "arn:aws:s3:::uploads/a.jpg" because no identity-based policy allows the s3:PutObject action (Service: S3, Status Code: 403, Request ID: 8F2C)';
const AWS_NO_CREDS =
  'software.amazon.awssdk.core.exception.SdkClientException: Unable to load credentials from any of the providers in the chain AwsCredentialsProviderChain(credentialsProviders=[SystemPropertyCredentialsProvider(), EnvironmentVariableCredentialsProvider(), WebIdentityTokenCredentialsProvider()])';
const GCP_DENIED = 'google.api_core.exceptions.Forbidden: 403 POST https://storage.googleapis.com/upload/storage/v1/b/exports/o: exporter@prod-7731.iam.gserviceaccount.com does not have storage.objects.create access to the Google Cloud Storage object. Permission \'storage.objects.create\' denied on resource (or it may not exist).';
const AZURE_NO_CREDS = 'Azure.Identity.CredentialUnavailableException: DefaultAzureCredential failed to retrieve a token from the included credentials. WorkloadIdentityCredential authentication unavailable. The workload options are not fully configured.';

const entry = (manager: string, min: number, fields: Record<string, unknown>): V1ManagedFieldsEntry => ({ manager, operation: 'Update', apiVersion: 'v1', time: at(min), fieldsType: 'FieldsV1', fieldsV1: fields });

function deployment(sa: string, revision = '7'): V1Deployment {
  return {
    metadata: { name: 'upload', namespace: 'shop', annotations: { 'deployment.kubernetes.io/revision': revision } },
    spec: { replicas: 3, selector: { matchLabels: { app: 'upload' } }, template: { metadata: { labels: { app: 'upload' } }, spec: { serviceAccountName: sa, containers: [{ name: 'upload', image: 'reg/upload:1.5.0' }] } } },
  };
}

function serviceAccount(name: string, annotations: Record<string, string>, managedFields: V1ManagedFieldsEntry[]): V1ServiceAccount {
  return { metadata: { name, namespace: 'shop', annotations, managedFields } };
}

function logs(example: string, count = 40, first = -2): ContainerLogs {
  return { pod: 'upload-7c9d8f6b54-kq2vd', container: 'upload', previous: false, running: true, patterns: [{ template: example, example, count, first: at(first), last: at(0), level: 'error' }], tail: [example] };
}

function pod(name: string, env: { name: string; value: string }[] = []): V1Pod {
  return { metadata: { name, namespace: 'shop', labels: { app: 'upload' } }, spec: { serviceAccountName: 'upload', containers: [{ name: 'upload', image: 'reg/upload:1.5.0', env }] }, status: { phase: 'Running' } };
}

const helmRev = (revision: number, values: Record<string, unknown>, min: number): HelmRevision => ({ name: 'upload', namespace: 'shop', revision, status: revision === 18 ? 'deployed' : 'superseded', description: 'Upgrade complete', chart: `svc-${revision}`, deployedAt: at(min), values, secretName: `sh.helm.release.v1.upload.v${revision}` });

function candidate(containerLogs: ContainerLogs[], over: Partial<KubeEvidence> = {}): TriageInput {
  const kube: KubeEvidence = {
    ...emptyKubeEvidence(ONSET, 'https://k8s.test'),
    target: { kind: 'Deployment', namespace: 'shop', name: 'upload' },
    workload: deployment('upload'),
    pods: [pod('upload-7c9d8f6b54-kq2vd')],
    services: [{ service: { metadata: { name: 'upload', namespace: 'shop' } } }],
    containerLogs,
    ...over,
  };
  return { alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'], onset: ONSET, kube, changes: [] };
}

function cluster(inputs: TriageInput[], serviceAccounts: V1ServiceAccount[]): ClusterTriageInput {
  const snapshot: ClusterSnapshot = { ...emptySnapshot(), readAt: ONSET, serviceAccounts };
  return { alert: { labels: {}, labelValues: [] } as unknown as ClusterTriageInput['alert'], onset: ONSET, cluster: { snapshot, topology: buildTopology(snapshot), walk: { subjects: [], starts: [], reached: new Map(), candidates: [] }, subjects: [] }, inputs, changes: [], metrics: [], jobs: [] };
}

const ROLE = 'arn:aws:iam::731562048913:role/prod-upload';
const IRSA = 'eks.amazonaws.com/role-arn';

describe('cloud-identity wordings', () => {
  it('reads the provider, the refused action and the principal the cloud saw', () => {
    expect(cloudDenial(AWS_DENIED)).toMatchObject({ provider: 'aws', what: 'denied' });
    expect(cloudDenial(AWS_NO_CREDS)).toMatchObject({ provider: 'aws', what: 'no_credentials' });
    expect(cloudDenial(GCP_DENIED)).toMatchObject({ provider: 'gcp', what: 'denied' });
    expect(cloudDenial(AZURE_NO_CREDS)).toMatchObject({ provider: 'azure', what: 'no_credentials' });
    expect(deniedCall(AWS_DENIED)).toEqual({ verb: 's3:PutObject', principal: 'arn:aws:sts::731562048913:assumed-role/prod-general-node' });
    expect(deniedCall(GCP_DENIED)).toEqual({ verb: 'storage.objects.create', principal: 'exporter@prod-7731.iam.gserviceaccount.com' });
    expect(cloudDenial('GET /api/orders 403 12ms')).toBeUndefined();
    expect(cloudDenial('pods is forbidden: User "system:serviceaccount:shop:x" cannot list resource "pods"')).toBeUndefined();
  });
});

describe('cloud-identity', () => {
  it('localises to the ServiceAccount a Helm upgrade left without its IRSA role, with the role from the release values', () => {
    const sa = serviceAccount('upload', { 'meta.helm.sh/release-name': 'upload' }, [entry('helm', -19, { 'f:metadata': { 'f:annotations': { 'f:meta.helm.sh/release-name': {} } } })]);
    const input = candidate([logs(AWS_DENIED, 60), logs(AWS_NO_CREDS, 30)], {
      helm: { release: 'upload', revisions: [helmRev(17, { serviceAccount: { annotations: { [IRSA]: ROLE } } }, -64 * 1440), helmRev(18, { serviceAccount: { annotations: { [IRSA]: ROLE } } }, -19)] },
      pods: [pod('upload-7c9d8f6b54-kq2vd'), pod('upload-7c9d8f6b54-w8hzn')],
    });
    const [f, lookAlike, ...rest] = cloudIdentity.analyze(cluster([input], [sa]));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      family: 'rbac-denied',
      status: 'supported',
      component: { kind: 'ServiceAccount', namespace: 'shop', name: 'upload' },
      facts: { serviceAccount: 'shop/upload', provider: 'aws', annotation: IRSA, reason: 'annotation_removed', role: ROLE, verb: 's3:PutObject', principal: 'arn:aws:sts::731562048913:assumed-role/prod-general-node', manager: 'helm', changedAt: at(-19).toISOString(), podsWithoutIdentity: 2 },
    });
    expect(f!.confidence).toBeGreaterThan(0.9);
    expect(f!.mitigation).toBeUndefined();
    expect(f!.mechanism).toMatch(/restart deployment\/upload/);
    expect(f!.affected).toEqual(expect.arrayContaining([{ kind: 'Deployment', namespace: 'shop', name: 'upload' }, { kind: 'Service', namespace: 'shop', name: 'upload' }]));
    expect(f!.supporting.map((e) => e.citation.ref)).toEqual(expect.arrayContaining(['api/v1/namespaces/shop/secrets/sh.helm.release.v1.upload.v18#data.release']));
    expect(lookAlike).toMatchObject({ family: 'external-dependency', status: 'ruled_out', component: { kind: 'ExternalService', name: 's3.amazonaws.com' } });
  });

  it('takes the role from older pods\' injected env when there is no Helm history, and needs only that', () => {
    const sa = serviceAccount('upload', {}, [entry('kubectl-edit', -3 * 24 * 60, { 'f:metadata': { 'f:annotations': {} } })]);
    const input = candidate([logs(AWS_NO_CREDS)], { pods: [pod('upload-old', [{ name: 'AWS_ROLE_ARN', value: ROLE }]), pod('upload-7c9d8f6b54-kq2vd')] });
    const [f] = cloudIdentity.analyze(cluster([input], [sa]));
    expect(f).toMatchObject({ status: 'supported', facts: { reason: 'annotation_removed', role: ROLE, podsWithoutIdentity: 1 } });
    expect(f!.confidence).toBeLessThan(0.9); // the edit was days ago: history, not a fresh change
  });

  it('says nothing for a ServiceAccount that never had an identity and was not touched', () => {
    const sa = serviceAccount('upload', {}, [entry('kubectl-client-side-apply', -200 * 24 * 60, { 'f:metadata': {} })]);
    expect(cloudIdentity.analyze(cluster([candidate([logs(AWS_NO_CREDS)])], [sa]))).toEqual([]);
  });

  it('supports a Workload Identity annotation rewritten shortly before the denials (GKE)', () => {
    const sa = serviceAccount('upload', { 'iam.gke.io/gcp-service-account': 'exporter@prod-7731.iam.gserviceaccount.com' }, [entry('kubectl-edit', -8, { 'f:metadata': { 'f:annotations': { 'f:iam.gke.io/gcp-service-account': {} } } })]);
    const [f] = cloudIdentity.analyze(cluster([candidate([logs(GCP_DENIED)])], [sa]));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'ServiceAccount', name: 'upload' }, facts: { provider: 'gcp', reason: 'annotation_changed', verb: 'storage.objects.create', manager: 'kubectl-edit' } });
  });

  it('leaves an unchanged mapping as an open lead on the cloud-side policy', () => {
    const sa = serviceAccount('upload', { [IRSA]: ROLE }, [entry('helm', -40 * 24 * 60, { 'f:metadata': { 'f:annotations': { [`f:${IRSA}`]: {} } } })]);
    const [f, ...rest] = cloudIdentity.analyze(cluster([candidate([logs(AWS_DENIED)])], [sa]));
    expect(rest).toEqual([]); // no look-alike raised for a lead that is itself open
    expect(f).toMatchObject({ status: 'open', facts: { reason: 'cloud_policy', role: ROLE } });
  });

  it('blames the rollout that moved the pods to a ServiceAccount without the identity (Azure)', () => {
    const rs = (rev: number, sa: string, min: number): V1ReplicaSet => ({
      metadata: { name: `upload-${rev}abc`, namespace: 'shop', creationTimestamp: at(min), annotations: { 'deployment.kubernetes.io/revision': String(rev) } },
      spec: { selector: { matchLabels: { app: 'upload' } }, template: { spec: { serviceAccountName: sa, containers: [{ name: 'upload', image: 'reg/upload:1.5.0' }] } } },
    });
    const input = candidate([logs(AZURE_NO_CREDS)], { workload: deployment('default', '8'), replicaSets: [rs(7, 'upload', -5000), rs(8, 'default', -6)] });
    const [f] = cloudIdentity.analyze(cluster([input], [serviceAccount('default', {}, [])]));
    expect(f).toMatchObject({ status: 'supported', component: { kind: 'Deployment', name: 'upload' }, facts: { provider: 'azure', reason: 'service_account_changed', previousServiceAccount: 'upload' } });
  });

  it('ignores denials that began long before the onset, and one-off lines', () => {
    const sa = serviceAccount('upload', {}, [entry('helm', -19, { 'f:metadata': {} })]);
    expect(cloudIdentity.analyze(cluster([candidate([logs(AWS_NO_CREDS, 40, -8 * 60)])], [sa]))).toEqual([]);
    expect(cloudIdentity.analyze(cluster([candidate([logs(AWS_NO_CREDS, 2)])], [sa]))).toEqual([]);
  });
});
