import type { CoreV1Event, V1PodTemplateSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { describeObject, networkPolicySummary } from '../../../src/evidence/kubernetes/describe.js';
import { labelSelectorMatches, sanitizeObject, summariseManagedFields } from '../../../src/evidence/kubernetes/objects.js';
import { groupEvents } from '../../../src/evidence/kubernetes/tools/event-groups.js';
import { parseQuantity } from '../../../src/evidence/kubernetes/tools/quantity.js';
import { diffPodTemplates, isEmptyDiff } from '../../../src/evidence/kubernetes/tools/rollout-diff.js';
import { diffValues } from '../../../src/evidence/kubernetes/tools/values-diff.js';
import { createRedactor } from '../../../src/redact/index.js';

const now = new Date('2025-03-01T12:00:00Z');

function template(image: string, env: Record<string, string>, extra: Record<string, unknown> = {}): V1PodTemplateSpec {
  return {
    metadata: { labels: { app: 'api', 'pod-template-hash': image.slice(-3) } },
    spec: {
      containers: [
        {
          name: 'api',
          image,
          env: Object.entries(env).map(([name, value]) => ({ name, value })),
          resources: { requests: { cpu: '100m' } },
          readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 5 },
          ...extra,
        },
      ],
    },
  } as V1PodTemplateSpec;
}

describe('diffPodTemplates', () => {
  it('reports image, env names, resources and probes, never env values', () => {
    const a = template('api:1.0', { A: '1', B: 'secret-one' });
    const b = template('api:1.1', { B: 'secret-two', C: '3' }, { resources: { requests: { cpu: '200m' } }, readinessProbe: { httpGet: { path: '/healthz', port: 8080 } } });
    const d = diffPodTemplates(a, b);
    expect(d.images).toEqual([{ container: 'api', from: 'api:1.0', to: 'api:1.1' }]);
    expect(d).toMatchObject({ envAdded: ['api/C'], envRemoved: ['api/A'], envChanged: ['api/B'] });
    expect(d.resources[0]).toMatchObject({ from: 'requests{cpu=100m} limits{}', to: 'requests{cpu=200m} limits{}' });
    expect(d.probes).toEqual([{ container: 'api', probe: 'readiness', from: 'httpGet /ready :8080 period=5s', to: 'httpGet /healthz :8080' }]);
    expect(JSON.stringify(d)).not.toContain('secret-');
  });

  it('ignores the pod-template-hash label and sees other template changes', () => {
    expect(isEmptyDiff(diffPodTemplates(template('api:1.0', {}), { ...template('api:1.0', {}), metadata: { labels: { app: 'api', 'pod-template-hash': 'zzz' } } }))).toBe(true);
    const withVolume = template('api:1.0', {});
    withVolume.spec!.volumes = [{ name: 'cfg', configMap: { name: 'cfg' } }];
    expect(diffPodTemplates(template('api:1.0', {}), withVolume).otherChanges).toBe(true);
  });
});

describe('diffValues', () => {
  it('compares nested values by dotted key', () => {
    expect(diffValues({ image: { tag: '1' }, replicaCount: 3, old: true }, { image: { tag: '2' }, replicaCount: 3, added: [1] })).toEqual({
      added: [{ key: 'added', value: [1] }],
      removed: [{ key: 'old', value: true }],
      changed: [{ key: 'image.tag', from: '1', to: '2' }],
    });
  });
});

describe('groupEvents', () => {
  const ev = (reason: string, name: string, last: string, count: number, message = reason): CoreV1Event =>
    ({ reason, type: 'Warning', count, message, involvedObject: { kind: 'Pod', namespace: 'shop', name }, firstTimestamp: last, lastTimestamp: last, metadata: {} }) as unknown as CoreV1Event;
  it('deduplicates by reason and object, sums counts, keeps the newest message, newest first', () => {
    const g = groupEvents([ev('BackOff', 'a', '2025-03-01T10:00:00Z', 3, 'old'), ev('BackOff', 'a', '2025-03-01T11:00:00Z', 2, 'new'), ev('Failed', 'b', '2025-03-01T11:30:00Z', 1)]);
    expect(g.map((x) => [x.reason, x.count])).toEqual([
      ['Failed', 1],
      ['BackOff', 5],
    ]);
    expect(g[1]).toMatchObject({ message: 'new', firstSeen: '2025-03-01T10:00:00.000Z', lastSeen: '2025-03-01T11:00:00.000Z' });
  });
});

