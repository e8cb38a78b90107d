/**
 * `npm run demo -- --steps FILE [--json OUT]`: what people do in the incident thread once the alert is
 * investigated, played on the offline world as Slack would deliver it, and what came of it.
 *
 * A steps file is a YAML list; each step is one person doing one thing:
 *   - { as: U0BOB, reply: "rule out H1: planned maintenance" }   a reply in the incident thread (a signed
 *                                                                 Events API `message` event)
 *   - { as: U0VIGILSRE, click: approve }                          a click on the newest approval card, open or
 *                                                                 not (a signed block_actions payload)
 *   - { as: U0VIGILSRE, command: "/sre stop" }                    a signed slash command
 * `{incident}` in a reply or a command is replaced by the incident's id. Vigil settles between steps.
 *
 * The report (`--json`): every write that reached the fake Kubernetes API server with the identity that
 * made it, every message Vigil posted or edited (as text), and what was shown privately to whom, the
 * refusals among it singled out. Each entry says during which step it happened (null: before the first).
 */
import { readFileSync } from 'node:fs';
import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { LineCounter, parseDocument, isSeq } from 'yaml';
import { z } from 'zod';
import { renderBlocksAsText } from '../src/slack/blocks/text.js';
import { blockActionsPayload } from '../test/fakes/slack/index.js';
import { ALERT_CHANNEL, CONTROLLER_TOKEN, type World } from '../test/support/world.js';

// ---- the steps file ------------------------------------------------------------------------------------

const ACTIONS = ['reply', 'click', 'command'] as const;

const StepSchema = z
  .strictObject({
    as: z
      .string({ error: (i) => (i.input === undefined ? 'is required: the Slack user id who acts, e.g. U0VIGILSRE' : 'must be a Slack user id, e.g. U0VIGILSRE') })
      .regex(/^[UW][A-Z0-9]{2,20}$/, 'must be a Slack user id (U… or W…, capitals and digits), e.g. U0VIGILSRE'),
    reply: z.string({ error: 'must be the text of the reply' }).trim().min(1, 'must not be empty').max(4000, 'is longer than 4,000 characters').optional(),
    click: z.enum(['approve', 'reject'], { error: (i) => `must be approve or reject, not ${JSON.stringify(i.input)}` }).optional(),
    command: z
      .string({ error: 'must be a slash command, e.g. "/sre stop"' })
      .trim()
      .regex(/^\/sre(?:\s|$)/, 'must be an /sre command, e.g. "/sre stop"')
      .optional(),
  }, { error: (i) => (i.code === 'unrecognized_keys' ? `unknown field${i.keys.length === 1 ? '' : 's'} ${i.keys.join(', ')} (a step has as, and one of reply, click, command)` : 'must be a mapping: { as: <user id>, reply | click | command: … }') })
  .superRefine((s, ctx) => {
    const given = ACTIONS.filter((k) => s[k] !== undefined);
    if (given.length === 0) ctx.addIssue({ code: 'custom', path: [], message: 'does nothing: give one of reply, click or command' });
    if (given.length > 1) ctx.addIssue({ code: 'custom', path: [given[1]!], message: `a step does one thing: ${given.join(' and ')} given together` });
  });

export type Step = z.infer<typeof StepSchema>;

/** A steps file that cannot be played: the message names the file, the step (index and line) and the field. */
export class StepsFileError extends Error {}

