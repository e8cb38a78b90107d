/**
 * Severity words as alerting tools and rule packs spell them (kube-prometheus `critical|warning|info`, PagerDuty
 * urgency `high|low`, Opsgenie/Datadog `P1..P5`, `sev1..sev5`). Used to pick a severity out of keyless values
 * and to leave severity out of fingerprints (it may change while the target stays the same).
 */
const SEVERITY_WORDS = new Set([
  'critical', 'crit', 'fatal', 'emergency', 'alert', 'error', 'major', 'severe', 'high', 'page',
  'warning', 'warn', 'medium', 'moderate', 'minor', 'low', 'info', 'informational', 'notice', 'none', 'debug',
  'p1', 'p2', 'p3', 'p4', 'p5', 'sev1', 'sev2', 'sev3', 'sev4', 'sev5', 'sev-1', 'sev-2', 'sev-3', 'sev-4', 'sev-5',
]);

export function isSeverityWord(value: string): boolean {
  return SEVERITY_WORDS.has(value.trim().toLowerCase());
}

/** The `severity` label (or a common alias), else the first severity word among `values`. Lowercased. */
export function pickSeverity(labels: Record<string, string>, values: readonly string[]): string | undefined {
  for (const key of ['severity', 'priority', 'urgency', 'level']) {
    const value = labels[key]?.trim();
    if (value) return value.toLowerCase();
  }
  const word = values.find(isSeverityWord);
  return word?.toLowerCase();
}

/** `Severity: critical`, `[P1]`, `CRITICAL:` in free text; only words from the severity list count. */
export function severityInText(text: string): string | undefined {
  const labelled = /\b(?:severity|priority|urgency|level)\s*[:=]\s*\**`?([\w-]+)/i.exec(text)?.[1];
  if (labelled && isSeverityWord(labelled)) return labelled.toLowerCase();
  const tagged = /(?:^|[\s[(])(critical|warning|sev-?[1-5]|p[1-5])(?=[\]):\s]|$)/i.exec(text)?.[1];
  return tagged?.toLowerCase();
}
