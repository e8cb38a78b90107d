import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AlertMessage } from '../../src/alerts/types.js';

/** A fixture file: `_source` says whether it was captured from the real tool or hand-written from docs. */
export interface AlertFixture {
  _source: string;
  payload: unknown;
}

export function loadFixture(name: string): AlertFixture {
  return JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'alerts', `${name}.json`), 'utf8')) as AlertFixture;
}

/** A captured Slack payload read as the message the listener hands to the parser. */
export function loadMessage(name: string): AlertMessage {
  return loadFixture(name).payload as AlertMessage;
}
