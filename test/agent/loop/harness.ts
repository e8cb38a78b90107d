/**
 * Shared setup of the agent-loop tests: a scenario world (fake Kubernetes, and the real Prometheus / fake
 * Loki / fake GitHub when the scenario has them), deterministic triage run on it through the real
 * adapters, and the evidence tools the model may call — exactly what the runner hands `runAgent`.
 * Plus helpers to read what the fake model servers received (tool results, the brief).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { AlertMessage } from '../../../src/alerts/types.js';
import { parseAlertMessage } from '../../../src/alerts/parse/index.js';
import { GitHubReader } from '../../../src/evidence/github/client.js';
import { KubeReader } from '../../../src/evidence/kubernetes/client.js';
import { LokiClient } from '../../../src/evidence/loki/client.js';
import { PrometheusClient } from '../../../src/evidence/prometheus/client.js';
import type { EvidenceTool } from '../../../src/evidence/tool.js';
import { evidenceTools } from '../../../src/evidence/tools.js';
import { investigateDeterministically, type InvestigationOutcome } from '../../../src/incidents/investigate.js';
import { catalogSchema, ServiceCatalog } from '../../../src/knowledge/catalog.js';
import { createRedactor, type Redactor } from '../../../src/redact/index.js';
import { startFakeKube, type FakeKube, type WorldLogs } from '../../fakes/kubernetes/server.js';
import { loadScenario, type Scenario } from '../../scenarios/load.js';
import { READER_TOKEN, startWorld, type World } from '../../support/world.js';
import type { AnthropicReply } from '../../fakes/models/anthropic.js';
import type { RecordedRequest } from '../../fakes/models/script.js';

export const SCENARIOS = join(fileURLToPath(new URL('../../scenarios/', import.meta.url)));

export interface Investigated {
  scenario: Scenario;
  outcome: InvestigationOutcome;
  tools: EvidenceTool[];
  redactor: Redactor;
  /** Every secret planted in the world (the scenario's and the test's own). */
  secrets: string[];
  close(): Promise<void>;
}

/** A secret the tests plant in a pod log on top of the scenario's own. */
export const PLANTED_LOG_SECRET = 'Planted-Agent-Secret-93jf8Q2x';
export const PLANTED_LOG_LINE = `level=error msg="db auth failed" password=${PLANTED_LOG_SECRET}`;

async function triage(scenario: Scenario, sources: { kube: KubeReader; prometheus?: PrometheusClient; loki?: LokiClient; github?: GitHubReader }, redactor: Redactor) {
  const parsed = parseAlertMessage(scenario.alert as AlertMessage, { receivedAt: scenario.onset });
  if (parsed.kind !== 'alert') throw new Error(`scenario alert did not parse: ${parsed.reason}`);
  const catalog = scenario.catalog ? new ServiceCatalog(catalogSchema.parse(scenario.catalog).services) : undefined;
  return investigateDeterministically(parsed.alert, scenario.onset, { ...sources, ...(catalog ? { catalog } : {}), redactor });
}

/**
 * The demo world on a bare fake Kubernetes, with {@link PLANTED_LOG_LINE} appended to a storefront pod's
 * log, so a test can follow a secret from a pod log to the model's wire.
 */
export async function investigateDemo(): Promise<Investigated & { kube: FakeKube; storefrontPod: string }> {
  const scenario = await loadScenario(join(SCENARIOS, 'demo-checkout-scaled-to-zero'));
  const storefrontPod = 'storefront-6b7f9c8d4-2kx8v';
  const key = `shop/${storefrontPod}/storefront`;
  const logs: WorldLogs = { ...scenario.logs };
  const stamp = new Date(scenario.onset.getTime() - 3000).toISOString();
  logs[key] = { ...logs[key]!, current: `${logs[key]!.current.trimEnd()}\n${stamp} ${PLANTED_LOG_LINE}\n` };
  const kube = await startFakeKube({ objects: scenario.objects, logs });
  const redactor = createRedactor();
  const reader = new KubeReader(kube.kubeConfigFor(READER_TOKEN));
  const outcome = await triage(scenario, { kube: reader }, redactor);
  return {
    scenario,
    outcome,
    tools: evidenceTools({ kube: reader }),
    redactor,
    secrets: [...scenario.plantedSecrets, PLANTED_LOG_SECRET],
    kube,
    storefrontPod,
    close: () => kube.close(),
  };
}

