import type { CoreV1Event } from '@kubernetes/client-node';
import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { apiPath, builtinKind, KubeObjects } from '../objects.js';
import { eventLastSeen, groupEvents } from './event-groups.js';
import { failure, kubeCitation, noData, success } from './result.js';

const parameters = z.object({
  namespace: z.string().optional().describe('Omit for all (Node events: default).'),
  kind: z.string().optional().describe('Of objects of this kind only.'),
  name: z.string().optional().describe('Of this object only.'),
  warningsOnly: z.boolean().default(false).describe('Only Warnings.'),
  sinceMinutes: z.number().int().min(1).optional().describe('Seen in the last N minutes.'),
  limit: z.number().int().min(1).max(200).default(40).describe('Groups at most.'),
});

export function k8sEventsTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_events',
    description:
      'Events, newest first, grouped by reason and object with counts and first/last seen: what the cluster did around the incident.',
    parameters,
    effect: 'read',
    async execute(p, ctx) {
      const kind = p.kind ? (builtinKind(p.kind)?.kind ?? p.kind) : undefined;
      const selectors = [kind ? `involvedObject.kind=${kind}` : '', p.name ? `involvedObject.name=${p.name}` : '', p.warningsOnly ? 'type=Warning' : ''].filter(Boolean).join(',');
      const info = KubeObjects.kind('Event');
      const citation = kubeCitation(`${apiPath(info, p.namespace)}${selectors ? `?fieldSelector=${selectors}` : ''}`);
      try {
        const page = await new KubeObjects(reader).list<CoreV1Event>(info, {
          ...(p.namespace ? { namespace: p.namespace } : {}),
          ...(selectors ? { fieldSelector: selectors } : {}),
          limit: 1000,
        });
        const since = p.sinceMinutes !== undefined ? ctx.now.getTime() - p.sinceMinutes * 60_000 : undefined;
        const events = since === undefined ? page.items : page.items.filter((e) => (eventLastSeen(e) ?? 0) >= since);
        if (events.length === 0) return noData(citation, `no ${p.warningsOnly ? 'warning ' : ''}events${p.name ? ` about ${kind ?? ''} ${p.name}` : ''}${p.namespace ? ` in ${p.namespace}` : ''}${p.sinceMinutes ? ` in the last ${p.sinceMinutes}m` : ''}`);
        const groups = groupEvents(events);
        const shown = groups.slice(0, p.limit);
        const data = { events: shown, groups: groups.length, rawEvents: events.length, ...(page.continueToken ? { note: 'more than 1000 events; oldest not read' } : {}) };
        // Every group is in the data; evidence lines (summaries for the audit and the model) only for the newest warnings.
        const evidence = shown.filter((g) => g.type === 'Warning').slice(0, 3).map((g) => ({
          kind: 'event' as const,
          summary: `${g.type} ${g.reason} ${g.object} ×${g.count}${g.lastSeen ? ` (last ${g.lastSeen})` : ''}: ${g.message.slice(0, 160)}`,
          citation,
          ...(g.lastSeen ? { observedAt: new Date(g.lastSeen) } : {}),
        }));
        return success(citation, data, ctx, evidence);
      } catch (err) {
        return failure(citation, err, ctx, 'list', 'events', p.namespace);
      }
    },
  };
}