/** Parses and validates a steps file's text; throws StepsFileError naming every problem. */
export function parseSteps(text: string, file = 'steps file'): Step[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const at = e.linePos?.[0] ? ` (line ${e.linePos[0].line}, column ${e.linePos[0].col})` : '';
    throw new StepsFileError(`${file}: not valid YAML${at}: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  if (!isSeq(doc.contents)) throw new StepsFileError(`${file}: expected a YAML list of steps (- { as: U0VIGILSRE, click: approve }), got ${doc.contents === null ? 'an empty file' : 'something else'}`);
  const raw = doc.toJS() as unknown[];
  if (raw.length === 0) throw new StepsFileError(`${file}: the list of steps is empty`);
  const seq = doc.contents;
  const lineOf = (index: number): string => {
    const node = seq.items[index] as { range?: [number, number, number] } | undefined;
    return node?.range ? ` (line ${lines.linePos(node.range[0]).line})` : '';
  };
  const problems: string[] = [];
  raw.forEach((item, index) => {
    const r = StepSchema.safeParse(item);
    if (r.success) return;
    for (const issue of r.error.issues) {
      const field = issue.path.length ? `.${issue.path.join('.')}` : '';
      problems.push(`step ${index}${lineOf(index)}${field ? `, field ${field.slice(1)}` : ''}: ${issue.message}`);
    }
  });
  if (problems.length) throw new StepsFileError(`${file}: ${problems.length === 1 ? 'a step is' : 'steps are'} not valid, nothing was run:\n  ${problems.join('\n  ')}`);
  return raw.map((item) => StepSchema.parse(item));
}

export function loadStepsFile(path: string): Step[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new StepsFileError(`${path}: cannot read the steps file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return parseSteps(text, path);
}

// ---- the report ----------------------------------------------------------------------------------------

export interface WriteRecord {
  /** The step during which it reached the API server (0-based); null: before the first step. */
  step: number | null;
  verb: string;
  /** Plural, with `/subresource` when there is one (`deployments/scale`). */
  resource: string;
  path: string;
  /** The API group ('' for the core group). */
  group: string;
  namespace: string | null;
  name: string | null;
  /** Who the API server authenticated (the impersonated user when impersonation was used). */
  identity: string;
  impersonatedBy?: string;
  /** `Impersonate-Extra-*` headers (e.g. incident, approved-by). */
  extra?: Record<string, string[]>;
  /** The API server's answer (a refused write is listed too, with its 4xx). */
  status: number;
}

export interface PostRecord {
  step: number | null;
  method: 'chat.postMessage' | 'chat.update';
  ts: string;
  text: string;
}

export interface PrivateRecord {
  step: number | null;
  user: string;
  text: string;
}

export interface StepRecord {
  index: number;
  as: string;
  reply?: string;
  click?: 'approve' | 'reject';
  command?: string;
  /** For a click: the request whose card was clicked and its status at the moment of the click. */
  card?: { requestId: string; status: string; action: string; target: string };
  /** After the step settled: for a click, the request's status; for a command, the private answer. */
  outcome?: string;
}

export interface DemoReport {
  scenario: string;
  incident: string | null;
  writes: WriteRecord[];
  posts: PostRecord[];
  /** Private answers that refused what was asked (a click not accepted, a command not done, nothing changed). */
  refusals: PrivateRecord[];
  /** Every private answer (ephemeral message or ephemeral command response), refusals included. */
  ephemerals: PrivateRecord[];
  steps: StepRecord[];
  /** Set when a step could not be played (the steps after it were not). */
  error?: string;
}

/**
 * Vigil's private answers that say no: an approval click not accepted (⛔ Not accepted: …), a stop or
 * resume not done (Not done: …), a steering command or click that changed nothing, a user outside the
 * alert channel.
 */
const REFUSAL = /^(?:⛔|:no_entry:)|\bNot accepted:|^Not done:|\bnothing changed\b|not a member of this incident’s alert channel/;

const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
/** What the harness itself writes (the deployment controller it plays): not Vigil's writes. */
export const CONTROLLER_FIELD_MANAGER = 'kube-controller-manager';

/** A request path → group, resource (with subresource), namespace and name, per kube-apiserver's layout. */
export function describePath(path: string): { group: string; resource: string; namespace: string | null; name: string | null } {
  const m = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)(?:\/namespaces\/([^/]+)(?=\/))?\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?\/?$/.exec(path);
  if (!m) return { group: '', resource: path, namespace: null, name: null };
  const [, group = '', namespace, plural, name, sub] = m;
  return { group, resource: sub ? `${plural}/${sub}` : plural!, namespace: namespace ?? null, name: name ?? null };
}

