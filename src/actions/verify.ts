/**
 * Verification after execution: poll the target (reader identity) until every success criterion holds
 * or the window ends. On failure the plan's rollback proposal is returned for approval, never executed.
 */
import { contentDigest, contentOf, shortDigest } from './config/content.js';
import { fieldsDigest, fieldsOf } from './objects/fields.js';
import { chaosPaused } from './objects/chaos.js';
import { isChaosKind, RESTORABLE_KINDS, type RestorableKind } from './objects/kinds.js';
import type { TargetReader } from './reader.js';
import type { CriterionCheck, KubeObject, Plan, SuccessCriterion, VerificationResult, VerifyOptions } from './types.js';

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

interface Containers {
  containers?: { name: string; image?: string }[];
}

function templateImages(obj: KubeObject | undefined): Record<string, string> {
  const tpl = (obj?.spec?.['template'] as { spec?: Containers } | undefined)?.spec;
  return Object.fromEntries((tpl?.containers ?? []).map((c) => [c.name, c.image ?? '']));
}

/** The target's state as the card prints it. */
export function observeWorkload(obj: KubeObject | undefined): Record<string, unknown> {
  if (!obj) return { exists: false };
  const s = obj.status ?? {};
  return {
    exists: true,
    ...(obj.spec?.['replicas'] !== undefined ? { replicas: obj.spec['replicas'] } : {}),
    readyReplicas: num(s['readyReplicas']),
    updatedReplicas: num(s['updatedReplicas']),
    availableReplicas: num(s['availableReplicas']),
    generation: obj.metadata?.generation,
    observedGeneration: s['observedGeneration'],
    ...(obj.spec?.['template'] ? { images: templateImages(obj) } : {}),
    ...(obj.kind === 'CronJob' ? { suspend: obj.spec?.['suspend'] === true } : {}),
    ...(obj.metadata?.annotations?.['deployment.kubernetes.io/revision'] ? { revision: Number(obj.metadata.annotations['deployment.kubernetes.io/revision']) } : {}),
  };
}

/** A ConfigMap as the card prints it: its keys and content digest (never its values). */
export function observeConfigMap(obj: KubeObject | undefined): Record<string, unknown> {
  if (!obj) return { exists: false };
  const content = contentOf(obj);
  if (typeof content === 'string') return { exists: true, content };
  return { exists: true, keys: [...Object.keys(content.data), ...Object.keys(content.binaryData).map((k) => `binaryData.${k}`)].sort(), content: shortDigest(contentDigest(obj.metadata?.uid ?? '', content)) };
}

const isRestorable = (kind: string): kind is RestorableKind => (RESTORABLE_KINDS as readonly string[]).includes(kind);

/** A Service, Ingress, NetworkPolicy, HPA, mesh object, Node or chaos experiment as the card prints it: the state the action changed. */
export function observeObject(obj: KubeObject | undefined): Record<string, unknown> {
  if (!obj) return { exists: false };
  const kind = obj.kind ?? '';
  if (isRestorable(kind)) {
    const f = fieldsOf(kind, obj);
    return { exists: true, generation: obj.metadata?.generation, ...(typeof f === 'string' ? { fields: f } : { fields: shortDigest(fieldsDigest(kind, obj.metadata?.uid ?? '', f)) }) };
  }
  if (kind === 'Node') return { exists: true, unschedulable: obj.spec?.['unschedulable'] === true };
  if (isChaosKind(kind)) return { exists: true, paused: chaosPaused(obj) };
  return observeWorkload(obj);
}

