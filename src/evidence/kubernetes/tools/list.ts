import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { apiPath, KubeObjects } from '../objects.js';
import { guessRef } from './get.js';
import { failure, kubeCitation, success } from './result.js';
import { compactRow } from './rows.js';

const parameters = z.object({
  kind: z.string().min(1).describe('Kind or short name (custom resources: with apiVersion).'),
  apiVersion: z.string().optional().describe('e.g. cert-manager.io/v1'),
  namespace: z.string().optional().describe('Omit to list all namespaces.'),
  allNamespaces: z.boolean().default(false).describe('Even with namespace set.'),
  labelSelector: z.string().optional().describe('e.g. app=checkout,tier in (web)'),
  fieldSelector: z.string().optional().describe('e.g. status.phase=Pending or spec.nodeName=node-1'),
  limit: z.number().int().min(1).max(500).default(50).describe('Rows at most.'),
  continueToken: z.string().optional().describe('Of the previous page.'),
});

export function k8sListTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_list',
    description:
      'Objects of any kind as compact rows (age and key status: phase/ready/restarts, ready/desired, node conditions), with label and field selectors and paging.',
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
        // Listed in one namespace, the rows need not each say which.
        const rows = page.items.map((o) => {
          const row = compactRow(info.kind, o, ctx.now);
          if (ns && row['namespace'] === ns) delete row['namespace'];
          return row;
        });
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
