/** Alerts and Slack templates posted to the real Alertmanager, shared by the fixture capture and the live test. */
import type { PostableAlert } from '../support/alertmanager.js';

const crashLoop = (pod: string): PostableAlert => ({
  labels: {
    alertname: 'KubePodCrashLooping',
    container: 'checkout',
    job: 'kube-state-metrics',
    namespace: 'shop',
    pod,
    severity: 'warning',
  },
  annotations: {
    summary: 'Pod is crash looping.',
    description: `Pod shop/${pod} (checkout) is in waiting state (reason: "CrashLoopBackOff").`,
    runbook_url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping',
  },
  generatorURL: 'http://prometheus.example:9090/graph?g0.expr=kube_pod_container_status_waiting_reason',
});

const notReady = (pod: string): PostableAlert => ({
  labels: { alertname: 'KubePodNotReady', namespace: 'shop', pod, severity: 'warning' },
  annotations: {
    summary: 'Pod has been in a non-ready state for more than 15 minutes.',
    description: `Pod shop/${pod} has been in a non-ready state for longer than 15 minutes.`,
  },
});

export const alertmanagerScenario = {
  checkoutCrashLoop: crashLoop('checkout-7d9f8b6c5-x2x9z'),
  checkoutPodsNotReady: [
    notReady('checkout-7d9f8b6c5-4kq2p'),
    notReady('checkout-7d9f8b6c5-9xj7s'),
    notReady('checkout-7d9f8b6c5-tm5wd'),
  ],
  paymentsErrorRate: {
    labels: {
      alertname: 'HighErrorRate',
      cluster: 'prod-eu-1',
      deployment: 'payments-api',
      namespace: 'payments',
      service: 'payments-api',
      severity: 'critical',
    },
    annotations: {
      summary: '5xx ratio above 5% for payments-api',
      description: 'payments-api returned 12.4% 5xx responses over the last 5 minutes.',
    },
  } satisfies PostableAlert,
};

/** A custom Slack `text` many teams configure: a summary line, then one `key=value` line per label. */
export const CUSTOM_KV_TEXT = `{{ range .Alerts }}*{{ .Annotations.summary }}*
{{ .Annotations.description }}
{{ range .Labels.SortedPairs }}{{ .Name }}={{ .Value }}
{{ end }}{{ end }}`;

/** The widely copied template with `• *name:* \`value\`` detail lines. */
export const CUSTOM_BULLET_TEXT = `{{ range .Alerts -}}
*Alert:* {{ .Annotations.summary }} - \`{{ .Labels.severity }}\`
*Description:* {{ .Annotations.description }}
*Details:*
{{ range .Labels.SortedPairs }} • *{{ .Name }}:* \`{{ .Value }}\`
{{ end }}
{{ end }}`;
