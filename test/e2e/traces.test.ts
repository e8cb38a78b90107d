/**
 * Traces: one trace per investigation run with a span per step, and the model step's tool and model
 * calls as GenAI spans beneath it; the trace id is on the header card so a reviewer can jump to it.
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicProvider } from '../../src/agent/providers/index.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/models/anthropic.js';
import { startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO, threadText } from './helpers.js';

describe('OpenTelemetry traces of an investigation', () => {
  const exporter = new InMemorySpanExporter();
  let world: World;
  let model: FakeAnthropic;
  let ts: string;

  beforeAll(async () => {
    // The model reads one object, then answers without a diagnosis (twice): enough to trace tool and model calls.
    model = await startFakeAnthropic({
      apiKey: 'sk-ant-trace',
      script: [{ toolCalls: [{ name: 'k8s_events', input: { namespace: 'shop' } }] }, { text: 'no idea', stopReason: 'end_turn' }, { text: 'still no idea', stopReason: 'end_turn' }],
    });
    world = await startWorld({ scenarioDir: DEMO_SCENARIO, spanExporter: exporter, modelProvider: new AnthropicProvider({ apiKey: 'sk-ant-trace', baseURL: model.url, maxRetries: 0 }) });
    ({ ts } = await world.postAlert());
    await world.settle();
  });
  afterAll(async () => {
    await world?.close();
    await model?.close();
  });

  it('has the investigation as the root, each step beneath it, and GenAI spans beneath the model step', () => {
    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name === 'vigil.investigation')!;
    expect(root).toBeDefined();
    const trace = root.spanContext().traceId;
    const inTrace = spans.filter((s) => s.spanContext().traceId === trace);
    const steps = inTrace.filter((s) => s.name.startsWith('vigil.step '));
    expect(steps.map((s) => s.name)).toEqual(['vigil.step created', 'vigil.step announced', 'vigil.step triaged', 'vigil.step deepened']);
    for (const s of steps) expect(s.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    const modelStep = steps.find((s) => s.name === 'vigil.step triaged')!;
    const tool = inTrace.find((s) => s.name === 'execute_tool k8s_events')!;
    expect(tool.attributes['gen_ai.operation.name']).toBe('execute_tool');
    expect(tool.parentSpanContext?.spanId).toBe(modelStep.spanContext().spanId);
    const chats = inTrace.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    expect(chats.length).toBeGreaterThanOrEqual(2);
    expect(chats[0]!.attributes['gen_ai.provider.name']).toBe('anthropic');
    expect(chats[0]!.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
  });

  it('shows the trace id on the header card', () => {
    const root = exporter.getFinishedSpans().find((s) => s.name === 'vigil.investigation')!;
    expect(threadText(world.slack, ts)[0]).toMatch(new RegExp(`trace \x60?${root.spanContext().traceId}`));
  });
});
