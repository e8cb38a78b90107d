/**
 * Labels from every layout alert tools post in Slack: one per line, all on one line, bullet lists,
 * fields, blocks, tags; and grouped posts whose alerts have different targets. The Alertmanager
 * layouts are rendered by the real Alertmanager (Debian's 0.25) from the text templates teams copy;
 * the others are written from the vendors' documented Slack layouts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAlertMessage } from '../../src/alerts/parse/index.js';
import type { Alert, AlertMessage } from '../../src/alerts/types.js';
import { alertmanagerSkipReason, startAlertmanager, startCapturingReceiver, type CapturingReceiver, type PostableAlert, type RunningAlertmanager } from '../support/alertmanager.js';

function parse(msg: AlertMessage): Alert {
  const r = parseAlertMessage(msg);
  if (r.kind !== 'alert') throw new Error(`${r.kind}: ${r.reason}`);
  return r.alert;
}

const TEMPLATES = {
  /** Every label of an alert on one line (the `Alert: / Description: / Labels: / Started:` form). */
  oneLine:
    '{{ range .Alerts }}*Alert:* {{ .Annotations.summary }}\n*Description:* {{ .Annotations.description }}\n*Labels:* {{ range .Labels.SortedPairs }}{{ .Name }}={{ .Value }} {{ end }}\n*Started:* {{ .StartsAt.Format "2006-01-02 15:04:05 MST" }}\n{{ end }}',
  /** The widely copied bullet template, one label per line. */
  bullets:
    '{{ range .Alerts }}*Alert:* {{ .Annotations.summary }} - `{{ .Labels.severity }}`\n*Description:* {{ .Annotations.description }}\n*Details:*\n{{ range .Labels.SortedPairs }} • *{{ .Name }}:* `{{ .Value }}`\n{{ end }}{{ end }}',
};

const probe = (instance: string, code: string): PostableAlert => ({
  labels: { alertname: 'BlackboxProbeFailed', instance, job: 'blackbox-http', severity: 'critical', probe_http_status_code: code },
  annotations: { summary: `Probe of ${instance} failing`, description: `probe_success == 0 for 2m (status ${code})` },
});

const skipReason = alertmanagerSkipReason();

describe.skipIf(skipReason !== undefined)('real Alertmanager text templates, grouped by alertname', () => {
  let receiver: CapturingReceiver;
  const managers: RunningAlertmanager[] = [];
  beforeAll(async () => {
    receiver = await startCapturingReceiver();
  });
  afterAll(async () => {
    for (const m of managers) await m.stop();
    await receiver?.close();
  });

  for (const [name, text] of Object.entries(TEMPLATES)) {
    it(`${name}: a [FIRING:2] post keeps each alert's own target and the labels they share`, async () => {
      const am = await startAlertmanager({ slackApiUrl: `${receiver.url}/slack-${name}`, groupBy: ['alertname'], templates: { text } });
      managers.push(am);
      await am.postAlerts([probe('https://shop.example.com/', '503'), probe('https://api.example.com/health', '502')]);
      const post = await receiver.waitFor(`/slack-${name}`, (b) => /\[FIRING:2\]/.test((b as AlertMessage).attachments?.[0]?.title ?? ''));
      const alert = parse(post.body as AlertMessage);
      expect(alert.count).toBe(2);
      expect(alert.labels).toMatchObject({ alertname: 'BlackboxProbeFailed', job: 'blackbox-http', severity: 'critical' });
      expect(alert.labels['instance']).toBeUndefined();
      expect(alert.members?.map((m) => m.labels['instance']).sort()).toEqual(['https://api.example.com/health', 'https://shop.example.com/']);
      expect(alert.members?.every((m) => m.labels['alertname'] === 'BlackboxProbeFailed')).toBe(true);
    });
  }

  it('oneLine: a single alert keeps every label and its start time', async () => {
    const am = await startAlertmanager({ slackApiUrl: `${receiver.url}/slack-single`, templates: { text: TEMPLATES.oneLine } });
    managers.push(am);
    const startsAt = new Date(Date.now() - 7 * 60_000);
    await am.postAlerts([{ labels: { alertname: 'SLOErrorBudgetBurn', host: 'shop.example.com', ingress: 'edge', namespace: 'edge', severity: 'critical' }, annotations: { summary: 'budget burning', description: '14x' }, startsAt: startsAt.toISOString() }]);
    const post = await receiver.waitFor('/slack-single', () => true);
    const alert = parse(post.body as AlertMessage);
    expect(alert.labels).toEqual({ alertname: 'SLOErrorBudgetBurn', host: 'shop.example.com', ingress: 'edge', namespace: 'edge', severity: 'critical' });
    expect(alert.members).toBeUndefined();
    expect(Math.abs(alert.startsAt!.getTime() - startsAt.getTime())).toBeLessThan(1000);
  });
});

