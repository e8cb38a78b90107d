/**
 * `job-failed`: a CronJob's (or a lone Job's) runs fail or never finish. From the Jobs' own status:
 * a `Failed` condition (`BackoffLimitExceeded`, `DeadlineExceeded`), or a Job active far longer than
 * its history says it takes while its main container already exited (a sidecar that never stops:
 * `not_completing`), or a CronJob whose `lastScheduleTime` is far behind its schedule (`missed_schedules`).
 * The failed pod's exit code and log line explain it; an image or command change in the job template
 * between the last successful Job and the first failed one is the change to undo.
 *
 * Facts: `job`, `reason`, `failedJobs` (failed runs in a row, newest first), `lastSuccessfulTime`,
 * `container`, `exitCode`, `logPattern`, `image`, `previousImage`, `changedAt`.
 * Mitigation: none by default (a human fixes the job). `suspend_cronjob` when the CronJob's runs harm
 * others, which the Jobs' status shows in one way: runs that pile up (two or more of its Jobs active at
 * once, under concurrencyPolicy Allow or Replace, while the runs fail or never complete): each holds
 * pods, node capacity, quota and the connections to whatever it writes to, and every schedule adds one.
 * A job that merely fails (one run at a time, or `Forbid`) harms only its own output: no proposal.
 */
import type { V1Job } from '@kubernetes/client-node';
import type { Evidence } from '../../evidence/types.js';
import type { ClusterAnalyzer, ClusterTriageInput, JobEvidence } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';
import { clip, lastChangeBefore } from './common.js';

const CAUSE = /error|exception|fatal|panic|traceback|not found|no such|denied|refused|failed|cannot|unable|invalid|missing|ModuleNotFoundError|ImportError|OOM/i;

function condition(j: V1Job, type: string) {
  return (j.status?.conditions ?? []).find((c) => c.type === type && c.status === 'True');
}

function image(j: V1Job | undefined, container?: string): string | undefined {
  const cs = j?.spec?.template?.spec?.containers ?? [];
  return (container ? cs.find((c) => c.name === container) : cs[0])?.image;
}

/**
 * The CronJob controller names each Job `<cronjob>-<scheduled time in minutes since the epoch>`, so the
 * names give the schedule's period (the smallest gap between runs kept) and the runs scheduled after
 * the last successful one up to the newest: each of those failed, whether or not its Job is still kept.
 * Only the names are compared with each other (never with the clock or `lastScheduleTime`), so a
 * controller's clock skew or a replayed recording cannot inflate the count. Undefined when the names do
 * not carry the time or fewer than two runs are known.
 */
export function runsSinceSuccess(lastGood: V1Job | undefined, jobs: V1Job[]): number | undefined {
  const minuteOf = (j: V1Job) => {
    const m = /-(\d{7,10})$/.exec(j.metadata?.name ?? '');
    return m ? Number(m[1]) : undefined;
  };
  const good = lastGood ? minuteOf(lastGood) : undefined;
  if (good === undefined) return undefined;
  const minutes = [...new Set(jobs.map(minuteOf).filter((m): m is number => m !== undefined))].sort((a, b) => a - b);
  const gaps = minutes.slice(1).map((m, i) => m - minutes[i]!).filter((g) => g > 0);
  if (!gaps.length) return undefined;
  const period = Math.min(...gaps);
  const n = Math.round((minutes[minutes.length - 1]! - good) / period);
  return n > 0 ? n : undefined;
}

export const jobFailed: ClusterAnalyzer = {
  name: 'job-failed',
  analyze(input: ClusterTriageInput): Finding[] {
    return input.jobs.flatMap((je) => analyzeOwner(input, je));
  },
};

