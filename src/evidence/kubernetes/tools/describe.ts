import type { CoreV1Event } from '@kubernetes/client-node';
import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { DESCRIBABLE_KINDS, describeObject, type DescribableKind } from '../describe.js';
import { apiPath, builtinKind, describeFailure, KubeObjects, toFailure } from '../objects.js';
import { failure, kubeCitation, success } from './result.js';

const parameters = z.object({
  kind: z.string().min(1).describe(`${DESCRIBABLE_KINDS.join(', ')} (short names work).`),
  namespace: z.string().optional().describe('Omit for Node.'),
  name: z.string().min(1).describe('Name.'),
});

/** Events about one object; a failure here is a gap in the result, not a failed describe. */
export async function eventsFor(objects: KubeObjects, kind: string, namespace: string | undefined, name: string): Promise<{ events: CoreV1Event[]; gap?: string }> {
  try {
    const page = await objects.list<CoreV1Event>(KubeObjects.kind('Event'), {
      ...(namespace ? { namespace } : {}),
      fieldSelector: `involvedObject.name=${name},involvedObject.kind=${kind}`,
      limit: 200,
    });
    return { events: page.items };
  } catch (err) {
    return { events: [], gap: `events: ${describeFailure(toFailure(err, 'list', 'events', namespace))}` };
  }
}

export function k8sDescribeTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_describe',
    description:
      'A kubectl-describe-like summary of one object: images, resources, probes, env names (values redacted), status, conditions, owner, its recent events and who last wrote which fields. Start here for an object you suspect.',
    parameters,
    effect: 'read',
    async execute(p, ctx) {
      const info = builtinKind(p.kind);
      const kind = info?.kind as DescribableKind | undefined;
      const fallback = kubeCitation(`${p.kind}/${p.name}`);
      if (!info || !kind || !DESCRIBABLE_KINDS.includes(kind))
        return { status: 'error', citation: fallback, error: `k8s_describe supports ${DESCRIBABLE_KINDS.join(', ')}; use k8s_get for ${p.kind}` };
      if (info.namespaced && !p.namespace) return { status: 'error', citation: fallback, error: `${kind} is namespaced: pass namespace` };
      const ns = info.namespaced ? p.namespace : undefined;
      const citation = kubeCitation(apiPath(info, ns, p.name));
      const objects = new KubeObjects(reader);
      try {
        const [obj, ev] = await Promise.all([objects.get(info, ns, p.name), eventsFor(objects, kind, ns, p.name)]);
        const summary = describeObject({ kind, object: obj, events: ev.events, now: ctx.now });
        const data = ctx.redactor.redactK8sObject({ ...summary, ...(ev.gap ? { gaps: [ev.gap] } : {}) });
        return success(citation, data, ctx, [{ kind: 'object', summary: `${kind} ${ns ? `${ns}/` : ''}${p.name} described`, citation, observedAt: ctx.now }]);
      } catch (err) {
        return failure(citation, err, ctx, 'get', info.plural, ns);
      }
    },
  };
}
