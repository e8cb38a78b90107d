/**
 * `endpoints-mismatch` for a Service that selects no pod at all: a caller on the alert's path calls it,
 * its selector matches no pod in its namespace (so Endpoints are empty and callers get connection refused
 * / 503 "no healthy upstream"), and a workload there is plainly the one it should select (named like it,
 * or carrying the selector's value under another key or the selector's key with another value) — a label
 * renamed in a chart refactor, a Deployment renamed, a selector typo. The per-workload analyzer cannot see
 * this: no workload is behind the Service, so no candidate reads it. Localised to the Service; the
 * workload that lost its match is in scope. Scaled-to-zero workloads are left to scaled-to-zero. Pure.
 */
import type { V1Deployment, V1Service } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, selectorMatches } from '../../topology/graph.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, relativeToOnset } from '../time.js';
import type { Finding } from '../types.js';
import { lastChangeBefore } from './common.js';

const labelsText = (l: Record<string, string> | undefined) => Object.entries(l ?? {}).map(([k, v]) => `${k}=${v}`).join(',');

export const orphanService: ClusterAnalyzer = {
  name: 'orphan-service',
  analyze(input: ClusterTriageInput): Finding[] {
    const { snapshot: s, topology: t, walk } = input.cluster;
    const out: Finding[] = [];
    for (const svc of s.services) {
      const ns = svc.metadata?.namespace ?? '';
      const name = svc.metadata?.name ?? '';
      const selector = svc.spec?.selector;
      if (!selector || !Object.keys(selector).length || svc.spec?.type === 'ExternalName') continue;
      const ref: ComponentRef = { kind: 'Service', namespace: ns, name };
      const id = nodeId(ref);
      if (!walk.reached.has(id)) continue;
      const callers = t.incoming(id).filter((e) => e.kind === 'calls').map((e) => t.nodes.get(e.from)?.ref).filter((r): r is ComponentRef => !!r);
      if (!callers.length) continue;
      const pods = s.pods.filter((p) => p.metadata?.namespace === ns);
      if (pods.some((p) => selectorMatches({ matchLabels: selector }, p.metadata?.labels))) continue;
      const ep = s.endpoints.find((e) => e.metadata?.namespace === ns && e.metadata?.name === name);
      if ((ep?.subsets ?? []).some((x) => (x.addresses ?? []).length > 0)) continue;
      const meant = meantWorkload(s.deployments.filter((d) => d.metadata?.namespace === ns), svc, selector);
      if (!meant) continue;
      if ((meant.d.spec?.replicas ?? 1) === 0) continue; // scaled-to-zero explains empty endpoints
      const podLabels = meant.d.spec?.template?.metadata?.labels ?? {};
      // The template still matches: the selector is right and the pods are merely absent from what we
      // could read (or were never created, which pod-creation-blocked explains). Not a mismatch.
      if (selectorMatches({ matchLabels: selector }, podLabels)) continue;
      const workload: ComponentRef = { kind: 'Deployment', namespace: ns, name: meant.d.metadata?.name ?? '?' };
      // Who moved: the Service's selector, or the workload's template labels, whichever changed last.
      const svcChange = lastChangeBefore('Service', svc.metadata, input.onset);
      const wlChange = lastChangeBefore('Deployment', meant.d.metadata, input.onset);
      const change = [svcChange, wlChange].filter((c): c is NonNullable<typeof c> => !!c).sort((a, b) => b.at.getTime() - a.at.getTime())[0];
      const supporting: Evidence[] = [
        { kind: 'endpoints', summary: `Endpoints ${name}: no ready addresses; selector ${labelsText(selector)} matches no pod in ${ns}`, citation: objectCitation('Endpoints', ns, name, 'subsets') },
        { kind: 'object', summary: `deployment/${workload.name} pods carry ${labelsText(podLabels)}: ${meant.why}`, citation: objectCitation('Deployment', ns, workload.name, 'spec.template.metadata.labels') },
      ];
      if (change) supporting.push({ kind: 'change', summary: `${change.summary} at ${clockTime(change.at)} (${relativeToOnset(change.at, input.onset)})`, citation: change.citation, observedAt: change.at });
      const facts: Record<string, string | number> = {
        service: name,
        selector: labelsText(selector),
        podLabels: labelsText(podLabels),
        ...(meant.key ? { mismatchedKey: meant.key, serviceValue: selector[meant.key] ?? '<missing>', podValue: podLabels[meant.key] ?? '<missing>' } : {}),
        ...(change ? { manager: change.actor, changedAt: change.at.toISOString() } : {}),
      };
      out.push({
        key: `endpoints-mismatch:${ns}/Service/${name}`,
        analyzer: 'endpoints-mismatch',
        family: 'endpoints-mismatch',
        status: 'supported',
        confidence: 0.88,
        title: `Service ${name} selects no pod (selector ${labelsText(selector)}); deployment/${workload.name} no longer matches`,
        component: ref,
        mechanism:
          `Service ${ns}/${name} selects ${labelsText(selector)}, which no pod in ${ns} carries, so it has no endpoints and its callers (${callers.map((c) => c.name).slice(0, 4).join(', ')}) get connection refused / "no healthy upstream". ` +
          `deployment/${workload.name} is the workload it is meant for (${meant.why})${change ? `; ${change.summary} ${relativeToOnset(change.at, input.onset)}` : ''}. ` +
          `Fix: make the selector and the pod labels agree again (revert the change, or set the Service's selector to the pods' labels).`,
        scope: `every caller of ${name}: ${callers.map((c) => c.name).join(', ')}`,
        affected: [workload, ...callers],
        facts,
        supporting,
        refuting: [],
      });
    }
    return out;
  },
};

/** The Deployment a selector is meant for: named like the Service, or sharing its key or value. */
function meantWorkload(deployments: V1Deployment[], svc: V1Service, selector: Record<string, string>): { d: V1Deployment; why: string; key?: string } | undefined {
  const name = svc.metadata?.name ?? '';
  for (const d of deployments) {
    const labels = d.spec?.template?.metadata?.labels ?? {};
    for (const [k, v] of Object.entries(selector)) {
      if (labels[k] === v) continue;
      const sameValue = Object.entries(labels).find(([lk, lv]) => lv === v && lk !== k);
      if (sameValue) return { d, why: `its pods carry ${sameValue[0]}=${v}, not ${k}=${v}`, key: k };
      if (labels[k] !== undefined && (d.metadata?.name === name || d.metadata?.name?.startsWith(`${name}-`))) return { d, why: `its pods carry ${k}=${labels[k]}, not ${k}=${v}`, key: k };
    }
  }
  const named = deployments.find((d) => d.metadata?.name === name || d.metadata?.name?.startsWith(`${name}-`));
  return named ? { d: named, why: `it is named like the Service but its pods carry none of ${Object.keys(selector).join(', ')}` } : undefined;
}
