import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Redactor } from '../redact/index.js';
import { cleanDeep } from '../store/sanitize.js';
import type { ChangeEvent } from './types.js';

/**
 * Feature-flag changes arrive on `POST /webhooks/flags` and are stored as change events. Two shapes:
 * Vigil's generic one (any flag tool or a CI step can send it), and LaunchDarkly's audit-log webhook.
 *
 * Generic: `{ "flag": "new-checkout-flow", "after": "on", "before": "off", "actor": "alice",
 *             "environment": "production", "service": "checkout", "at": "2026-11-29T14:01:30Z", "id": "evt-123" }`
 * (or an array of them).
 */
const scalar = z.union([z.string(), z.boolean(), z.number()]).transform(String);
const generic = z.object({
  flag: z.string().min(1).max(200),
  after: scalar,
  before: scalar.optional(),
  actor: z.string().min(1).max(200),
  environment: z.string().max(100).optional(),
  service: z.string().max(200).optional(),
  at: z.iso.datetime({ offset: true }).optional(),
  id: z.string().max(200).optional(),
});
const launchDarkly = z.object({
  _id: z.string(),
  kind: z.literal('flag'),
  name: z.string(),
  date: z.number(),
  titleVerb: z.string().optional(),
  member: z.object({ email: z.string().optional(), firstName: z.string().optional() }).optional(),
});

export type FlagsWebhookResult = { status: number; body: Record<string, unknown>; changes: { change: ChangeEvent; dedupeKey: string }[] };

function fromGeneric(g: z.infer<typeof generic>, now: Date): { change: ChangeEvent; dedupeKey: string } {
  const at = g.at ? new Date(g.at) : now;
  return {
    change: {
      at,
      actor: g.actor,
      kind: 'flag',
      target: { kind: 'FeatureFlag', name: g.flag },
      before: g.before,
      after: g.after,
      source: 'flags',
      summary: `flag ${g.flag}${g.environment ? ` (${g.environment})` : ''}: ${g.before !== undefined ? `${g.before} → ` : ''}${g.after} by ${g.actor}`,
      citation: { source: 'flags', ref: `webhook ${g.id ?? ''}`.trim() },
    },
    dedupeKey: `flags:${g.id ?? createHash('sha256').update(JSON.stringify(g)).digest('hex').slice(0, 24)}`,
  };
}

function fromLaunchDarkly(l: z.infer<typeof launchDarkly>): { change: ChangeEvent; dedupeKey: string } {
  const actor = l.member?.email ?? l.member?.firstName ?? 'launchdarkly';
  return {
    change: {
      at: new Date(l.date),
      actor,
      kind: 'flag',
      target: { kind: 'FeatureFlag', name: l.name },
      after: l.titleVerb,
      source: 'flags',
      summary: `flag ${l.name}: ${l.titleVerb ?? 'changed'} by ${actor}`,
      citation: { source: 'flags', ref: `launchdarkly audit ${l._id}` },
    },
    dedupeKey: `flags:ld:${l._id}`,
  };
}

function tokenMatches(expected: string, header: string | undefined): boolean {
  const got = header?.replace(/^Bearer\s+/i, '') ?? '';
  const a = Buffer.from(createHash('sha256').update(expected).digest('hex'));
  const b = Buffer.from(createHash('sha256').update(got).digest('hex'));
  return got.length > 0 && timingSafeEqual(a, b);
}

/** Validate and translate one webhook delivery; storing is the caller's. Bad input: a 4xx naming the problem. */
export function parseFlagsWebhook(raw: string, authorization: string | undefined, token: string, redactor: Redactor, now: Date): FlagsWebhookResult {
  if (!tokenMatches(token, authorization)) return { status: 401, body: { ok: false, error: 'missing or wrong bearer token' }, changes: [] };
  let body: unknown;
  try {
    // Cleaned at once: a `\ud800` or `\u0000` escape is valid JSON but not storable text (store/sanitize.ts).
    body = cleanDeep(JSON.parse(raw) as unknown);
  } catch {
    return { status: 400, body: { ok: false, error: 'body is not JSON' }, changes: [] };
  }
  const items = Array.isArray(body) ? body : [body];
  if (items.length === 0 || items.length > 100) return { status: 400, body: { ok: false, error: 'send 1 to 100 flag changes' }, changes: [] };
  const changes: { change: ChangeEvent; dedupeKey: string }[] = [];
  for (const [i, item] of items.entries()) {
    const g = generic.safeParse(item);
    if (g.success) {
      changes.push(fromGeneric(g.data, now));
      continue;
    }
    const l = launchDarkly.safeParse(item);
    if (l.success) {
      changes.push(fromLaunchDarkly(l.data));
      continue;
    }
    const problems = g.error.issues.map((x) => `${[i, ...x.path].join('.')}: ${x.message}`).slice(0, 5);
    return { status: 400, body: { ok: false, error: 'not a flag change Vigil understands (generic or LaunchDarkly)', problems }, changes: [] };
  }
  return { status: 202, body: { ok: true, accepted: changes.length }, changes: changes.map((c) => ({ ...c, change: redactor.redactValue(c.change) })) };
}
