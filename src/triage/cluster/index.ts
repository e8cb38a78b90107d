/**
 * The cluster-level analyzers: faults whose object is not a candidate workload's own (quotas, webhooks,
 * nodes, DNS, jobs, chaos experiments, external hosts…). One file each; they run once per investigation
 * on the whole input, after the per-candidate analyzers.
 */
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import type { Finding } from '../types.js';
import { backgroundNoiseCluster } from './background.js';
import { chaosExperiment } from './chaos-experiment.js';
import { queueBacklog } from './queue-backlog.js';
import { rbacDenied } from './rbac-denied.js';
import { cloudIdentity } from './cloud-identity.js';
import { preemption } from './preemption.js';
import { stalePrimary } from './stale-primary.js';
import { volumeAttach } from './volume-attach.js';
import { daemonsetSqueeze } from './daemonset-squeeze.js';
import { clockSkew } from './clock-skew.js';
import { diskFull } from './disk-full.js';
import { nodeHealth } from './node-health.js';
import { credentialsRejected } from './credentials-rejected.js';
import { dnsFailure } from './dns-failure.js';
import { externalDependency } from './external-dependency.js';
import { ingressMisroute } from './ingress-misroute.js';
import { topicConfig } from './topic-config.js';
import { meshMisconfig } from './mesh-misconfig.js';
import { jobFailed } from './job-failed.js';
import { missingObject } from './missing-object.js';
import { podCreationBlocked } from './pod-creation-blocked.js';
import { orphanService } from './orphan-service.js';
import { untrustedCa } from './untrusted-ca.js';
import { cronjobPileup } from './cronjob-pileup.js';

export const clusterAnalyzers: ClusterAnalyzer[] = [podCreationBlocked, jobFailed, cronjobPileup, missingObject, dnsFailure, credentialsRejected, externalDependency, ingressMisroute, topicConfig, meshMisconfig, orphanService, untrustedCa, nodeHealth, clockSkew, diskFull, queueBacklog, chaosExperiment, rbacDenied, cloudIdentity, preemption, stalePrimary, volumeAttach, daemonsetSqueeze, backgroundNoiseCluster];

export function runClusterTriage(input: ClusterTriageInput, registry: ClusterAnalyzer[] = clusterAnalyzers): { findings: Finding[]; errors: string[] } {
  const findings: Finding[] = [];
  const errors: string[] = [];
  for (const a of registry) {
    try {
      for (const f of a.analyze(input)) findings.push(f.status === 'supported' && f.supporting.length === 0 ? { ...f, status: 'inconclusive', confidence: Math.min(f.confidence, 0.5) } : f);
    } catch (err) {
      errors.push(`analyzer ${a.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { findings, errors };
}
