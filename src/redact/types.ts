/**
 * A span of text a detector wants replaced. `kind` overrides the detector's kind when one detector
 * covers several (the labelled `key=value` detector yields `password`, `token`, `api_key`, …).
 */
export interface Span {
  start: number;
  end: number;
  kind?: string;
}

/** What a detector's `select` may consult besides the match itself. */
export interface DetectContext {
  readonly text: string;
  /** True when an email address is on the redactor's allow-list and must stay. */
  isAllowedEmail(address: string): boolean;
}

/**
 * One secret or personal-data detector. Detectors run in registry order (more specific first);
 * a later detector's span that overlaps an earlier one's is dropped.
 *
 * Contract for `pattern`: global (`g`) with indices (`d`); no nested quantifiers over overlapping
 * character classes; every leading character-class run is guarded by a negative lookbehind of the
 * same class so the engine tries each run once (linear time on megabyte blobs).
 */
export interface Detector {
  /** Unique name; the key in `Redactor.stats()` and in findings. */
  readonly name: string;
  /** The `<kind>` written into the placeholder, `[a-z0-9_]+`. */
  readonly kind: string;
  readonly pattern: RegExp;
  /** Cheap pre-check: the regex is skipped when none of these substrings occur in the text. */
  readonly hints?: readonly string[];
  /**
   * Choose the span to replace from a match, or return null to reject it. Default: the `secret`
   * named group when the pattern has one, else the whole match.
   */
  readonly select?: (match: RegExpExecArray, ctx: DetectContext) => Span | null;
}

/** Something `redactText` would replace. Never carries the raw value, so findings are safe to log. */
export interface RedactionFinding {
  detector: string;
  kind: string;
  /** UTF-16 offsets into the scanned string, `end` exclusive. */
  start: number;
  end: number;
}

/** A user-supplied detector: a regex (flags `g`/`d` are added) and a name; `kind` defaults to the name. */
export interface ExtraPattern {
  name: string;
  kind?: string;
  pattern: RegExp;
}

export interface RedactorOptions {
  /** HMAC key for placeholders. Default: a random per-process salt (same secret → same placeholder within a run). */
  salt?: string;
  /** Organisation-specific detectors; they run before the built-in ones. */
  extraPatterns?: ReadonlyArray<ExtraPattern | Detector>;
  /** Emails kept as they are: exact addresses (`oncall@example.com`) or whole domains (`@example.com`). */
  allowEmails?: readonly string[];
}

export interface Redactor {
  /** Replace every detected secret and personal datum in a string. Idempotent. */
  redactText(s: string): string;
  /**
   * `redactText` for each line of a log, plus what no single line shows: a PEM private key printed over
   * several lines loses every line from BEGIN to END (line prefixes such as timestamps included).
   */
  redactLines(lines: readonly string[]): string[];
  /**
   * Deep copy with secrets replaced: values under sensitive keys (password, token, api_key, …) and
   * `{name, value}` pairs with a sensitive name lose their value; every other string is scanned.
   * Plain objects, arrays, Maps, Sets, Errors (→ plain objects) and class instances (→ plain
   * objects) are walked; Kubernetes Secrets met anywhere get their data replaced.
   */
  redactValue<T>(v: T): T;
  /** `redactValue` that also recognises kind-less Secrets (items of a SecretList from the API). */
  redactK8sObject<T>(obj: T): T;
  /** What `redactText` would replace, without replacing it and without counting it in `stats()`. */
  findings(s: string): RedactionFinding[];
  /** Replacements made so far, per detector name (`sensitive_key` and `k8s_secret` for structural ones). */
  stats(): Record<string, number>;
}
