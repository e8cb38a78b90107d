/**
 * Re-captures test/fixtures/alerts/alertmanager-*.json from a real Alertmanager (Debian's prometheus-alertmanager).
 * Run: `npx tsx test/alerts/capture-alertmanager-fixtures.ts`. Payloads are stored as sent; only the loopback
 * host:port (which varies by run) is replaced with `alertmanager.example:9093`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  startAlertmanager,
  startCapturingReceiver,
  type AlertmanagerOptions,
  type CapturingReceiver,
} from '../support/alertmanager.js';
import { alertmanagerScenario, CUSTOM_BULLET_TEXT, CUSTOM_KV_TEXT } from './alertmanager-scenario.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'alerts');

async function main(): Promise<void> {
  const receiver = await startCapturingReceiver();
  const version = 'prometheus-alertmanager 0.25.0 (Debian bookworm)';
  try {
    // 1. Default templates, group_by [alertname]: one alert fires then resolves; the webhook sees the same.
    await capture(receiver, { groupBy: ['alertname'], webhook: true }, async (am, next) => {
      await am.postAlerts([alertmanagerScenario.checkoutCrashLoop]);
      await next('alertmanager-firing-1', '/slack', isStatus('[FIRING:1]'));
      await next('alertmanager-webhook-firing', '/webhook', webhookStatus('firing'));
      await am.resolve();
      await next('alertmanager-resolved-1', '/slack', isStatus('[RESOLVED]'));
      await next('alertmanager-webhook-resolved', '/webhook', webhookStatus('resolved'));
    });
    // 2. Default templates, group_by [alertname, namespace]: the group grows from 1 to 3 alerts, then resolves.
    await capture(receiver, { groupBy: ['alertname', 'namespace'] }, async (am, next) => {
      const [first, ...rest] = alertmanagerScenario.checkoutPodsNotReady;
      await am.postAlerts([first!]);
      await next('alertmanager-grouped-firing-1', '/slack', isStatus('[FIRING:1]'));
      await am.postAlerts(rest);
      await next('alertmanager-grouped-firing-3', '/slack', isStatus('[FIRING:3]'));
      await am.resolve();
      await next('alertmanager-grouped-resolved', '/slack', isStatus('[RESOLVED]'));
    });
    // 3. A custom text template listing labels as key=value lines.
    await capture(receiver, { groupBy: ['alertname'], text: CUSTOM_KV_TEXT }, async (am, next) => {
      await am.postAlerts([alertmanagerScenario.paymentsErrorRate]);
      await next('alertmanager-custom-kv-firing', '/slack', isStatus('[FIRING:1]'));
      await am.resolve();
      await next('alertmanager-custom-kv-resolved', '/slack', isStatus('[RESOLVED]'));
    });
    // 4. The widely copied "• *name:* `value`" template.
    await capture(receiver, { groupBy: ['alertname'], text: CUSTOM_BULLET_TEXT }, async (am, next) => {
      await am.postAlerts([alertmanagerScenario.paymentsErrorRate]);
      await next('alertmanager-custom-bullets-firing', '/slack', isStatus('[FIRING:1]'));
    });
  } finally {
    await receiver.close();
  }

  async function capture(
    rx: CapturingReceiver,
    setup: { groupBy: string[]; webhook?: boolean; text?: string },
    run: (
      am: Awaited<ReturnType<typeof startAlertmanager>>,
      next: (name: string, path: string, match: (body: unknown) => boolean) => Promise<void>,
    ) => Promise<void>,
  ): Promise<void> {
    rx.requests.length = 0;
    const options: AlertmanagerOptions = { slackApiUrl: `${rx.url}/slack`, groupBy: setup.groupBy };
    if (setup.webhook) options.webhookUrl = `${rx.url}/webhook`;
    if (setup.text) options.templates = { text: setup.text };
    const am = await startAlertmanager(options);
    const amHost = new URL(am.url).host;
    try {
      await run(am, async (name, path, match) => {
        const request = await rx.waitFor(path, match);
        rx.requests.splice(rx.requests.indexOf(request), 1);
        const payload = JSON.parse(JSON.stringify(request.body).replaceAll(amHost, 'alertmanager.example:9093')) as unknown;
        const fixture = {
          _source: `captured from ${version}; route group_by ${JSON.stringify(setup.groupBy)}${setup.text ? ', custom slack text template' : ', default templates'}; host:port replaced`,
          payload,
        };
        await writeFile(join(FIXTURES, `${name}.json`), `${JSON.stringify(fixture, null, 2)}\n`);
        console.log(`wrote ${name}.json`);
      });
    } finally {
      await am.stop();
    }
  }
}

function isStatus(prefix: string) {
  return (body: unknown): boolean => {
    const attachments = (body as { attachments?: { title?: string }[] }).attachments;
    return attachments?.[0]?.title?.startsWith(prefix) ?? false;
  };
}

function webhookStatus(status: string) {
  return (body: unknown): boolean => (body as { status?: string }).status === status;
}

await main();
