/**
 * A remote API that accepts connections and never finishes answering: `headers` sends a 200 with a JSON
 * content type and then stalls the body; otherwise nothing at all is sent. What a wedged API server,
 * proxy or load balancer looks like to a client without a timeout.
 */
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export interface HangingServer {
  url: string;
  /** Requests received (method and path). */
  requests: string[];
  /** A KubeConfig whose cluster is this server. */
  kubeConfig(): KubeConfig;
  close(): Promise<void>;
}

export async function startHangingServer(mode: 'silent' | 'headers' = 'silent'): Promise<HangingServer> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    if (mode === 'headers') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"items": [');
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'hung', server: url, skipTLSVerify: true }],
        users: [{ name: 'reader', token: 'reader-token' }],
        contexts: [{ name: 'hung', cluster: 'hung', user: 'reader' }],
        currentContext: 'hung',
      });
      return kc;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
