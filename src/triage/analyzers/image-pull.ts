/**
 * `image-pull`: target containers waiting in ErrImagePull / ImagePullBackOff / InvalidImageName. The
 * kubelet's `Failed` event carries the runtime's message (`Failed to pull image "…": … not found`), which
 * tells a missing tag from a registry refusing the credentials or not answering at all. The change that set
 * the image is the rollout that created the pod's ReplicaSet and the managedFields writer of the image.
 *
 * Facts (camelCase): `image` (the reference that fails), `reason` (`not_found` | `unauthorized` |
 * `registry_unreachable` | `rate_limited` | `invalid_name` | `unknown`), `waitingReason`, `container`,
 * `failingPods`, `readyPods`, `desiredReplicas`, `previousImage`, `revision`, `previousRevision`,
 * `manager` (the field manager that wrote the image), `changedAt`.
 */
import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import { describeWriter } from '../../evidence/kubernetes/managed-fields.js';
import type { Evidence } from '../../evidence/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding, MitigationProposal } from '../types.js';
import { clip, containerStatuses, eventEvidence, imageTag, ownerReplicaSet, podContainer, podEvents, revisionEvidence, revisions, servingScope, templateContainer, undoProposal } from './crash-loop.js';

const PULL_WAITING = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);

export type PullFailure = 'not_found' | 'unauthorized' | 'registry_unreachable' | 'rate_limited' | 'invalid_name' | 'unknown';

/** Classify the container runtime's pull error (containerd / CRI-O wording as the kubelet relays it). */
export function classifyPullError(message: string, waitingReason?: string): PullFailure {
  if (waitingReason === 'InvalidImageName' || /invalid reference format|couldn't parse image name/i.test(message)) return 'invalid_name';
  if (/toomanyrequests|rate limit|429 Too Many Requests/i.test(message)) return 'rate_limited';
  if (/unauthorized|authorization failed|authentication required|access denied|pull access denied|insufficient_scope|denied:|401|403 Forbidden|forbidden/i.test(message)) return 'unauthorized';
  if (/not found|manifest unknown|NotFound|does not exist|no such image/i.test(message)) return 'not_found';
  if (/no such host|i\/o timeout|connection refused|network is unreachable|TLS handshake timeout|context deadline exceeded|Client\.Timeout|dial tcp|EOF/i.test(message)) return 'registry_unreachable';
  return 'unknown';
}

const FAILURE_TEXT: Record<PullFailure, string> = {
  not_found: 'the registry has no such tag (manifest not found)',
  unauthorized: 'the registry refuses the pull credentials',
  registry_unreachable: 'the registry cannot be reached',
  rate_limited: 'the registry rate-limits pulls',
  invalid_name: 'the image reference is not a valid name',
  unknown: 'the pull fails',
};

/** Managed-fields entries that own this container's `image` in the pod template, newest first. */
function imageWriters(entries: V1ManagedFieldsEntry[] | undefined, container: string): { entry: V1ManagedFieldsEntry; index: number; time?: Date }[] {
  const key = `k:${JSON.stringify({ name: container })}`;
  return (entries ?? [])
    .map((entry, index) => ({ entry, index, time: entry.time ? new Date(entry.time) : undefined }))
    .filter(({ entry }) =>
      [['f:spec', 'f:template', 'f:spec', 'f:containers', key, 'f:image'], ['f:spec', 'f:template', 'f:spec', 'f:initContainers', key, 'f:image']].some((path) => {
        let node: unknown = entry.fieldsV1;
        for (const part of path) {
          if (typeof node !== 'object' || node === null) return false;
          node = (node as Record<string, unknown>)[part];
        }
        return node !== undefined;
      }),
    )
    .sort((a, b) => (b.time?.getTime() ?? 0) - (a.time?.getTime() ?? 0));
}

const PULL_MESSAGE = /Failed to pull image "([^"]+)": (.*)$/s;

