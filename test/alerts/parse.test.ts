import { describe, expect, it } from 'vitest';
import { parseAlertMessage } from '../../src/alerts/parse/index.js';
import type { Alert } from '../../src/alerts/types.js';
import { loadFixture, loadMessage } from './load-fixture.js';

function alertFrom(name: string): Alert {
  const result = parseAlertMessage(loadMessage(name), { receivedAt: new Date('2026-01-01T00:00:00Z') });
  if (result.kind !== 'alert') throw new Error(`${name}: expected an alert, got ${result.kind}: ${result.reason}`);
  return result.alert;
}

const AM_LINK = 'http://alertmanager.example:9093/#/alerts?receiver=vigil';

describe('Alertmanager 0.25 posts (captured)', () => {
  it('fixtures are real captures', () => {
    expect(loadFixture('alertmanager-firing-1')._source).toMatch(/^captured from prometheus-alertmanager 0\.25/);
  });

  it('reads the default title: values only, alertname first, severity among the values', () => {
    const alert = alertFrom('alertmanager-firing-1');
    expect(alert).toMatchObject({
      source: 'alertmanager',
      status: 'firing',
      title: '[FIRING:1] KubePodCrashLooping (checkout kube-state-metrics shop checkout-7d9f8b6c5-x2x9z warning)',
      alertName: 'KubePodCrashLooping',
      labels: {},
      labelValues: ['KubePodCrashLooping', 'checkout', 'kube-state-metrics', 'shop', 'checkout-7d9f8b6c5-x2x9z', 'warning'],
      severity: 'warning',
      count: 1,
      link: AM_LINK,
    });
  });

  it('reads [RESOLVED]', () => {
    const alert = alertFrom('alertmanager-resolved-1');
    expect(alert.status).toBe('resolved');
    expect(alert.alertName).toBe('KubePodCrashLooping');
    expect(alert.labelValues).toContain('shop');
  });

  it('reads a grouped post: group values outside the parentheses, count from [FIRING:3]', () => {
    const one = alertFrom('alertmanager-grouped-firing-1');
    const three = alertFrom('alertmanager-grouped-firing-3');
    expect(one).toMatchObject({ alertName: 'KubePodNotReady', count: 1, labelValues: ['KubePodNotReady', 'shop', 'checkout-7d9f8b6c5-4kq2p', 'warning'] });
    expect(three).toMatchObject({ alertName: 'KubePodNotReady', count: 3, severity: 'warning', labelValues: ['KubePodNotReady', 'shop', 'warning'] });
    expect(alertFrom('alertmanager-grouped-resolved')).toMatchObject({ status: 'resolved', alertName: 'KubePodNotReady' });
  });

  it('reads key=value label lines from a custom text template', () => {
    const alert = alertFrom('alertmanager-custom-kv-firing');
    expect(alert.labels).toEqual({
      alertname: 'HighErrorRate',
      cluster: 'prod-eu-1',
      deployment: 'payments-api',
      namespace: 'payments',
      service: 'payments-api',
      severity: 'critical',
    });
    expect(alert).toMatchObject({ alertName: 'HighErrorRate', severity: 'critical', status: 'firing' });
    expect(alert.text).toContain('payments-api returned 12.4% 5xx responses');
    expect(alertFrom('alertmanager-custom-kv-resolved').status).toBe('resolved');
  });

  it('reads "• *name:* `value`" label lines and the summary/description annotations', () => {
    const alert = alertFrom('alertmanager-custom-bullets-firing');
    expect(alert.labels).toMatchObject({ namespace: 'payments', deployment: 'payments-api', severity: 'critical' });
    expect(alert.annotations).toEqual({
      summary: '5xx ratio above 5% for payments-api - `critical`',
      description: 'payments-api returned 12.4% 5xx responses over the last 5 minutes.',
    });
  });
});