describe('vendor layouts', () => {
  it('Grafana: one "Value:" section per alert of a grouped notification', () => {
    const alert = parse({
      username: 'Grafana',
      attachments: [
        {
          title: '[FIRING:2] Frontend5xx (Shop)',
          title_link: 'http://grafana.example/alerting/list',
          footer: 'Grafana v11.3.0',
          text: '**Firing**\n\nValue: A=0.18\nLabels:\n - alertname = Frontend5xx\n - grafana_folder = Shop\n - namespace = web\n - service = frontend\nAnnotations:\n - summary = 5xx above 5%\nSource: http://grafana.example/alerting/grafana/abc/view\n\nValue: A=0.09\nLabels:\n - alertname = Frontend5xx\n - grafana_folder = Shop\n - namespace = web\n - service = checkout\nAnnotations:\n - summary = 5xx above 5%\nSource: http://grafana.example/alerting/grafana/abc/view',
        },
      ],
    });
    expect(alert.labels).toMatchObject({ alertname: 'Frontend5xx', grafana_folder: 'Shop', namespace: 'web' });
    expect(alert.labels['service']).toBeUndefined();
    expect(alert.members?.map((m) => m.labels['service'])).toEqual(['frontend', 'checkout']);
  });

  it('PagerDuty app blocks: "*Field*" then its value on the next line', () => {
    const alert = parse({
      username: 'PagerDuty',
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: '*<https://acme.pagerduty.com/incidents/Q1|[#4821] Checkout API latency SLO burn>*' } },
        { type: 'section', fields: [{ type: 'mrkdwn', text: '*Status*\nTriggered' }, { type: 'mrkdwn', text: '*Urgency*\nHigh' }, { type: 'mrkdwn', text: '*Service*\ncheckout-api' }, { type: 'mrkdwn', text: '*Assigned*\n@alice' }] },
      ],
    } as AlertMessage);
    expect(alert.source).toBe('pagerduty');
    expect(alert.labels['service']).toBe('checkout-api');
  });

  it('Opsgenie: tags as key:value on a Tags line', () => {
    const alert = parse({
      username: 'Opsgenie',
      attachments: [{ title: 'Alert #1234: web frontend errors', text: 'Priority: P2\nTags: kube_namespace:web, service:web-frontend, env:prod\nSource: Prometheus', color: '#e01e5a' }],
    });
    expect(alert.labels).toMatchObject({ namespace: 'web', service: 'web-frontend', env: 'prod' });
  });

  it('Datadog: scope tags in the title and a Tags context line', () => {
    const alert = parse({
      username: 'Datadog',
      text: '[Triggered on {kube_namespace:api}] [P2] api-gateway 5xx above 5%',
      blocks: [{ type: 'context', elements: [{ type: 'mrkdwn', text: 'Tags: kube_namespace:api, kube_deployment:api-gateway, service:api-gateway' }] }],
    } as AlertMessage);
    expect(alert.labels).toMatchObject({ namespace: 'api', deployment: 'api-gateway', service: 'api-gateway' });
  });

  it('Alertmanager default title only: values without keys, no labels', () => {
    const alert = parse({ username: 'Alertmanager', attachments: [{ title: '[FIRING:1] BlackboxProbeFailed (https://shop.example.com/ blackbox-http critical)', title_link: 'http://am:9093/#/alerts?receiver=slack', text: '' }] });
    expect(alert.labels).toEqual({});
    expect(alert.labelValues).toEqual(['BlackboxProbeFailed', 'https://shop.example.com/', 'blackbox-http', 'critical']);
  });

  it('a free-text line with host:port is not read as a tag', () => {
    const alert = parse({ username: 'Alertmanager', attachments: [{ title: '[FIRING:1] DBDown', text: '*Description:* cannot reach orders-db:5432 from api\n*Labels:* alertname=DBDown namespace=orders' }] });
    expect(alert.labels).toEqual({ alertname: 'DBDown', namespace: 'orders' });
  });
});
