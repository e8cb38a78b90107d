import { describe, expect, it } from 'vitest';
import { AlertWebhookError, parseAlertmanagerWebhook } from '../../src/alerts/parse/index.js';
import { loadFixture } from './load-fixture.js';

describe('parseAlertmanagerWebhook (v4 body captured from Alertmanager 0.25)', () => {
  it('returns one Alert per alert with keyed labels, annotations and startsAt', () => {
    const [alert, ...rest] = parseAlertmanagerWebhook(loadFixture('alertmanager-webhook-firing').payload);
    expect(rest).toHaveLength(0);
    expect(alert).toMatchObject({
      source: 'alertmanager',
      status: 'firing',
      alertName: 'KubePodCrashLooping',
      title: '[FIRING:1] KubePodCrashLooping (checkout kube-state-metrics shop checkout-7d9f8b6c5-x2x9z warning)',
      labels: { namespace: 'shop', pod: 'checkout-7d9f8b6c5-x2x9z', container: 'checkout' },
      annotations: { summary: 'Pod is crash looping.' },
      severity: 'warning',
      count: 1,
    });
    expect(alert!.startsAt?.toISOString()).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('the title equals the Slack post Alertmanager sent for the same group', () => {
    const slack = loadFixture('alertmanager-firing-1').payload as { attachments: { title: string }[] };
    const [alert] = parseAlertmanagerWebhook(loadFixture('alertmanager-webhook-firing').payload);
    expect(alert!.title).toBe(slack.attachments[0]!.title);
    const [resolved] = parseAlertmanagerWebhook(loadFixture('alertmanager-webhook-resolved').payload);
    expect(resolved).toMatchObject({ status: 'resolved', title: expect.stringMatching(/^\[RESOLVED\] KubePodCrashLooping/) as unknown as string });
  });

  it('a bad body throws AlertWebhookError naming the fields', () => {
    const body = { ...(loadFixture('alertmanager-webhook-firing').payload as object), version: '3', alerts: [{ status: 'weird' }] };
    let caught: unknown;
    try {
      parseAlertmanagerWebhook(body);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AlertWebhookError);
    const error = caught as AlertWebhookError;
    expect(error.code).toBe('alert_webhook_invalid');
    expect(error.message).toMatch(/^Not an Alertmanager v4 webhook body: /);
    expect(error.issues.map((issue) => issue.path)).toEqual(expect.arrayContaining(['version', 'alerts.0.status', 'alerts.0.labels']));
    expect(() => parseAlertmanagerWebhook('nope')).toThrow(/\(body\)/);
  });
});
