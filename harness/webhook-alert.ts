/**
 * `npm run demo -- --via webhook`: the scenario's alert as Alertmanager's webhook (payload version 4) would send
 * it for the same group, delivered over real HTTP on loopback to `POST /webhooks/alertmanager` instead of the
 * Slack post. The scenario carries the Slack post only (`[FIRING:n] <group values> (<common values>)`, values
 * without keys), so the keys are put back from the world: a value naming a Namespace is `namespace`, one naming a
 * workload is its kind (`deployment`, `statefulset`, …), a severity word is `severity`, anything else
 * `label_<n>`. The group is `alertname`, as the subject says, so the webhook's group and the post's are one.
 */
import { parseSubject } from '../src/alerts/parse/subject.js';
import { isSeverityWord } from '../src/alerts/parse/severity.js';
import type { Scenario } from '../test/scenarios/load.js';

export const DEMO_WEBHOOK_TOKEN = 'demo-alertmanager-webhook-token-0123';

const WORKLOADS: Record<string, string> = { Deployment: 'deployment', StatefulSet: 'statefulset', DaemonSet: 'daemonset', CronJob: 'cronjob', Service: 'service', Pod: 'pod' };

/** The v4 webhook body for the scenario's alert post, firing or resolved. */
export function webhookBodyFor(scenario: Pick<Scenario, 'alert' | 'objects' | 'onset'>, status: 'firing' | 'resolved' = 'firing'): Record<string, unknown> {
  const att = (scenario.alert.attachments?.[0] ?? {}) as { title?: string; title_link?: string };
  const subject = parseSubject(att.title ?? scenario.alert.text ?? '');
  if (!subject || subject.groupValues.length === 0) throw new Error('--via webhook needs an alert posted with Alertmanager\'s default subject ([FIRING:n] <alertname> (<values>))');
  const [alertname, ...restGroup] = subject.groupValues;
  const labels: Record<string, string> = { alertname: alertname! };
  const used = new Set<string>();
  const keyFor = (value: string, i: number): string => {
    if (isSeverityWord(value)) return 'severity';
    const obj = scenario.objects.find((o) => o.metadata?.name === value && (o.kind === 'Namespace' || WORKLOADS[o.kind ?? '']));
    const key = obj ? (obj.kind === 'Namespace' ? 'namespace' : WORKLOADS[obj.kind!]!) : `label_${i}`;
    return used.has(key) ? `label_${i}` : key;
  };
  [...restGroup, ...subject.commonValues].forEach((value, i) => {
    const key = keyFor(value, i);
    used.add(key);
    labels[key] = value;
  });
  const external = /^(https?:\/\/[^/#]+)/.exec(att.title_link ?? '')?.[1] ?? 'http://alertmanager.local:9093';
  const receiver = /receiver=([^&]+)/.exec(att.title_link ?? '')?.[1] ?? 'slack-alerts';
  const startsAt = new Date(scenario.onset.getTime()).toISOString();
  return {
    version: '4',
    groupKey: `{}:{alertname="${alertname}"}`,
    truncatedAlerts: 0,
    status,
    receiver: decodeURIComponent(receiver),
    groupLabels: { alertname },
    commonLabels: labels,
    commonAnnotations: {},
    externalURL: external,
    alerts: [
      {
        status,
        labels,
        annotations: {},
        startsAt,
        endsAt: status === 'resolved' ? new Date().toISOString() : '0001-01-01T00:00:00Z',
        generatorURL: `${external.replace(/:9093$/, ':9090')}/graph`,
        fingerprint: '0d3m0f1n6e7p7i1t',
      },
    ],
  };
}

/** POST it as Alertmanager does (bearer token), returning the answer. */
export async function deliverWebhook(port: number, body: unknown, token = DEMO_WEBHOOK_TOKEN): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://127.0.0.1:${port}/webhooks/alertmanager`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'user-agent': 'Alertmanager/0.25.0' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}