/** Counts at each step's start, so every recorded call, write and answer can be told apart by step. */
export class Recorder {
  private readonly marks: { step: number; calls: number; audit: number; ephemerals: number }[] = [];
  readonly steps: StepRecord[] = [];
  error: string | undefined;

  constructor(private readonly world: World) {}

  /** Everything recorded from now on belongs to this step. */
  mark(step: number): void {
    const { slack, kube } = this.world;
    this.marks.push({ step, calls: slack.calls.length, audit: kube.audit.length, ephemerals: slack.store.ephemerals.length });
  }

  private stepAt(index: number, key: 'calls' | 'audit' | 'ephemerals'): number | null {
    let step: number | null = null;
    for (const m of this.marks) if (m[key] <= index) step = m.step;
    return step;
  }

  writes(): WriteRecord[] {
    return this.world.kube.audit.flatMap((a, i) => {
      if (!MUTATING.has(a.verb) || a.dryRun || a.fieldManager === CONTROLLER_FIELD_MANAGER) return [];
      // Access reviews and TokenRequests are questions and credentials, not changes to the cluster.
      if (/accessreviews|tokenreviews/.test(a.path) || /\/serviceaccounts\/[^/]+\/token$/.test(a.path)) return [];
      const where = describePath(a.path);
      return [{
        step: this.stepAt(i, 'audit'),
        verb: a.verb,
        resource: where.resource,
        path: a.path,
        group: where.group,
        namespace: where.namespace,
        name: where.name,
        identity: a.user,
        ...(a.impersonatedBy ? { impersonatedBy: a.impersonatedBy } : {}),
        ...(Object.keys(a.extra).length ? { extra: a.extra } : {}),
        status: a.status,
      }];
    });
  }

  posts(): PostRecord[] {
    return this.world.slack.calls.flatMap((c, i) => {
      if ((c.method !== 'chat.postMessage' && c.method !== 'chat.update') || !c.response?.body.ok) return [];
      const ts = String(c.method === 'chat.update' ? c.body['ts'] : c.response.body['ts']);
      return [{ step: this.stepAt(i, 'calls'), method: c.method, ts, text: renderBlocksAsText(c.body as never) }];
    });
  }

  ephemerals(): PrivateRecord[] {
    return this.world.slack.store.ephemerals.map((e, i) => ({ step: this.stepAt(i, 'ephemerals'), user: e.user, text: renderBlocksAsText(e as never) }));
  }

  async report(): Promise<DemoReport> {
    const incident = await this.world.vigil?.db.prisma.incident.findFirst({ orderBy: { openedAt: 'desc' }, select: { id: true } });
    const ephemerals = this.ephemerals();
    return {
      scenario: this.world.scenario.id,
      incident: incident?.id ?? null,
      writes: this.writes(),
      posts: this.posts(),
      refusals: ephemerals.filter((e) => REFUSAL.test(e.text)),
      ephemerals,
      steps: this.steps,
      ...(this.error ? { error: this.error } : {}),
    };
  }
}

// ---- settling ------------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until Vigil is quiet: the world's settle (deliveries, listeners, investigations, executions) until
 * nothing new reached Slack or the cluster for a moment. Listener work starts just after Slack's ack,
 * so one settle can return in that gap; a quiet round after it cannot.
 */
export async function quiesce(world: World, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    await world.settle();
    await sleep(40);
    const { slack, kube } = world;
    const now = [slack.calls.length, slack.deliveries.length, slack.responses.length, slack.store.ephemerals.length, kube.audit.filter((a) => MUTATING.has(a.verb)).length].join(':');
    if (now === last || Date.now() > deadline) return;
    last = now;
  }
}

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(25);
  }
}

/**
 * Plays the deployment controller for what Vigil writes: a Deployment carrying Vigil's change annotation
 * whose ready pods differ from its spec gets its status brought in line (pods up and ready) before the
 * next request is served, as a fast cluster would. Every other workload stays as the scenario left it.
 */
