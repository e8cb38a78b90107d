/**
 * `npm run demo`: the real application, end to end and offline, on the bundled incident. A local Slack
 * Web API server, a local Kubernetes API server serving the scenario, SQLite in a temp folder; the
 * alert is posted the way Alertmanager posts it and the thread is printed as it unfolds.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { createProvider } from '../src/agent/providers/index.js';
import { modelSettings } from '../src/config/index.js';
import { renderBlocksAsText } from '../src/slack/blocks/text.js';
import { blockActionsPayload } from '../test/fakes/slack/index.js';
import { ALERT_CHANNEL, startWorld } from '../test/support/world.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    scenario: { type: 'string', default: join(root, 'test', 'scenarios', 'demo-checkout-scaled-to-zero') },
    'no-noise': { type: 'boolean', default: false },
    click: { type: 'string' },
    postmortem: { type: 'boolean', default: false },
    as: { type: 'string', default: 'U0VIGILSRE' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log('Usage: npm run demo [-- --scenario <dir>] [--no-noise] [--click approve|reject --as <slack user id>] [--postmortem]');
  process.exit(0);
}

const started = Date.now();
const stamp = () => `+${((Date.now() - started) / 1000).toFixed(2)}s`.padStart(7);
const indent = (text: string, pad: string) => text.split('\n').map((l) => pad + l).join('\n');

async function main(): Promise<void> {
  if (values.click && values.click !== 'approve' && values.click !== 'reject') {
    console.error(`--click expects approve or reject, got "${values.click}"`);
    process.exit(2);
  }
  // The example write policy: production scale-ups need one approval from the on-call group (S0SREONCALL,
  // whose only member in the demo workspace is U0VIGILSRE).
  // A real model when a key is set (base URLs and model names honoured, e.g. a gateway or a self-hosted model).
  const settings = modelSettings(process.env);
  const modelProvider = settings ? createProvider(settings) : undefined;
  const world = await startWorld({
    scenarioDir: values.scenario!,
    noise: !values['no-noise'],
    policyFile: join(root, 'deploy', 'policy.example.yaml'),
    ...(modelProvider ? { modelProvider } : {}),
  });
  const { slack, scenario } = world;
  console.log(`Vigil demo · offline · scenario ${scenario.id}: ${scenario.title}`);
  console.log(`  fake Slack Web API   ${slack.apiUrl}`);
  console.log(`  fake Kubernetes API  ${world.kube.url}`);
  console.log(`  database             ${world.config.databaseUrl}`);
  console.log(
    modelProvider
      ? `  model                ${modelProvider.name} ${modelProvider.model} (the model deepens triage after the first card)`
      : `  model                none: deterministic triage only (set ANTHROPIC_API_KEY or OPENAI_API_KEY to add the model loop)`,
  );
  console.log('');

  let seen = 0;
  const printNew = () => {
    for (; seen < slack.calls.length; seen++) {
      const call = slack.calls[seen]!;
      if (call.method !== 'chat.postMessage' && call.method !== 'chat.update') continue;
      if (!call.response?.body.ok) {
        console.log(`${stamp()}  ✖ ${call.method} rejected: ${call.response?.body.error ?? 'no answer'}`);
        continue;
      }
      const body = call.body as { text?: string; blocks?: unknown[]; thread_ts?: string };
      const what = call.method === 'chat.update' ? 'Vigil (edited in place)' : body.thread_ts ? 'Vigil (reply in thread)' : 'Vigil';
      console.log(`${stamp()}  └ ${what}`);
      console.log(indent(renderBlocksAsText(body), '            '));
      console.log('');
    }
  };
  const timer = setInterval(printNew, 25);

  const { ts } = await world.postAlert();
  const alertPost = slack.message(ALERT_CHANNEL, ts);
  console.log(`${stamp()}  #alerts  ${scenario.alert.username ?? 'Alertmanager'} (bot) posts:`);
  console.log(indent(renderBlocksAsText(alertPost ?? {}), '            '));
  console.log('');

  await world.settle();
  printNew();

  if (values.click) await click(world, ts, values.click as 'approve' | 'reject', values.as!);
  await world.settle();
  if (values.postmortem) await postmortem(world, ts);
  clearInterval(timer);
  printNew();

  const thread = slack.threadOf(ALERT_CHANNEL, ts);
  console.log('═'.repeat(100));
  console.log(`The thread now (${thread.length - 1} replies, newest state of every card):`);
  for (const m of thread.slice(1)) {
    console.log(indent(renderBlocksAsText(m), '  │ '));
    console.log('  │');
  }
  const rejected = slack.rejections.length;
  await world.close();
  if (rejected > 0) {
    console.error(`Slack rejected ${rejected} payload(s); see above.`);
    process.exit(1);
  }
  console.log(values.click ? 'Demo finished.' : 'Demo finished: nothing was executed; the proposed fix awaits an approval (try: npm run demo -- --click approve --as U0VIGILSRE).');
}

/** End the incident the way Alertmanager does (a RESOLVED post), then ask for the postmortem draft. */
async function postmortem(world: Awaited<ReturnType<typeof startWorld>>, threadTs: string): Promise<void> {
  const att = (world.scenario.alert.attachments?.[0] ?? {}) as Record<string, string>;
  const title = String(att['title'] ?? '').replace(/\[FIRING:\d+\]/, '[RESOLVED]');
  await world.slack.postAsBot(ALERT_CHANNEL, { username: world.scenario.alert.username ?? 'Alertmanager', attachments: [{ ...att, title, fallback: title, color: 'good' }] });
  await world.settle();
  console.log(`${stamp()}  #alerts  Alertmanager posts: ${title}`);
  const incident = await world.vigil!.db.prisma.incident.findFirstOrThrow({ orderBy: { openedAt: 'desc' } });
  console.log(`${stamp()}  U0VIGILSRE runs /sre postmortem ${incident.id}`);
  const before = world.slack.responses.length;
  await world.slack.sendCommand({ command: '/sre', text: `postmortem ${incident.id}`, user_id: 'U0VIGILSRE', channel_id: ALERT_CHANNEL, trigger_id: 'demo-postmortem' });
  await world.slack.waitFor(() => (world.slack.responses.length > before ? true : undefined), { timeoutMs: 15_000 });
  await world.settle();
  const reply = world.slack.responses.at(-1)!.body as { text?: string };
  console.log(`            (only U0VIGILSRE sees) ${reply.text ?? ''}`);
  // The draft itself is printed with the thread as it is posted.
  void threadTs;
}

