/**
 * The Kubernetes and GitHub adapters give up on an API that never answers: client-node and Octokit have
 * no timeout of their own, so without one a wedged API server would hold a read (and the investigation
 * waiting on it) for ever.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { GitHubReader, GitHubReadError } from '../../src/evidence/github/client.js';
import { githubTools } from '../../src/evidence/github/tools.js';
import { KubeReader, KubeReadError } from '../../src/evidence/kubernetes/client.js';
import { kubernetesTools } from '../../src/evidence/kubernetes/tools/index.js';
import { createRedactor } from '../../src/redact/index.js';
import { startHangingServer, type HangingServer } from './hanging-server.js';

const servers: HangingServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function hanging(mode: 'silent' | 'headers'): Promise<HangingServer> {
  const s = await startHangingServer(mode);
  servers.push(s);
  return s;
}

async function timed<T>(work: Promise<T>): Promise<{ ms: number; error: unknown }> {
  const started = Date.now();
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { ms: Date.now() - started, error };
}

describe.each(['silent', 'headers'] as const)('an API server that never finishes answering (%s)', (mode) => {
  it('Kubernetes: a typed read fails after the request timeout, naming the call', async () => {
    const api = await hanging(mode);
    const reader = new KubeReader(api.kubeConfig(), { timeoutMs: 200 });
    const { ms, error } = await timed(reader.readDeployment('shop', 'checkout'));
    expect(ms).toBeLessThan(2000);
    expect(error).toBeInstanceOf(KubeReadError);
    expect((error as Error).message).toMatch(/get deployment shop\/checkout: .*did not answer within 200 ms/);
    expect(api.requests).toEqual(['GET /apis/apps/v1/namespaces/shop/deployments/checkout']);
  });

  it('Kubernetes: a tool (generic object API) answers an error result instead of hanging', async () => {
    const api = await hanging(mode);
    const tools = new Map(kubernetesTools(new KubeReader(api.kubeConfig(), { timeoutMs: 200 })).map((t) => [t.name, t]));
    const describeTool = tools.get('k8s_describe')!;
    const started = Date.now();
    const result = await describeTool.execute(describeTool.parameters.parse({ kind: 'Deployment', namespace: 'shop', name: 'checkout' }), { redactor: createRedactor(), now: new Date() });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result).toMatchObject({ status: 'error', error: expect.stringMatching(/did not answer within 200 ms/) });
  });

  it('GitHub: a listing fails after the request timeout with no response', async () => {
    const api = await hanging(mode);
    const reader = new GitHubReader({ baseUrl: api.url, token: 'ghp-fake-reader', logger: pino({ level: 'silent' }), timeoutMs: 200 });
    const window = { since: new Date('2024-01-15T09:00:00Z'), until: new Date('2024-01-15T10:00:00Z') };
    const { ms, error } = await timed(reader.listCommits('acme/shop', window));
    expect(ms).toBeLessThan(2000);
    expect(error).toBeInstanceOf(GitHubReadError);
    expect((error as GitHubReadError).status).toBeUndefined();
    expect((error as Error).message).toMatch(/GitHub did not answer within 200 ms/);
  });

  it('GitHub: the recent-changes tool answers an error result instead of hanging', async () => {
    const api = await hanging(mode);
    const [recent] = githubTools(new GitHubReader({ baseUrl: api.url, logger: pino({ level: 'silent' }), timeoutMs: 200 }));
    const started = Date.now();
    const result = await recent!.execute(recent!.parameters.parse({ repo: 'acme/shop', kinds: ['commit'] }), { redactor: createRedactor(), now: new Date() });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result.status).toBe('error');
    expect(JSON.stringify(result)).toMatch(/did not answer within 200 ms/);
  });
});