/** Any scenario through the offline world's sources (the app itself is not started). */
export async function investigateScenario(id: string): Promise<Investigated & { world: World }> {
  const world = await startWorld({ scenarioDir: join(SCENARIOS, id), startApp: false });
  if (world.skipped.length > 0) {
    await world.close();
    throw new Error(`scenario ${id} needs: ${world.skipped.join('; ')}`);
  }
  const redactor = createRedactor();
  const kube = new KubeReader(world.kube.kubeConfigFor(READER_TOKEN));
  const prometheus = world.prometheus ? new PrometheusClient({ baseUrl: world.prometheus.url }) : undefined;
  const loki = world.loki ? new LokiClient({ baseUrl: world.loki.url }) : undefined;
  const github = world.github ? new GitHubReader({ token: 'ghp-fake-reader', baseUrl: world.github.url, logger: pino({ level: 'silent' }) }) : undefined;
  const outcome = await triage(world.scenario, { kube, prometheus, loki, github }, redactor);
  const tools = evidenceTools({ kube, ...(prometheus ? { prometheus } : {}), ...(loki ? { loki } : {}), ...(github ? { github } : {}) });
  return { scenario: world.scenario, outcome, tools, redactor, secrets: world.scenario.plantedSecrets, world, close: () => world.close() };
}

/** A tool result as the fake Anthropic API received it, parsed back from the loop's JSON envelope. */
export interface SentToolResult {
  toolUseId: string;
  isError: boolean;
  text: string;
  json?: { status: string; cite: string; evidence?: { summary: string; cite: string }[]; data?: unknown; message?: string; error?: string };
}

/** The tool results in the newest user turn of an Anthropic request body. */
export function anthropicToolResults(body: any): SentToolResult[] {
  const last = body.messages.at(-1);
  return (last.content as any[])
    .filter((b) => b.type === 'tool_result')
    .map((b) => {
      const text = typeof b.content === 'string' ? b.content : (b.content as any[]).map((c) => c.text).join('');
      let json: SentToolResult['json'];
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { toolUseId: b.tool_use_id, isError: !!b.is_error, text, ...(json ? { json } : {}) };
    });
}

/** The text blocks of the newest user turn of an Anthropic request body. */
export function anthropicUserText(body: any): string {
  const last = body.messages.at(-1);
  return (last.content as any[]).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
}

/** Every `cite: …` the brief (first user message) offers. */
export function briefCites(body: any): string[] {
  const first = body.messages[0];
  const text = (first.content as any[]).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
  return [...text.matchAll(/cite: (\S[^\n]*?)$/gm)].map((m) => m[1]!.trim());
}

/** The tool results after the newest assistant turn of an OpenAI request body. */
export function openaiToolResults(body: any): SentToolResult[] {
  const msgs = body.messages as any[];
  const lastAssistant = msgs.map((m) => m.role).lastIndexOf('assistant');
  return msgs.slice(lastAssistant + 1).filter((m) => m.role === 'tool').map((m) => {
    const text = typeof m.content === 'string' ? m.content : (m.content as any[]).map((c) => c.text).join('');
    let json: SentToolResult['json'];
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { toolUseId: m.tool_call_id, isError: false, text, ...(json ? { json } : {}) };
  });
}

/** A scripted model step for the demo: describe checkout, then diagnose from what it returned. */
export const describeCheckout = (): AnthropicReply => ({ toolCalls: [{ name: 'k8s_describe', input: { kind: 'Deployment', namespace: 'shop', name: 'checkout' } }] });
export const submitFromDescribe = (req: RecordedRequest): AnthropicReply => {
  const [result] = anthropicToolResults(req.body);
  const cite = result!.json!.cite;
  return {
    toolCalls: [
      {
        name: 'submit_diagnosis',
        input: {
          summary: 'checkout runs 0 replicas since a kubectl scale; every checkout request fails.',
          hypotheses: [
            {
              title: 'checkout has no replicas: scaled to 0 by hand',
              status: 'supported',
              confidence: 0.9,
              component: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
              category: 'scaled-to-zero',
              mechanism: 'spec.replicas is 0 (written through the scale subresource); no pods, no endpoints.',
              facts: { replicas: 0 },
              scope: 'all checkout requests from storefront fail',
              affected: [{ kind: 'Service', namespace: 'shop', name: 'checkout' }],
              evidence: [{ stance: 'supports', summary: 'describe: replicas 0 desired, 0 ready', citation: cite }],
              mitigation: { action: 'scale', target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' }, params: { replicas: 3 }, command: 'kubectl scale deployment/checkout -n shop --replicas=3', rationale: 'restore the 3 replicas' },
            },
          ],
        },
      },
    ],
  };
};
