import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listScenarios, loadScenario, parseOffset, ScenarioError, type Scenario } from './load.js';

const here = dirname(fileURLToPath(import.meta.url));
const demoDir = join(here, 'demo-checkout-scaled-to-zero');
const onset = new Date('2025-03-01T12:00:00Z');

function find(s: Scenario, kind: string, namespace: string | undefined, name: string) {
  const obj = s.objects.find((o) => o.kind === kind && o.metadata.namespace === namespace && o.metadata.name === name);
  if (!obj) throw new Error(`${kind} ${namespace}/${name} not in world`);
  return obj;
}

describe('parseOffset', () => {
  it('reads signed compound offsets', () => {
    expect(parseOffset('0')).toBe(0);
    expect(parseOffset('-13s')).toBe(-13_000);
    expect(parseOffset('+1h30m')).toBe(5_400_000);
    expect(parseOffset('-3d')).toBe(-259_200_000);
    expect(parseOffset('-250ms')).toBe(-250);
    expect(parseOffset('-5x')).toBeUndefined();
  });
});

describe('loadScenario: the demo world', () => {
  let demo: Scenario;
  beforeAll(async () => {
    demo = await loadScenario(demoDir, { onset });
  });

  it('shifts every @offset to onset + offset', () => {
    const dep = find(demo, 'Deployment', 'shop', 'checkout');
    const kubectl = (dep.metadata.managedFields as { manager: string; time: string; subresource?: string }[]).find(
      (m) => m.manager === 'kubectl',
    );
    expect(kubectl).toMatchObject({ time: '2025-03-01T11:59:47Z', subresource: 'scale' });
    expect(dep.metadata.creationTimestamp).toBe('2025-01-15T12:00:00Z');
    const scaled = find(demo, 'Event', 'shop', 'checkout.17f6e0d2a4c1b9e3');
    expect(scaled['lastTimestamp']).toBe('2025-03-01T11:59:48Z');
    expect(demo.logs['shop/storefront-6b7f9c8d4-2kx8v/storefront']?.current).toContain(
      '2025-03-01T12:00:00Z level=error msg="upstream request failed"',
    );
    expect(JSON.stringify(demo)).not.toMatch(/"@[+-]?\d|\{\{@/);
    expect(demo.onset).toEqual(onset);
  });

  it('defaults the onset to now, in whole seconds', async () => {
    const before = Date.now();
    const fresh = await loadScenario(demoDir);
    expect(fresh.onset.getTime() % 1000).toBe(0);
    expect(Math.abs(fresh.onset.getTime() - before)).toBeLessThan(5000);
  });

  it('keeps the alert as Alertmanager posted it', () => {
    expect(demo.alert.username).toBe('Alertmanager');
    expect(demo.alert.attachments?.[0]).toMatchObject({
      title: '[FIRING:1] KubeDeploymentReplicasMismatch (checkout shop critical)',
      text: '',
      color: 'danger',
      mrkdwn_in: ['fallback', 'pretext', 'text'],
    });
  });

  it('writes Helm release Secrets that decode (base64 → base64 → gunzip → JSON) back to the shorthand', () => {
    const shorthand = demo.helmReleases[0]!;
    expect(shorthand.revisions).toHaveLength(7);
    for (const rev of shorthand.revisions) {
      const secret = find(demo, 'Secret', 'shop', `sh.helm.release.v1.checkout.v${rev.version}`);
      expect(secret['type']).toBe('helm.sh/release.v1');
      expect(secret.metadata.labels).toMatchObject({ owner: 'helm', name: 'checkout', status: rev.status, version: String(rev.version) });
      const helmString = Buffer.from((secret['data'] as { release: string }).release, 'base64').toString('utf8');
      const release = JSON.parse(gunzipSync(Buffer.from(helmString, 'base64')).toString('utf8'));
      expect(release).toMatchObject({
        name: 'checkout',
        namespace: 'shop',
        version: rev.version,
        info: { status: rev.status, description: rev.description, last_deployed: rev.deployedAt, deleted: '' },
        chart: { metadata: { name: 'checkout', version: rev.chart.replace('checkout-', ''), appVersion: rev.appVersion } },
        config: rev.values,
      });
      expect(release.info.first_deployed).toBe('2025-01-15T12:00:00Z');
    }
    const v7 = shorthand.revisions.find((r) => r.version === 7)!;
    expect(v7).toMatchObject({ status: 'deployed', deployedAt: '2025-02-26T12:00:00Z', values: { replicaCount: 3 } });
    const secret = find(demo, 'Secret', 'shop', 'sh.helm.release.v1.checkout.v7');
    const helmString = Buffer.from((secret['data'] as { release: string }).release, 'base64').toString('utf8');
    const manifest: string = JSON.parse(gunzipSync(Buffer.from(helmString, 'base64')).toString('utf8')).manifest;
    expect(manifest).toContain('replicas: 3');
    expect(manifest).toContain('image: "registry.example.com/shop/checkout:1.14.2"');
    expect(manifest).toContain('helm.sh/chart: checkout-2.3.1');
  });

  it('lists the planted secrets, each present in the world', () => {
    expect(demo.plantedSecrets).toContain('AKIAJ7Q3XK5N2VWPL4TR');
    expect(demo.plantedSecrets).toHaveLength(6);
  });

  it('drops the noise (objects, their logs and the events about them) on request', async () => {
    const quiet = await loadScenario(demoDir, { onset, noise: false });
    const ids = (s: Scenario) => s.objects.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`);
    expect(ids(demo)).toContain('Pod/payments/payments-worker-6c8f9d7b4-x2x9k');
    expect(ids(quiet)).not.toContain('Pod/payments/payments-worker-6c8f9d7b4-x2x9k');
    expect(quiet.objects.filter((o) => o.metadata.namespace === 'payments')).toEqual([]);
    expect(ids(quiet)).not.toContain('Event/shop/checkout-7d9f8b6c5-r7wnd.17f4b8e3a2d1c0f9');
    expect(ids(quiet)).toContain('Event/shop/checkout-7d9f8b6c5-r7wnd.17f6e0d2c9e8f103');
    expect(Object.keys(quiet.logs)).not.toContain('payments/payments-worker-6c8f9d7b4-x2x9k/worker');
    expect(ids(quiet)).toContain('Deployment/shop/checkout');
    expect(quiet.objects.length).toBeLessThan(demo.objects.length);
  });

  it('lists scenario folders', async () => {
    expect(await listScenarios(here)).toContain(demoDir);
  });
});

describe('loadScenario: malformed scenarios', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'vigil-scenarios-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  async function write(id: string, body: string): Promise<string> {
    const dir = join(root, id);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'scenario.yaml'), body);
    return dir;
  }

  const valid = (id: string, extra = ''): string => `id: ${id}
title: t
description: d
alert: { username: Alertmanager, text: "" }
kubernetes:
  objects:
    - { apiVersion: v1, kind: Namespace, metadata: { name: shop, creationTimestamp: "@-1d" } }
${extra}`;

  it('loads a minimal valid scenario', async () => {
    const s = await loadScenario(await write('ok', valid('ok')), { onset });
    expect(s.objects[0]?.metadata.creationTimestamp).toBe('2025-02-28T12:00:00Z');
  });

  it('names the file and the field for a schema error', async () => {
    const dir = await write('no-kind', valid('no-kind').replace('kind: Namespace, ', ''));
    await expect(loadScenario(dir)).rejects.toThrow(ScenarioError);
    await expect(loadScenario(dir)).rejects.toThrow(`${join(dir, 'scenario.yaml')}: kubernetes.objects.0.kind:`);
  });

  it('rejects invalid YAML, bad offsets, unknown noise ids, missing planted secrets and a wrong id', async () => {
    await expect(loadScenario(await write('yaml', 'id: [unclosed'))).rejects.toThrow(/yaml[/\\]scenario\.yaml: invalid YAML/);
    await expect(loadScenario(await write('offset', valid('offset').replace('"@-1d"', '"@-1y"')))).rejects.toThrow(
      'kubernetes.objects.0.metadata.creationTimestamp: "@-1y" is not a time offset',
    );
    await expect(loadScenario(await write('noise', valid('noise', 'noise: [Pod/shop/nope]')))).rejects.toThrow(
      'noise id "Pod/shop/nope" matches no object',
    );
    await expect(loadScenario(await write('planted', valid('planted', 'planted_secrets: [hunter2]')))).rejects.toThrow(
      'planted secret "hunter2…" does not occur anywhere in the world',
    );
    await expect(loadScenario(await write('wrong-id', valid('other')))).rejects.toThrow('id "other" does not match the folder name "wrong-id"');
    const helm = `kubernetes:
  helmReleases:
    - name: web
      namespace: shop
      manifest: "replicas: {{ .Values.replicas }}"
      revisions:
        - { version: 1, status: deployed, chart: web-1.0.0, appVersion: "1", description: Install complete, deployedAt: "@-1d", values: {} }
`;
    await expect(loadScenario(await write('helm', valid('helm').replace('kubernetes:\n', helm)))).rejects.toThrow(
      'helm release web revision 1: manifest uses .Values.replicas, not in values',
    );
    await expect(loadScenario(join(root, 'missing'))).rejects.toThrow(/missing[/\\]scenario\.yaml: cannot read/);
  });
});
