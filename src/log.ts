import pino, { type Logger } from 'pino';
import { redactForLog, type Redactor } from './redact/index.js';

/**
 * The process logger. Every log object, message and child binding passes through the redactor, so a
 * secret that reaches a log call (an error quoting a URL, a log line from evidence) is masked there too.
 */
export function createLogger(level: string, redactor: Redactor, destination?: pino.DestinationStream): Logger {
  return pino({ level, base: { app: 'vigil' }, ...redactForLog(redactor) }, destination);
}
