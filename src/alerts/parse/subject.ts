/**
 * Alertmanager's (and Grafana Alerting's) default notification subject, from Alertmanager's default.tmpl `__subject`:
 *   `[FIRING:<n>] <group label values…> (<common label values not in the group…>)` or `[RESOLVED] …`
 * Values only, no keys, each list sorted by label name; the parenthesised part is absent when every common label
 * is a group label. Captured from Alertmanager 0.25: `[FIRING:1] KubePodCrashLooping (checkout kube-state-metrics shop checkout-7d9f8b6c5-x2x9z warning)`.
 */
export interface AlertSubject {
  status: 'firing' | 'resolved';
  /** `[FIRING:3]` → 3; `[RESOLVED]` carries no count. */
  count?: number;
  /** Group label values: Alertmanager's group identity (the route's `group_by`). */
  groupValues: string[];
  /** Common label values outside the group. */
  commonValues: string[];
}

const SUBJECT = /^\s*\[(FIRING|RESOLVED)(?::(\d+))?\]\s*(.*)$/is;

export function parseSubject(title: string): AlertSubject | undefined {
  const match = SUBJECT.exec(title);
  if (!match) return undefined;
  const status = match[1]!.toUpperCase() === 'RESOLVED' ? 'resolved' : 'firing';
  const rest = match[3]!.trim();
  let groupPart = rest;
  let commonPart = '';
  if (rest.endsWith(')')) {
    const open = findCommonOpen(rest);
    if (open >= 0) {
      groupPart = rest.slice(0, open);
      commonPart = rest.slice(open + 1, -1);
    }
  }
  const subject: AlertSubject = { status, groupValues: words(groupPart), commonValues: words(commonPart) };
  if (match[2] !== undefined) subject.count = Number(match[2]);
  return subject;
}

/** The `(` that opens the common-values part: at the start or after a space, balanced up to the final `)`. */
function findCommonOpen(rest: string): number {
  let depth = 0;
  for (let i = rest.length - 1; i >= 0; i--) {
    const char = rest[i];
    if (char === ')') depth++;
    else if (char === '(') {
      depth--;
      if (depth === 0) return i === 0 || rest[i - 1] === ' ' ? i : -1;
    }
  }
  return -1;
}

function words(part: string): string[] {
  return part.split(/\s+/).filter(Boolean);
}

/**
 * Alert rule names are conventionally PascalCase (`KubePodCrashLooping`) or snake_case, while namespaces, services
 * and pods are lowercase DNS names: used to find `alertname` among keyless values.
 */
export function looksLikeRuleName(value: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_:.-]*$/.test(value) && (/[A-Z]/.test(value) || value.includes('_'));
}

/** `alertname` from keyless subject values: a rule-like group value, else a rule-like common value, else the first group value. */
export function alertNameFromSubject(subject: AlertSubject): string | undefined {
  return (
    subject.groupValues.find(looksLikeRuleName) ??
    subject.commonValues.find(looksLikeRuleName) ??
    subject.groupValues[0] ??
    subject.commonValues[0]
  );
}
