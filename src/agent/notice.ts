/**
 * What the thread says about a model run that did not go to plan: in words a responder understands,
 * what the model did wrong (or what Vigil had to cut from its diagnosis), and that deterministic triage
 * stands. Shown as the incident card's notice; redacted text only (the result's fields already are).
 */
import type { AgentResult } from './loop.js';
import { MAX_UNUSABLE_TURNS } from './loop.js';
import { SUBMIT_TOOL } from './output.js';

/** Characters of a notice (the card shows up to 1000). */
const MAX_NOTICE = 900;

const STANDS = 'deterministic triage stands';

/** The notice for this run, or undefined when there is nothing to say (a clean run, a stop). */
export function agentNotice(result: AgentResult): string | undefined {
  const notes = result.notes.length ? ` ${result.notes.join(' ')}` : '';
  switch (result.status) {
    case 'model_unavailable':
      return cap(`Model unavailable (${(result.error ?? 'no answer').slice(0, 160)}): continuing on deterministic triage.`);
    case 'budget_exhausted': {
      const shared = result.sharedCap;
      if (shared) {
        const whose = shared.scope === 'incident' ? 'this incident' : 'today (UTC, all incidents)';
        const kept = result.findings.length ? 'its last diagnosis is shown beside deterministic triage' : STANDS;
        return cap(`Model token budget for ${whose} reached: ${tokens(shared.used)} of ${tokens(shared.cap)} tokens used, so the model was not called again; ${kept}.${notes}`);
      }
      return cap(`Model budget reached (${result.budgetExhausted ?? 'budget'}): showing what was found so far.${notes}`);
    }
    case 'refused': {
      const why = /^the model refused to continue \((.*)\)$/s.exec(result.error ?? '')?.[1];
      return cap(`The model refused to investigate${why ? ` (${why})` : ''}: ${STANDS}; nothing it wrote was kept.`);
    }
    case 'invalid_output':
      return cap(`The model’s output was unusable: ${misbehaved(result)}. Nothing it wrote was kept; ${STANDS}.`);
    case 'completed':
      return result.notes.length ? cap(`Vigil checked the model’s diagnosis before adding it (deterministic triage stands):${notes}`) : undefined;
    case 'stopped':
      return undefined;
  }
}

function misbehaved(result: AgentResult): string {
  const error = result.error ?? '';
  switch (result.misbehaviour) {
    case 'prose':
      return `it answered in prose instead of calling ${SUBMIT_TOOL}, also after it was asked to`;
    case 'declined': {
      const said = /“(.*)”$/s.exec(error)?.[1];
      return `it declined${said ? ` (“${said}”)` : ''} instead of calling ${SUBMIT_TOOL}, also after it was asked again`;
    }
    case 'truncated':
      return 'its output was cut off at the output-token limit before it completed a diagnosis, also after it was asked to be brief';
    case 'invalid_submission': {
      const first = error.replace(/^invalid diagnosis: /, '').split('; ')[0]?.slice(0, 240) ?? '';
      return /was never returned by a tool/.test(error)
        ? `its diagnosis cited evidence no tool returned and broke the rules again after one correction (${first})`
        : `its diagnosis was invalid twice (${first})`;
    }
    case 'unusable_tools': {
      const what = /in a row \((.*)\)$/s.exec(error)?.[1];
      return `it sent tool calls that could not run, ${MAX_UNUSABLE_TURNS} turns in a row${what ? ` (${what})` : ''}`;
    }
    case 'refusal':
    case undefined:
      return error ? `it broke the output contract (${error.slice(0, 240)})` : 'it broke the output contract';
  }
}

const tokens = (n: number) => Math.round(n).toLocaleString('en-US');

function cap(s: string): string {
  return s.length > MAX_NOTICE ? `${s.slice(0, MAX_NOTICE - 1)}…` : s;
}
