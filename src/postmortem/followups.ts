import { readContext } from '../incidents/context.js';
import type { PostmortemRecord } from './record.js';
import type { ActionTaken, FollowUp, RootCause, Source } from './types.js';

type Hyp = PostmortemRecord['incident']['investigations'][number]['hypotheses'][number];

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const clock = (iso: string | undefined): string => {
  const d = iso ? new Date(iso) : undefined;
  return d && !Number.isNaN(d.getTime()) ? ` at ${d.toISOString().replace('T', ' ').slice(0, 19)} UTC` : '';
};

/** Follow-ups specific to what the supported cause was; empty when the analyzer has no known lesson. */
function causeFollowUps(h: Hyp, cause: RootCause): FollowUp[] {
  const src: Source[] = [{ table: 'Hypothesis', id: h.id }];
  const what = h.componentKind && h.componentName ? `${h.componentKind.toLowerCase()}/${h.componentName}${h.componentNs ? ` in ${h.componentNs}` : ''}` : cause.title;
  const f = cause.facts;
  switch (h.analyzer) {
    case 'scaled-to-zero': {
      const manager = str(f.manager);
      const by = manager === 'kubectl' && str(f.subresource) === 'scale' ? '`kubectl scale`' : manager ? `field manager \`${manager}\`` : 'whoever scaled it';
      const out: FollowUp[] = [
        {
          text: `Find out who ran ${by} on ${what}${clock(str(f.changedAt))} and why (managedFields name the tool, not the person: check the API server audit log).`,
          why: `${h.label} is supported: ${what} was scaled to ${String(f.replicas ?? 0)} by hand`,
          sources: src,
        },
      ];
      if (manager === 'kubectl' || manager === undefined) {
        out.push({
          text: `Consider an admission policy (e.g. a ValidatingAdmissionPolicy) that refuses replicas=0 for production workloads${h.componentNs ? ` such as those in ${h.componentNs}` : ''} unless an explicit annotation says why.`,
          why: 'a manual scale to zero took the service down with nothing to stop it',
          sources: src,
        });
      }
      return out;
    }
    case 'config-change':
      return [{ text: `Review the config change process for ${what}: require review and a staged rollout for ConfigMap/Secret edits, and a restart plan that can be rolled back.`, why: `${h.label}: a config change caused it`, sources: src }];
    case 'flag-flip':
      return [{ text: `Review the feature-flag change process: staged rollouts and a named owner for flags that touch ${what}.`, why: `${h.label}: a flag change caused it`, sources: src }];
    case 'deploy-regression':
    case 'helm-release':
      return [{ text: `Review the release of ${what}: add a canary or automatic rollback on this alert, and a test for the regression.`, why: `${h.label}: a deploy caused it`, sources: src }];
    case 'image-pull':
      return [{ text: `Check image references and registry credentials in the pipeline that deploys ${what}.`, why: `${h.label}: the image could not be pulled`, sources: src }];
    case 'oom-killed':
      return [{ text: `Right-size memory limits of ${what} and alert on memory saturation before the OOM killer does.`, why: `${h.label}: containers were OOM-killed`, sources: src }];
    case 'crash-loop':
      return [{ text: `Fix the crash of ${what} and add a test that reproduces it.`, why: `${h.label}: the workload is crash-looping`, sources: src }];
    case 'failing-probe':
      return [{ text: `Review the probes of ${what} (thresholds, timeouts, what they depend on).`, why: `${h.label}: probes failed`, sources: src }];
    case 'unschedulable':
    case 'node-pressure':
    case 'hpa-at-max':
      return [{ text: `Review capacity for ${what}: requests, node pool size and autoscaler limits.`, why: `${h.label}: capacity ran out`, sources: src }];
    case 'tls-certificate':
      return [{ text: `Automate certificate renewal for ${what} and alert well before expiry.`, why: `${h.label}: a certificate problem`, sources: src }];
    case 'network-policy':
      return [{ text: `Review how network policies affecting ${what} are changed and tested.`, why: `${h.label}: a network policy blocked traffic`, sources: src }];
    default:
      return [];
  }
}

/** Follow-ups derived from the record: the cause's lesson, the fix's rollback, failed checks, gaps, or generic ones. */
export function deriveFollowUps(r: PostmortemRecord, leading: Hyp | undefined, cause: RootCause | undefined, actions: ActionTaken[]): FollowUp[] {
  const inc = r.incident;
  const inv = inc.investigations[0];
  const ctx = inv ? readContext(inv.context) : {};
  const out: FollowUp[] = leading && cause ? causeFollowUps(leading, cause) : [];
  const specific = out.length > 0;

  for (const a of actions) {
    if (a.status === 'executed' && a.rollback?.command) {
      out.push({ text: `Keep the recorded rollback of the fix at hand: \`${a.rollback.command}\`${a.rollback.rationale ? ` (${a.rollback.rationale})` : ''}; remove it from the runbook once the service is stable.`, why: `fix "${a.title}" was executed`, sources: [{ table: 'ApprovalRequest', id: a.requestId, field: 'plan.rollback' }] });
    }
    if (a.verification && !a.verification.ok) {
      out.push({ text: `Find out why "${a.title}" did not meet its success criteria (${a.verification.checks.join('; ')}).`, why: 'verification failed', sources: [{ table: 'ApprovalRequest', id: a.requestId, field: 'result.verification' }] });
    }
  }
  if (leading?.mitigation && !actions.some((a) => a.status === 'executed')) {
    out.push({ text: 'The proposed fix was not executed through Vigil: record how the service was restored, and by whom.', why: `${leading.label} has a proposed mitigation`, sources: [{ table: 'Hypothesis', id: leading.id, field: 'mitigation' }] });
  }
  if (!cause) {
    out.push({ text: 'No cause was supported: finish the root-cause analysis and attach the evidence to this postmortem.', why: ctx.escalation?.reason ?? 'no hypothesis reached "supported"', sources: inv ? [{ table: 'Investigation', id: inv.id, field: 'context.escalation' }] : [{ table: 'Incident', id: inc.id }] });
  }
  if (ctx.gaps?.length && inv) {
    out.push({ text: `Close the visibility gaps the investigation hit: ${ctx.gaps.join('; ')}.`, why: 'these reads were not possible during the incident', sources: [{ table: 'Investigation', id: inv.id, field: 'context.gaps' }] });
  }
  if (!specific) {
    out.push({ text: `Review the runbook for ${inc.alertName} with what this incident taught, and check the alert fired early enough.`, why: 'every incident should leave the runbook better', sources: [{ table: 'Incident', id: inc.id }] });
  }
  return out;
}
