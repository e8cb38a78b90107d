/**
 * vigil_slack_api_calls_total counts what Slack answered, through the real WebClient: ok, Slack's own
 * error code for `ok: false` (HTTP 200), HTTP errors, and requests that got no answer. A loopback server
 * plays the Web API; the client's retries are off so one call is one request.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { VigilMetrics } from '../../src/http/metrics.js';
import { countingFetch, slackMethodOf } from '../../src/slack/api-metrics.js';
import { parsePrometheusText, valueOf } from '../http/prometheus-text.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

async function fakeSlack(): Promise<string> {
  server = createServer((req, res) => {
    const method = req.url!.split('/').pop();
    res.setHeader('content-type', 'application/json');
    if (method === 'chat.postMessage') return res.end(JSON.stringify({ ok: false, error: 'channel_not_found' }));
    if (method === 'chat.update') return res.writeHead(503).end('{"ok":false}');
    if (method === 'conversations.info') return req.socket.destroy();
    res.end(JSON.stringify({ ok: true, user_id: 'UVIGIL' }));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/api/`;
}

describe('vigil_slack_api_calls_total', () => {
  it('counts each Web API request by method and outcome', async () => {
    const m = new VigilMetrics();
    const client = new WebClient('xoxb-test', { slackApiUrl: await fakeSlack(), retryConfig: { retries: 0 }, fetch: countingFetch(m.slackCalls) });
    await client.auth.test();
    await expect(client.chat.postMessage({ channel: 'C404', text: 'hi' })).rejects.toThrow(/channel_not_found/);
    await expect(client.chat.update({ channel: 'C1', ts: '1.1', text: 'hi' })).rejects.toThrow();
    await expect(client.conversations.info({ channel: 'C1' })).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 20)); // bodies are read from clones after the call returns
    const { samples } = parsePrometheusText(await m.registry.metrics());
    const count = (method: string, outcome: string) => valueOf(samples, 'vigil_slack_api_calls_total', { method, outcome });
    expect(count('auth.test', 'ok')).toBe(1);
    expect(count('chat.postMessage', 'channel_not_found')).toBe(1);
    expect(count('chat.update', 'http_503')).toBe(1);
    expect(count('conversations.info', 'transport')).toBe(1);
  });

  it('labels by the API method, the URL path tail (anything else is unknown)', () => {
    expect(slackMethodOf('https://slack.com/api/chat.postMessage')).toBe('chat.postMessage');
    expect(slackMethodOf('https://files.slack.com/upload/v1/abc%20def')).toBe('unknown');
  });
});
