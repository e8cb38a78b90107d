/**
 * Responders steer an investigation by replying in its thread. Simple commands are understood here,
 * deterministically, so the board can react without a model ("rule out H2" marks H2 at once); anything
 * else is handed to the model verbatim as free text (as data, with who said it).
 *
 * | reply                                          | command                                        |
 * |------------------------------------------------|------------------------------------------------|
 * | `rule out H2`, `H2 is wrong because …`, `not H2` | `{ kind: 'rule_out', label: 'H2', reason? }`  |
 * | `confirm H1`, `H1 is right`                    | `{ kind: 'confirm', label: 'H1' }`             |
 * | `pin H1`                                       | `{ kind: 'pin', label: 'H1' }`                 |
 * | `ignore the cache`, `not the cache`            | `{ kind: 'exclude', topic: 'cache' }`          |
 * | `check the database instead`, `focus on payments` | `{ kind: 'focus', topic, instead }`         |
 * | anything else                                  | `{ kind: 'free_text', text }`                  |
 */

/** A reply in the incident thread, as stored (`SteeringMessage` rows). */
export interface SteeringMessage {
  /** Slack user id of the responder. */
  userId: string;
  /** Display name, when known (shown to the model instead of the id). */
  userName?: string;
  text: string;
  at: Date;
}

export type SteeringCommand =
  | { kind: 'rule_out'; label: string; reason?: string }
  | { kind: 'confirm'; label: string; reason?: string }
  | { kind: 'pin'; label: string }
  | { kind: 'exclude'; topic: string }
  | { kind: 'focus'; topic: string; instead: boolean }
  | { kind: 'free_text'; text: string };

const LABEL = String.raw`h(\d{1,3})`;
const label = (digits: string) => `H${Number(digits)}`;

/** Filler words a topic may start with ("the cache" → "cache"). */
const ARTICLE = /^(?:the|a|an|our|this|that)\s+/i;

function topicOf(raw: string): string | undefined {
  const t = raw
    .trim()
    .replace(/[.!?,;:]+$/, '')
    .replace(ARTICLE, '')
    .trim();
  return t.length > 0 && t.length <= 80 ? t : undefined;
}

function reasonOf(raw: string | undefined): string | undefined {
  const r = raw?.trim().replace(/^(?:because|since|as|:|-|—)\s*/i, '').trim();
  return r ? r : undefined;
}

/** "not sure", "not yet", "not working": words after a bare "not" that are no topic. */
const NOT_A_TOPIC = /^(?:sure|really|yet|now|certain|quite|so|that|this|it|working|good|fixed|helpful|happy|convinced|me|my)\b/i;

interface Rule {
  pattern: RegExp;
  build(m: RegExpExecArray): SteeringCommand | undefined;
}

