/**
 * `npm run demo`: the real application, end to end and offline, on the bundled incident. A local Slack
 * Web API server, a local Kubernetes API server serving the scenario, SQLite in a temp folder; the
 * alert is posted the way Alertmanager posts it and the thread is printed as it unfolds.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderBlocksAsText } from '../slack/blocks/text.js';
import { ALERT_CHANNEL, startWorld } from '../../test/support/world.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({
  options: {
    scenario: { type: 'string', default: join(root, 'test', 'scenarios', 'demo-checkout-scaled-to-zero') },
    'no-noise': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log('Usage: npm run demo [-- --scenario <dir>] [--no-noise]');
  process.exit(0);
}

const started = Date.now();
const stamp = () => `+${((Date.now() - started) / 1000).toFixed(2)}s`.padStart(7);
const indent = (text: string, pad: string) => text.split('\n').map((l) => pad + l).join('\n');

async function main(): Promise<void> {
  const world = await startWorld({ scenarioDir: values.scenario!, noise: !values['no-noise'] });
  const { slack, scenario } = world;
  console.log(`Vigil demo · offline · scenario ${scenario.id}: ${scenario.title}`);
  console.log(`  fake Slack Web API   ${slack.apiUrl}`);
  console.log(`  fake Kubernetes API  ${world.kube.url}`);
  console.log(`  database             ${world.config.databaseUrl}`);
  console.log(`  model                none: deterministic triage only (the model loop is not part of this build)`);
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
  console.log('Demo finished: nothing was executed; the suggested fix awaits a human.');
}

main().catch((err: unknown) => {
  console.error(`demo failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
