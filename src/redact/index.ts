/**
 * Secret and personal-data scrubbing, applied before anything leaves Vigil (model, Slack, logs,
 * database). Pure functions: no I/O, no configuration read here.
 *
 * ```ts
 * const redactor = createRedactor({ allowEmails: ['@example.com'] });
 * redactor.redactText('token=ghp_…')        // 'token=[REDACTED:github_token:1a2b3c4d]'
 * redactor.redactK8sObject(secret)          // data keys kept, values replaced
 * pino({ ...redactForLog(redactor) })       // logs go through the same redactor
 * ```
 */
export { createRedactor } from './redactor.js';
export { redactForLog, type PinoRedactionOptions } from './log.js';
export { DETECTORS } from './detectors/index.js';
export { clipRedacted, cutRedacted, isPlaceholder } from './placeholder.js';
export { sensitiveKeyKind } from './sensitive-keys.js';
export type { Detector, DetectContext, ExtraPattern, RedactionFinding, Redactor, RedactorOptions, Span } from './types.js';
