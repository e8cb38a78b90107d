/**
 * A Loki world for gather and tool tests: `shop/checkout` (labelled the Kubernetes-recommended way)
 * logging ~10k lines around an incident at 10:30 with planted secrets, and `shop/search` (labelled
 * `app`) logging 10k lines of high-variety free text.
 */
import type { FakeLokiStream } from '../../fakes/loki/server.js';
import { generateStream, seededRandom } from '../logs/generate.js';

export const FROM = new Date('2024-01-29T10:00:00Z');
export const ONSET = new Date('2024-01-29T10:30:00Z');
export const TO = new Date('2024-01-29T10:35:00Z');

export const SECRETS = {
  awsKey: 'AKIAIOSFODNN7EXAMPLE',
  bearer: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjaGVja291dCIsImlhdCI6MTcwNjUyMjQwMH0.Zm9vYmFyYmF6cXV4cXV1eGNvcmdl',
  email: 'jane.doe@acme-shop.io',
} as const;

const at = (ms: number): Date => new Date(FROM.getTime() + ms);

function checkoutEntries(): { ts: Date; line: string }[] {
  const out = generateStream(10_000, 3, FROM, TO).lines.map((l) => ({ ts: l.ts!, line: l.line }));
  for (let s = 0; s < 35 * 60; s += 10) {
    const ts = at(s * 1000 + 5);
    out.push({ ts, line: `ts=${ts.toISOString()} level=error msg="s3 upload failed" bucket=receipts access_key=${SECRETS.awsKey}` });
    out.push({ ts, line: `ts=${ts.toISOString()} level=warn msg="retrying call" header="Authorization: Bearer ${SECRETS.bearer}"` });
    out.push({ ts, line: `ts=${ts.toISOString()} level=info msg="receipt mailed" to=${SECRETS.email}` });
  }
  // The incident: from 10:29 the database pool runs dry.
  for (let s = 0; s < 360; s++) {
    const ts = at(29 * 60_000 + s * 1000 + 7);
    out.push({ ts, line: `ts=${ts.toISOString()} level=error msg="pool exhausted" db=orders waiting=${20 + (s % 50)}` });
  }
  return out;
}

function searchEntries(): { ts: Date; line: string }[] {
  const r = seededRandom(99);
  const words = Array.from({ length: 300 }, (_, i) => `w${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}q`);
  return Array.from({ length: 10_000 }, (_, i) => {
    const n = 2 + Math.floor(r() * 14);
    const line = Array.from({ length: n }, () => words[Math.floor(r() * words.length)]).join(' ');
    return { ts: at(Math.floor((i * 35 * 60_000) / 10_000)), line };
  });
}

export function lokiWorld(): FakeLokiStream[] {
  return [
    {
      labels: { namespace: 'shop', app_kubernetes_io_name: 'checkout', container: 'app', pod: 'checkout-7d9f8b6c5d-x2x7k' },
      entries: checkoutEntries(),
    },
    { labels: { namespace: 'shop', app: 'search', container: 'search' }, entries: searchEntries() },
    { labels: { namespace: 'other', app: 'checkout' }, entries: [{ ts: at(60_000), line: 'level=error msg="not my checkout"' }] },
  ];
}
