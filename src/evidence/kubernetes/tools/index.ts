/**
 * The read-only Kubernetes evidence tools the model (and the deterministic gatherers) may call. Every
 * read runs under the reader identity; results are redacted, size-bounded and cited.
 */
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { k8sDescribeTool } from './describe.js';
import { k8sEndpointsTool } from './endpoints.js';
import { k8sEventsTool } from './events.js';
import { k8sGetTool } from './get.js';
import { k8sHelmHistoryTool } from './helm-history.js';
import { k8sHpaTool } from './hpa.js';
import { k8sListTool } from './list.js';
import { k8sNetworkPoliciesTool } from './network-policies.js';
import { k8sNodesTool } from './nodes.js';
import { k8sPodLogsTool } from './pod-logs.js';
import { k8sRolloutHistoryTool } from './rollout-history.js';
import { k8sStorageTool } from './storage.js';
import { k8sTlsCertificatesTool } from './tls.js';
import { k8sWorkloadLogsTool } from './workload-logs.js';

export function kubernetesTools(reader: KubeReader): EvidenceTool[] {
  return [
    k8sGetTool(reader),
    k8sListTool(reader),
    k8sDescribeTool(reader),
    k8sEventsTool(reader),
    k8sPodLogsTool(reader),
    k8sWorkloadLogsTool(reader),
    k8sRolloutHistoryTool(reader),
    k8sEndpointsTool(reader),
    k8sHpaTool(reader),
    k8sStorageTool(reader),
    k8sNodesTool(reader),
    k8sNetworkPoliciesTool(reader),
    k8sHelmHistoryTool(reader),
    k8sTlsCertificatesTool(reader),
  ] as EvidenceTool[];
}

export {
  k8sDescribeTool,
  k8sEndpointsTool,
  k8sEventsTool,
  k8sGetTool,
  k8sHelmHistoryTool,
  k8sHpaTool,
  k8sListTool,
  k8sNetworkPoliciesTool,
  k8sNodesTool,
  k8sPodLogsTool,
  k8sRolloutHistoryTool,
  k8sStorageTool,
  k8sTlsCertificatesTool,
  k8sWorkloadLogsTool,
};
