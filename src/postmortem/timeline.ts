import { readContext } from '../incidents/context.js';
import { actionsTaken, verifiedAt } from './actions.js';
import { parseStored } from './json.js';
import { personLabel } from './people.js';
import type { PostmortemRecord } from './record.js';
import type { TimelineEntry } from './types.js';

/** How many ranked changes the timeline keeps (the ranking puts the likeliest culprit first). */
export const TOP_CHANGES = 3;

const STATUS_WORDS: Record<string, string> = {
  supported: 'supported',
  open: 'open',
  inconclusive: 'inconclusive',
  ruled_out: 'ruled out',
  unrelated: 'marked unrelated',
};
const statusWord = (s: string): string => STATUS_WORDS[s] ?? s;

interface AuditFindings {
  findings?: { key?: string; status?: string }[];
}

/** Every dated fact of the record, oldest first; each entry names the rows it came from. */
export function buildTimeline(r: PostmortemRecord, people: Record<string, string>): TimelineEntry[] {
  const inc = r.incident;
  const inv = inc.investigations[0];
  const ctx = inv ? readContext(inv.context) : {};
  const out: TimelineEntry[] = [];
  const who = (id: string): string => personLabel(id, people);

  let firing = 0;
  for (const a of inc.alerts) {
    if (a.status === 'resolved') {
      out.push({ at: a.receivedAt, kind: 'resolution', text: `Alert resolved: ${a.title}`, sources: [{ table: 'Alert', id: a.id }] });
      continue;
    }
    firing++;
    const text = firing === 1 ? `Alert fired: ${a.title} (via ${a.source})` : `Alert fired again (${firing} notifications): ${a.title}`;
    out.push({ at: a.receivedAt, kind: 'alert', text, sources: [{ table: 'Alert', id: a.id }] });
  }

  (ctx.changes ?? []).slice(0, TOP_CHANGES).forEach((c, i) => {
    const at = new Date(c.at);
    if (Number.isNaN(at.getTime()) || !inv) return;
    out.push({ at, kind: 'change', text: `Change: ${c.summary}${c.why.length ? ` (${c.why.join(', ')})` : ''}`, sources: [{ table: 'Investigation', id: inv.id, field: `context.changes[${i}]` }] });
  });

  if (inv) out.push({ at: inv.startedAt, kind: 'investigation', text: 'Vigil started investigating', actor: 'vigil', sources: [{ table: 'Investigation', id: inv.id, field: 'startedAt' }] });
  const header = inc.posts.find((p) => p.purpose === 'header');
  if (header) {
    const after = ctx.firstCardMs !== undefined ? ` (${Math.round(ctx.firstCardMs / 100) / 10} s after the alert)` : '';
    const sources = [{ table: 'SlackPost' as const, id: header.id }, ...(inv && ctx.firstCardMs !== undefined ? [{ table: 'Investigation' as const, id: inv.id, field: 'context.firstCardMs' }] : [])];
    out.push({ at: header.createdAt, kind: 'card', text: `First triage card posted in the thread${after}`, actor: 'vigil', sources });
  }

  // Hypotheses: their status as each investigation step concluded it (audit), then every human steer.
  const hyps = new Map((inv?.hypotheses ?? []).map((h) => [h.key, h]));
  let concluded = false;
  for (const e of inc.auditEvents) {
    if (e.kind === 'triage.completed' || e.kind === 'agent.completed') {
      const step = e.kind === 'triage.completed' ? 'triage' : 'the model step';
      for (const f of parseStored<AuditFindings>(e.data)?.findings ?? []) {
        const h = f.key ? hyps.get(f.key) : undefined;
        if (!h || !f.status) continue;
        concluded = true;
        const reason = f.status === h.status && !h.steeredBy && h.reason ? ` — ${h.reason}` : '';
        out.push({ at: e.at, kind: 'hypothesis', text: `${h.label} ${statusWord(f.status)} by ${step}: ${h.title}${reason}`, actor: 'vigil', sources: [{ table: 'AuditEvent', id: String(e.id) }, { table: 'Hypothesis', id: h.id }] });
      }
    } else if (e.kind.startsWith('hypothesis.')) {
      const d = parseStored<{ label?: string; key?: string; reason?: string; note?: string | null }>(e.data) ?? {};
      const h = d.key ? hyps.get(d.key) : undefined;
      const label = h?.label ?? d.label ?? 'a hypothesis';
      const verb = { 'hypothesis.rule_out': 'ruled out', 'hypothesis.confirm': 'confirmed', 'hypothesis.pin': 'pinned', 'hypothesis.evidence_added': 'given evidence' }[e.kind] ?? e.kind.slice('hypothesis.'.length);
      const why = d.reason ?? d.note ?? undefined;
      out.push({ at: e.at, kind: 'hypothesis', text: `${label}${h ? ` (${h.title})` : ''} ${verb} by ${who(e.actor)}${why ? `: ${why}` : ''}`, actor: e.actor, sources: [{ table: 'AuditEvent', id: String(e.id) }, ...(h ? [{ table: 'Hypothesis' as const, id: h.id }] : [])] });
    } else if (e.kind === 'investigation.failed') {
      const d = parseStored<{ error?: string }>(e.data) ?? {};
      out.push({ at: e.at, kind: 'investigation', text: `Investigation stopped: ${d.error ?? 'error'}`, actor: 'vigil', sources: [{ table: 'AuditEvent', id: String(e.id) }] });
    } else if (e.kind === 'incident.resolved' && !inc.alerts.some((a) => a.status === 'resolved')) {
      out.push({ at: e.at, kind: 'resolution', text: `Incident resolved${e.actor !== 'vigil' ? ` by ${who(e.actor)}` : ''}`, actor: e.actor, sources: [{ table: 'AuditEvent', id: String(e.id) }] });
    } else if (e.kind === 'incident.reopened') {
      out.push({ at: e.at, kind: 'alert', text: 'Incident reopened: the alert fired again after resolving', sources: [{ table: 'AuditEvent', id: String(e.id) }] });
    } else if (e.kind === 'vigil.stopped' || e.kind === 'vigil.resumed') {
      out.push({ at: e.at, kind: 'approval', text: `Kill switch ${e.kind === 'vigil.stopped' ? 'engaged' : 'released'} by ${who(e.actor)}`, actor: e.actor, sources: [{ table: 'AuditEvent', id: String(e.id) }] });
    } else if (/^approval\.(failed|cancelled|expired|refused|withdrawn|closed)$/.test(e.kind)) {
      const d = parseStored<{ reason?: string }>(e.data) ?? {};
      out.push({ at: e.at, kind: 'execution', text: `Fix ${e.kind.slice('approval.'.length)}${d.reason ? `: ${d.reason}` : ''}`, actor: e.actor, sources: [{ table: 'AuditEvent', id: String(e.id) }] });
    }
  }
  if (!concluded) {
    // Rows without their audit trail (older records, imports): the hypothesis as it stands, when it appeared.
    for (const h of inv?.hypotheses ?? []) {
      out.push({ at: h.createdAt, kind: 'hypothesis', text: `${h.label} ${statusWord(h.status)}: ${h.title}${h.reason ? ` — ${h.reason}` : ''}`, sources: [{ table: 'Hypothesis', id: h.id }] });
    }
  }

  for (const s of inc.steering) {
    out.push({ at: s.receivedAt, kind: 'steering', text: `${who(s.userId)} in the thread: “${s.text}”`, actor: s.userId, sources: [{ table: 'SteeringMessage', id: s.id }] });
  }

  for (const a of actionsTaken(r)) {
    const by = a.requestedBy === 'vigil' ? 'Vigil' : who(a.requestedBy);
    out.push({ at: a.requestedAt, kind: 'approval', text: `Fix proposed by ${by}: ${a.title}${a.risk !== undefined ? ` (risk ${a.risk}/100)` : ''}`, actor: a.requestedBy, sources: a.sources });
    for (const d of a.decisions) {
      out.push({ at: d.at, kind: 'approval', text: `Fix ${d.decision === 'approve' ? 'approved' : 'rejected'} by ${who(d.userId)}: ${a.title}${d.reason ? ` — ${d.reason}` : ''}`, actor: d.userId, sources: [d.source] });
    }
    if (a.execution?.at) {
      const as = a.execution.identity ? ` as ${a.execution.identity}` : '';
      out.push({ at: a.execution.at, kind: 'execution', text: `Fix executed${as}: ${a.command ?? a.title} (${a.execution.writes} write${a.execution.writes === 1 ? '' : 's'}, ${a.execution.status ?? a.status})`, actor: a.execution.identity ?? 'vigil', sources: [{ table: 'ApprovalRequest', id: a.requestId, field: 'result.execution' }] });
    }
    const vAt = verifiedAt(r, a.requestId);
    if (a.verification && vAt) {
      out.push({ at: vAt, kind: 'execution', text: `Verification ${a.verification.ok ? 'passed' : 'failed'}: ${a.verification.checks.join('; ') || 'no checks recorded'}`, actor: 'vigil', sources: [{ table: 'ApprovalRequest', id: a.requestId, field: 'result.verification' }] });
    }
  }

  if (inv && ctx.escalation) {
    const at = ctx.triagedAt ? new Date(ctx.triagedAt) : inv.updatedAt;
    const missing = ctx.escalation.couldNotAccess.length ? ` (could not access: ${ctx.escalation.couldNotAccess.join(', ')})` : '';
    out.push({ at: Number.isNaN(at.getTime()) ? inv.updatedAt : at, kind: 'escalation', text: `Escalated to people: ${ctx.escalation.reason}${missing}`, actor: 'vigil', sources: [{ table: 'Investigation', id: inv.id, field: 'context.escalation' }] });
  }
  if (inc.status === 'resolved' && inc.resolvedAt && !out.some((e) => e.kind === 'resolution')) {
    out.push({ at: inc.resolvedAt, kind: 'resolution', text: 'Incident resolved', sources: [{ table: 'Incident', id: inc.id, field: 'resolvedAt' }] });
  }
  // Stable sort: entries at the same instant keep the order above (alert before investigation, …).
  return out.map((e, i) => ({ e, i })).sort((a, b) => a.e.at.getTime() - b.e.at.getTime() || a.i - b.i).map(({ e }) => e);
}
