/**
 * Scenarios whose cause no deterministic analyzer covers (`model_needed: true`): the loop, driven by a
 * scripted investigator on the fake Anthropic API, reaches the cause through the real tools against the
 * scenario's world (fake Kubernetes, real Prometheus, fake Loki and GitHub). Each script issues the tool
 * calls a good investigator would, reads what they returned (values, cites) and submits a diagnosis
 * citing it. The combined board (deterministic + model findings) is graded with the nine questions.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../src/agent/loop.js';
import { defaultLabels } from '../../../src/agent/prompt.js';
import { AnthropicProvider } from '../../../src/agent/providers/index.js';
import { expectedSchema, gradeDiagnosis, type GradedHypothesis } from '../../../src/eval/questions.js';
import type { Finding } from '../../../src/triage/types.js';
import { startFakeAnthropic, type AnthropicReply, type FakeAnthropic } from '../../fakes/models/anthropic.js';
import type { RecordedRequest } from '../../fakes/models/script.js';
import { anthropicToolResults, briefCites, investigateScenario, SCENARIOS, type SentToolResult } from './harness.js';

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** One investigator turn: what it read so far (all tool results, the brief's cites) → its next reply. */
type Turn = (seen: { results: SentToolResult[]; brief: string[]; req: RecordedRequest }) => AnthropicReply;

interface Plan {
  id: string;
  turns: Turn[];
}

const calls = (...c: [string, Record<string, unknown>][]): AnthropicReply => ({ toolCalls: c.map(([name, input]) => ({ name, input })) });
const submit = (input: unknown): AnthropicReply => ({ toolCalls: [{ name: 'submit_diagnosis', input }] });

/** The series of a successful `prometheus_query` result. */
function vector(json: NonNullable<SentToolResult['json']>): { metric: Record<string, string>; value: number }[] {
  return (json.data as { result: { metric: Record<string, string>; value: number }[] }).result;
}

function ok(r: SentToolResult | undefined, what: string): NonNullable<SentToolResult['json']> {
  if (!r?.json || r.json.status !== 'success') throw new Error(`${what}: expected a successful tool result, got ${r?.text.slice(0, 400)}`);
  return r.json;
}

/** The brief's cite that contains `fragment` (a deterministic finding's evidence or a change). */
function briefCite(brief: string[], fragment: string): string {
  const c = brief.find((x) => x.includes(fragment));
  if (!c) throw new Error(`no cite with ${fragment} in the brief: ${brief.join(' | ')}`);
  return c;
}

const diskFull: Plan = {
  id: 'disk-full-volume-writes-fail',
  turns: [
    // The logs in the brief say "No space left on device": check the database's volume, its log, its claim.
    () =>
      calls(
        ['prometheus_query', { query: 'kubelet_volume_stats_used_bytes{namespace="orders"} / kubelet_volume_stats_capacity_bytes{namespace="orders"}' }],
        ['k8s_pod_logs', { namespace: 'orders', pod: 'orders-db-0', tailLines: 100 }],
        ['k8s_storage', { namespace: 'orders' }],
      ),
    ({ results, brief }) => {
      const [usage, log, storage] = results;
      const u = ok(usage, 'volume usage');
      const series = vector(u).find((s) => s.metric['persistentvolumeclaim'] === 'data-orders-db-0');
      if (!series) throw new Error(`no usage for data-orders-db-0: ${usage!.text.slice(0, 400)}`);
      const l = ok(log, 'orders-db log');
      expect(log!.text).toContain('No space left on device');
      const s = ok(storage, 'storage');
      return submit({
        summary: 'orders-db volume data-orders-db-0 is 100% full; Postgres PANICs on WAL writes and orders-api order writes fail.',
        hypotheses: [
          {
            title: 'orders-db data volume full: WAL writes fail with ENOSPC',
            status: 'supported',
            confidence: 0.9,
            component: { kind: 'PersistentVolumeClaim', namespace: 'orders', name: 'data-orders-db-0' },
            category: 'disk-full',
            mechanism: 'PVC data-orders-db-0 is 100% used; each COMMIT that needs a WAL segment PANICs and Postgres crash-restarts its backends.',
            facts: { pvc: 'data-orders-db-0', usedPercent: Math.round(series.value * 100) },
            scope: 'orders-api order writes (POST /v1/orders) fail with 500.',
            affected: [
              { kind: 'StatefulSet', namespace: 'orders', name: 'orders-db' },
              { kind: 'Service', namespace: 'orders', name: 'orders-db' },
              { kind: 'Deployment', namespace: 'orders', name: 'orders-api' },
            ],
            evidence: [
              { stance: 'supports', summary: `data-orders-db-0 used/capacity = ${series.value}`, citation: u.cite },
              { stance: 'supports', summary: 'Postgres: could not write to file pg_wal/xlogtemp: No space left on device', citation: l.cite },
              { stance: 'supports', summary: 'PVC data-orders-db-0 Bound, 50Gi', citation: s.cite },
            ],
          },
          {
            title: 'orders-api 2.8.1 deploy',
            status: 'ruled_out',
            confidence: 0.1,
            component: { kind: 'Deployment', namespace: 'orders', name: 'orders-api' },
            category: 'deploy-regression',
            mechanism: 'deployed 30 min before the alert',
            facts: {},
            scope: 'orders-api',
            affected: [],
            evidence: [
              { stance: 'refutes', summary: '24 min of clean writes after the deploy; errors are ENOSPC from the database', citation: briefCite(brief, 'orders-api-7f8b9c6d5') },
            ],
            reason: 'errors start when the volume filled, not at the deploy; a rollback keeps the volume full',
          },
        ],
      });
    },
  ],
};

