import type { CoreV1Event, V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { emptySurroundings } from '../../src/evidence/kubernetes/surroundings.js';
import type { TriageInput } from '../../src/triage/analyzer.js';
import { classifyPullError, imagePull } from '../../src/triage/analyzers/image-pull.js';

const onset = new Date('2025-03-01T12:00:00Z');
const at = (offsetMs: number) => new Date(onset.getTime() + offsetMs);
const MIN = 60_000;
const NEW = 'reg.example.com/payments/api:v2.11.0';
const OLD = 'reg.example.com/payments/api:2.10.3';

function rs(name: string, revision: number, image: string, createdAt: Date): V1ReplicaSet {
  return { metadata: { name, creationTimestamp: createdAt, annotations: { 'deployment.kubernetes.io/revision': String(revision) } }, spec: { selector: {}, template: { spec: { containers: [{ name: 'api', image }] } } } };
}
function pod(name: string, owner: string, image: string, waiting?: string): V1Pod {
  return {
    metadata: { name, namespace: 'payments', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner }] },
    spec: { containers: [{ name: 'api', image }] },
    status: {
      phase: waiting ? 'Pending' : 'Running',
      conditions: [{ type: 'Ready', status: waiting ? 'False' : 'True' }],
      containerStatuses: [{ name: 'api', ready: !waiting, restartCount: 0, image, imageID: '', state: waiting ? { waiting: { reason: waiting, message: `Back-off pulling image "${image}"` } } : { running: {} } }],
    },
  };
}
const failed = (podName: string, message: string): CoreV1Event => ({
  metadata: { name: `${podName}.f`, namespace: 'payments' },
  involvedObject: { kind: 'Pod', name: podName, namespace: 'payments' },
  reason: 'Failed',
  type: 'Warning',
  message,
  firstTimestamp: at(-6 * MIN),
  lastTimestamp: at(-30_000),
  count: 6,
});
const NOT_FOUND = `Failed to pull image "${NEW}": rpc error: code = NotFound desc = failed to pull and unpack image "${NEW}": failed to resolve reference "${NEW}": ${NEW}: not found`;

function input(kube: Partial<KubeEvidence>): TriageInput {
  const workload: V1Deployment = {
    metadata: {
      name: 'api',
      namespace: 'payments',
      annotations: { 'deployment.kubernetes.io/revision': '15' },
      managedFields: [{ manager: 'kubectl-set', operation: 'Update', time: at(-6 * MIN), fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"api"}': { 'f:image': {} } } } } } } }],
    },
    spec: { replicas: 4, selector: {}, template: { spec: { containers: [{ name: 'api', image: NEW }] } } },
  };
  return {
    alert: { labels: {}, labelValues: [] } as unknown as TriageInput['alert'],
    onset,
    changes: [],
    kube: {
      ...emptySurroundings(),
      onset,
      target: { kind: 'Deployment', namespace: 'payments', name: 'api' },
      workload,
      replicaSets: [rs('api-new', 15, NEW, at(-6 * MIN)), rs('api-old', 14, OLD, at(-12 * 24 * 60 * MIN))],
      pods: [pod('api-new-a', 'api-new', NEW, 'ImagePullBackOff'), pod('api-new-b', 'api-new', NEW, 'ErrImagePull'), pod('api-old-a', 'api-old', OLD), pod('api-old-b', 'api-old', OLD), pod('api-old-c', 'api-old', OLD)],
      services: [{ service: { metadata: { name: 'api' } }, endpoints: { subsets: [{ addresses: [{ ip: '1' }, { ip: '2' }, { ip: '3' }] }] } }],
      ingresses: [{ metadata: { name: 'api' }, spec: { rules: [{ host: 'api.pay.example.com', http: { paths: [{ pathType: 'Prefix', backend: { service: { name: 'api' } } }] } }] } }],
      events: [failed('api-new-a', NOT_FOUND)],
      related: [],
      dependents: [],
      unhealthyPods: [],
      warningEvents: [],
      gaps: [],
      server: '',
      ...kube,
    },
  };
}

describe('image-pull', () => {
  it('classifies runtime pull errors', () => {
    expect(classifyPullError(NOT_FOUND)).toBe('not_found');
    expect(classifyPullError('failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized')).toBe('unauthorized');
    expect(classifyPullError('pull access denied, repository does not exist or may require authorization: server message: insufficient_scope')).toBe('unauthorized');
    expect(classifyPullError('dial tcp: lookup reg.example.com on 10.96.0.10:53: no such host')).toBe('registry_unreachable');
    expect(classifyPullError('429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit.')).toBe('rate_limited');
    expect(classifyPullError('', 'InvalidImageName')).toBe('invalid_name');
  });

  it('names the missing tag, who set it, the partial availability, and proposes the previous image', () => {
    const [f, ...rest] = imagePull.analyze(input({}));
    expect(rest).toEqual([]);
    expect(f!.status).toBe('supported');
    expect(f!.confidence).toBe(0.95);
    expect(f!.facts).toMatchObject({ container: 'api', image: NEW, reason: 'not_found', previousImage: OLD, manager: 'kubectl-set', revision: 15, previousRevision: 14, failingPods: 2, readyPods: 3, desiredReplicas: 4 });
    expect(f!.scope).toContain('partial availability');
    expect(f!.affected).toEqual([
      { kind: 'Service', namespace: 'payments', name: 'api' },
      { kind: 'Ingress', namespace: 'payments', name: 'api' },
    ]);
    expect(f!.mitigation).toMatchObject({ action: 'set_image', params: { container: 'api', image: OLD } });
    expect(f!.mitigation!.command).toBe(`kubectl set image deployment/api -n payments api=${OLD}`);
  });

  it('proposes no image change when the image did not change (credentials problem)', () => {
    const [f] = imagePull.analyze(
      input({
        replicaSets: [rs('api-new', 15, NEW, at(-30 * 24 * 60 * MIN))],
        pods: [pod('api-new-a', 'api-new', NEW, 'ImagePullBackOff')],
        events: [failed('api-new-a', `Failed to pull image "${NEW}": failed to authorize: failed to fetch oauth token: unexpected status: 401 Unauthorized`)],
      }),
    );
    expect(f!.facts!['reason']).toBe('unauthorized');
    expect(f!.facts!['previousImage']).toBeUndefined();
    expect(f!.mitigation).toBeUndefined();
  });

  it('ignores pods that pull fine and old failure events', () => {
    expect(imagePull.analyze(input({ pods: [pod('api-old-a', 'api-old', OLD)] }))).toEqual([]);
    const [f] = imagePull.analyze(input({ events: [{ ...failed('api-new-a', NOT_FOUND), lastTimestamp: at(-5 * 60 * MIN) }] }));
    expect(f!.confidence).toBe(0.9);
    expect(f!.supporting.some((e) => e.kind === 'event')).toBe(false);
  });
});
