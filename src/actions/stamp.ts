/**
 * The `vigil.dev/change` annotation every write leaves on its object, so anyone reading the object
 * (kubectl, Vigil's own change timeline) sees which incident changed it and who approved it.
 */
import type { Approval, KubeWrite } from './types.js';
import { pointerKey } from './preconditions.js';

export const CHANGE_ANNOTATION = 'vigil.dev/change';

/** `INC-42, approved by U0VIGILSRE (alice) at 2025-03-01T12:00:00Z`; before approval (dry runs): `INC-42, pending approval`. */
export function changeAnnotation(incidentId: string, approval?: Approval): string {
  if (!approval) return `${incidentId}, pending approval`;
  const who = approval.userName ? `${approval.userId} (${approval.userName})` : approval.userId;
  return `${incidentId}, approved by ${who} at ${approval.at.toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
}


function annotationPatch(write: KubeWrite, text: string): KubeWrite {
  return {
    op: 'patch',
    target: write.target,
    patchType: 'merge',
    body: { metadata: { annotations: { [CHANGE_ANNOTATION]: text } } },
    purpose: `record the change on ${write.target.kind.toLowerCase()}/${write.target.name}`,
  };
}

/**
 * The requests that carry `write` with the annotation. A patch on the object itself carries it in the
 * same request; the scale subresource cannot carry annotations (a Scale has none that persist), so a
 * second merge patch follows; a delete is preceded by one, so the last state of the object says who deleted it.
 */
export function stampWrite(write: KubeWrite, text: string): KubeWrite[] {
  if (write.op === 'delete') return [annotationPatch(write, text), write];
  if (write.op === 'create') {
    const body = structuredClone(write.body);
    body.metadata = { ...body.metadata, annotations: { ...body.metadata?.annotations, [CHANGE_ANNOTATION]: text } };
    return [{ ...write, body }];
  }
  if (write.subresource === 'scale') return [write, annotationPatch(write, text)];
  if (write.patchType === 'merge') {
    const body = structuredClone(write.body) as { metadata?: { annotations?: Record<string, string> } };
    body.metadata = { ...body.metadata, annotations: { ...body.metadata?.annotations, [CHANGE_ANNOTATION]: text } };
    return [{ ...write, body }];
  }
  const ops = structuredClone(write.body) as { op: string; path: string; value?: unknown }[];
  const replaceAll = ops.find((o) => o.path === '/metadata/annotations' && (o.op === 'replace' || o.op === 'add'));
  if (replaceAll) replaceAll.value = { ...(replaceAll.value as Record<string, string>), [CHANGE_ANNOTATION]: text };
  else if (write.hasAnnotations) ops.push({ op: 'add', path: `/metadata/annotations/${pointerKey(CHANGE_ANNOTATION)}`, value: text });
  else ops.push({ op: 'add', path: '/metadata/annotations', value: { [CHANGE_ANNOTATION]: text } });
  return [{ ...write, body: ops }];
}
