import type { Evidence } from '../../evidence/types.js';
import { writersOf } from '../../evidence/kubernetes/managed-fields.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';

/**
 * "A Helm upgrade or rollback caused this" — the hypothesis responders (and other agents) reach for
 * first when a Helm-managed workload breaks. Decided from the release history: a revision deployed
 * shortly before the onset supports it; otherwise it is ruled out with the last change's age and values.
 */
export const helmRelease: Analyzer = {
  name: 'helm-release',
  analyze({ kube, onset }: TriageInput): Finding[] {
    const t = kube.target;
    const helm = kube.helm;
    if (!t || !helm || helm.revisions.length === 0) return [];
    const latest = helm.revisions[0]!;
    const key = `helm-release:${t.namespace}/${helm.release}`;
    const component = { kind: t.kind, namespace: t.namespace, name: t.name };
    const kind = /rollback/i.test(latest.description) ? 'rollback' : latest.revision === 1 ? 'install' : 'upgrade';
    const latestEvidence: Evidence = {
      kind: 'helm_release',
      summary: `Helm ${helm.release} rev ${latest.revision} (${latest.status}, ${latest.chart}): "${latest.description}"${latest.deployedAt ? ` at ${latest.deployedAt.toISOString().slice(0, 16).replace('T', ' ')}` : ''}`,
      citation: objectCitation('Secret', t.namespace, latest.secretName, 'data.release (decoded; values redacted)'),
      observedAt: latest.deployedAt,
      detail: { revision: latest.revision, status: latest.status, chart: latest.chart, description: latest.description, replicaCount: latest.values['replicaCount'] ?? null },
    };
    const age = latest.deployedAt ? onset.getTime() - latest.deployedAt.getTime() : Number.POSITIVE_INFINITY;
    const title = `Helm ${kind} of release ${helm.release} caused it`;

    if (age <= CHANGE_WINDOW_MS) {
      return [
        {
          key,
          analyzer: 'helm-release',
          status: 'open',
          confidence: 0.6,
          title: `Helm ${kind} of ${helm.release} (rev ${latest.revision}) ${latest.deployedAt ? relativeToOnset(latest.deployedAt, onset) : ''}`.trim(),
          component,
          mechanism: `Release ${helm.release} changed to revision ${latest.revision} (${latest.description}) right before the alert.`,
          supporting: [latestEvidence],
          refuting: [],
        },
      ];
    }

    const refuting: Evidence[] = [latestEvidence];
    const replicaCount = latest.values['replicaCount'];
    const specReplicas = (kube.workload?.spec as { replicas?: number } | undefined)?.replicas;
    const replicaWriter = writersOf(kube.workload?.metadata?.managedFields, ['spec', 'replicas'])[0];
    if (typeof replicaCount === 'number' && specReplicas !== undefined && specReplicas !== replicaCount && replicaWriter && replicaWriter.manager !== 'helm') {
      refuting.push({
        kind: 'managed_fields',
        summary: `spec.replicas (${specReplicas}) differs from the release values (replicaCount ${replicaCount}) and is owned by \`${replicaWriter.manager}\`, not helm`,
        citation: objectCitation(t.kind, t.namespace, t.name, `metadata.managedFields[${replicaWriter.index}]`),
        observedAt: replicaWriter.time,
      });
    }
    return [
      {
        key,
        analyzer: 'helm-release',
        status: 'ruled_out',
        confidence: 0.05,
        title,
        component,
        mechanism: `A Helm ${kind} of ${helm.release} changed the workload.`,
        reason:
          `last Helm change ${latest.deployedAt ? `${humanDuration(age)} ago (${clockTime(latest.deployedAt)} on ${latest.deployedAt.toISOString().slice(0, 10)})` : 'has no deploy time'}` +
          `, rev ${latest.revision} ${kind}` +
          (typeof replicaCount === 'number' ? `, values set replicaCount ${replicaCount}` : '') +
          (replicaWriter && replicaWriter.manager !== 'helm' ? `; the current replicas were written by \`${replicaWriter.manager}\`, not Helm` : ''),
        supporting: [],
        refuting,
      },
    ];
  },
};
