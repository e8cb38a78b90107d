import { isValidSlackRequest } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { blockActionsPayload, messageEventEnvelope, signSlackRequest, slashCommandFields } from './events.js';

describe('signSlackRequest', () => {
  it('produces a v0 signature that Bolt’s own verifier accepts', () => {
    const body = JSON.stringify({ type: 'event_callback', event: { type: 'message' } });
    const headers = signSlackRequest('s3cret', body);
    const verify = (secret: string, nowMilliseconds = Date.now()) =>
      isValidSlackRequest({
        signingSecret: secret,
        body,
        headers: { 'x-slack-signature': headers['X-Slack-Signature'], 'x-slack-request-timestamp': Number(headers['X-Slack-Request-Timestamp']) },
        nowMilliseconds,
      });
    expect(headers['X-Slack-Signature']).toMatch(/^v0=[0-9a-f]{64}$/);
    expect(verify('s3cret')).toBe(true);
    expect(verify('other')).toBe(false);
    expect(verify('s3cret', Date.now() + 6 * 60_000)).toBe(false);
  });

  it('is deterministic for a given timestamp', () => {
    expect(signSlackRequest('k', 'body', 1_700_000_000)).toEqual(signSlackRequest('k', 'body', 1_700_000_000));
    expect(signSlackRequest('k', 'body', 1_700_000_000)['X-Slack-Request-Timestamp']).toBe('1700000000');
  });
});

describe('envelope builders', () => {
  it('builds a realistic event_callback for an integration’s bot_message', () => {
    const envelope = messageEventEnvelope({ channel: 'C1', ts: '1764430000.000100', bot_id: 'B1', subtype: 'bot_message', username: 'alertmanager', attachments: [{ title: '[FIRING:1] HighErrorRate' }] });
    expect(envelope).toMatchObject({
      type: 'event_callback',
      team_id: 'T0FAKE',
      api_app_id: 'A0VIGIL',
      authorizations: [{ team_id: 'T0FAKE', user_id: 'U0VIGIL', is_bot: true }],
      event: { type: 'message', subtype: 'bot_message', channel: 'C1', ts: '1764430000.000100', event_ts: '1764430000.000100', text: '', bot_id: 'B1', channel_type: 'channel' },
    });
    expect(envelope.event_id).toMatch(/^Ev\d+$/);
    expect(envelope.event).not.toHaveProperty('client_msg_id');
    expect(messageEventEnvelope({ channel: 'C1', ts: '1.1' }).event_id).not.toBe(envelope.event_id);
    expect(messageEventEnvelope({ channel: 'C1', ts: '1.1', event_id: 'EvFIXED' }).event_id).toBe('EvFIXED');
  });

  it('gives human messages a client_msg_id and keeps thread fields', () => {
    const { event } = messageEventEnvelope({ channel: 'C1', ts: '2.2', user: 'U1', text: 'hi', thread_ts: '1.1' });
    expect(event).toMatchObject({ user: 'U1', text: 'hi', thread_ts: '1.1' });
    expect(event.client_msg_id).toEqual(expect.any(String));
  });

  it('fills slash command fields and block_actions payloads', () => {
    expect(slashCommandFields({ text: 'status', user_id: 'U1', channel_id: 'C1', response_url: 'http://x/response/1' })).toMatchObject({
      command: '/sre', text: 'status', user_id: 'U1', channel_id: 'C1', team_id: 'T0FAKE', response_url: 'http://x/response/1',
    });
    const payload = blockActionsPayload({ user: { id: 'U1' }, channel: 'C1', message: { ts: '1.1' }, action: { action_id: 'approve', value: 'plan-1' } });
    expect(payload).toMatchObject({
      type: 'block_actions',
      user: { id: 'U1' },
      container: { type: 'message', message_ts: '1.1', channel_id: 'C1' },
      actions: [{ type: 'button', action_id: 'approve', value: 'plan-1' }],
    });
  });
});
