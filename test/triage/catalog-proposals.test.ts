/**
 * When the analyzers of the families the catalog grew for attach a proposal, from the object alone
 * (actions/objects/propose.ts) and from the Jobs' status (job-failed): only when the action's
 * precondition holds.
 */
import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { deleteNetworkPolicyProposal, hpaRestoreProposal, previousSpecKnown, restoreObjectProposal } from '../../src/actions/objects/propose.js';
import { emptySnapshot } from '../../src/topology/snapshot.js';
import type { ClusterTriageInput } from '../../src/triage/analyzer.js';
import { jobFailed } from '../../src/triage/cluster/job-failed.js';

const ONSET = new Date('2026-03-01T12:00:00Z');
const at = (min: number) => new Date(ONSET.getTime() + min * 60_000).toISOString();
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const applied = (kind: string, apiVersion: string, spec: object) => JSON.stringify({ apiVersion, kind, metadata: { name: 'x', namespace: 'shop' }, spec });

describe('previous spec known, from the object alone', () => {
  it('a Service kubectl-edited after its apply: yes; applied as is, or never applied: no', () => {
    const svc = (ann: Record<string, string>, spec: object) => ({ metadata: { name: 'checkout', namespace: 'shop', annotations: ann }, spec });
    const spec = { selector: { app: 'checkout' }, ports: [{ port: 80, targetPort: 8080 }] };
    expect(previousSpecKnown('Service', svc({ [LAST_APPLIED]: applied('Service', 'v1', spec) }, { ...spec, selector: { app: 'checkout-v2' } }))).toBe('last-applied');
    // The API server's defaults are not an edit.
    expect(previousSpecKnown('Service', svc({ [LAST_APPLIED]: applied('Service', 'v1', spec) }, { ...spec, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] }))).toBeUndefined();
    expect(previousSpecKnown('Service', svc({}, spec))).toBeUndefined();
    expect(restoreObjectProposal('Service', svc({}, spec), 'x')).toBeUndefined();
  });

  it('Helm-managed: only when someone other than Helm wrote the fields last', () => {
    const obj = (manager: string) => ({
      metadata: { name: 'edge', namespace: 'shop', annotations: { 'meta.helm.sh/release-name': 'edge' }, managedFields: [{ manager: 'helm', time: at(-600), fieldsV1: { 'f:spec': { 'f:rules': {} } } }, { manager, time: at(-5), fieldsV1: { 'f:spec': { 'f:rules': {} } } }] },
      spec: { rules: [] },
    });
    expect(restoreObjectProposal('Ingress', obj('kubectl-edit'), 'r')).toMatchObject({ action: 'restore_object', target: { kind: 'Ingress', namespace: 'shop', name: 'edge' }, params: { kind: 'Ingress', name: 'edge' } });
    expect(restoreObjectProposal('Ingress', obj('helm'), 'r')).toBeUndefined();
  });

  it('a typed NetworkPolicy (client-node spells `from` as `_from`) compares as the API’s JSON', () => {
    const spec = { podSelector: { matchLabels: { app: 'checkout' } }, policyTypes: ['Ingress'], ingress: [{ from: [{ podSelector: { matchLabels: { app: 'storefront' } } }] }] };
    const typed = { metadata: { name: 'p', namespace: 'shop', annotations: { [LAST_APPLIED]: applied('NetworkPolicy', 'networking.k8s.io/v1', spec) } }, spec: { ...spec, ingress: [{ _from: spec.ingress[0]!.from }] } };
    expect(previousSpecKnown('NetworkPolicy', typed)).toBeUndefined();
  });

  it('an HPA: proposed when an edit lowered maxReplicas, not when load simply outgrew it', () => {
    const hpa = (max: number) => ({ metadata: { name: 'checkout', namespace: 'shop', annotations: { [LAST_APPLIED]: applied('HorizontalPodAutoscaler', 'autoscaling/v2', { minReplicas: 2, maxReplicas: 10 }) } }, spec: { minReplicas: 2, maxReplicas: max } });
    expect(hpaRestoreProposal(hpa(4), (prev) => `back to ${prev}`)).toMatchObject({ action: 'restore_object', target: { kind: 'HorizontalPodAutoscaler', name: 'checkout' }, rationale: 'back to 10' });
    expect(hpaRestoreProposal(hpa(10), () => 'x')).toBeUndefined();
    expect(hpaRestoreProposal(hpa(20), () => 'x')).toBeUndefined();
  });

  it('a NetworkPolicy added right before the onset: delete it; an old one, or Helm’s: no', () => {
    const np = (created: string, ann: Record<string, string> = {}) => ({ metadata: { name: 'deny', namespace: 'shop', creationTimestamp: created, annotations: ann }, spec: { podSelector: {}, policyTypes: ['Egress'] } });
    expect(deleteNetworkPolicyProposal(np(at(-4)), ONSET, 3600_000, 'r')).toMatchObject({ action: 'delete_network_policy', params: { name: 'deny' }, command: 'kubectl delete networkpolicy deny -n shop' });
    expect(deleteNetworkPolicyProposal(np(at(-600)), ONSET, 3600_000, 'r')).toBeUndefined();
    expect(deleteNetworkPolicyProposal(np(at(-4), { 'meta.helm.sh/release-name': 'sec' }), ONSET, 3600_000, 'r')).toBeUndefined();
  });
});

describe('job-failed: suspend_cronjob only when the runs harm others', () => {
  const job = (name: string, created: number, failed: boolean): V1Job => ({
    metadata: { name, namespace: 'batch', creationTimestamp: new Date(at(created)), ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'export', uid: 'cj', controller: true }] },
    spec: { template: { spec: { containers: [{ name: 'export', image: 'export:2' }] } } },
    status: failed ? { failed: 3, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }] } : { active: 1 },
  });
  const world = (policy: string, active: number): ClusterTriageInput => {
    const cj: V1CronJob = { metadata: { name: 'export', namespace: 'batch' }, spec: { schedule: '*/5 * * * *', concurrencyPolicy: policy, jobTemplate: { spec: { template: {} } } }, status: { active: Array.from({ length: active }, (_, i) => ({ kind: 'Job', name: `export-${i}` })) } };
    const snapshot = { ...emptySnapshot(), cronJobs: [cj] };
    return { onset: ONSET, cluster: { snapshot }, inputs: [], changes: [], metrics: [], jobs: [{ owner: { kind: 'CronJob', namespace: 'batch', name: 'export' }, jobs: [job('export-3', -5, true), job('export-2', -10, true)], pods: [], logs: [] }] } as unknown as ClusterTriageInput;
  };
  it('runs piling up under Allow: proposed; one at a time (Forbid): not', () => {
    const [f] = jobFailed.analyze(world('Allow', 3));
    expect(f?.mitigation).toMatchObject({ action: 'suspend_cronjob', target: { kind: 'CronJob', namespace: 'batch', name: 'export' }, params: { suspend: true } });
    expect(f?.facts?.['activeJobs']).toBe(3);
    expect(jobFailed.analyze(world('Forbid', 3))[0]?.mitigation).toBeUndefined();
    expect(jobFailed.analyze(world('Allow', 1))[0]?.mitigation).toBeUndefined();
  });
});