function analyzeOwner(input: ClusterTriageInput, je: JobEvidence): Finding[] {
  const { owner, jobs } = je;
  if (!jobs.length) return [];
  const failedRun = (j: V1Job) => !!condition(j, 'Failed');
  const succeeded = (j: V1Job) => !!condition(j, 'Complete') || (j.status?.succeeded ?? 0) > 0;
  const newest = jobs[0]!;
  let reason: string | undefined;
  const failed: V1Job[] = [];
  for (const j of jobs) {
    if (succeeded(j)) break;
    if (failedRun(j)) failed.push(j);
  }
  if (failed.length) reason = condition(failed[0]!, 'Failed')?.reason ?? 'Failed';
  // A Job still active long after its main container exited: a sidecar keeps the pod alive.
  const stuck = !failed.length && (newest.status?.active ?? 0) > 0 && je.pods.some((p) => (p.status?.containerStatuses ?? []).some((c) => c.state?.terminated && c.state.terminated.exitCode === 0) && (p.status?.containerStatuses ?? []).some((c) => c.state?.running));
  if (stuck) reason = 'not_completing';
  if (!reason) return [];

  const cj = owner.kind === 'CronJob' ? input.cluster.snapshot.cronJobs.find((c) => c.metadata?.namespace === owner.namespace && c.metadata?.name === owner.name) : undefined;
  const lastSuccess = cj?.status?.lastSuccessfulTime ? new Date(cj.status.lastSuccessfulTime) : jobs.find(succeeded)?.status?.completionTime ? new Date(jobs.find(succeeded)!.status!.completionTime!) : undefined;
  const lastGood = jobs.find(succeeded);
  const pod = je.pods.find((p) => (p.metadata?.ownerReferences ?? []).some((o) => o.name === (failed[0] ?? newest).metadata?.name)) ?? je.pods[0];
  const status = [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])].find((c) => (c.state?.terminated?.exitCode ?? c.lastState?.terminated?.exitCode ?? 0) !== 0);
  const term = status?.state?.terminated ?? status?.lastState?.terminated;
  const log = je.logs.find((l) => l.pod === pod?.metadata?.name) ?? je.logs[0];
  const cause = log?.patterns.filter((p) => CAUSE.test(p.template) || p.level === 'error').sort((a, b) => (b.level === 'error' ? 1 : 0) - (a.level === 'error' ? 1 : 0) || b.count - a.count)[0];
  const firstFailed = failed[failed.length - 1] ?? newest;
  const firstFailedAt = firstFailed.metadata?.creationTimestamp ? new Date(firstFailed.metadata.creationTimestamp) : input.onset;
  const img = image(firstFailed, status?.name);
  const prevImg = lastGood ? image(lastGood, status?.name) : undefined;
  const templateChange = cj ? lastChangeBefore('CronJob', cj.metadata, firstFailedAt) : undefined;

  // failedJobsHistoryLimit (default 1) deletes older failed Jobs: the schedule tells how many runs failed since the last success.
  const sinceSuccess = failed.length && cj ? runsSinceSuccess(lastGood, jobs) : undefined;
  const facts: Record<string, string | number | boolean> = { job: (failed[0] ?? newest).metadata?.name ?? '?', reason, failedJobs: Math.max(failed.length, sinceSuccess ?? 0, stuck ? 1 : 0) };
  if (lastSuccess) facts['lastSuccessfulTime'] = lastSuccess.toISOString();
  if (status?.name) facts['container'] = status.name;
  if (term?.exitCode !== undefined) facts['exitCode'] = term.exitCode;
  if (cause) facts['logPattern'] = clip(cause.template, 200);
  if (img) facts['image'] = img;
  if (prevImg && prevImg !== img) facts['previousImage'] = prevImg;
  if (templateChange && (!lastGood?.metadata?.creationTimestamp || templateChange.at >= new Date(lastGood.metadata.creationTimestamp))) facts['changedAt'] = templateChange.at.toISOString();

  const ns = owner.namespace;
  const supporting: Evidence[] = [
    {
      kind: 'object',
      summary: `job ${facts['job']}: ${reason}${condition(failed[0] ?? newest, 'Failed')?.message ? ` — ${clip(condition(failed[0] ?? newest, 'Failed')!.message!, 160)}` : ''} (${failed.length} failed run${failed.length === 1 ? '' : 's'} in a row${lastSuccess ? `, last success ${clockTime(lastSuccess)}` : ''})`,
      citation: objectCitation('Job', ns, String(facts['job']), 'status.conditions'),
      observedAt: firstFailedAt,
    },
  ];
  if (status && pod) supporting.push({ kind: 'object', summary: `pod ${pod.metadata?.name}: container ${status.name} terminated ${term?.reason ?? ''} exit code ${term?.exitCode ?? '?'}`, citation: objectCitation('Pod', ns, pod.metadata?.name ?? '?', 'status.containerStatuses') });
  if (cause && log) supporting.push({ kind: 'log', summary: `log of ${log.pod}/${log.container}: "${clip(cause.example || cause.template, 200)}" ×${cause.count}`, citation: objectCitation('Pod', ns, log.pod, `log?container=${log.container}`), ...(cause.first ? { observedAt: cause.first } : {}) });
  if (img && prevImg && img !== prevImg) supporting.push({ kind: 'change', summary: `image changed between the last successful run (${prevImg}) and the failing ones (${img})${templateChange ? ` by ${templateChange.actor} at ${clockTime(templateChange.at)}` : ''}`, citation: templateChange?.citation ?? objectCitation(owner.kind, ns, owner.name, 'spec.jobTemplate'), ...(templateChange ? { observedAt: templateChange.at } : {}) });

  const what = reason === 'not_completing' ? 'never completes (its main container exited, a sidecar keeps the pod running)' : `fails (${reason})`;
  return [
    {
      key: `job-failed:${ns}/${owner.kind}/${owner.name}`,
      analyzer: 'job-failed',
      family: 'job-failed',
      status: 'supported',
      confidence: cause || (img && prevImg && img !== prevImg) ? 0.88 : 0.8,
      title: `${owner.kind.toLowerCase()}/${owner.name} ${what}${cause ? `: ${clip(cause.template, 80)}` : ''}`,
      component: { kind: owner.kind, namespace: ns, name: owner.name },
      mechanism:
        `${owner.kind} ${ns}/${owner.name} ${what}: ${failed.length || 1} run${failed.length === 1 ? '' : 's'} in a row since ${clockTime(firstFailedAt)}` +
        (term?.exitCode !== undefined ? `, container ${status?.name} exits ${term.exitCode}` : '') +
        (cause ? ` with "${clip(cause.template, 160)}"` : '') +
        (img && prevImg && img !== prevImg ? `; the job image changed from ${prevImg} to ${img} after the last successful run` : '') +
        (lastSuccess ? `; last success ${humanDuration(input.onset.getTime() - lastSuccess.getTime())} before the alert` : '') +
        '.',
      scope: `the work ${owner.name} does is not done; consumers of its output see stale data`,
      affected: [{ kind: owner.kind, namespace: ns, name: owner.name }],
      facts,
      supporting,
      refuting: [],
      ...(() => {
        const active = cj?.status?.active?.length ?? 0;
        if (!cj || cj.spec?.suspend === true || active < 2 || cj.spec?.concurrencyPolicy === 'Forbid') return {};
        facts['activeJobs'] = active;
        return {
          mitigation: {
            action: 'suspend_cronjob',
            target: { kind: 'CronJob', namespace: ns, name: owner.name },
            params: { suspend: true },
            command: `kubectl patch cronjob/${owner.name} -n ${ns} -p '{"spec":{"suspend":true}}'`,
            rationale: `${active} runs of ${owner.name} are active at once and every schedule adds one (concurrencyPolicy ${cj.spec?.concurrencyPolicy ?? 'Allow'}) while the runs ${reason === 'not_completing' ? 'never complete' : 'fail'}: suspending stops new ones until the job is fixed (running Jobs are not touched)`,
          },
        };
      })(),
    },
  ];
}
