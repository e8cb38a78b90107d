import { z } from 'zod';
import { parseDuration } from './duration.js';
import { ACTION_TYPES } from './types.js';

/**
 * The policy file (`deploy/policy.example.yaml` shows every field). Objects are strict so a typo such
 * as `approval: 2` is an error instead of a silently ignored key. Messages are written to follow
 * `<file>:<line>: <path>: `, e.g. `policy.yaml:14: rules[1].approvals: expected a whole number ≥ 1`.
 */

function wholeNumber(min: number, max?: number) {
  const msg = max === undefined ? `expected a whole number ≥ ${min}` : `expected a whole number from ${min} to ${max}`;
  const n = z.number({ error: msg }).int(msg).min(min, msg);
  return max === undefined ? n : n.max(max, msg);
}

const DURATION_HINT = 'expected a duration such as 30m, 1h or 1h30m';

const duration = z.string({ error: DURATION_HINT }).transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: `${DURATION_HINT}, got "${text}"` });
    return z.NEVER;
  }
  return ms;
});

const risk = wholeNumber(0, 100);

const name = (what: string) => z.string({ error: `expected ${what}` }).trim().min(1, `expected ${what}`);

const list = (what: string) =>
  z.array(name(what), { error: `expected a list of ${what}s` }).min(1, `expected at least one ${what}`);

const action = z.enum(ACTION_TYPES, {
  error: (iss) => `unknown action ${JSON.stringify(iss.input)}; expected one of ${ACTION_TYPES.join(', ')}`,
});

/** Slack user group ids start with S; `owner` is the owning team of the service (from the catalog). */
const approverGroup = z
  .string({ error: 'expected a Slack user group id such as S0123ABCD, or owner' })
  .regex(/^(S[A-Z0-9]{2,}|owner)$/, 'expected a Slack user group id such as S0123ABCD, or owner');

const userId = z
  .string({ error: 'expected a Slack user id such as U0123ABCD' })
  .regex(/^[UW][A-Z0-9]{2,}$/, 'expected a Slack user id such as U0123ABCD');

const limits = z.strictObject(
  {
    perTarget: z
      .strictObject({ max: wholeNumber(1), window: duration }, { error: 'expected { max: <number>, window: <duration> }' })
      .optional(),
    maxPods: wholeNumber(1).optional(),
    maxWorkloads: wholeNumber(1).optional(),
  },
  { error: 'expected a mapping with perTarget, maxPods and/or maxWorkloads' },
);

const match = z.strictObject(
  {
    actions: z.array(action, { error: 'expected a list of actions' }).min(1, 'expected at least one action').optional(),
    environments: list('environment name').optional(),
    namespaces: list('namespace (or glob)').optional(),
    services: list('service name (or glob)').optional(),
  },
  { error: 'expected a mapping with actions, environments, namespaces and/or services ({} matches everything)' },
);

const rule = z.strictObject(
  {
    name: name('a rule name').optional(),
    match,
    allowed: z.boolean({ error: 'expected true or false' }),
    reason: name('a sentence saying why').optional(),
    approvals: wholeNumber(1).optional(),
    approverGroups: z.array(approverGroup, { error: 'expected a list of Slack user group ids' }).min(1, 'expected at least one Slack user group id').optional(),
    selfApprove: z.boolean({ error: 'expected true or false' }).optional(),
    selfApproveMaxRisk: risk.optional(),
    maxRisk: risk.optional(),
    limits: limits.optional(),
  },
  { error: 'expected a rule: a mapping with match and allowed' },
);

/** What rules inherit when they leave a field out. Writes are never allowed by default. */
const defaults = z.strictObject(
  {
    allowed: z
      .literal(false, { error: 'must be false: writes are allowed only by explicit rules (read-only by default)' })
      .default(false),
    approvals: wholeNumber(1).default(1),
    approverGroups: z.array(approverGroup, { error: 'expected a list of Slack user group ids' }).min(1, 'expected at least one Slack user group id').optional(),
    selfApprove: z.boolean({ error: 'expected true or false' }).default(false),
    selfApproveMaxRisk: risk.default(30),
    // One workload per action unless a rule says otherwise.
    limits: limits.default({ maxWorkloads: 1 }),
  },
  { error: 'expected a mapping' },
);

const environment = z.strictObject(
  { namespaces: list('namespace'), frozen: z.boolean({ error: 'expected true or false' }).default(false) },
  { error: 'expected { namespaces: [...], frozen?: true|false }' },
);

const incident = z.strictObject(
  {
    mutationBudget: wholeNumber(1).default(5),
    loop: z
      .strictObject(
        { sameActionSameTarget: wholeNumber(1).default(2), window: duration.default(30 * 60_000) },
        { error: 'expected { sameActionSameTarget: <number>, window: <duration> }' },
      )
      .prefault({}),
  },
  { error: 'expected { mutationBudget, loop }' },
);

export const policyFileSchema = z
  .strictObject(
    {
      version: z.literal(1, { error: 'expected 1 (the only policy format version)' }),
      environments: z
        .record(z.string(), environment, { error: 'expected a mapping of environment name to { namespaces }' })
        .superRefine((envs, ctx) => {
          const envOf = new Map<string, string>();
          for (const [env, { namespaces }] of Object.entries(envs)) {
            namespaces.forEach((ns, i) => {
              const other = envOf.get(ns);
              if (other !== undefined && other !== env) ctx.addIssue({ code: 'custom', path: [env, 'namespaces', i], message: `namespace ${ns} is already in environment ${other}` });
              envOf.set(ns, env);
            });
          }
        })
        .default({}),
      neverWrite: z.array(name('a namespace or environment name'), { error: 'expected a list of namespaces or environment names' }).default([]),
      defaults: defaults.prefault({}),
      rules: z.array(rule, { error: 'expected a list of rules' }).default([]),
      incident: incident.prefault({}),
      admins: z.array(userId, { error: 'expected a list of Slack user ids' }).default([]),
    },
    { error: 'expected a mapping with version, environments, neverWrite, defaults, rules, incident, admins' },
  )
  // Checks across sections run once every section is well-formed (zod skips them otherwise).
  .superRefine((file, ctx) => {
    const declared = Object.keys(file.environments);
    file.rules.forEach((r, i) => {
      r.match.environments?.forEach((env, j) => {
        if (!declared.includes(env)) {
          ctx.addIssue({
            code: 'custom',
            path: ['rules', i, 'match', 'environments', j],
            message: `unknown environment ${env}; ${declared.length ? `declared: ${declared.join(', ')}` : 'no environments are declared'}`,
          });
        }
      });
      if (r.allowed && !r.approverGroups && !file.defaults.approverGroups) {
        ctx.addIssue({
          code: 'custom',
          path: ['rules', i, 'approverGroups'],
          message: 'is required when allowed is true (here or in defaults): which Slack user groups may approve?',
        });
      }
    });
  });

export type PolicyFile = z.infer<typeof policyFileSchema>;
