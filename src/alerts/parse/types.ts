import type { Alert, AlertMessage } from '../types.js';
import type { FlatMessage } from './flatten.js';

/** What `parseAlertMessage` decides about one Slack message. Never thrown: a bad message is `malformed`. */
export type ParseResult =
  | { kind: 'alert'; alert: Alert }
  | { kind: 'not_alert'; reason: string }
  | { kind: 'malformed'; reason: string };

export interface ParseContext {
  msg: AlertMessage;
  flat: FlatMessage;
  /** The post time: `msg.ts`, else `receivedAt`, else now. */
  postedAt: Date;
}

/** One alerting tool's parser: `detect` looks at who posted and the shape; `parse` reads it. */
export interface AlertParser {
  name: Alert['source'];
  detect(ctx: ParseContext): boolean;
  parse(ctx: ParseContext): ParseResult;
}
