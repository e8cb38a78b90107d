import type { LogFn, LoggerOptions } from 'pino';
import type { Redactor } from './types.js';

/** The pino options `redactForLog` fills in. */
export type PinoRedactionOptions = Required<Pick<LoggerOptions, 'hooks' | 'formatters'>>;

/**
 * A copy of an error with the same prototype (so pino's `err` serializer still reports its type)
 * and redacted message, stack, cause and own fields.
 */
function redactError(redactor: Redactor, e: Error): Error {
  const copy = Object.create(Object.getPrototypeOf(e) as object) as Error;
  const fields = redactor.redactValue({ ...e, cause: e.cause });
  Object.assign(copy, fields);
  if (e.cause === undefined) delete (copy as { cause?: unknown }).cause;
  Object.defineProperty(copy, 'message', { value: redactor.redactText(e.message), enumerable: false, writable: true, configurable: true });
  if (e.stack !== undefined) Object.defineProperty(copy, 'stack', { value: redactor.redactText(e.stack), enumerable: false, writable: true, configurable: true });
  return copy;
}

/**
 * pino options that pass every log line through the redactor:
 *
 * ```ts
 * const redactor = createRedactor();
 * const log = pino({ level, ...redactForLog(redactor) });
 * ```
 *
 * - `formatters.log` redacts the merging object (`log.info({ env }, …)`) structurally — sensitive
 *   keys, `{name, value}` env pairs, Secrets — before pino's serializers run; Error values keep
 *   their prototype so the `err` serializer still reports their type.
 * - `hooks.logMethod` redacts the message string and interpolation arguments, which pino never
 *   shows to `formatters.log`; for `log.error(err)` it passes the redacted `err.message` as the
 *   message (pino would otherwise copy the raw one).
 * - `hooks.streamWrite` scans the final JSON line as text. It is the only hook that sees child
 *   bindings (`log.child({ token })`: pino formats those once, bypassing `formatters`) and
 *   `msgPrefix`; structural key rules do not apply there, the text detectors do.
 *
 * If the caller has its own `formatters`/`hooks`, compose them with these rather than spreading twice.
 */
export function redactForLog(redactor: Redactor): PinoRedactionOptions {
  const redactArg = (a: unknown): unknown => {
    if (typeof a === 'string') return redactor.redactText(a);
    return a instanceof Error ? redactError(redactor, a) : redactor.redactValue(a);
  };
  return {
    formatters: {
      log: (obj) => {
        const plain: Record<string, unknown> = {};
        const errors: Record<string, Error> = {};
        for (const [k, v] of Object.entries(obj)) {
          if (v instanceof Error) errors[k] = redactError(redactor, v);
          else plain[k] = v;
        }
        return { ...redactor.redactValue(plain), ...errors };
      },
      bindings: (bindings) => redactor.redactValue(bindings),
    },
    hooks: {
      logMethod(args, method) {
        const [first, ...rest] = args as unknown[];
        const redacted: unknown[] =
          first instanceof Error && typeof rest[0] !== 'string'
            ? [first, redactor.redactText(first.message), ...rest.map(redactArg)]
            : // An object first argument is left to formatters.log, which sees it anyway.
              [typeof first === 'string' ? redactor.redactText(first) : first, ...rest.map(redactArg)];
        method.apply(this, redacted as Parameters<LogFn>);
      },
      streamWrite: (line) => redactor.redactText(line),
    },
  };
}
