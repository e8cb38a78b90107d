import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PrometheusClient } from '../../../src/evidence/prometheus/client.js';
import { prometheusTools } from '../../../src/evidence/prometheus/tools.js';

describe('prometheus tools', () => {
  const tools = prometheusTools(new PrometheusClient({ baseUrl: 'http://127.0.0.1:9' }));

  it('are read-only, snake_case, and describe every parameter for the model', () => {
    expect(tools.map((t) => t.name)).toEqual(['prometheus_query', 'prometheus_query_range']);
    for (const tool of tools) {
      expect(tool.effect).toBe('read');
      const schema = z.toJSONSchema(tool.parameters) as { properties: Record<string, { description?: string }>; required?: string[] };
      expect(schema.required).toEqual(['query']);
      for (const [name, prop] of Object.entries(schema.properties)) expect(prop.description, `${tool.name}.${name}`).toBeTruthy();
    }
  });

  it('reject times that are not RFC 3339', () => {
    expect(tools[0]!.parameters.safeParse({ query: 'up', time: 'yesterday' }).success).toBe(false);
    expect(tools[1]!.parameters.safeParse({ query: 'up', start: '2026-01-01T00:00:00Z', step_seconds: 15 }).success).toBe(true);
  });
});
