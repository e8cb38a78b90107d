/**
 * What a failed model call may repeat: only the API's JSON `error.message`, never a raw body (a gateway's
 * HTML error page) and never the configured key (gateways echo it back in a 401). Real SDKs against a
 * raw loopback server for non-JSON bodies, and the fake model APIs for JSON ones.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../src/agent/loop.js';
import { AnthropicProvider, ModelConfigurationError, OpenAIProvider } from '../../../src/agent/providers/index.js';
import { withoutKey } from '../../../src/agent/providers/errors.js';
import { ModelUnavailableError, type ModelProvider, type ModelRequest } from '../../../src/agent/types.js';
import { emptyKubeEvidence } from '../../../src/evidence/kubernetes/gather.js';
import { createRedactor } from '../../../src/redact/index.js';
import type { TriageInput } from '../../../src/triage/analyzer.js';
import { startFakeAnthropic } from '../../fakes/models/anthropic.js';
import { startFakeOpenAI } from '../../fakes/models/openai.js';

const KEY = 'corp-gw-7f3a9c1e5b2d8f4a6c0e';
const HTML = `<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1><p>upstream llm-proxy-7.internal.corp:8443 reset; request 4f2a; x-api-key ${KEY}</p></body></html>`;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** Answers every request with `status` and a raw body of the given content type. */
async function rawServer(status: number, contentType: string, body: string): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': contentType, 'x-should-retry': 'false' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const onset = new Date('2024-01-15T10:00:00Z');
const input: TriageInput = {
  alert: { source: 'alertmanager', status: 'firing', title: 'CheckoutDown', alertName: 'CheckoutDown', labels: {}, labelValues: [], annotations: {}, count: 1, text: '' },
  onset,
  kube: emptyKubeEvidence(onset, 'http://127.0.0.1'),
  changes: [],
};

const request: ModelRequest = { system: 'You are Vigil.', tools: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], maxOutputTokens: 64 };

function providers(url: string): [string, ModelProvider][] {
  return [
    ['anthropic', new AnthropicProvider({ apiKey: KEY, baseURL: url, maxRetries: 0 })],
    ['openai', new OpenAIProvider({ apiKey: KEY, baseURL: `${url}/v1`, maxRetries: 0 })],
  ];
}

async function failure(p: ModelProvider): Promise<Error> {
  const err = await p.complete(request).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof Error)) throw new Error('expected the call to fail');
  return err;
}

describe('non-JSON error bodies', () => {
  it('an HTML 502 page is reduced to its size', async () => {
    const url = await rawServer(502, 'text/html', HTML);
    for (const [name, p] of providers(url)) {
      const err = await failure(p);
      expect(err, name).toBeInstanceOf(ModelUnavailableError);
      expect(err.message, name).toContain(`server error (502) (retries disabled): non-JSON error body (${Buffer.byteLength(HTML)} bytes)`);
      for (const leak of ['<html', 'Bad Gateway', 'llm-proxy-7', KEY]) expect(err.message, name).not.toContain(leak);
    }
  });

  it('a plain-text 401 that echoes the key says only that the key was rejected', async () => {
    const url = await rawServer(401, 'text/plain', `Invalid API key: ${KEY}`);
    for (const [name, p] of providers(url)) {
      const err = await failure(p);
      expect(err, name).toBeInstanceOf(ModelConfigurationError);
      expect(err.message, name).toMatch(/the API key was rejected \(401\)\. Check the configured key\. non-JSON error body \(\d+ bytes\)/);
      expect(err.message, name).not.toContain(KEY.slice(0, 12));
    }
  });

  it('the run notice carries the reduced message, not the page', async () => {
    const url = await rawServer(502, 'text/html', HTML);
    const result = await runAgent({
      provider: new AnthropicProvider({ apiKey: KEY, baseURL: url, maxRetries: 0 }),
      tools: [],
      input,
      findings: [],
      redactor: createRedactor(),
    });
    expect(result).toMatchObject({ status: 'model_unavailable', errorKind: 'unavailable' });
    expect(result.error).toContain('non-JSON error body');
    expect(result.error).not.toContain('llm-proxy-7');
  });
});

describe('JSON error messages that echo the key', () => {
  it('Anthropic: the JSON message is kept, the key (whole or a prefix) is not', async () => {
    for (const echoed of [KEY, `${KEY.slice(0, 12)}…`]) {
      const api = await startFakeAnthropic({ name: 'echo key', apiKey: KEY, script: [{ status: 401, message: `Invalid API key: ${echoed}` }] });
      closers.push(() => api.close());
      const err = await failure(new AnthropicProvider({ apiKey: KEY, baseURL: api.url, maxRetries: 0 }));
      expect(err).toBeInstanceOf(ModelConfigurationError);
      expect(err.message).toContain('Invalid API key: [API key]');
      expect(err.message).not.toContain(KEY.slice(0, 12));
    }
  });

  it('OpenAI: the JSON message is kept, the key is not', async () => {
    const api = await startFakeOpenAI({ name: 'echo key', apiKey: KEY, script: [{ status: 401, message: `Incorrect API key provided: ${KEY}.` }] });
    closers.push(() => api.close());
    const err = await failure(new OpenAIProvider({ apiKey: KEY, baseURL: api.baseURL, maxRetries: 0 }));
    expect(err).toBeInstanceOf(ModelConfigurationError);
    expect(err.message).toContain('Incorrect API key provided: [API key].');
    expect(err.message).not.toContain(KEY.slice(0, 12));
  });

  it('withoutKey leaves text that merely shares short pieces with the key', () => {
    expect(withoutKey('rate limited for corp-gw users', KEY)).toBe('rate limited for corp-gw users');
    expect(withoutKey('anything', undefined)).toBe('anything');
  });
});