// Order matters: label commands before topic commands ("not H2" is a rule-out, not an exclusion).
const RULES: Rule[] = [
  {
    pattern: new RegExp(String.raw`^(?:rule\s*out|ruled\s*out|refute|reject|drop|discard|not)\s+${LABEL}\b[\s,.:;-]*(.*)$`, 'i'),
    build: (m) => withReason({ kind: 'rule_out', label: label(m[1]!) }, m[2]),
  },
  {
    pattern: new RegExp(String.raw`^${LABEL}\s+(?:is|looks|seems)\s+(?:wrong|not it|incorrect|a red herring|unrelated|ruled out)\b[\s,.:;-]*(.*)$`, 'i'),
    build: (m) => withReason({ kind: 'rule_out', label: label(m[1]!) }, m[2]),
  },
  {
    pattern: new RegExp(String.raw`^(?:confirm|confirmed|accept)\s+${LABEL}\b[\s,.:;-]*(.*)$`, 'i'),
    build: (m) => withReason({ kind: 'confirm', label: label(m[1]!) }, m[2]),
  },
  {
    pattern: new RegExp(String.raw`^${LABEL}\s+(?:is|looks)\s+(?:right|correct|it|confirmed)\b[\s,.:;-]*(.*)$`, 'i'),
    build: (m) => withReason({ kind: 'confirm', label: label(m[1]!) }, m[2]),
  },
  {
    pattern: new RegExp(String.raw`^pin\s+${LABEL}\s*[.!]?$`, 'i'),
    build: (m) => ({ kind: 'pin', label: label(m[1]!) }),
  },
  {
    pattern: /^(?:please\s+)?(?:ignore|skip|forget(?:\s+about)?|exclude|leave\s+out|rule\s+out)\s+(.+)$/i,
    build: (m) => {
      const topic = topicOf(m[1]!);
      return topic ? { kind: 'exclude', topic } : undefined;
    },
  },
  {
    // "not the cache" / "it's not the cache", but not "not sure what is going on": a short noun phrase only.
    pattern: /^(?:it'?s\s+|it\s+is\s+|definitely\s+)?not\s+((?:the|a|an|our)\s+)?(.+)$/i,
    build: (m) => {
      const topic = topicOf(m[2]!);
      const words = topic?.split(' ').length ?? 0;
      if (!topic || words > 4 || (!m[1] && (words > 2 || NOT_A_TOPIC.test(topic)))) return undefined;
      return { kind: 'exclude', topic };
    },
  },
  {
    pattern: /^(?:please\s+)?(?:check|look\s+at|investigate|examine|focus\s+on|dig\s+into|what\s+about|have\s+a\s+look\s+at)\s+(.+?)(\s+(?:instead|first|too|as\s+well))?\s*[.!?]?$/i,
    build: (m) => {
      const topic = topicOf(m[1]!);
      return topic ? { kind: 'focus', topic, instead: /instead/i.test(m[2] ?? '') } : undefined;
    },
  },
];

function withReason<C extends { kind: 'rule_out' | 'confirm'; label: string }>(cmd: C, raw: string | undefined): C {
  const reason = reasonOf(raw);
  return reason ? { ...cmd, reason } : cmd;
}

/** Slack mentions (`<@U123>`, `<@U123|vigil>`) and a leading "vigil," are addressing, not content. */
function normalise(text: string): string {
  return text
    .replace(/<@[A-Z0-9]+(?:\|[^>]*)?>/g, ' ')
    .replace(/^\s*(?:@?vigil)\b[\s,:]*/i, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** One reply → one command. Multi-line or compound replies are free text: the model reads those. */
export function parseSteering(text: string): SteeringCommand {
  const t = normalise(text);
  if (t.length > 0 && t.length <= 300 && !t.includes('\n')) {
    for (const rule of RULES) {
      const m = rule.pattern.exec(t);
      const cmd = m ? rule.build(m) : undefined;
      if (cmd) return cmd;
    }
  }
  return { kind: 'free_text', text: t };
}

/** Everything the responders have said, folded into what the next model step must respect. */
export interface SteeringState {
  ruledOut: { label: string; reason?: string; by: string }[];
  confirmed: { label: string; reason?: string; by: string }[];
  pinned: string[];
  excluded: string[];
  /** The newest focus wins; `instead` means "stop pursuing the current lead". */
  focus?: { topic: string; instead: boolean; by: string };
  notes: { by: string; text: string; at: Date }[];
}

export function responderName(m: SteeringMessage): string {
  return m.userName ?? `<@${m.userId}>`;
}

/** Fold messages oldest → newest: later commands override earlier ones about the same label. */
export function foldSteering(messages: SteeringMessage[]): SteeringState {
  const state: SteeringState = { ruledOut: [], confirmed: [], pinned: [], excluded: [], notes: [] };
  const sorted = [...messages].sort((a, b) => a.at.getTime() - b.at.getTime());
  for (const m of sorted) {
    const by = responderName(m);
    const cmd = parseSteering(m.text);
    switch (cmd.kind) {
      case 'rule_out':
        state.confirmed = state.confirmed.filter((c) => c.label !== cmd.label);
        state.ruledOut = [...state.ruledOut.filter((c) => c.label !== cmd.label), { label: cmd.label, by, ...(cmd.reason ? { reason: cmd.reason } : {}) }];
        break;
      case 'confirm':
        state.ruledOut = state.ruledOut.filter((c) => c.label !== cmd.label);
        state.confirmed = [...state.confirmed.filter((c) => c.label !== cmd.label), { label: cmd.label, by, ...(cmd.reason ? { reason: cmd.reason } : {}) }];
        break;
      case 'pin':
        if (!state.pinned.includes(cmd.label)) state.pinned.push(cmd.label);
        break;
      case 'exclude':
        if (!state.excluded.some((t) => t.toLowerCase() === cmd.topic.toLowerCase())) state.excluded.push(cmd.topic);
        break;
      case 'focus':
        state.focus = { topic: cmd.topic, instead: cmd.instead, by };
        break;
      case 'free_text':
        if (cmd.text) state.notes.push({ by, text: cmd.text, at: m.at });
        break;
    }
  }
  return state;
}
