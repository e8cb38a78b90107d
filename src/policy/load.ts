import { readFileSync } from 'node:fs';
import { PolicyError } from './errors.js';
import { parsePolicy } from './parse.js';
import type { Policy } from './types.js';

/** The policy without a file: no rules, so every write is refused — Vigil only reads. */
export const READ_ONLY_POLICY: Policy = parsePolicy('version: 1\n', '(no policy file: read-only)');

/**
 * The policy Vigil runs with, read once at start-up. No file → `READ_ONLY_POLICY`. A file that cannot
 * be read or is invalid throws `PolicyError` with every problem, so start-up stops with a clear error.
 */
export function loadPolicy(file?: string): Policy {
  if (!file) return READ_ONLY_POLICY;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new PolicyError(file, [`${file}: cannot read the policy file (${code ?? (err as Error).message})`]);
  }
  return parsePolicy(text, file);
}