const clockSkew: Plan = {
  id: 'clock-skew-token-rejected',
  turns: [
    // One pod of three failing: which pod, on which node, and is that node's clock right?
    () =>
      calls(
        ['k8s_list', { kind: 'pods', namespace: 'edge', labelSelector: 'app.kubernetes.io/name=auth-gateway' }],
        ['prometheus_query', { query: 'sum by (pod) (rate(http_requests_total{namespace="edge",service="auth-gateway",code="401"}[5m]))' }],
        ['prometheus_query', { query: 'node_ntp_offset_seconds{job="node-exporter"}' }],
      ),
    ({ results }) => {
      const ntp = ok(results[2], 'ntp offset');
      const skewed = vector(ntp).filter((s) => Math.abs(s.value) > 60);
      expect(skewed.map((s) => s.metric['instance'])).toEqual(['node-2']);
      return calls(['k8s_pod_logs', { namespace: 'edge', pod: 'auth-gateway-5c7d9f8b6-zq7tw', tailLines: 50 }], ['k8s_nodes', {}]);
    },
    ({ results }) => {
      const pods = ok(results[0], 'pods');
      const byPod = ok(results[1], '401 by pod');
      const ntp = ok(results[2], 'ntp offset');
      const node2 = vector(ntp).find((s) => s.metric['instance'] === 'node-2')!;
      const log = ok(results[3], 'pod log');
      expect(results[3]!.text).toContain('token used before issued');
      const nodes = ok(results[4], 'nodes');
      return submit({
        summary: 'node-2 clock is 340 s behind; auth-gateway on node-2 rejects fresh tokens as "used before issued".',
        hypotheses: [
          {
            title: "node-2's clock is 340 s slow: auth-gateway there rejects valid tokens",
            status: 'supported',
            confidence: 0.88,
            component: { kind: 'Node', name: 'node-2' },
            category: 'clock-skew',
            mechanism: 'NTP stopped on node-2; after a reboot its clock came from a slow RTC. Tokens issued < 340 s ago look issued in the future.',
            facts: { node: 'node-2', skewSeconds: Math.round(node2.value) },
            scope: 'auth-gateway pod on node-2 answers 401 to fresh tokens: a third of auth-gateway traffic.',
            affected: [
              { kind: 'Node', name: 'node-2' },
              { kind: 'Deployment', namespace: 'edge', name: 'auth-gateway' },
              { kind: 'Service', namespace: 'edge', name: 'auth-gateway' },
            ],
            evidence: [
              { stance: 'supports', summary: `node_ntp_offset_seconds{instance="node-2"} = ${node2.value}`, citation: ntp.cite },
              { stance: 'supports', summary: '401s come from pod auth-gateway-5c7d9f8b6-zq7tw only', citation: byPod.cite },
              { stance: 'supports', summary: 'token has invalid claims: token used before issued', citation: log.cite },
              { stance: 'supports', summary: 'auth-gateway-5c7d9f8b6-zq7tw runs on node-2', citation: pods.cite },
              { stance: 'supports', summary: 'node-2 Ready after a reboot', citation: nodes.cite },
            ],
          },
        ],
      });
    },
  ],
};

