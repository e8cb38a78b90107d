/**
 * A private key printed over several log lines, read through the real adapters: the pod-logs tool (fake
 * Kubernetes API) and the Loki tool (fake Loki). No line of the key may reach a result, whether the key
 * is a stream's only content or interleaved with another stream's lines.
 */
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertMessage } from '../../src/alerts/types.js';
import { parseAlertMessage } from '../../src/alerts/parse/index.js';
import { KubeReader } from '../../src/evidence/kubernetes/client.js';
import { gatherKubeEvidence } from '../../src/evidence/kubernetes/gather.js';
import { kubernetesTools } from '../../src/evidence/kubernetes/tools/index.js';
import { LokiClient } from '../../src/evidence/loki/client.js';
import { createLokiQueryRangeTool } from '../../src/evidence/loki/tools.js';
import type { ToolResult } from '../../src/evidence/tool.js';
import { createRedactor } from '../../src/redact/index.js';
import { startFakeKube, type FakeKube } from '../fakes/kubernetes/server.js';
import { startFakeLoki, type FakeLoki } from '../fakes/loki/server.js';
import { SCENARIOS } from '../agent/loop/harness.js';
import { loadScenario } from '../scenarios/load.js';

const pemLines = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString().trimEnd().split('\n');
const body = pemLines.slice(1, -1);
const POD = 'storefront-6b7f9c8d4-2kx8v';

function expectNoKey(result: ToolResult): void {
  const text = JSON.stringify(result);
  for (const line of body) expect(text).not.toContain(line.slice(0, 20));
}

describe('k8s_pod_logs', () => {
  let kube: FakeKube;
  let onset: Date;
  beforeAll(async () => {
    const scenario = await loadScenario(join(SCENARIOS, 'demo-checkout-scaled-to-zero'));
    onset = scenario.onset;
    const key = `shop/${POD}/storefront`;
    const t0 = onset.getTime() - 10_000;
    const dump = ['entrypoint: loaded client key:', ...pemLines].map((l, i) => `${new Date(t0 + i).toISOString()} ${l}`).join('\n');
    const logs = { ...scenario.logs, [key]: { ...scenario.logs[key]!, current: `${scenario.logs[key]!.current.trimEnd()}\n${dump}\n` } };
    kube = await startFakeKube({ objects: scenario.objects, logs });
  });
  afterAll(() => kube?.close());

  it('no line of the key reaches the patterns, examples or last lines', async () => {
    const tool = kubernetesTools(new KubeReader(kube.kubeConfigFor('reader'))).find((t) => t.name === 'k8s_pod_logs')!;
    const result = await tool.execute(tool.parameters.parse({ namespace: 'shop', pod: POD, tailLines: 200 }), { redactor: createRedactor(), now: onset });
    expect(result.status).toBe('success');
    expectNoKey(result);
    expect(JSON.stringify(result)).toContain('[REDACTED:private_key:');
    expect(JSON.stringify(result)).toContain('connection refused');
  });
});

describe('deterministic triage: the crashed container logs it mines', () => {
  it('no line of the key reaches the patterns or the tail', async () => {
    const scenario = await loadScenario(join(SCENARIOS, 'crashloop-bad-release'));
    const key = 'shop/cart-7f9c4d8b6-h2xkp/cart';
    const previous = scenario.logs[key]!.previous!.trimEnd();
    const last = previous.split('\n').at(-1)!.slice(0, 20);
    const dump = ['panic: bad client key', ...pemLines].map((l) => `${last} ${l}`).join('\n');
    const kube = await startFakeKube({ objects: scenario.objects, logs: { ...scenario.logs, [key]: { ...scenario.logs[key]!, previous: `${previous}\n${dump}\n` } } });
    try {
      const parsed = parseAlertMessage(scenario.alert as AlertMessage, { receivedAt: scenario.onset });
      if (parsed.kind !== 'alert') throw new Error('scenario alert did not parse');
      const ev = await gatherKubeEvidence(new KubeReader(kube.kubeConfigFor('reader')), parsed.alert, scenario.onset, { redactor: createRedactor() });
      const logs = JSON.stringify(ev.containerLogs);
      expect(logs).toContain('panic: bad client key');
      for (const line of body) expect(logs).not.toContain(line.slice(0, 20));
    } finally {
      await kube.close();
    }
  });
});

describe('loki_query_range', () => {
  let loki: FakeLoki;
  const from = new Date('2024-01-29T10:00:00Z');
  const to = new Date('2024-01-29T10:05:00Z');
  beforeAll(async () => {
    const at = (ms: number) => new Date(from.getTime() + ms);
    const keyed = pemLines.map((l, i) => ({ ts: at(60_000 + i * 10), line: l }));
    const chatter = Array.from({ length: 200 }, (_, i) => ({ ts: at(59_000 + i * 5), line: `level=info msg="request handled" path=/api/orders/${i} status=200` }));
    loki = await startFakeLoki({
      streams: [
        { labels: { namespace: 'shop', app: 'checkout', container: 'init' }, entries: [{ ts: at(59_500), line: 'copying TLS material' }, ...keyed] },
        // Another stream whose lines fall between the key's lines once the streams are merged by time.
        { labels: { namespace: 'shop', app: 'checkout', container: 'app' }, entries: chatter },
      ],
    });
  });
  afterAll(() => loki?.close());

  it('no line of the key reaches the summary, even interleaved with another stream', async () => {
    const tool = createLokiQueryRangeTool(new LokiClient({ baseUrl: loki.url, retries: 0 }));
    const result = await tool.execute({ query: '{namespace="shop", app="checkout"}', start: from.toISOString(), end: to.toISOString() }, { redactor: createRedactor(), now: to });
    expect(result.status).toBe('success');
    expectNoKey(result);
    expect(JSON.stringify(result)).toContain('request handled');
  });
});