export function playDeploymentController(world: World): void {
  const { kube } = world;
  const apps = kube.kubeConfigFor(CONTROLLER_TOKEN).makeApiClient(AppsV1Api);
  type Deployment = { kind?: string; metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> }; spec?: { replicas?: number }; status?: { readyReplicas?: number } };
  const behind = (): Deployment | undefined =>
    (kube.objects() as Deployment[]).find(
      (o) => o.kind === 'Deployment' && o.metadata?.annotations?.['vigil.dev/change'] !== undefined && !String(o.metadata.annotations['vigil.dev/change']).endsWith('pending approval') && (o.status?.readyReplicas ?? 0) !== (o.spec?.replicas ?? 1),
    );
  const arm = (): void =>
    kube.beforeNext(
      () => behind() !== undefined,
      async () => {
        try {
          const d = behind();
          if (!d) return;
          const n = d.spec?.replicas ?? 1;
          await apps.patchNamespacedDeploymentStatus(
            { namespace: d.metadata!.namespace!, name: d.metadata!.name!, body: { status: { replicas: n, updatedReplicas: n, readyReplicas: n, availableReplicas: n } }, fieldManager: CONTROLLER_FIELD_MANAGER },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          );
        } finally {
          arm();
        }
      },
    );
  arm();
}

// ---- playing -------------------------------------------------------------------------------------------

export interface PlayOptions {
  /** The incident thread (the alert post's ts). */
  threadTs: string;
  recorder: Recorder;
  /** Where to say what happens (the demo prints; tests pass nothing). */
  print?: (line: string) => void;
  /** Only a pending card (the legacy `--click`): no open card is then "nothing to click", not a refused click. */
  pendingOnly?: boolean;
}

/** Plays the steps in order, settling after each. A step that cannot be played stops the run (recorder.error). */
export async function playSteps(world: World, steps: Step[], o: PlayOptions): Promise<void> {
  const print = o.print ?? (() => undefined);
  for (const [index, step] of steps.entries()) {
    o.recorder.mark(index);
    const record: StepRecord = { index, ...step };
    o.recorder.steps.push(record);
    try {
      await playStep(world, step, record, { ...o, print }, `step ${index + 1}/${steps.length}`);
    } catch (err) {
      o.recorder.error = `step ${index} (${Object.keys(step).filter((k) => k !== 'as').join('')} as ${step.as}) could not be played: ${err instanceof Error ? err.message : String(err)}`;
      print(`  ✖ ${o.recorder.error}`);
      return;
    }
  }
}