/** Play a click on the approval card as a Slack user, and the deployment controller that follows a scale. */
async function click(world: Awaited<ReturnType<typeof startWorld>>, threadTs: string, button: 'approve' | 'reject', user: string): Promise<void> {
  const db = world.vigil!.db.prisma;
  const request = await db.approvalRequest.findFirst({ where: { status: 'pending' } });
  const card = request?.cardTs ? world.slack.message(ALERT_CHANNEL, request.cardTs) : undefined;
  if (!request || !card) {
    console.log(`${stamp()}  (no pending approval card to click)`);
    return;
  }
  console.log(`${stamp()}  ${user} clicks [${button === 'approve' ? 'Approve' : 'Reject'}] on "${request.action} ${request.targetKind.toLowerCase()}/${request.targetName}" (and confirms the dialog)`);
  const payload = blockActionsPayload({
    user: { id: user },
    channel: ALERT_CHANNEL,
    message: { ts: card.ts, thread_ts: threadTs, text: card.text ?? '', blocks: card.blocks ?? [] },
    action: { action_id: `approval_${button}`, value: request.id, block_id: `approval:${request.id}` },
  });
  await world.slack.sendInteraction(payload);
  // Play the deployment controller: once the executor's scale lands, the pods come up and report ready.
  const admin = world.kube.kubeConfigFor('controller').makeApiClient(AppsV1Api);
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    await world.vigil!.desk.idle();
    const now = await db.approvalRequest.findUniqueOrThrow({ where: { id: request.id } });
    const d = world.kube.getObject('apps/v1', 'Deployment', request.targetNs, request.targetName) as { spec?: { replicas?: number } } | undefined;
    if (now.status === 'executing' && (d?.spec?.replicas ?? 0) > 0) {
      const n = d!.spec!.replicas!;
      await admin.patchNamespacedDeploymentStatus(
        { namespace: request.targetNs, name: request.targetName, body: { status: { replicas: n, updatedReplicas: n, readyReplicas: n, availableReplicas: n } }, fieldManager: 'kube-controller-manager' },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    }
    if (!['pending', 'approved', 'executing'].includes(now.status)) break;
    // A refused click leaves the request pending and tells the clicker why, privately.
    if (now.status === 'pending' && world.slack.store.ephemerals.some((e) => e.user === user)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const final = await db.approvalRequest.findUniqueOrThrow({ where: { id: request.id } });
  for (const e of world.slack.store.ephemerals.filter((x) => x.user === user)) {
    console.log(`            (only ${user} sees) ${renderBlocksAsText(e as never).split('\n').join(' ')}`);
  }
  const writes = world.kube.audit.filter(
    (a) => !['get', 'list', 'watch'].includes(a.verb) && !a.path.includes('accessreviews') && !a.dryRun && a.status < 300 && a.fieldManager !== 'kube-controller-manager',
  );
  console.log(`${stamp()}  approval request ${final.status}${final.statusReason ? ` (${final.statusReason})` : ''}`);
  for (const w of writes) console.log(`            write: ${w.verb} ${w.path} as ${w.user}${w.impersonatedBy ? ` (impersonated by ${w.impersonatedBy})` : ''}${Object.keys(w.extra).length ? ` extras ${JSON.stringify(w.extra)}` : ''}`);
  if (writes.length === 0) console.log('            no write reached the cluster');
}

main().catch((err: unknown) => {
  console.error(`demo failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