async function check(c: SuccessCriterion, reader: TargetReader, options: VerifyOptions, cache: Map<string, KubeObject | undefined>): Promise<CriterionCheck> {
  const metrics = options.metrics;
  const get = async (ref: { kind: string; namespace: string; name: string }) => {
    const key = `${ref.kind}/${ref.namespace}/${ref.name}`;
    if (!cache.has(key)) cache.set(key, await reader.get(ref as Parameters<TargetReader['get']>[0]));
    return cache.get(key);
  };
  const result = (ok: boolean, observed: string): CriterionCheck => ({ description: c.description, ok, observed });
  switch (c.kind) {
    case 'ready_replicas': {
      const obj = await get(c.target);
      const ready = num(obj?.status?.['readyReplicas']);
      return result(!!obj && ready >= c.atLeast, obj ? `readyReplicas ${ready}/${c.atLeast}` : 'target not found');
    }
    case 'replicas_settled': {
      const obj = await get(c.target);
      const replicas = num(obj?.status?.['replicas']);
      return result(!!obj && replicas === 0, obj ? `${replicas} pods remain` : 'target not found');
    }
    case 'rollout_complete': {
      const obj = await get(c.target);
      if (!obj) return result(false, 'target not found');
      const s = obj.status ?? {};
      const desired = num(obj.spec?.['replicas'] ?? 1);
      const seen = num(s['observedGeneration']);
      const ok = seen >= c.minGeneration && num(s['updatedReplicas']) >= desired && num(s['readyReplicas']) >= desired && num(s['availableReplicas'] ?? s['readyReplicas']) >= desired;
      return result(ok, `observedGeneration ${seen} (need ≥ ${c.minGeneration}), updated ${num(s['updatedReplicas'])}/${desired}, ready ${num(s['readyReplicas'])}/${desired}`);
    }
    case 'container_image': {
      const image = templateImages(await get(c.target))[c.container];
      return result(image === c.image, `container ${c.container} image ${image ?? '(none)'}`);
    }
    case 'cronjob_suspended': {
      const obj = await get(c.target);
      const suspend = obj?.spec?.['suspend'] === true;
      return result(!!obj && suspend === c.suspend, obj ? `suspend ${suspend}` : 'target not found');
    }
    case 'pod_replaced': {
      const pod = await get(c.target);
      const gone = !pod || pod.metadata?.uid !== c.uid;
      if (!gone) return result(false, `pod ${c.target.name} (uid ${c.uid}) still exists`);
      if (!c.owner || c.readyAtLeast === undefined) return result(true, `pod ${c.target.name} replaced`);
      const ready = num((await get(c.owner))?.status?.['readyReplicas']);
      return result(ready >= c.readyAtLeast, `old pod gone; ${c.owner.name} readyReplicas ${ready}/${c.readyAtLeast}`);
    }
    case 'flag_state': {
      const flags = options.providers?.flags;
      if (!flags) return result(false, 'no flag provider to check this');
      const state = await flags.read(c.flag, c.environment);
      return result(!!state && state.on === c.on, state ? `targeting ${state.on ? 'on' : 'off'}${state.version !== undefined ? ` (version ${state.version})` : ''}` : 'flag not found');
    }
    case 'revert_pr_open': {
      const github = options.providers?.github;
      if (!github) return result(false, 'no GitHub access to check this');
      const open = await github.findOpen(c.repo, c.marker, c.title);
      return result(!!open, open ? `#${open.number} open for review: ${open.url}` : 'no open revert found');
    }
    case 'config_content': {
      const obj = await get(c.target);
      if (!obj) return result(false, 'target not found');
      const content = contentOf(obj);
      if (typeof content === 'string') return result(false, content);
      const digest = contentDigest(obj.metadata?.uid ?? '', content);
      return result(digest === c.digest, `content ${shortDigest(digest)}`);
    }
    case 'object_fields': {
      const obj = await get(c.target);
      if (!obj) return result(false, 'target not found');
      if (!isRestorable(c.target.kind)) return result(false, `${c.target.kind} has no restorable fields`);
      const f = fieldsOf(c.target.kind, obj);
      if (typeof f === 'string') return result(false, f);
      const digest = fieldsDigest(c.target.kind, obj.metadata?.uid ?? '', f);
      return result(digest === c.digest, `fields ${shortDigest(digest)}`);
    }
    case 'node_unschedulable': {
      const obj = await get(c.target);
      const u = obj?.spec?.['unschedulable'] === true;
      return result(!!obj && u === c.unschedulable, obj ? `unschedulable ${u}` : 'target not found');
    }
    case 'object_deleted': {
      const obj = await get(c.target);
      return result(!obj || obj.metadata?.uid !== c.uid, obj ? (obj.metadata?.uid === c.uid ? 'still exists' : `re-created (uid ${obj.metadata?.uid})`) : 'deleted');
    }
    case 'object_exists': {
      const obj = await get(c.target);
      return result(!!obj, obj ? `exists (uid ${obj.metadata?.uid})` : 'not found');
    }
    case 'chaos_paused': {
      const obj = await get(c.target);
      if (!obj) return result(false, 'target not found');
      const paused = chaosPaused(obj);
      return result(paused === c.paused, paused ? 'paused' : 'running');
    }
    case 'metric': {
      if (!metrics) return result(false, 'no metrics source to check this');
      const value = await metrics.value(c.query).catch(() => undefined);
      if (value === undefined || Number.isNaN(value)) return result(false, 'no value');
      const ok = c.op === '<' ? value < c.threshold : c.op === '<=' ? value <= c.threshold : c.op === '>' ? value > c.threshold : value >= c.threshold;
      return result(ok, `${value} (need ${c.op} ${c.threshold})`);
    }
  }
}

const EXTERNAL_KINDS: ReadonlySet<string> = new Set(['FeatureFlag', 'PullRequest']);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function verifyPlan(reader: TargetReader, plan: Plan, options: VerifyOptions = {}): Promise<VerificationResult> {
  const windowMs = options.windowMs ?? Math.max(0, ...plan.successCriteria.map((c) => c.withinSeconds)) * 1000;
  const intervalMs = options.intervalMs ?? 5000;
  const started = Date.now();
  for (;;) {
    const cache = new Map<string, KubeObject | undefined>();
    let checks: CriterionCheck[];
    let observed: Record<string, unknown>;
    try {
      checks = [];
      for (const c of plan.successCriteria) checks.push(await check(c, reader, options, cache));
      // A flag or a pull request is not an API-server object: what the checks saw is the observation.
      observed = EXTERNAL_KINDS.has(plan.target.kind)
        ? Object.fromEntries(checks.map((c) => [c.description, c.observed]))
        : (plan.target.kind === 'ConfigMap' ? observeConfigMap : ['Deployment', 'StatefulSet', 'CronJob', 'Pod'].includes(plan.target.kind) ? observeWorkload : observeObject)(cache.has(key(plan)) ? cache.get(key(plan)) : await reader.get(plan.target));
    } catch (err) {
      // A failed read is not a verdict: keep polling until the window ends.
      checks = plan.successCriteria.map((c) => ({ description: c.description, ok: false, observed: `read failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` }));
      observed = {};
    }
    const ok = checks.every((c) => c.ok);
    const elapsedMs = Date.now() - started;
    if (ok || elapsedMs + intervalMs > windowMs) {
      return { ok, observed, checks, elapsedMs, ...(!ok && plan.rollback ? { rollback: plan.rollback } : {}) };
    }
    await sleep(intervalMs);
  }
}

const key = (plan: Plan): string => `${plan.target.kind}/${plan.target.namespace}/${plan.target.name}`;
