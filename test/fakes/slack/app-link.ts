/**
 * The fake's side of the connection to the app under test: signed deliveries to `eventsTarget` (usually Bolt's
 * `http://127.0.0.1:PORT/slack/events`), recorded with their outcome so tests can assert acks and await them.
 */
import {
  deliverCommand,
  deliverEvent,
  deliverInteraction,
  type DeliveryOptions,
  type DeliveryResult,
  type SlashCommandInput,
} from './events.js';
import type { EventsTarget } from './types.js';

export interface DeliveryRecord {
  kind: 'event' | 'command' | 'interaction';
  payload: unknown;
  at: number;
  result?: DeliveryResult;
  /** Set when the request itself failed (app not listening…). */
  error?: string;
}

export class AppLink {
  target: EventsTarget | undefined;
  readonly deliveries: DeliveryRecord[] = [];
  private readonly pending = new Set<Promise<unknown>>();

  constructor(target: EventsTarget | undefined, private readonly onChange: () => void) {
    this.target = target;
  }

  private requireTarget(): EventsTarget {
    if (!this.target) throw new Error('fake Slack: no eventsTarget set (pass it to startFakeSlack or call setEventsTarget)');
    return this.target;
  }

  private async track(record: DeliveryRecord, send: (target: EventsTarget) => Promise<DeliveryResult>): Promise<DeliveryResult> {
    const target = this.requireTarget();
    this.deliveries.push(record);
    const attempt = send(target).then(
      (result) => {
        record.result = result;
        return result;
      },
      (error: unknown) => {
        record.error = error instanceof Error ? `${error.message} ${String((error as { cause?: unknown }).cause ?? '')}`.trim() : String(error);
        throw error;
      },
    );
    const settled = attempt.finally(() => {
      this.pending.delete(settled);
      this.onChange();
    });
    settled.catch(() => undefined);
    this.pending.add(settled);
    return attempt;
  }

  sendEvent(envelope: unknown, opts: DeliveryOptions = {}): Promise<DeliveryResult> {
    return this.track({ kind: 'event', payload: envelope, at: Date.now() }, (t) => deliverEvent(t.url, t.signingSecret, envelope, opts));
  }

  sendCommand(command: SlashCommandInput, opts: DeliveryOptions = {}): Promise<DeliveryResult> {
    return this.track({ kind: 'command', payload: command, at: Date.now() }, (t) => deliverCommand(t.url, t.signingSecret, command, opts));
  }

  sendInteraction(payload: unknown, opts: DeliveryOptions = {}): Promise<DeliveryResult> {
    return this.track({ kind: 'interaction', payload, at: Date.now() }, (t) => deliverInteraction(t.url, t.signingSecret, payload, opts));
  }

  /** Resolves once every delivery started so far has settled (success or failure). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