export const imagePull: Analyzer = {
  name: 'image-pull',
  analyze({ kube, onset }: TriageInput): Finding[] {
    const t = kube.target;
    if (!t || !kube.workload) return [];
    const failing = kube.pods.flatMap((pod) =>
      containerStatuses(pod)
        .filter((s) => PULL_WAITING.has(s.state?.waiting?.reason ?? ''))
        .map((status) => ({ pod, podName: pod.metadata?.name ?? '?', status, waiting: status.state!.waiting!.reason! })),
    );
    if (failing.length === 0) return [];
    const component = { kind: t.kind, namespace: t.namespace, name: t.name };
    const container = failing[0]!.status.name;
    const mine = failing.filter((f) => f.status.name === container);
    const pods = [...new Set(mine.map((f) => f.podName))];
    const first = mine[0]!;
    const image = podContainer(first.pod, container)?.image ?? first.status.image;

    // The kubelet's words: `Failed to pull image "…": <runtime error>` (and InspectFailed for bad names).
    const events = podEvents(kube, pods, onset, /^(Failed|InspectFailed|BackOff)$/);
    const pullError = events
      .filter((e) => PULL_MESSAGE.test(e.message ?? '') || e.reason === 'InspectFailed')
      .sort((a, b) => (b.count ?? 1) - (a.count ?? 1))[0];
    const runtimeMessage = pullError ? (PULL_MESSAGE.exec(pullError.message ?? '')?.[2] ?? pullError.message ?? '') : (first.status.state?.waiting?.message ?? '');
    const reason = classifyPullError(runtimeMessage, first.waiting);

    const facts: Record<string, string | number | boolean> = { container, reason, waitingReason: first.waiting, failingPods: pods.length };
    if (image) facts['image'] = image;
    const supporting: Evidence[] = [
      {
        kind: 'object',
        summary: `pod ${first.podName}: container ${container} waiting ${first.waiting}${first.status.state?.waiting?.message ? ` ("${clip(first.status.state.waiting.message, 160)}")` : ''}; image ${image ?? '?'}`,
        citation: objectCitation('Pod', t.namespace, first.podName, 'status.containerStatuses'),
        detail: { pods, waiting: first.waiting, image: image ?? null },
      },
    ];
    if (pullError) supporting.push(eventEvidence(pullError));

    const desired = (kube.workload.spec as { replicas?: number } | undefined)?.replicas;
    const ready = kube.pods.filter((p) => (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')).length;
    facts['readyPods'] = ready;
    if (desired !== undefined) facts['desiredReplicas'] = desired;

    // The change that set the image: the rollout of the failing pods' ReplicaSet, written by a field manager.
    const { current, previous } = revisions(kube);
    const newRevision = current && pods.every((p) => ownerReplicaSet(kube.pods.find((x) => x.metadata?.name === p)!) === current.name) ? current : undefined;
    const previousImage = templateContainer(previous?.replicaSet, container)?.image;
    const imageChanged = !!newRevision && !!previous && !!previousImage && previousImage !== image;
    const recentRollout = !!newRevision?.createdAt && onset.getTime() - newRevision.createdAt.getTime() <= CHANGE_WINDOW_MS;
    const writer = imageWriters(kube.workload.metadata?.managedFields, container)[0];
    const who = writer ? describeWriter({ manager: writer.entry.manager ?? 'unknown', subresource: writer.entry.subresource, operation: writer.entry.operation ?? 'Update' }) : undefined;
    if (imageChanged && newRevision && previous) {
      Object.assign(facts, { previousImage: previousImage!, revision: newRevision.revision, previousRevision: previous.revision });
      if (newRevision.createdAt) facts['changedAt'] = newRevision.createdAt.toISOString();
      supporting.push(revisionEvidence(kube, newRevision, onset, `image ${imageTag(previousImage)} → ${imageTag(image)}`));
    }
    if (writer && (imageChanged || (writer.time && onset.getTime() - writer.time.getTime() <= CHANGE_WINDOW_MS))) {
      facts['manager'] = writer.entry.manager ?? 'unknown';
      if (writer.time) facts['changedAt'] = writer.time.toISOString();
      supporting.push({
        kind: 'managed_fields',
        summary: `managedFields: manager \`${writer.entry.manager}\` (${who}) ${writer.entry.operation ?? 'Update'} owns the ${container} image${writer.time ? ` (${clockTime(writer.time)}, ${relativeToOnset(writer.time, onset)})` : ''}`,
        citation: objectCitation(t.kind, t.namespace, t.name, `metadata.managedFields[${writer.index}]`),
        observedAt: writer.time,
        detail: { manager: writer.entry.manager, operation: writer.entry.operation, time: writer.time?.toISOString() ?? null },
      });
    }

    const serving = kube.pods.filter((p) => !pods.includes(p.metadata?.name ?? '') && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'));
    const problem =
      `${pods.length} new ${t.name} pod${pods.length === 1 ? '' : 's'} cannot pull ${imageTag(image) ?? 'the image'}` +
      (serving.length ? `; ${serving.length} older pod${serving.length === 1 ? '' : 's'}${previousImage ? ` (${imageTag(previousImage)})` : ''} still serve${serving.length === 1 ? 's' : ''}, ${ready}${desired !== undefined ? ` of ${desired}` : ''} ready (the rollout is stuck, partial availability)` : `; no ${t.name} pod is ready`);
    const { scope, affected, evidence } = servingScope(kube, problem);
    supporting.push(...evidence);

    let mitigation: MitigationProposal | undefined;
    if (imageChanged && recentRollout) {
      mitigation = {
        action: 'set_image',
        target: component,
        params: { container, image: previousImage },
        command: `kubectl set image ${t.kind.toLowerCase()}/${t.name} -n ${t.namespace} ${container}=${previousImage}`,
        rationale: `${previousImage} is the image revision ${previous!.revision} ran; ${image} ${reason === 'not_found' ? 'does not exist in the registry' : 'cannot be pulled'}`,
      };
    } else if (newRevision && previous && recentRollout && reason !== 'registry_unreachable') {
      mitigation = undoProposal(kube, previous, `revision ${previous.revision} pulled fine; the rollout to revision ${newRevision.revision} cannot start its pods`);
    }

    const mechanism =
      `Pods of ${t.kind.toLowerCase()}/${t.name} cannot start container ${container}: ${first.waiting} for image ${image ?? '?'} — ${FAILURE_TEXT[reason]}` +
      (runtimeMessage ? ` (kubelet: "${clip(runtimeMessage, 200)}")` : '') +
      (imageChanged ? `; the image was changed from ${previousImage} in revision ${newRevision!.revision}${who ? ` by \`${who}\`` : ''}${newRevision!.createdAt ? ` at ${clockTime(newRevision!.createdAt)}, ${relativeToOnset(newRevision!.createdAt, onset)}` : ''}` : '') +
      '.';
    return [
      {
        key: `image-pull:${t.namespace}/${t.kind}/${t.name}`,
        analyzer: 'image-pull',
        status: 'supported',
        confidence: pullError ? 0.95 : 0.9,
        title: `${t.name}: ${first.waiting} for ${imageTag(image) ?? image ?? 'image'} (${reason.replace('_', ' ')})${who && imageChanged ? ` set by ${who}` : ''}`,
        component,
        mechanism,
        scope,
        affected,
        facts,
        supporting,
        refuting: [],
        ...(mitigation ? { mitigation } : {}),
      },
    ];
  },
};