describe('hand-written fixtures from docs', () => {
  it('Grafana: subject title, Labels/Annotations lists, rule link', () => {
    const alert = alertFrom('grafana-firing');
    expect(alert).toMatchObject({
      source: 'grafana',
      status: 'firing',
      alertName: 'HighErrorRate',
      labels: { alertname: 'HighErrorRate', grafana_folder: 'Shop', namespace: 'shop', service: 'checkout', severity: 'critical' },
      labelValues: ['HighErrorRate', 'Shop', 'shop', 'checkout', 'critical'],
      severity: 'critical',
      count: 1,
      link: 'https://grafana.example.com/alerting/grafana/fe2k1xq9/view?orgId=1',
    });
    expect(alert.annotations).toMatchObject({ summary: '5xx ratio above 5% for checkout', runbook_url: 'https://runbooks.example.com/high-error-rate' });
    expect(alert.startsAt).toEqual(new Date(1764430100_000));
    expect(alertFrom('grafana-resolved').status).toBe('resolved');
  });

  it('PagerDuty: incident title without its number, Status/Urgency/Service fields', () => {
    const alert = alertFrom('pagerduty-triggered');
    expect(alert).toMatchObject({
      source: 'pagerduty',
      status: 'firing',
      alertName: 'HighErrorRate: payments-api 5xx ratio above 5%',
      labels: { service: 'payments-api' },
      severity: 'high',
      link: 'https://acme.pagerduty.com/incidents/Q2W3E4R5T6Y7U8',
    });
    expect(alertFrom('pagerduty-resolved').status).toBe('resolved');
  });

  it('Datadog: blocks with a [Triggered on {scope}] header and Kubernetes tags renamed to labels', () => {
    const alert = alertFrom('datadog-triggered');
    expect(alert).toMatchObject({
      source: 'datadog',
      status: 'firing',
      alertName: 'High 5xx rate on payments-api',
      labels: { namespace: 'payments', deployment: 'payments-api', cluster: 'prod-eu-1', service: 'payments-api', env: 'prod' },
      severity: 'p2',
      link: 'https://app.datadoghq.com/monitors/123456',
    });
    expect(alert.text).toContain('5xx ratio is *12.4%*');
    expect(alertFrom('datadog-recovered').status).toBe('resolved');
  });

  it('a generic bot post with only text', () => {
    const alert = alertFrom('generic-text');
    expect(alert).toMatchObject({
      source: 'generic',
      status: 'firing',
      labels: { namespace: 'shop', service: 'checkout-api' },
      link: 'https://checkout.example.com/healthz',
    });
    expect(alert.alertName).toMatch(/^checkout-api is DOWN/);
    expect(alert.labelValues).toContain('checkout-api');
    expect(alert.labelValues).not.toContain('red_circle');
  });
});

describe('source detection and generic fallback', () => {
  it('a renamed Alertmanager sender is still recognised by its title and UI link', () => {
    const msg = loadMessage('alertmanager-firing-1');
    const result = parseAlertMessage({ ...msg, username: 'prod-alerts' });
    expect(result.kind === 'alert' && result.alert.source).toBe('alertmanager');
  });

  it('reads attachments and blocks together in the generic parser', () => {
    const result = parseAlertMessage({
      username: 'ops-script',
      attachments: [{ title: 'Disk almost full', fields: [{ title: 'node', value: 'ip-10-0-1-23' }, { title: 'namespace', value: 'monitoring' }] }],
      blocks: [{ type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'Severity: critical, disk at 93%' }] }] }],
    });
    expect(result.kind).toBe('alert');
    if (result.kind !== 'alert') return;
    expect(result.alert).toMatchObject({ source: 'generic', labels: { node: 'ip-10-0-1-23', namespace: 'monitoring' }, severity: 'critical' });
    expect(result.alert.text).toContain('disk at 93%');
  });

  it('ordinary chat is not an alert', () => {
    expect(parseAlertMessage({ text: 'anyone up for lunch at noon?' })).toMatchObject({ kind: 'not_alert' });
    expect(parseAlertMessage({ text: '' })).toMatchObject({ kind: 'not_alert' });
  });

  it('uses the post ts as startsAt, else receivedAt', () => {
    const receivedAt = new Date('2026-02-03T04:05:06Z');
    const withTs = parseAlertMessage({ text: 'ALERT: checkout down', ts: '1764430000.000100' }, { receivedAt });
    const withoutTs = parseAlertMessage({ text: 'ALERT: checkout down' }, { receivedAt });
    expect(withTs.kind === 'alert' && withTs.alert.startsAt?.getTime()).toBe(1764430000000);
    expect(withoutTs.kind === 'alert' && withoutTs.alert.startsAt).toEqual(receivedAt);
  });
});
