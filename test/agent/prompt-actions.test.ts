/**
 * The system prompt tells the model each mitigation's params; the catalog validates them. A renamed or
 * added param in an action must show up in the prompt, or every model proposal of it is refused.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SYSTEM_PROMPT } from '../../src/agent/prompt.js';
import { ACTIONS } from '../../src/actions/registry.js';
import { flipFlagParams } from '../../src/actions/catalog/flip-flag.js';
import { revertPrParams } from '../../src/actions/catalog/revert-pr.js';

/** The top-level keys of an action's params schema (through refinements). */
function keys(schema: z.ZodType): string[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown> };
  return Object.keys(json.properties ?? {});
}

const line = SYSTEM_PROMPT.split('\n').find((l) => l.includes("mitigation's params"))!;
const listed = new Map([...line.matchAll(/([a-z_]+) \{([^}]*)\}/g)].map((m) => [m[1]!, m[2]!.split(',').map((p) => p.trim().replace(/[?:].*$/, '')).filter(Boolean)]));

describe('the prompt lists every action with its params', () => {
  const schemas: Record<string, z.ZodType> = {
    ...Object.fromEntries(Object.entries(ACTIONS).map(([name, a]) => [name, (a as unknown as { params: z.ZodType }).params])),
    flip_flag: flipFlagParams,
    revert_pr: revertPrParams,
  };
  it.each(Object.keys(schemas))('%s', (name) => {
    expect(listed.has(name), `${name} missing from: ${line}`).toBe(true);
    // Optional params (a source, an environment) may go unsaid; every param the prompt names exists.
    const real = keys(schemas[name]!);
    for (const p of listed.get(name)!) expect(real).toContain(p);
    const required = (z.toJSONSchema(schemas[name]!, { io: 'input', unrepresentable: 'any' }) as { required?: string[] }).required ?? [];
    for (const r of required) expect(listed.get(name)).toContain(r);
  });
});
