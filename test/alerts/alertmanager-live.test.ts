/**
 * Against a real Alertmanager (Debian's prometheus-alertmanager 0.25): post an alert, resolve it, capture the Slack
 * payloads it sends to a loopback receiver, and check the parser reads them as firing then resolved with one
 * fingerprint. Skips with a reason when the binary is missing, except under CI, where it fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintAlert } from '../../src/alerts/fingerprint.js';
import { parseAlertMessage, parseAlertmanagerWebhook } from '../../src/alerts/parse/index.js';
import type { Alert, AlertMessage } from '../../src/alerts/types.js';
import {
  alertmanagerSkipReason,
  startAlertmanager,
  startCapturingReceiver,
  type CapturingReceiver,
  type RunningAlertmanager,
} from '../support/alertmanager.js';
import { alertmanagerScenario } from './alertmanager-scenario.js';

const skipReason = alertmanagerSkipReason();
if (skipReason) console.warn(`[alertmanager-live] skipped: ${skipReason}`);

const titleStartsWith = (prefix: string) => (body: unknown) =>
  (body as AlertMessage).attachments?.[0]?.title?.startsWith(prefix) ?? false;

function parsed(body: unknown): Alert {
  const result = parseAlertMessage(body as AlertMessage);
  if (result.kind !== 'alert') throw new Error(`expected an alert, got ${result.kind}: ${result.reason}`);
  return result.alert;
}

describe.skipIf(skipReason !== undefined)('real Alertmanager → Slack payload → parseAlertMessage', () => {
  let receiver: CapturingReceiver;
  let alertmanager: RunningAlertmanager;

  beforeAll(async () => {
    receiver = await startCapturingReceiver();
    alertmanager = await startAlertmanager({ slackApiUrl: `${receiver.url}/slack`, webhookUrl: `${receiver.url}/webhook` });
  });

  afterAll(async () => {
    await alertmanager?.stop();
    await receiver?.close();
  });

  it('firing then resolved, same fingerprint, webhook agrees', async () => {
    await alertmanager.postAlerts([alertmanagerScenario.checkoutCrashLoop]);
    const firingPost = await receiver.waitFor('/slack', titleStartsWith('[FIRING:1]'));
    const firing = parsed(firingPost.body);
    expect(firing).toMatchObject({
      source: 'alertmanager',
      status: 'firing',
      alertName: 'KubePodCrashLooping',
      labelValues: ['KubePodCrashLooping', 'checkout', 'kube-state-metrics', 'shop', 'checkout-7d9f8b6c5-x2x9z', 'warning'],
      severity: 'warning',
      count: 1,
      link: `${alertmanager.url}/#/alerts?receiver=vigil`,
    });

    await alertmanager.resolve();
    const resolvedPost = await receiver.waitFor('/slack', titleStartsWith('[RESOLVED]'));
    const resolved = parsed(resolvedPost.body);
    expect(resolved).toMatchObject({ status: 'resolved', alertName: 'KubePodCrashLooping' });
    expect(fingerprintAlert(resolved)).toBe(fingerprintAlert(firing));

    const hook = await receiver.waitFor('/webhook', (body) => (body as { status?: string }).status === 'firing');
    const [fromWebhook] = parseAlertmanagerWebhook(hook.body);
    expect(fromWebhook!.title).toBe(firing.title);
    expect(fingerprintAlert(fromWebhook!)).toBe(fingerprintAlert(firing));
  });
});
