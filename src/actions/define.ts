/**
 * `defineAction`: a catalog file supplies name, description, zod params and `draft`; the plan, execute
 * and verify steps are shared, so every action gets the same checks, dry run, stamping and verification.
 */
import type { z } from 'zod';
import { executePlan } from './execute.js';
import { buildPlan } from './plan.js';
import { verifyPlan } from './verify.js';
import type { ActionDefinition } from './types.js';

export function defineAction<P extends z.ZodType>(spec: Pick<ActionDefinition<P>, 'name' | 'description' | 'params' | 'draft'>): ActionDefinition<P> {
  return {
    ...spec,
    effect: 'write',
    plan: (ctx, proposal) => buildPlan(spec as unknown as Pick<ActionDefinition, 'name' | 'params' | 'draft'>, ctx, proposal),
    execute: (executor, plan, guard) => executePlan(executor, plan, guard),
    verify: (reader, plan, options) => verifyPlan(reader, plan, options),
  };
}
