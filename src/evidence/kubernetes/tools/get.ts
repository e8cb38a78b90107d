import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { apiPath, builtinKind, KubeObjects, sanitizeObject } from '../objects.js';
import { failure, kubeCitation, success } from './result.js';

const parameters = z.object({
  kind: z.string().min(1).describe('Kind or short name (custom resources: with apiVersion).'),
  apiVersion: z.string().optional().describe('e.g. cert-manager.io/v1'),
  namespace: z.string().optional().describe('Omit for cluster-scoped kinds.'),
  name: z.string().min(1).describe('Name.'),
});

/** The citation path before discovery has answered: right for built-in kinds, a best guess for CRDs. */
export function guessRef(kind: string, apiVersion: string | undefined, namespace?: string, name?: string): string {
  const b = builtinKind(kind);
  if (b && (!apiVersion || apiVersion === b.apiVersion)) return apiPath(b, namespace, name);
  return apiPath({ apiVersion: apiVersion ?? 'v1', plural: `${kind.toLowerCase()}s`, namespaced: namespace !== undefined }, namespace, name);
}

export function k8sGetTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_get',
    description:
      'One Kubernetes object of any kind, custom resources included, as redacted JSON (Secret values never; managedFields as who wrote what when). For exact fields; k8s_describe reads easier.',
    parameters,
    effect: 'read',
    onDemand: 'one object as JSON, any field, custom resources too',
    async execute(p, ctx) {
      let citation = kubeCitation(guessRef(p.kind, p.apiVersion, p.namespace, p.name));
      const objects = new KubeObjects(reader);
      try {
        const info = await objects.resolve(p.kind, p.apiVersion);
        if (info.namespaced && !p.namespace) return { status: 'error', citation, error: `${info.kind} is namespaced: pass namespace` };
        citation = kubeCitation(apiPath(info, p.namespace, p.name));
        const obj = await objects.get(info, p.namespace, p.name);
        const data = sanitizeObject(obj, ctx.redactor);
        const where = info.namespaced ? `${p.namespace}/${p.name}` : p.name;
        return success(citation, data, ctx, [{ kind: 'object', summary: `${info.kind} ${where}`, citation, observedAt: ctx.now }]);
      } catch (err) {
        return failure(citation, err, ctx, 'get', p.kind, p.namespace);
      }
    },
  };
}
