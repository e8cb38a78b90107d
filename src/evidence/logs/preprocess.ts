import type { LogLevel } from './types.js';

/** What the miner templates and how severe the line says it is. */
export interface PreparedLine {
  /** The text to template: the whole line, or a JSON line's message (plus its error field). */
  text: string;
  level?: LogLevel;
}

const LEVEL_WORDS: Record<string, LogLevel> = {
  emerg: 'error', emergency: 'error', alert: 'error', crit: 'error', critical: 'error', fatal: 'error', panic: 'error',
  error: 'error', err: 'error', eror: 'error', severe: 'error',
  warn: 'warn', warning: 'warn',
  info: 'info', information: 'info', informational: 'info', notice: 'info',
  debug: 'debug', dbug: 'debug', trace: 'debug', fine: 'debug', verbose: 'debug',
};

/** Map a level spelling (`ERROR`, `Warning`, pino's numeric `50`) to one of four levels. */
export function normaliseLevel(v: unknown): LogLevel | undefined {
  if (typeof v === 'number') {
    // pino/bunyan numbers: 10 trace, 20 debug, 30 info, 40 warn, 50 error, 60 fatal.
    if (v >= 50) return 'error';
    if (v >= 40) return 'warn';
    if (v >= 30) return 'info';
    return 'debug';
  }
  if (typeof v !== 'string') return undefined;
  return LEVEL_WORDS[v.trim().toLowerCase()];
}

const LOGFMT_LEVEL = /(?:^|\s)(?:level|lvl|severity|loglevel)=["']?([A-Za-z]+)/;
// klog header: `E0129 10:23:45.123456    1 file.go:42] msg` (I/W/E/F + MMDD).
const KLOG = /^([IWEF])\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ /;
const KLOG_LEVELS: Record<string, LogLevel> = { I: 'info', W: 'warn', E: 'error', F: 'error' };
const WORD_ERROR = /\b(?:ERROR|FATAL|PANIC|CRITICAL|CRIT|SEVERE|EMERG)\b|\[(?:error|fatal|crit|emerg|alert)\]|^(?:error|fatal|panic)\b:?/;
const WORD_WARN = /\b(?:WARN|WARNING)\b|\[(?:warn|warning)\]|^warn(?:ing)?\b:?/;
const WORD_INFO = /\bINFO\b|\[(?:info|notice)\]/;
const WORD_DEBUG = /\b(?:DEBUG|TRACE)\b|\[(?:debug|trace)\]/;

/** The level a plain-text line declares, from logfmt `level=`, a klog header, or a level word. */
export function detectLevel(line: string): LogLevel | undefined {
  const logfmt = LOGFMT_LEVEL.exec(line);
  if (logfmt) {
    const l = normaliseLevel(logfmt[1]);
    if (l) return l;
  }
  const klog = KLOG.exec(line);
  if (klog) return KLOG_LEVELS[klog[1] ?? ''];
  // Only the head of the line: a level word deep inside a message is usually quoted text, not a level.
  const head = line.slice(0, 120);
  if (WORD_ERROR.test(head)) return 'error';
  if (WORD_WARN.test(head)) return 'warn';
  if (WORD_INFO.test(head)) return 'info';
  if (WORD_DEBUG.test(head)) return 'debug';
  return undefined;
}

const MESSAGE_KEYS = ['msg', 'message', 'MESSAGE', 'Message', 'log', 'text'];
const LEVEL_KEYS = ['level', 'lvl', 'severity', 'levelname', 'log.level', 'loglevel', 'Level', 'LEVEL', 'SEVERITY'];
const ERROR_KEYS = ['error', 'err', 'exception', 'error.message'];

function firstString(o: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = o[k];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

/**
 * Structured (JSON) lines are templated on their message, with the error field appended because that is
 * where the diagnosis usually is; the other fields are request detail that would only split templates.
 */
function prepareJson(line: string): PreparedLine | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const o = parsed as Record<string, unknown>;
  let level: LogLevel | undefined;
  for (const k of LEVEL_KEYS) {
    level = normaliseLevel(o[k]);
    if (level) break;
  }
  const msg = firstString(o, MESSAGE_KEYS);
  if (msg === undefined) return { text: line, level };
  const err = firstString(o, ERROR_KEYS);
  const text = err ? `${msg} error: ${err}` : msg;
  return { text, level: level ?? detectLevel(msg) };
}

export function prepareLine(line: string): PreparedLine {
  const trimmed = line.trim();
  if (trimmed.startsWith('{') && trimmed.endsWith('}')) {
    const json = prepareJson(trimmed);
    if (json) return json;
  }
  const level = detectLevel(trimmed);
  // The klog header is all variable (date, time, thread id); the level is kept separately.
  const text = trimmed.replace(KLOG, '');
  return { text, level };
}