async function playStep(world: World, step: Step, record: StepRecord, o: PlayOptions & { print: (line: string) => void }, label: string): Promise<void> {
  const { slack } = world;
  const db = world.vigil!.db.prisma;
  const incident = await db.incident.findFirst({ where: { channelId: ALERT_CHANNEL, threadTs: o.threadTs }, select: { id: true } });
  const fill = (text: string) => text.replace(/\{incident\}/g, incident?.id ?? '{incident}');
  const ephemeralsBefore = slack.store.ephemerals.length;
  const user = slack.store.users.get(step.as);

  if (step.reply !== undefined) {
    const text = fill(step.reply);
    o.print(`${label}  ${step.as} replies in the thread: ${text}`);
    const { message } = await slack.postAsUser(ALERT_CHANNEL, { user: step.as, text, thread_ts: o.threadTs });
    // Recorded as steering once the listener runs; from then on the desk tracks the work it causes.
    await until(() => db.steeringMessage.findUnique({ where: { channelId_messageTs: { channelId: ALERT_CHANNEL, messageTs: message.ts } } }).then((r) => r ?? undefined), 'Vigil to record the reply').catch(() => undefined);
    await quiesce(world);
  } else if (step.command !== undefined) {
    const full = fill(step.command);
    const [command, ...rest] = full.split(/\s+/);
    o.print(`${label}  ${step.as} runs ${full}`);
    const before = slack.responses.length;
    const res = await slack.sendCommand({ command: command!, text: rest.join(' '), user_id: step.as, ...(user?.name ? { user_name: user.name } : {}), channel_id: ALERT_CHANNEL, trigger_id: `demo-step-${record.index}-${Date.now()}` });
    if (res.status !== 200) throw new Error(`Vigil answered the command with HTTP ${res.status}`);
    const answer = await until(() => slack.responses.slice(before).find((r) => r.context.user_id === step.as), 'the answer to the command');
    await quiesce(world);
    record.outcome = renderBlocksAsText(answer.body as never);
  } else if (step.click !== undefined) {
    const request = await db.approvalRequest.findFirst({
      where: { channelId: ALERT_CHANNEL, threadTs: o.threadTs, cardTs: { not: null }, ...(o.pendingOnly ? { status: 'pending' } : {}) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    const card = request?.cardTs ? slack.message(ALERT_CHANNEL, request.cardTs) : undefined;
    if (!request || !card) {
      if (o.pendingOnly) {
        o.print(`${label}  (no pending approval card to click)`);
        record.outcome = 'no pending approval card';
        return;
      }
      throw new Error('there is no approval card in the incident thread to click');
    }
    const target = `${request.targetKind.toLowerCase()}/${request.targetName}`;
    record.card = { requestId: request.id, status: request.status, action: request.action, target };
    o.print(`${label}  ${step.as} clicks [${step.click === 'approve' ? 'Approve' : 'Reject'}] on "${request.action} ${target}" (card ${request.status}${request.status === 'pending' ? '' : ', shown without buttons; the click is sent as a client that has not refreshed would'})`);
    const auditBefore = (await db.auditEvent.findFirst({ orderBy: { id: 'desc' }, select: { id: true } }))?.id ?? 0;
    const payload = blockActionsPayload({
      // As the existing `--click` always sent it: the user id, Slack's username left at the id (Vigil looks the name up).
      user: { id: step.as },
      channel: ALERT_CHANNEL,
      message: { ts: card.ts, thread_ts: o.threadTs, text: card.text ?? '', blocks: card.blocks ?? [] },
      action: { action_id: `approval_${step.click}`, value: request.id, block_id: `approval:${request.id}` },
      trigger_id: `demo-step-${record.index}-${Date.now()}`,
    });
    const res = await slack.sendInteraction(payload);
    if (res.status !== 200) throw new Error(`Vigil answered the click with HTTP ${res.status}`);
    // The click is decided once it is on the audit trail: refused, or an approve/reject recorded.
    const decided = await until(
      () => db.auditEvent.findFirst({ where: { id: { gt: auditBefore }, actor: step.as, kind: { in: ['approval.click_refused', 'approval.approve', 'approval.reject'] } } }).then((r) => r ?? undefined),
      'Vigil to decide on the click',
    );
    if (decided.kind === 'approval.approve') {
      // An approval that completes the request runs it: wait for the execution and its verification.
      await until(() => db.approvalRequest.findUniqueOrThrow({ where: { id: request.id } }).then((r) => (['approved', 'executing'].includes(r.status) ? undefined : r)), 'the approved change to run and verify', 120_000);
    }
    await quiesce(world);
    const final = await db.approvalRequest.findUniqueOrThrow({ where: { id: request.id } });
    record.outcome = `${decided.kind === 'approval.click_refused' ? 'click refused; ' : ''}request ${final.status}${final.statusReason ? ` (${final.statusReason})` : ''}`;
  }

  for (const e of slack.store.ephemerals.slice(ephemeralsBefore)) o.print(`            (only ${e.user} sees) ${renderBlocksAsText(e as never).split('\n').join(' ')}`);
  if (record.click) o.print(`            approval ${record.outcome}`);
  const writes = o.recorder.writes().filter((w) => w.step === record.index);
  for (const w of writes) o.print(`            write: ${w.verb} ${w.path} as ${w.identity}${w.impersonatedBy ? ` (impersonated by ${w.impersonatedBy})` : ''}${w.extra ? ` extras ${JSON.stringify(w.extra)}` : ''} → ${w.status}`);
  if (record.click && writes.length === 0) o.print('            no write reached the cluster');
}
