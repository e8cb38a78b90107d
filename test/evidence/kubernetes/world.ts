/**
 * The demo world plus the small extra objects the Kubernetes tool tests need: an HPA pinned at max,
 * a Pending pod with FailedScheduling, a node under MemoryPressure, a NetworkPolicy, a pending PVC,
 * a Secret with a planted password referenced by a Deployment, and (when openssl exists) a TLS Secret.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadScenario, type Scenario } from '../../scenarios/load.js';

export const PLANTED_PASSWORD = 'Pl4nted-Db-Passw0rd-7781';
export const PLANTED_KEY_MARKER = 'PRIVATE KEY';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const at = (onset: Date, offsetMs: number) => new Date(onset.getTime() + offsetMs).toISOString().replace('.000Z', 'Z');

/** A self-signed cert for shop.example.com valid for `days`, or undefined without openssl. */
export function makeCert(days: number): { crt: string; key: string } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-tls-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', String(days), '-subj', '/CN=shop.example.com/O=Vigil Test', '-addext', 'subjectAltName=DNS:shop.example.com,DNS:www.shop.example.com', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem')],
      { stdio: 'ignore' },
    );
    return { crt: readFileSync(join(dir, 'c.pem'), 'utf8'), key: readFileSync(join(dir, 'k.pem'), 'utf8') };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function extraObjects(onset: Date, cert?: { crt: string; key: string }): object[] {
  const objs: object[] = [
    {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'storefront', namespace: 'shop', creationTimestamp: at(onset, -30 * 86400_000) },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'storefront' },
        minReplicas: 2,
        maxReplicas: 3,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
      },
      status: {
        currentReplicas: 3,
        desiredReplicas: 3,
        lastScaleTime: at(onset, -3600_000),
        currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 96, averageValue: '480m' } } }],
        conditions: [
          { type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size', lastTransitionTime: at(onset, -3600_000) },
          { type: 'ScalingActive', status: 'True', reason: 'ValidMetricFound', message: 'the HPA was able to successfully calculate a replica count from cpu resource utilization', lastTransitionTime: at(onset, -86400_000) },
          { type: 'ScalingLimited', status: 'True', reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count', lastTransitionTime: at(onset, -3600_000) },
        ],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'reports-5d6f7c8b9-abcde', namespace: 'shop', creationTimestamp: at(onset, -600_000), labels: { app: 'reports' } },
      spec: { containers: [{ name: 'reports', image: 'registry.example.com/shop/reports:1.0.0', resources: { requests: { cpu: '2', memory: '64Gi' } } }] },
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient memory.', lastTransitionTime: at(onset, -600_000) }], qosClass: 'Burstable' },
    },
    {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'reports-5d6f7c8b9-abcde.1800000000000001', namespace: 'shop', creationTimestamp: at(onset, -600_000) },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'reports-5d6f7c8b9-abcde', namespace: 'shop' },
      reason: 'FailedScheduling',
      message: '0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.',
      source: { component: 'default-scheduler' },
      firstTimestamp: at(onset, -600_000),
      lastTimestamp: at(onset, -60_000),
      count: 11,
      type: 'Warning',
    },
    {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'reports-5d6f7c8b9-abcde.1800000000000002', namespace: 'shop', creationTimestamp: at(onset, -30_000) },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'reports-5d6f7c8b9-abcde', namespace: 'shop' },
      reason: 'FailedScheduling',
      message: '0/3 nodes are available: 3 Insufficient memory.',
      source: { component: 'default-scheduler' },
      firstTimestamp: at(onset, -30_000),
      lastTimestamp: at(onset, -20_000),
      count: 2,
      type: 'Warning',
    },
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-3', creationTimestamp: at(onset, -10 * 86400_000), labels: { 'kubernetes.io/hostname': 'node-3' } },
      spec: { taints: [{ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }] },
      status: {
        allocatable: { cpu: '3920m', memory: '15214836Ki', pods: '110' },
        capacity: { cpu: '4', memory: '16083188Ki', pods: '110' },
        conditions: [
          { type: 'MemoryPressure', status: 'True', reason: 'KubeletHasInsufficientMemory', message: 'kubelet has insufficient memory available', lastTransitionTime: at(onset, -420_000) },
          { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', lastTransitionTime: at(onset, -10 * 86400_000) },
          { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', lastTransitionTime: at(onset, -10 * 86400_000) },
          { type: 'Ready', status: 'True', reason: 'KubeletReady', lastTransitionTime: at(onset, -10 * 86400_000) },
        ],
        nodeInfo: { kubeletVersion: 'v1.31.2', containerRuntimeVersion: 'containerd://1.7.22', osImage: 'Amazon Linux 2023' },
      },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'checkout-from-storefront', namespace: 'shop', creationTimestamp: at(onset, -40 * 86400_000) },
      spec: {
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'storefront' } },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }], ports: [{ port: 8080, protocol: 'TCP' }] }],
        egress: [],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'checkout-db', namespace: 'shop', creationTimestamp: at(onset, -45 * 86400_000) },
      type: 'Opaque',
      data: { username: b64('checkout'), password: b64(PLANTED_PASSWORD) },
    },
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'reports-data', namespace: 'shop', creationTimestamp: at(onset, -900_000) },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast-ssd', resources: { requests: { storage: '50Gi' } } },
      status: { phase: 'Pending' },
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'fast-ssd', creationTimestamp: at(onset, -400 * 86400_000) },
      provisioner: 'ebs.csi.aws.com',
      volumeBindingMode: 'Immediate',
      reclaimPolicy: 'Delete',
    },
    {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'reports-data.1800000000000003', namespace: 'shop', creationTimestamp: at(onset, -880_000) },
      involvedObject: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: 'reports-data', namespace: 'shop' },
      reason: 'ProvisioningFailed',
      message: 'failed to provision volume with StorageClass "fast-ssd": rpc error: code = Internal desc = UnauthorizedOperation',
      source: { component: 'ebs.csi.aws.com_ebs-csi-controller' },
      firstTimestamp: at(onset, -880_000),
      lastTimestamp: at(onset, -40_000),
      count: 14,
      type: 'Warning',
    },
  ];
  if (cert) {
    objs.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'shop-tls', namespace: 'shop', creationTimestamp: at(onset, -86400_000) },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(cert.crt), 'tls.key': b64(cert.key) },
    });
    objs.push({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'shop', namespace: 'shop', creationTimestamp: at(onset, -86400_000) },
      spec: {
        ingressClassName: 'nginx',
        tls: [{ hosts: ['shop.example.com', 'api.shop.example.com'], secretName: 'shop-tls' }],
        rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'storefront', port: { number: 8080 } } } }] } }],
      },
    });
  }
  return objs;
}

export const DEMO_DIR = fileURLToPath(new URL('../../scenarios/demo-checkout-scaled-to-zero', import.meta.url));

export async function demoWorld(): Promise<{ scenario: Scenario; objects: object[]; cert?: { crt: string; key: string } }> {
  const scenario = await loadScenario(DEMO_DIR);
  const cert = makeCert(10);
  return { scenario, objects: [...scenario.objects, ...extraObjects(scenario.onset, cert)], ...(cert ? { cert } : {}) };
}
