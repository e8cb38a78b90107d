import type { BoardModel, IncidentCardModel } from '../../../src/slack/blocks/models.js';

/** The mission sketch's incident: checkout scaled to zero by `kubectl scale`, with Helm and payments noise. */
export const at = (hms: string): Date => new Date(`2025-03-04T${hms}Z`);

export const demoIncident: IncidentCardModel = {
  incidentId: 'inc_demo1',
  title: 'KubeDeploymentReplicasMismatch (checkout shop critical)',
  alertName: 'KubeDeploymentReplicasMismatch',
  status: 'open',
  phase: 'investigating',
  severity: 'SEV2/critical',
  target: 'shop/checkout',
  owner: 'S0TEAMCHK',
  source: 'alertmanager',
  openedAt: at('14:02:11'),
  firstCardAfterSec: 3,
  alertCount: 3,
  lastAlertAt: at('14:05:00'),
  alertLink: 'https://alertmanager.example.com/#/alerts?filter={alertname="KubeDeploymentReplicasMismatch"}&silenced=false',
};

export const demoBoard: BoardModel = {
  incidentId: 'inc_demo1',
  updatedAt: at('14:05:12'),
  hypotheses: [
    // Deliberately not in display order: the board must order them.
    {
      label: 'H3',
      status: 'unrelated',
      confidence: 0.9,
      title: 'payments-worker CrashLoopBackOff',
      component: { kind: 'Deployment', namespace: 'payments', name: 'payments-worker' },
      mechanism: 'payments-worker restarts since 09:12 with exit code 1',
      reason: 'other namespace, crash looping since 09:12, long before the alert',
      evidence: [
        {
          summary: 'pod payments-worker-7d9 restarted 41 times since 09:12',
          stance: 'refutes',
          citation: { source: 'kubernetes', ref: 'api/v1/namespaces/payments/pods/payments-worker-7d9#status.containerStatuses[0]' },
        },
      ],
    },
    {
      label: 'H2',
      status: 'ruled_out',
      confidence: 0.1,
      title: 'Helm rollback',
      component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
      mechanism: 'a Helm rollback could have set replicaCount to 0',
      reason: 'last Helm change 3 days ago (rev 7, replicaCount 3)',
      evidence: [
        {
          summary: 'Helm release checkout rev 7 deployed 3 days ago with replicaCount 3',
          stance: 'refutes',
          citation: { source: 'kubernetes', ref: 'api/v1/namespaces/shop/secrets/sh.helm.release.v1.checkout.v7#metadata' },
        },
      ],
    },
    {
      label: 'H1',
      status: 'supported',
      confidence: 0.92,
      title: 'checkout scaled to 0 by `kubectl scale` (field manager kubectl, 14:01:58)',
      component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
      mechanism: 'spec.replicas was set to 0 by field manager kubectl (operation Update, subresource scale) at 14:01:58; no pods serve checkout',
      scope: 'all /checkout requests fail',
      evidence: [
        {
          summary: 'managedFields: kubectl/scale set spec.replicas at 14:01:58',
          stance: 'supports',
          citation: {
            source: 'kubernetes',
            ref: 'apis/apps/v1/namespaces/shop/deployments/checkout#metadata.managedFields[1]',
            url: 'https://k8s.example.com/apis/apps/v1/namespaces/shop/deployments/checkout',
          },
        },
        { summary: 'ReplicaSet checkout-5f7 0/0 ready', stance: 'supports', citation: { source: 'kubernetes', ref: 'apis/apps/v1/namespaces/shop/replicasets/checkout-5f7#status' } },
        { summary: 'Endpoints checkout empty', stance: 'supports', citation: { source: 'kubernetes', ref: 'api/v1/namespaces/shop/endpoints/checkout#subsets' } },
      ],
    },
  ],
  scope: 'all /checkout requests fail (5xx 100% since 14:02) · upstream: storefront',
  mitigation: {
    action: 'scale',
    target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
    params: { replicas: 3 },
    command: 'kubectl scale deployment/checkout -n shop --replicas=3',
    rationale: 'restores the 3 replicas the Helm release declares',
  },
  steering: [{ userId: 'U0BOB', text: 'check the database too', at: at('14:06:01') }],
  gaps: ['pods/log in namespace shop (forbidden for the reader identity)'],
};
