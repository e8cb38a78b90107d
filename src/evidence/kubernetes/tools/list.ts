import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { apiPath, KubeObjects } from '../objects.js';
import { guessRef } from './get.js';
import { failure, kubeCitation, success } from './result.js';
import { compactRow } from './rows.js';

const parameters = z.object({
  kind: z.string().min(1).describe('Kind, plural or short name: pods, deployments, events, nodes, … For a custom resource give its Kind and apiVersion.'),
  apiVersion: z.string().optional().describe('Only for custom resources or a non-default version, e.g. "cert-manager.io/v1".'),
  namespace: z.string().optional().describe('Namespace to list in. Omit (or set allNamespaces) to list across all namespaces; ignored for cluster-scoped kinds.'),
  allNamespaces: z.boolean().default(false).describe('List across all namespaces even if namespace is set.'),
  labelSelector: z.string().optional().describe('Label selector, e.g. "app.kubernetes.io/name=checkout,tier in (web)".'),
  fieldSelector: z.string().optional().describe('Field selector, e.g. "status.phase=Pending" (pods) or "spec.nodeName=node-1". Only fields the API supports for that kind.'),
  limit: z.number().int().min(1).max(500).default(50).describe('Maximum rows (1-500, default 50).'),
  continueToken: z.string().optional().describe('The continueToken of a previous page, to read the next page.'),
});

export function k8sListTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_list',
    description:
      'List Kubernetes objects of any kind as compact rows (name, namespace, age, key status: pod phase/ready/restarts, deployment ready/desired, node Ready/pressure, …), not full objects. Supports label and field selectors and paging. Use to find objects, then k8s_describe or k8s_get for one.',
    parameters,
    effect: 'read',
    async execute(p, ctx) {
      const ns = p.allNamespaces ? undefined : p.namespace;
      let citation = kubeCitation(guessRef(p.kind, p.apiVersion, ns));
      const objects = new KubeObjects(reader);
      try {
        const info = await objects.resolve(p.kind, p.apiVersion);
        const query = [p.labelSelector ? `labelSelector=${p.labelSelector}` : '', p.fieldSelector ? `fieldSelector=${p.fieldSelector}` : ''].filter(Boolean).join('&');
        citation = kubeCitation(`${apiPath(info, ns)}${query ? `?${query}` : ''}`);
        const page = await objects.list(info, {
          ...(ns ? { namespace: ns } : {}),
          ...(p.labelSelector ? { labelSelector: p.labelSelector } : {}),
          ...(p.fieldSelector ? { fieldSelector: p.fieldSelector } : {}),
          limit: p.limit,
          ...(p.continueToken ? { continueToken: p.continueToken } : {}),
        });
        const rows = page.items.map((o) => compactRow(info.kind, o, ctx.now));
        const data = {
          kind: info.kind,
          ...(info.namespaced ? { namespace: ns ?? '(all)' } : {}),
          count: rows.length,
          rows,
          ...(page.continueToken ? { continueToken: page.continueToken, remaining: page.remaining } : {}),
        };
        const scope = info.namespaced ? (ns ? ` in ${ns}` : ' in all namespaces') : '';
        return success(citation, data, ctx, [{ kind: 'object', summary: `${rows.length} ${info.plural}${scope}${page.continueToken ? ' (more available)' : ''}`, citation, observedAt: ctx.now }]);
      } catch (err) {
        return failure(citation, err, ctx, 'list', p.kind, ns);
      }
    },
  };
}
