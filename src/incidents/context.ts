import { z } from 'zod';

/** Investigation.context: small, redacted facts the runner carries between steps (JSON in the DB). */
export const investigationContextSchema = z
  .object({
    target: z.object({ namespace: z.string(), kind: z.string(), name: z.string() }).optional(),
    /** The OpenTelemetry trace of the investigation's first run, shown on the header card. */
    traceId: z.string().optional(),
    /** Alert post → first card in the thread, in ms. */
    firstCardMs: z.number().optional(),
    /** Reads that failed or were not possible; shown on the board as "could not check". */
    gaps: z.array(z.string()).optional(),
    notice: z.string().optional(),
    /** The owning team from the service catalog (a Slack user group id). */
    owner: z.string().optional(),
    /** The model step's outcome and cost, when a model is configured. */
    model: z
      .object({
        provider: z.string(),
        name: z.string(),
        status: z.string(),
        steps: z.number(),
        toolCalls: z.number(),
        inputTokens: z.number(),
        outputTokens: z.number(),
        costUsd: z.number(),
        summary: z.string().optional(),
        /** The shared token caps as this run left them (incidents/spend.ts): what the card's budget line shows. */
        spend: z
          .object({ incidentTokens: z.number(), incidentCap: z.number(), dayTokens: z.number(), dayCap: z.number(), exhausted: z.enum(['incident', 'day']).optional() })
          .optional(),
      })
      .optional(),
    /** Set when no hypothesis reached the confidence threshold or a needed read was forbidden: hand over to people. */
    escalation: z.object({ reason: z.string(), couldNotAccess: z.array(z.string()) }).optional(),
    /** The ranked change timeline's top entries, for the record (redacted summaries). */
    changes: z.array(z.object({ at: z.string(), summary: z.string(), score: z.number(), why: z.array(z.string()) })).optional(),
    triagedAt: z.string().optional(),
    /** What the alert was resolved to in the cluster, as `Kind/namespace/name (how)`. */
    subjects: z.array(z.string()).optional(),
    /** The candidate workloads the walk from the subjects gathered evidence for, with their distance. */
    candidates: z.array(z.string()).optional(),
    /**
     * The responder whose request started this run (a thread reply, `/sre investigate`): the fix it leads to is
     * requested by them, so the four-eyes rule keeps them from approving it alone.
     */
    askedBy: z.string().optional(),
    /**
     * Set when the throttle (incidents/throttle.ts) kept this run from starting on its own: the rule and service,
     * and the incident whose automatic investigation holds the throttle (the thread links to it).
     */
    throttled: z
      .object({ key: z.string(), rule: z.string(), service: z.string(), byIncidentId: z.string(), since: z.string(), limit: z.number(), windowMs: z.number() })
      .optional(),
  })
  .passthrough();

export type InvestigationContext = z.infer<typeof investigationContextSchema>;

export function readContext(json: string): InvestigationContext {
  const parsed = investigationContextSchema.safeParse(JSON.parse(json || '{}'));
  return parsed.success ? parsed.data : {};
}
