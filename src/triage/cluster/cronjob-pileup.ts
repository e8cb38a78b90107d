/**
 * `job-failed`, the pile-up shape: a CronJob whose runs now outlast their schedule, with concurrencyPolicy
 * Allow, has several Jobs running at once, and they all talk to a store the alert's path depends on —
 * each run holds its own connections, so the store runs out (a reconcile job that grew with the data
 * exhausts PostgreSQL's max_connections; the API on the same database times out on its pool). The
 * runs succeed, so no Job fails and the per-job rule says nothing; the CronJob is the origin, the store and
 * its other clients are in scope. Mitigation: suspend the CronJob (running Jobs are not touched). Pure.
 */
import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId } from '../../topology/graph.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';

export const cronjobPileup: ClusterAnalyzer = {
  name: 'cronjob-pileup',
  analyze(input: ClusterTriageInput): Finding[] {
    const { snapshot: s, topology: t, walk } = input.cluster;
    const out: Finding[] = [];
    for (const cj of s.cronJobs as V1CronJob[]) {
      const ns = cj.metadata?.namespace ?? '';
      const name = cj.metadata?.name ?? '?';
      if (cj.spec?.suspend || (cj.spec?.concurrencyPolicy ?? 'Allow') !== 'Allow') continue;
      const activeNames = new Set((cj.status?.active ?? []).map((a) => a.name));
      const active = (s.jobs as V1Job[])
        .filter((j) => j.metadata?.namespace === ns && activeNames.has(j.metadata?.name) && (j.status?.active ?? 0) > 0)
        .sort((a, b) => new Date(a.status?.startTime ?? 0).getTime() - new Date(b.status?.startTime ?? 0).getTime());
      if (active.length < 2) continue;
      // The stores the CronJob's runs call that the alert's path reaches (the victims' dependency).
      const ref: ComponentRef = { kind: 'CronJob', namespace: ns, name };
      const stores = t
        .outgoing(nodeId(ref))
        .filter((e) => e.kind === 'calls' && walk.reached.has(e.to))
        .map((e) => t.nodes.get(e.to)?.ref)
        .filter((r): r is ComponentRef => !!r);
      if (!stores.length) continue;
      const store = stores[0]!;
      const backing = t.outgoing(nodeId(store)).filter((e) => e.kind === 'selects').map((e) => t.nodes.get(e.to)?.ref).filter((r): r is ComponentRef => !!r);
      const victims = t.incoming(nodeId(store)).filter((e) => e.kind === 'calls' && e.from !== nodeId(ref)).map((e) => t.nodes.get(e.from)?.ref).filter((r): r is ComponentRef => !!r);
      const oldest = active[0]!;
      const since = oldest.status?.startTime ? new Date(oldest.status.startTime) : undefined;
      const lastSuccess = cj.status?.lastSuccessfulTime ? new Date(cj.status.lastSuccessfulTime) : undefined;
      const supporting: Evidence[] = [
        {
          kind: 'object',
          summary: `CronJob ${name} (schedule "${cj.spec?.schedule ?? '?'}", concurrencyPolicy ${cj.spec?.concurrencyPolicy ?? 'Allow'}): ${active.length} Jobs running at once: ${active.map((j) => `${j.metadata?.name}${j.status?.startTime ? ` since ${clockTime(new Date(j.status.startTime))}` : ''}`).join(', ')}`,
          citation: objectCitation('CronJob', ns, name, 'status.active'),
          ...(since ? { observedAt: since } : {}),
        },
        { kind: 'object', summary: `its runs call ${store.kind.toLowerCase()}/${store.name}${victims.length ? `, which ${victims.map((v) => v.name).slice(0, 3).join(', ')} also depend${victims.length === 1 ? 's' : ''} on` : ''}`, citation: objectCitation('CronJob', ns, name, 'spec.jobTemplate.spec.template.spec.containers') },
      ];
      out.push({
        key: `job-failed:${ns}/CronJob/${name}/pileup`,
        analyzer: 'job-failed',
        family: 'job-failed',
        status: 'supported',
        confidence: 0.9,
        title: `CronJob ${name}: ${active.length} runs at once (each outlasts its schedule), all on ${store.name}`,
        component: ref,
        mechanism:
          `CronJob ${ns}/${name} starts a run every "${cj.spec?.schedule ?? '?'}" with concurrencyPolicy ${cj.spec?.concurrencyPolicy ?? 'Allow'}, and its runs now last longer than that: ${active.length} are running at once${since ? `, the oldest (${oldest.metadata?.name}) for ${humanDuration(input.onset.getTime() - since.getTime())}` : ''}. ` +
          `Each holds its own connections and load on ${store.name}, which ${victims.length ? `${victims.map((v) => v.name).slice(0, 3).join(', ')} need${victims.length === 1 ? 's' : ''} too` : 'the alerted path needs'}. ` +
          `Fix: suspend the CronJob until the running Jobs finish, then set concurrencyPolicy Forbid (and find why runs got slower).`,
        scope: `${store.name} and its clients: ${victims.map((v) => v.name).join(', ') || 'the alerted path'}`,
        affected: [...victims, store, ...backing],
        // `overloads`: the reconcile reads it so the store's own degradation is this one's consequence, not its cause.
        facts: { job: oldest.metadata?.name ?? '?', activeJobs: active.length, concurrencyPolicy: cj.spec?.concurrencyPolicy ?? 'Allow', overloads: store.name, ...(lastSuccess ? { lastSuccessfulTime: lastSuccess.toISOString() } : {}) },
        supporting,
        refuting: [],
        mitigation: {
          action: 'suspend_cronjob',
          target: ref,
          params: { name, suspend: true },
          command: `kubectl patch cronjob/${name} -n ${ns} -p '{"spec":{"suspend":true}}'`,
          rationale: `${active.length} runs of ${name} are active at once and every schedule adds one (concurrencyPolicy ${cj.spec?.concurrencyPolicy ?? 'Allow'}): suspending stops new ones; running Jobs are not touched`,
        },
      });
    }
    return out;
  },
};