const corednsBroken: Plan = {
  id: 'coredns-config-broken',
  turns: [
    // checkout's own log first: what exactly fails?
    () => calls(['k8s_pod_logs', { namespace: 'shop', pod: 'checkout-84d6f7c9b5-j4k8p', tailLines: 50 }]),
    // Lookups time out: cluster DNS is the common dependency. Its logs and its configuration.
    ({ results }) => {
      expect(results[0]!.text).toMatch(/lookup payments-api\.payments\.svc\.cluster\.local: i\/o timeout/);
      return calls(['k8s_pod_logs', { namespace: 'kube-system', pod: 'coredns-6b9c5d8f7c-8kzl4', tailLines: 50 }], ['k8s_get', { kind: 'ConfigMap', namespace: 'kube-system', name: 'coredns' }]);
    },
    ({ results }) => {
      const appLog = ok(results[0], 'checkout log');
      const dnsLog = ok(results[1], 'coredns log');
      expect(results[1]!.text).toContain('10.0.0.20:53: i/o timeout');
      const cm = ok(results[2], 'coredns ConfigMap');
      expect(results[2]!.text).toContain('kubectl-edit');
      return submit({
        summary: 'ConfigMap kube-system/coredns was edited with `kubectl edit` to forward to 10.0.0.20, which does not answer: forwarded lookups SERVFAIL and checkout fails.',
        hypotheses: [
          {
            title: 'CoreDNS Corefile forwards to 10.0.0.20 (kubectl edit): forwarded lookups time out',
            status: 'supported',
            confidence: 0.87,
            component: { kind: 'ConfigMap', namespace: 'kube-system', name: 'coredns' },
            category: 'dns-failure',
            mechanism: 'The Corefile forward block was changed to an address nobody answers on; CoreDNS reloaded it and answers SERVFAIL for every forwarded query.',
            facts: { configMap: 'coredns', key: 'Corefile', upstream: '10.0.0.20', manager: 'kubectl-edit' },
            scope: 'Lookups that reach forward cluster-wide; checkout calls to payments-api and api.fraudscore.io fail.',
            affected: [
              { kind: 'ConfigMap', namespace: 'kube-system', name: 'coredns' },
              { kind: 'Deployment', namespace: 'kube-system', name: 'coredns' },
              { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
            ],
            evidence: [
              { stance: 'supports', summary: 'Corefile edited by kubectl-edit; forward . 10.0.0.20', citation: cm.cite },
              { stance: 'supports', summary: '[ERROR] plugin/errors: 2 … read udp …->10.0.0.20:53: i/o timeout', citation: dnsLog.cite },
              { stance: 'supports', summary: 'lookup payments-api.payments.svc.cluster.local: i/o timeout', citation: appLog.cite },
            ],
          },
          {
            title: 'a checkout deploy',
            status: 'ruled_out',
            confidence: 0.05,
            component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
            category: 'deploy-regression',
            mechanism: 'nothing changed in shop',
            facts: {},
            scope: 'checkout',
            affected: [],
            evidence: [{ stance: 'refutes', summary: 'the errors are DNS lookups timing out, not checkout code', citation: appLog.cite }],
            reason: 'checkout was not changed; its errors are DNS failures',
          },
        ],
      });
    },
  ],
};

const PLANS = [diskFull, clockSkew, corednsBroken];

describe.each(PLANS.map((p) => [p.id, p] as const))('model loop on scenario %s', (id, plan) => {
  it.skipIf(!existsSync(join(SCENARIOS, id, 'scenario.yaml')))(
    'the loop reaches the cause through the tools and the diagnosis passes the nine questions',
    async () => {
      const inv = await investigateScenario(id);
      try {
        const results: SentToolResult[] = [];
        const scriptErrors: string[] = [];
        const api = await startFakeAnthropic({
          name: id,
          script: plan.turns.map((turn) => (req: RecordedRequest) => {
            results.push(...anthropicToolResults(req.body));
            try {
              return turn({ results, brief: briefCites(req.body), req });
            } catch (err) {
              // A throw here would leave the HTTP request unanswered: record it and end the turn instead.
              scriptErrors.push(err instanceof Error ? err.message : String(err));
              return { text: 'script failed' };
            }
          }),
        });
        servers.push(api);
        const provider = new AnthropicProvider({ apiKey: 'test-anthropic-key', baseURL: api.url, maxRetries: 0 });
        const result = await runAgent({
          provider,
          tools: inv.tools,
          input: inv.outcome.input,
          findings: inv.outcome.findings,
          gaps: inv.outcome.gaps,
          redactor: inv.redactor,
          budget: { maxWallMs: 30_000 },
        });
        expect(scriptErrors).toEqual([]);
        expect(result.error).toBeUndefined();
        expect(result.status).toBe('completed');
        expect(api.remaining()).toBe(0);

        const expected = expectedSchema.parse(inv.scenario.expected);
        // The loop must reach the cause through its tools on its own: the deterministic finding of the
        // same cause (the analyzers now cover some of these) is left out of the board it is graded on.
        const board = [...inv.outcome.findings.filter((f) => f.status !== 'supported'), ...result.findings];
        const grade = gradeDiagnosis(graded(board), expected);
        expect(grade.notes).toEqual([]);
        expect(grade.pass).toBe(true);
        // The model's hypothesis leads the board: no deterministic analyzer found this cause.
        expect(grade.leading).toMatch(/^H\d+ model: /);
        expect(grade.mitigation).not.toBe('wrong');

        for (const req of api.requests) for (const secret of inv.secrets) expect(req.raw).not.toContain(secret);
      } finally {
        await inv.close();
      }
    },
    60_000,
  );
});

/** The board as the grader reads it (what `storedDiagnosis` would return after `storeFindings`). */
function graded(findings: Finding[]): GradedHypothesis[] {
  const labels = defaultLabels(findings);
  return findings.map((f) => ({
    label: labels[f.key]!,
    analyzer: f.analyzer,
    status: f.status,
    confidence: f.confidence,
    title: f.title,
    component: f.component,
    facts: f.facts ?? {},
    affected: f.affected ?? [],
    mitigation: f.mitigation ? { action: f.mitigation.action, params: f.mitigation.params } : undefined,
    supportingCitations: f.supporting.map((e) => e.citation.ref),
  }));
}
