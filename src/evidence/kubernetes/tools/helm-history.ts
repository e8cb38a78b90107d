import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { decodeHelmHistory } from '../helm.js';
import { apiPath, attemptRead, KubeObjects } from '../objects.js';
import { failure, kubeCitation, noData, success } from './result.js';
import { diffValues } from './values-diff.js';

const parameters = z.object({
  namespace: z.string().min(1).describe('Namespace.'),
  release: z.string().min(1).describe('Release (annotation meta.helm.sh/release-name on its objects).'),
  limit: z.number().int().min(1).max(50).default(10).describe('Newest revisions.'),
});

export function k8sHelmHistoryTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_helm_history',
    description:
      'A Helm release\'s revisions (status, chart, app version, description, time) and which values keys each changed (values redacted). Ties an incident to an upgrade or rollback.',
    onDemand: 'a Helm release\'s revisions and values changes',
    parameters,
    effect: 'read',
    async execute(p, ctx) {
      const info = KubeObjects.kind('Secret');
      const citation = kubeCitation(`${apiPath(info, p.namespace)}?labelSelector=owner=helm,name=${p.release}`);
      try {
        const secrets = await attemptRead('list', 'secrets', p.namespace, () => reader.listHelmReleaseSecrets(p.namespace, p.release));
        const { revisions, errors } = decodeHelmHistory(secrets.items);
        if (revisions.length === 0) return noData(citation, `no Helm release "${p.release}" in ${p.namespace}${errors.length ? ` (${errors.length} undecodable secrets)` : ''}`);
        // Redact each revision's values before diffing: the same secret redacts to the same placeholder.
        const values = revisions.map((r) => ctx.redactor.redactValue(r.values));
        const rows = revisions.slice(0, p.limit).map((r, i) => {
          const older = values[i + 1];
          const diff = older !== undefined ? diffValues(older, values[i]) : undefined;
          return {
            revision: r.revision,
            status: r.status,
            chart: r.chart,
            appVersion: r.appVersion,
            description: r.description,
            deployedAt: r.deployedAt?.toISOString(),
            ...(diff
              ? { valuesChanged: [...diff.changed, ...diff.added.map((a) => ({ key: a.key, from: undefined, to: a.value })), ...diff.removed.map((x) => ({ key: x.key, from: x.value, to: undefined }))].slice(0, 40) }
              : { valuesChanged: 'first revision' }),
            secretName: r.secretName,
          };
        });
        const deployed = revisions.find((r) => r.status === 'deployed');
        const data = { release: p.release, namespace: p.namespace, revisions: rows, totalRevisions: revisions.length, ...(errors.length ? { gaps: errors } : {}) };
        const evidence = rows.slice(0, 3).map((r) => ({
          kind: 'helm_release' as const,
          summary: `Helm ${p.namespace}/${p.release} revision ${r.revision} ${r.status}: ${r.chart} (${r.appVersion ?? '?'}) "${r.description}" at ${r.deployedAt ?? '?'}${Array.isArray(r.valuesChanged) && r.valuesChanged.length ? `; values changed: ${r.valuesChanged.map((c) => c.key).join(', ')}` : ''}`,
          citation: kubeCitation(apiPath(info, p.namespace, r.secretName)),
          ...(r.deployedAt ? { observedAt: new Date(r.deployedAt) } : {}),
        }));
        return success(citation, { ...data, ...(deployed ? { deployedRevision: deployed.revision } : {}) }, ctx, evidence);
      } catch (err) {
        return failure(citation, err, ctx, 'list', 'secrets', p.namespace);
      }
    },
  };
}
