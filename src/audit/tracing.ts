import { context as otelContext, trace, SpanKind, SpanStatusCode, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor, SimpleSpanProcessor, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from '@opentelemetry/semantic-conventions/incubating';
import type { AgentEvent } from '../agent/loop.js';

/**
 * Traces of what Vigil did: one trace per investigation run, a span per step, per tool call and per
 * model call (GenAI semantic conventions). Exported over OTLP/HTTP when an endpoint is configured; tests
 * hand in an in-memory exporter. The provider is not registered globally: spans are parented
 * explicitly, so nothing else in the process (e.g. the Anthropic SDK, whose own spans are off) reports
 * into Vigil's traces by accident.
 */
const VERSION = '0.1.0';

export interface Tracing {
  tracer: Tracer;
  shutdown(): Promise<void>;
}

export function createTracing(opts: { otlpEndpoint?: string; headers?: Record<string, string>; exporter?: SpanExporter; serviceName?: string }): Tracing | undefined {
  const processors = opts.exporter
    ? [new SimpleSpanProcessor({ exporter: opts.exporter })]
    : opts.otlpEndpoint
      ? [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: opts.otlpEndpoint, ...(opts.headers ? { headers: opts.headers } : {}) }) })]
      : [];
  if (processors.length === 0) return undefined;
  // service.name is `vigil` unless OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES say otherwise (the
  // SDK's env detector reads both, as every OpenTelemetry SDK does).
  const resource = resourceFromAttributes({ 'service.name': opts.serviceName ?? 'vigil', 'service.version': VERSION }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({ resource, spanProcessors: processors });
  return { tracer: provider.getTracer('vigil', VERSION), shutdown: () => provider.shutdown() };
}

/** A span under an explicit parent context; `run` gets the span and the context to parent children on. */
export async function inSpan<T>(tracer: Tracer | undefined, name: string, parent: Context, attrs: Record<string, string | number | boolean>, run: (span: Span | undefined, ctx: Context) => Promise<T>): Promise<T> {
  if (!tracer) return run(undefined, parent);
  const span = tracer.startSpan(name, { attributes: attrs }, parent);
  const ctx = trace.setSpan(parent, span);
  try {
    return await run(span, ctx);
  } catch (err) {
    span.recordException(err instanceof Error ? err : new Error(String(err)));
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message.slice(0, 200) : 'error' });
    throw err;
  } finally {
    span.end();
  }
}

export const rootContext = (): Context => otelContext.active();

/**
 * The agent reports tool and model calls after they finish (with their duration): record each as a
 * span under the current step, back-dated to when it started.
 */
export function recordAgentEvent(tracer: Tracer | undefined, parent: Context, e: AgentEvent, now = Date.now()): void {
  if (!tracer || (e.type !== 'tool_call' && e.type !== 'model_call')) return;
  const start = new Date(now - e.ms);
  if (e.type === 'tool_call') {
    const span = tracer.startSpan(`execute_tool ${e.name}`, { kind: SpanKind.INTERNAL, startTime: start, attributes: { [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool', [ATTR_GEN_AI_TOOL_NAME]: e.name, 'vigil.tool.status': e.status, ...(e.citationRef ? { 'vigil.citation': e.citationRef } : {}) } }, parent);
    if (e.status !== 'success' && e.status !== 'no_data') span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(new Date(now));
    return;
  }
  // A model call leaves the process: span kind CLIENT, as the GenAI conventions ask (tool calls stay INTERNAL).
  const span = tracer.startSpan(`chat ${e.model}`, {
    kind: SpanKind.CLIENT,
    startTime: start,
    attributes: {
      [ATTR_GEN_AI_RESPONSE_MODEL]: e.model,
      ...(e.stopReason ? { [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [e.stopReason] } : {}),
      [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
      [ATTR_GEN_AI_PROVIDER_NAME]: e.provider,
      [ATTR_GEN_AI_REQUEST_MODEL]: e.model,
      ...(e.responseId ? { [ATTR_GEN_AI_RESPONSE_ID]: e.responseId } : {}),
      ...(e.usage ? { [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: e.usage.inputTokens, [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: e.usage.outputTokens } : {}),
      ...(e.costUsd !== undefined ? { 'vigil.cost_usd': e.costUsd } : {}),
    },
  }, parent);
  if (e.outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: e.error?.slice(0, 200) ?? e.outcome });
  span.end(new Date(now));
}
