import { describe, expect, it } from 'vitest';
import { objectCitation } from '../../../src/triage/citations.js';
import { slackDateTime } from '../../../src/slack/blocks/format.js';
import { renderCitation } from '../../../src/slack/blocks/hypothesis.js';
import { citationTarget, githubWebUrl, kubectlGet, linkCitation, parseObjectRef, slackPermalink } from '../../../src/slack/blocks/links.js';
import { loadConfig } from '../../../src/config/index.js';
import { validateBlocks } from '../../fakes/slack/index.js';
import { contextBlock } from '../../../src/slack/blocks/elements.js';

const range = { from: new Date('2026-03-04T14:00:00Z'), to: new Date('2026-03-04T14:30:00Z') };

describe('citation links', () => {
  it('links a PromQL query to Prometheus’ graph page over the query window', () => {
    const t = citationTarget({ source: 'prometheus', ref: 'sum(rate(http_requests_total{code=~"5.."}[5m]))', range }, { prometheusUrl: 'https://prom.example.com/' });
    const url = new URL(t.url!);
    expect(url.origin + url.pathname).toBe('https://prom.example.com/graph');
    expect(url.searchParams.get('g0.expr')).toBe('sum(rate(http_requests_total{code=~"5.."}[5m]))');
    expect(url.searchParams.get('g0.range_input')).toBe('1800s');
    expect(url.searchParams.get('g0.end_input')).toBe('2026-03-04 14:30:00');
  });

  it('prefers Grafana Explore when a datasource is configured, for PromQL and LogQL', () => {
    const s = { prometheusUrl: 'https://prom', grafanaUrl: 'https://grafana.example.com', grafanaPrometheusDatasource: 'prom1', grafanaLokiDatasource: 'loki1' };
    const prom = new URL(citationTarget({ source: 'prometheus', ref: 'up', range }, s).url!);
    expect(prom.pathname).toBe('/explore');
    const panes = JSON.parse(prom.searchParams.get('panes')!) as Record<string, { datasource: string; queries: { expr: string }[]; range: { from: string; to: string } }>;
    expect(Object.values(panes)[0]).toMatchObject({ datasource: 'prom1', queries: [{ expr: 'up' }], range: { from: String(range.from.getTime()), to: String(range.to.getTime()) } });
    const loki = new URL(citationTarget({ source: 'loki', ref: '{namespace="shop"} |= "error"', range }, s).url!);
    expect(loki.searchParams.get('panes')).toContain('loki1');
    expect(citationTarget({ source: 'loki', ref: '{a="b"}' }, {})).toEqual({});
  });

  it('builds GitHub commit, PR and deployment URLs from the API path', () => {
    expect(githubWebUrl('https://github.com', '/repos/acme/shop/commits/4f2a9c1')).toBe('https://github.com/acme/shop/commit/4f2a9c1');
    expect(githubWebUrl('https://ghe.acme.io/', '/repos/acme/shop/pulls/1234')).toBe('https://ghe.acme.io/acme/shop/pull/1234');
    expect(githubWebUrl('https://github.com', '/repos/acme/shop/deployments/99')).toBe('https://github.com/acme/shop/deployments');
    expect(githubWebUrl('https://github.com', 'search commits')).toBeUndefined();
    // A citation's own html URL wins.
    expect(citationTarget({ source: 'github', ref: '/repos/a/b/pulls/1', url: 'https://github.com/a/b/pull/1' })).toEqual({ url: 'https://github.com/a/b/pull/1' });
  });

  it('links Slack messages when the workspace is known', () => {
    expect(slackPermalink('https://acme.slack.com', 'C0DEPLOYS/1741097112.000200')).toBe('https://acme.slack.com/archives/C0DEPLOYS/p1741097112000200');
    expect(citationTarget({ source: 'slack', ref: 'slack:C0ALERTS/1741097112.000200' }, { slackWorkspaceUrl: 'https://acme.slack.com/' }).url).toBe('https://acme.slack.com/archives/C0ALERTS/p1741097112000200');
    expect(citationTarget({ source: 'slack', ref: 'C0ALERTS/1741097112.000200' }, {})).toEqual({});
  });

  it('gives the exact kubectl read for a Kubernetes object, or a console URL from the template', () => {
    const c = objectCitation('Deployment', 'shop', 'checkout', 'metadata.managedFields[1]');
    expect(parseObjectRef(c.ref)).toEqual({ group: 'apps', plural: 'deployments', namespace: 'shop', name: 'checkout', fragment: 'metadata.managedFields[1]' });
    expect(citationTarget(c).command).toBe('kubectl get deployments.apps checkout -n shop -o yaml');
    expect(citationTarget(objectCitation('ConfigMap', 'shop', 'checkout-env')).command).toBe('kubectl get configmaps checkout-env -n shop -o yaml');
    expect(citationTarget(objectCitation('Node', undefined, 'node-a')).command).toBe('kubectl get nodes node-a -o yaml');
    expect(citationTarget(objectCitation('AuthorizationPolicy', 'shop', 'deny-all')).command).toBe('kubectl get authorizationpolicies.security.istio.io deny-all -n shop -o yaml');
    expect(citationTarget(c, { kubeConsoleUrl: 'https://console.example.com/ns/{namespace}/{kind}/{name}' })).toEqual({ url: 'https://console.example.com/ns/shop/deployment/checkout' });
    expect(citationTarget(objectCitation('Secret', 'shop', 'sh.helm.release.v1.checkout.v7', 'data.release')).command).toBe('kubectl describe secrets sh.helm.release.v1.checkout.v7 -n shop');
    expect(citationTarget(c, { kubectl: false })).toEqual({});
    expect(citationTarget({ source: 'kubernetes', ref: 'events in shop since 14:00' })).toEqual({});
    expect(kubectlGet({ group: '', plural: 'pods', name: 'x; rm -rf /', namespace: 'shop' })).toBeUndefined();
  });

  it('renders a command citation as a code span with the field, and a linked one as a link; both valid Block Kit', () => {
    const cmd = renderCitation(linkCitation(objectCitation('Deployment', 'shop', 'checkout', 'spec.replicas')));
    expect(cmd).toBe('_kubernetes_ `kubectl get deployments.apps checkout -n shop -o yaml` field `spec.replicas`');
    const link = renderCitation(linkCitation({ source: 'prometheus', ref: 'up{job="checkout"}', range }, { prometheusUrl: 'https://prom' }));
    expect(link).toMatch(/^_prometheus_ <https:\/\/prom\/graph\?g0\.expr=up%7Bjob%3D%22checkout%22%7D[^|>]*\|up\{job="checkout"\}> \(<!date\^1772632800\^\{date_short_pretty\} \{time\}\|2026-03-04 14:00 UTC>–<!date\^1772634600\^\{time\}\|14:30 UTC>\)$/);
    expect(validateBlocks([contextBlock([cmd]), contextBlock([link])], 'message')).toEqual([]);
  });

  it('shows times in the reader’s zone with a dated fallback', () => {
    expect(slackDateTime(new Date('2026-03-04T14:05:09Z'))).toBe('<!date^1772633109^{date_short_pretty} {time}|2026-03-04 14:05 UTC>');
  });

  it('reads the link settings from the environment, kubectl by default', () => {
    const base = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1', VIGIL_ALERT_CHANNELS: 'C0ALERTS' };
    expect(loadConfig(base).links).toEqual({ githubUrl: 'https://github.com', kubectl: true });
    const full = loadConfig({ ...base, PROMETHEUS_URL: 'http://prom:9090', PROMETHEUS_PUBLIC_URL: 'https://prom', GRAFANA_URL: 'https://grafana', GRAFANA_PROMETHEUS_DATASOURCE: 'p', SLACK_WORKSPACE_URL: 'https://acme.slack.com', VIGIL_KUBE_CONSOLE_URL: 'https://console/ns/{namespace}/{kind}/{name}', VIGIL_KUBE_CITATIONS: 'ref' }).links;
    expect(full).toMatchObject({ prometheusUrl: 'https://prom', grafanaUrl: 'https://grafana', grafanaPrometheusDatasource: 'p', slackWorkspaceUrl: 'https://acme.slack.com', kubeConsoleUrl: 'https://console/ns/{namespace}/{kind}/{name}', kubectl: false });
  });
});