describe('describeObject (fixtures)', () => {
  it('summarises a Deployment with env refs named, not read', () => {
    const d = describeObject({
      kind: 'Deployment',
      now,
      object: {
        metadata: { name: 'api', namespace: 'shop', creationTimestamp: '2025-02-28T12:00:00Z', ownerReferences: [] },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'api' } },
          template: {
            spec: {
              containers: [
                {
                  name: 'api',
                  image: 'api:1',
                  env: [
                    { name: 'MODE', value: 'prod' },
                    { name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
                  ],
                  livenessProbe: { exec: { command: ['true'] }, failureThreshold: 3 },
                },
              ],
            },
          },
        },
        status: { readyReplicas: 1, replicas: 2, conditions: [{ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', lastTransitionTime: '2025-03-01T11:00:00Z' }] },
      },
    });
    expect(d).toMatchObject({ kind: 'Deployment', name: 'api', age: '1d', replicas: { desired: 2, current: 2, ready: 1 }, selector: 'app=api' });
    const c = (d['template'] as { containers: { env: unknown[]; probes: Record<string, string> }[] }).containers[0]!;
    expect(c.env).toEqual([{ name: 'MODE', value: 'prod' }, { name: 'DB_PASSWORD', from: 'secret db/password' }]);
    expect(c.probes['liveness']).toBe('exec true failure=3');
    expect(d['conditions']).toEqual([{ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', lastTransition: '2025-03-01T11:00:00.000Z' }]);
  });

  it('summarises a deny-all NetworkPolicy', () => {
    expect(networkPolicySummary({ spec: { podSelector: {}, policyTypes: ['Ingress'] } })).toEqual({ podSelector: '(all pods in namespace)', policyTypes: ['Ingress'], ingress: ['deny all ingress'] });
  });
});

describe('object helpers', () => {
  it('summarises managedFields newest first without FieldsV1', () => {
    const s = summariseManagedFields([
      { manager: 'helm', operation: 'Update', time: new Date('2025-02-01T00:00:00Z'), fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:template': {} } } },
      { manager: 'kubectl', operation: 'Update', subresource: 'scale', time: new Date('2025-03-01T00:00:00Z'), fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
    ]);
    expect(s).toEqual([
      { manager: 'kubectl', operation: 'Update', subresource: 'scale', time: '2025-03-01T00:00:00.000Z', fields: ['spec.replicas'], index: 1 },
      { manager: 'helm', operation: 'Update', time: '2025-02-01T00:00:00.000Z', fields: ['spec.replicas', 'spec.template'], index: 0 },
    ]);
  });

  it('drops Secret values, including kind-less list items and last-applied annotations', () => {
    const out = sanitizeObject(
      { type: 'Opaque', metadata: { name: 's', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"p":"aHVudGVyMg=="}}' } }, data: { p: Buffer.from('hunter2').toString('base64') } },
      createRedactor(),
    );
    expect(JSON.stringify(out)).not.toMatch(/hunter2|aHVudGVyMg/);
    expect(out['dataKeys']).toEqual([{ key: 'p', bytes: 7 }]);
  });

  it('matches label selectors with expressions', () => {
    const sel = { matchLabels: { app: 'a' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }, { key: 'canary', operator: 'DoesNotExist' }] };
    expect(labelSelectorMatches(sel, { app: 'a', tier: 'web' })).toBe(true);
    expect(labelSelectorMatches(sel, { app: 'a', tier: 'web', canary: 'y' })).toBe(false);
    expect(labelSelectorMatches({}, { any: 'x' })).toBe(true);
  });

  it('parses quantities', () => {
    expect(parseQuantity('250m')).toBe(0.25);
    expect(parseQuantity('256Mi')).toBe(256 * 2 ** 20);
    expect(parseQuantity('1e3')).toBe(1000);
    expect(parseQuantity('2')).toBe(2);
    expect(parseQuantity('x')).toBeUndefined();
  });
});
