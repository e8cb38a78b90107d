import { describe, expect, it } from 'vitest';
import { fingerprintAlert, workloadOfPod } from '../../src/alerts/fingerprint.js';
import { parseAlertMessage, parseAlertmanagerWebhook } from '../../src/alerts/parse/index.js';
import type { Alert } from '../../src/alerts/types.js';
import { loadFixture, loadMessage } from './load-fixture.js';

function fp(name: string): string {
  const result = parseAlertMessage(loadMessage(name));
  if (result.kind !== 'alert') throw new Error(`${name}: ${result.kind}`);
  return fingerprintAlert(result.alert);
}

function keyed(labels: Record<string, string>, alertName = 'KubePodCrashLooping'): Alert {
  return { source: 'generic', status: 'firing', title: alertName, alertName, labels, labelValues: [], annotations: {}, count: 1, text: '' };
}

describe('fingerprintAlert on captured Alertmanager posts', () => {
  it('is a short hex id', () => {
    expect(fp('alertmanager-firing-1')).toMatch(/^[0-9a-f]{16}$/);
  });

  it('[FIRING:1], [FIRING:3] and [RESOLVED] of one group are the same', () => {
    const one = fp('alertmanager-grouped-firing-1');
    expect(fp('alertmanager-grouped-firing-3')).toBe(one);
    expect(fp('alertmanager-grouped-resolved')).toBe(one);
  });

  it('a resolved post matches its firing post, whatever the text template', () => {
    expect(fp('alertmanager-resolved-1')).toBe(fp('alertmanager-firing-1'));
    expect(fp('alertmanager-custom-kv-resolved')).toBe(fp('alertmanager-custom-kv-firing'));
    expect(fp('alertmanager-custom-bullets-firing')).toBe(fp('alertmanager-custom-kv-firing'));
  });

  it('the webhook alerts of a group match its Slack post', () => {
    const [firing] = parseAlertmanagerWebhook(loadFixture('alertmanager-webhook-firing').payload);
    const [resolved] = parseAlertmanagerWebhook(loadFixture('alertmanager-webhook-resolved').payload);
    expect(fingerprintAlert(firing!)).toBe(fp('alertmanager-firing-1'));
    expect(fingerprintAlert(resolved!)).toBe(fp('alertmanager-firing-1'));
  });

  it('differs between groups for different targets and different rules', () => {
    const shop = parseAlertMessage(loadMessage('alertmanager-grouped-firing-1'));
    if (shop.kind !== 'alert') throw new Error('fixture');
    const payments = { ...shop.alert, title: shop.alert.title.replace('KubePodNotReady shop', 'KubePodNotReady payments') };
    expect(fingerprintAlert(payments)).not.toBe(fingerprintAlert(shop.alert));
    expect(fp('alertmanager-firing-1')).not.toBe(fp('alertmanager-grouped-firing-1'));
  });

  it('ignores the count and the common values, which change as the group grows', () => {
    const base = parseAlertMessage(loadMessage('alertmanager-grouped-firing-1'));
    if (base.kind !== 'alert') throw new Error('fixture');
    const regrouped = { ...base.alert, title: '[FIRING:7]  KubePodNotReady   shop  (critical)' };
    expect(fingerprintAlert(regrouped)).toBe(fingerprintAlert(base.alert));
  });
});

describe('fingerprintAlert on other sources', () => {
  it('firing and resolved posts match for Grafana, PagerDuty and Datadog; sources differ from each other', () => {
    expect(fp('grafana-resolved')).toBe(fp('grafana-firing'));
    expect(fp('pagerduty-resolved')).toBe(fp('pagerduty-triggered'));
    expect(fp('datadog-recovered')).toBe(fp('datadog-triggered'));
    expect(new Set([fp('grafana-firing'), fp('pagerduty-triggered'), fp('datadog-triggered')]).size).toBe(3);
  });
});

describe('fingerprintAlert with keyed labels', () => {
  const base = { alertname: 'KubePodCrashLooping', namespace: 'shop', pod: 'checkout-7d9f8b6c5-x2x9z', container: 'checkout', severity: 'warning' };

  it('a restarted pod of the same deployment keeps the fingerprint', () => {
    expect(fingerprintAlert(keyed({ ...base, pod: 'checkout-5f6b7c8d9-qwz4k' }))).toBe(fingerprintAlert(keyed(base)));
  });

  it('ignores severity, volatile labels, case and whitespace', () => {
    const noisy = { ...base, severity: 'critical', pod_template_hash: '7d9f8b6c5', uid: '0b0c1e4a-1111-2222-3333-444455556666', namespace: ' Shop ' };
    expect(fingerprintAlert(keyed(noisy))).toBe(fingerprintAlert(keyed(base)));
    expect(fingerprintAlert(keyed(base, ' kubepodcrashlooping '))).toBe(fingerprintAlert(keyed(base)));
  });

  it('drops instance when a workload label names the target', () => {
    const a = keyed({ alertname: 'HighErrorRate', namespace: 'payments', deployment: 'payments-api', instance: '10.0.3.17:8080' });
    const b = keyed({ alertname: 'HighErrorRate', namespace: 'payments', deployment: 'payments-api', instance: '10.0.9.2:8080' });
    expect(fingerprintAlert(a)).toBe(fingerprintAlert(b));
    const nodeA = keyed({ alertname: 'NodeFilesystemAlmostFull', instance: 'node-1:9100' });
    const nodeB = keyed({ alertname: 'NodeFilesystemAlmostFull', instance: 'node-2:9100' });
    expect(fingerprintAlert(nodeA)).not.toBe(fingerprintAlert(nodeB));
  });

  it('differs for different targets and different rules', () => {
    const one = fingerprintAlert(keyed(base));
    expect(fingerprintAlert(keyed({ ...base, namespace: 'payments' }))).not.toBe(one);
    expect(fingerprintAlert(keyed({ ...base, pod: 'cart-6c8b9d7f4-bxc42', container: 'cart' }))).not.toBe(one);
    expect(fingerprintAlert(keyed({ ...base, alertname: 'KubePodNotReady' }))).not.toBe(one);
    expect(fingerprintAlert(keyed({ namespace: 'shop' }, 'A'))).not.toBe(fingerprintAlert(keyed({ namespace: 'shop' }, 'B')));
  });

  it('keyless values: severity words and pod suffixes do not matter', () => {
    const values = (labelValues: string[]): Alert => ({ ...keyed({}), title: 'custom title', labelValues });
    expect(fingerprintAlert(values(['shop', 'checkout-7d9f8b6c5-x2x9z', 'critical']))).toBe(
      fingerprintAlert(values(['Shop', 'checkout-5f6b7c8d9-qwz4k', 'warning'])),
    );
    expect(fingerprintAlert(values(['shop', 'checkout']))).not.toBe(fingerprintAlert(values(['shop', 'cart'])));
  });
});

describe('workloadOfPod', () => {
  it.each([
    ['checkout-7d9f8b6c5-x2x9z', 'checkout'],
    ['payments-api-5f6b7c8d9-qwz4k', 'payments-api'],
    ['kafka-2', 'kafka'],
    ['node-exporter-x7k2p', 'node-exporter'],
    ['backup-29012345-z8k4p', 'backup'],
    ['api-sync', 'api-sync'],
    ['checkout', 'checkout'],
  ])('%s → %s', (pod, workload) => {
    expect(workloadOfPod(pod)).toBe(workload);
  });
});
