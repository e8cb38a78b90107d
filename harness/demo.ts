/**
 * `npm run demo`: the real application, end to end and offline, on the bundled incident. A local Slack
 * Web API server, a local Kubernetes API server serving the scenario, SQLite in a temp folder; the
 * alert is posted the way Alertmanager posts it and the thread is printed as it unfolds. With `--steps`,
 * what people then do in the thread (replies, clicks, /sre commands) is played from a YAML file
 * (harness/steps.ts), and `--json` writes what came of it. `--doctor` runs `vigil doctor` against the same
 * world instead, with the settings the demo's Vigil uses: the fake API server enforces deploy/'s RBAC, so
 * the report proves the reader cannot write and shows what the executor may do where.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createProvider } from '../src/agent/providers/index.js';
import { modelSettings } from '../src/config/index.js';
import { renderBlocksAsText } from '../src/slack/blocks/text.js';
import { runDoctor } from '../src/cli/doctor.js';
import { ALERT_CHANNEL, startWorld } from '../test/support/world.js';
import { loadStepsFile, playDeploymentController, playSteps, Recorder, StepsFileError, type Step } from './steps.js';
import { DEMO_WEBHOOK_TOKEN, deliverWebhook, webhookBodyFor } from './webhook-alert.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const USAGE = `Usage: npm run demo [-- options]

  --scenario <dir>        the scenario to play (default: test/scenarios/demo-checkout-scaled-to-zero)
  --no-noise              without the scenario's background noise
  --via slack|webhook     how the alert arrives: Alertmanager's Slack post (default), or Alertmanager's webhook
                          (payload version 4) over HTTP to POST /webhooks/alertmanager; Vigil then posts the
                          thread root itself, and the thread is the same
  --click approve|reject  click the pending approval card once the alert is investigated…
  --as <slack user id>    …as this user (default U0VIGILSRE, the on-call SRE; U0BOB is not on call)
  --steps <file.yaml>     then play a list of steps, one person doing one thing each, Vigil settling
                          between them (examples: harness/steps/*.yaml):
                            - { as: U0BOB, reply: "rule out H1: planned maintenance" }   a reply in the thread
                            - { as: U0VIGILSRE, click: approve }   click the newest approval card (open or not)
                            - { as: U0VIGILSRE, command: "/sre stop" }   a slash command
                          {incident} in a reply or command is the incident's id. A bad file is named
                          (step index, line and field) and nothing runs: exit 2.
  --json <out.json>       write what happened: { writes: [{ verb, resource, namespace, name, identity, … }],
                          posts: [{ text, … }], refusals: [{ user, text, … }], ephemerals, steps }
  --postmortem            end the incident (Alertmanager's RESOLVED post) and print the postmortem draft
  --doctor                instead of playing the incident, run \`vigil doctor\` against the demo world (its fake
                          API server enforces deploy/'s RBAC) with the demo's settings, print the report
                          and exit with doctor's code (0 all good, 1 the reader can write or misses a read)
  -h, --help              this text`;

function usageError(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

let parsed: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    options: {
      scenario: { type: 'string', default: join(root, 'test', 'scenarios', 'demo-checkout-scaled-to-zero') },
      'no-noise': { type: 'boolean', default: false },
      via: { type: 'string', default: 'slack' },
      click: { type: 'string' },
      postmortem: { type: 'boolean', default: false },
      as: { type: 'string', default: 'U0VIGILSRE' },
      steps: { type: 'string' },
      json: { type: 'string' },
      doctor: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}
try {
  parsed = parse();
} catch (err) {
  usageError(err instanceof Error ? err.message : String(err));
}
const { values } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
// Paths given on the command line are the caller's, not npm's (npm runs scripts from the package root).
const here = (p: string) => resolve(process.env['INIT_CWD'] ?? process.cwd(), p);
if (values.via !== 'slack' && values.via !== 'webhook') usageError(`--via expects slack or webhook, got "${values.via}"`);
if (values.click && values.click !== 'approve' && values.click !== 'reject') usageError(`--click expects approve or reject, got "${values.click}"`);
if (values.click && values.steps) usageError('--click and --steps do not go together: put the click in the steps file ({ as: U0VIGILSRE, click: approve })');
if (values.doctor && (values.click || values.steps || values.json || values.postmortem)) usageError('--doctor checks the world\'s RBAC and plays nothing: it does not go with --click, --steps, --json or --postmortem');
let steps: Step[] = [];
if (values.steps) {
  try {
    steps = loadStepsFile(here(values.steps));
  } catch (err) {
    if (!(err instanceof StepsFileError)) throw err;
    console.error(err.message);
    process.exit(2);
  }
}

const started = Date.now();
const stamp = () => `+${((Date.now() - started) / 1000).toFixed(2)}s`.padStart(7);
const indent = (text: string, pad: string) => text.split('\n').map((l) => pad + l).join('\n');

/** `--doctor`: the demo world without the incident, and `vigil doctor` with the env the demo's Vigil gets. */
async function doctor(): Promise<void> {
  const world = await startWorld({
    scenarioDir: values.scenario!,
    noise: !values['no-noise'],
    policyFile: join(root, 'deploy', 'policy.example.yaml'),
    startApp: false,
    ...(process.env['VIGIL_EXECUTOR_MODE'] ? { env: { VIGIL_EXECUTOR_MODE: process.env['VIGIL_EXECUTOR_MODE'] } } : {}),
  });
  let code: number;
  try {
    console.log(`Vigil demo · vigil doctor against the offline world of ${world.scenario.id} (fake Kubernetes API ${world.kube.url}, deploy/ RBAC)`);
    const bound = Object.entries(world.rbac?.executorNamespaces ?? {}).map(([ns, role]) => `${ns} (${role})`);
    console.log(`  executor bound in    ${bound.join(', ') || 'no namespace'}; reached by ${world.rbac?.mode ?? 'impersonate'}`);
    console.log(`  reader reads Secrets in ${world.rbac?.readerSecretNamespaces.join(', ') || 'no namespace'}`);
    console.log('');
    // Token mode: the reader may not impersonate the executor (nor create SubjectAccessReviews), so doctor checks it with a minted token, as Vigil reaches it.
    const executorArgs = world.rbac?.mode === 'token' ? ['--executor', 'token'] : [];
    code = await runDoctor(['doctor', ...executorArgs], world.env, (line) => console.log(line));
  } finally {
    await world.close();
  }
  process.exit(code);
}

