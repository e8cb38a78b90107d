export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

/** One log line as read from a store; `ts` when the store gave one. */
export interface LogLine {
  ts?: Date;
  line: string;
}

/**
 * A family of log lines with one shape: the template has variable parts masked (`<NUM>`, `<IP>`, …) or
 * merged into `<*>`. `example` is one real (already redacted) line of the family, shortened.
 */
export interface LogPattern {
  template: string;
  count: number;
  first?: Date;
  last?: Date;
  example: string;
  level?: LogLevel;
}

export interface MineOptions {
  /** Patterns returned at most, the folded "other" entry included (default 40). */
  maxPatterns?: number;
  /** Examples and templates are cut to this many characters (default 300). */
  exampleLength?: number;
  /** Drain similarity threshold: the share of equal tokens needed to join a template (default 0.4). */
  similarity?: number;
  /** Drain tree depth: root, token-count layer, then `depth - 2` leading-token layers (default 4). */
  depth?: number;
  /** Children per tree node before new tokens go to the `<*>` branch (default 100). */
  maxChildren?: number;
  /** Replace double-quoted strings with `"<STR>"` before mining (default false: quoted text is often the message). */
  maskQuoted?: boolean;
}

/** The template of the entry that stands for every pattern cut by `maxPatterns`. */
export const OTHER_TEMPLATE = '<other patterns>';
