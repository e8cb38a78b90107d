/** The trace resource honours OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES; model spans are CLIENT with GenAI response attributes. */
import { SpanKind, context } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { createTracing, recordAgentEvent } from '../../src/audit/tracing.js';

const saved = { name: process.env['OTEL_SERVICE_NAME'], attrs: process.env['OTEL_RESOURCE_ATTRIBUTES'] };
afterEach(() => {
  for (const [k, v] of [['OTEL_SERVICE_NAME', saved.name], ['OTEL_RESOURCE_ATTRIBUTES', saved.attrs]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

function record(): ReturnType<InMemorySpanExporter['getFinishedSpans']> {
  const exporter = new InMemorySpanExporter();
  const tracing = createTracing({ exporter })!;
  recordAgentEvent(tracing.tracer, context.active(), { type: 'model_call', step: 1, provider: 'anthropic', model: 'claude-sonnet-4-5', mode: 'explore' as never, outcome: 'ok', stopReason: 'tool_use', usage: { inputTokens: 1200, outputTokens: 80, cacheReadTokens: 0, cacheWriteTokens: 0 }, responseId: 'msg_01', ms: 900 });
  recordAgentEvent(tracing.tracer, context.active(), { type: 'tool_call', step: 1, name: 'kube_get', status: 'success', ms: 40 } as never);
  return exporter.getFinishedSpans();
}

describe('trace conventions', () => {
  it('names the service vigil by default, and as the environment says', () => {
    delete process.env['OTEL_SERVICE_NAME'];
    delete process.env['OTEL_RESOURCE_ATTRIBUTES'];
    expect(record()[0]!.resource.attributes['service.name']).toBe('vigil');
    process.env['OTEL_SERVICE_NAME'] = 'vigil-prod-eu';
    process.env['OTEL_RESOURCE_ATTRIBUTES'] = 'deployment.environment.name=prod,k8s.cluster.name=eu-1';
    const attrs = record()[0]!.resource.attributes;
    expect(attrs).toMatchObject({ 'service.name': 'vigil-prod-eu', 'deployment.environment.name': 'prod', 'k8s.cluster.name': 'eu-1', 'service.version': '0.1.0' });
  });

  it('records model calls as CLIENT spans with the response model and finish reasons, tool calls as INTERNAL', () => {
    const [model, tool] = record();
    expect(model!.kind).toBe(SpanKind.CLIENT);
    expect(model!.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.response.model': 'claude-sonnet-4-5', 'gen_ai.response.finish_reasons': ['tool_use'], 'gen_ai.usage.input_tokens': 1200 });
    expect(tool!.kind).toBe(SpanKind.INTERNAL);
  });
});