async function main(): Promise<void> {
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
    ...(values.via === 'webhook' ? { env: { VIGIL_ALERTMANAGER_WEBHOOK_TOKEN: DEMO_WEBHOOK_TOKEN } } : {}),
  });
  const { slack, scenario } = world;
  const recorder = new Recorder(world);
  // The deployment controller follows Vigil's writes (pods come up and report ready), nothing else.
  playDeploymentController(world);
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

  let ts: string;
  if (values.via === 'webhook') {
    // No Slack post: Alertmanager's webhook for the same group, over HTTP; Vigil posts the thread root itself.
    const body = webhookBodyFor(scenario);
    const answer = await deliverWebhook(world.vigil!.port!, body);
    console.log(`${stamp()}  Alertmanager POSTs its webhook (v4, group ${JSON.stringify((body['groupLabels'] as Record<string, string>)['alertname'])}, labels ${JSON.stringify(body['commonLabels'])})`);
    console.log(`            to http://127.0.0.1:${world.vigil!.port}/webhooks/alertmanager → HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
    console.log('');
    if (answer.status !== 202) throw new Error(`the webhook was refused: HTTP ${answer.status}`);
    await world.settle();
    const incident = await world.vigil!.db.prisma.incident.findFirstOrThrow({ orderBy: { openedAt: 'desc' } });
    if (!incident.threadTs) throw new Error('Vigil did not post the incident thread');
    ts = incident.threadTs;
  } else {
    ({ ts } = await world.postAlert());
    const alertPost = slack.message(ALERT_CHANNEL, ts);
    console.log(`${stamp()}  #alerts  ${scenario.alert.username ?? 'Alertmanager'} (bot) posts:`);
    console.log(indent(renderBlocksAsText(alertPost ?? {}), '            '));
    console.log('');
    await world.settle();
  }
  printNew();

  // What people do next, delivered as Slack delivers it; the legacy --click is a one-step list.
  const say = (line: string) => {
    printNew();
    console.log(line.startsWith(' ') ? line : `${stamp()}  ${line}`);
  };
  if (values.click) await playSteps(world, [{ as: values.as!, click: values.click as 'approve' | 'reject' }], { threadTs: ts, recorder, print: say, pendingOnly: true });
  if (steps.length) await playSteps(world, steps, { threadTs: ts, recorder, print: say });
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
  const report = await recorder.report();
  if (values.json) {
    writeFileSync(here(values.json), `${JSON.stringify(report, null, 2)}\n`);
    console.log(`Report (${report.writes.length} write${report.writes.length === 1 ? '' : 's'}, ${report.posts.length} posts and edits, ${report.refusals.length} refusal${report.refusals.length === 1 ? '' : 's'}) written to ${here(values.json)}`);
  }
  const rejected = slack.rejections.length;
  await world.close();
  if (report.error) {
    console.error(`The steps stopped: ${report.error}`);
    process.exit(1);
  }
  if (rejected > 0) {
    console.error(`Slack rejected ${rejected} payload(s); see above.`);
    process.exit(1);
  }
  console.log(
    steps.length
      ? `Demo finished: ${steps.length} step${steps.length === 1 ? '' : 's'} played, ${report.writes.length} write${report.writes.length === 1 ? '' : 's'} reached the cluster.`
      : values.click
        ? 'Demo finished.'
        : 'Demo finished: nothing was executed; the proposed fix awaits an approval (try: npm run demo -- --click approve --as U0VIGILSRE).',
  );
}

/** End the incident the way Alertmanager does (a RESOLVED post), then ask for the postmortem draft. */
async function postmortem(world: Awaited<ReturnType<typeof startWorld>>, threadTs: string): Promise<void> {
  const att = (world.scenario.alert.attachments?.[0] ?? {}) as Record<string, string>;
  const title = String(att['title'] ?? '').replace(/\[FIRING:\d+\]/, '[RESOLVED]');
  if (values.via === 'webhook') {
    const answer = await deliverWebhook(world.vigil!.port!, webhookBodyFor(world.scenario, 'resolved'));
    await world.settle();
    console.log(`${stamp()}  Alertmanager POSTs its webhook: the group resolved → HTTP ${answer.status}`);
  } else {
    await world.slack.postAsBot(ALERT_CHANNEL, { username: world.scenario.alert.username ?? 'Alertmanager', attachments: [{ ...att, title, fallback: title, color: 'good' }] });
    await world.settle();
    console.log(`${stamp()}  #alerts  Alertmanager posts: ${title}`);
  }
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

(values.doctor ? doctor() : main()).catch((err: unknown) => {
  console.error(`demo failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
