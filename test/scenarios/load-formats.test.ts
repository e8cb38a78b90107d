/**
 * The scenario format's additions for real incidents: time formats, generated container logs, raw
 * metric samples, certificates valid relative to the onset, CI runs, past Slack traffic, provenance.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkScenario } from './check.js';
import { loadScenario, type Scenario } from './load.js';
import { TIME_FORMATS } from './times.js';

const onset = new Date('2026-12-01T21:20:54.000Z');
let root: string;

const SCENARIO = `
id: formats
title: formats
description: every new section once
source: test
stack: prometheus client defaults
alert_points_at: symptom
alert:
  username: Alertmanager
  attachments:
    - title: "[FIRING:1] ProbeFailed (https://shop.example.com/ critical)"
      text: "started {{@-2m|clock}} ({{@-2m|epoch}})"
      ts: "@-1m|epoch"
kubernetes:
  objects:
    - { apiVersion: v1, kind: Namespace, metadata: { name: shop } }
    - { apiVersion: v1, kind: Pod, metadata: { name: api-1, namespace: shop }, spec: { containers: [ { name: api } ] } }
  logs:
    shop/api-1/api:
      current: |
        {{@-10m}} level=info msg=started at="{{@-10m|java}}"
      repeat:
        - { from: "@-30s", to: "@0", every: 10s, lines: [ 'level=error msg="upstream timed out" at={{t|epoch_ms}}' ] }
        - { from: "@-2m", to: "@-1m", every: 30s, lines: [ 'panic: boom' ], previous: true }
  tlsSecrets:
    - { name: shop-tls, namespace: shop, commonName: shop.example.com, dnsNames: [shop.example.com, www.shop.example.com], notBefore: "@-90d", notAfter: "@-10m" }
prometheus:
  samples:
    - metric: kafka_consumergroup_lag_sum
      labels: { consumergroup: billing, topic: invoices }
      type: gauge
      points: [ ["@-2m", 12], { at: "@-1m", value: 840 } ]
github:
  repos:
    acme/api:
      workflowRuns: [ { name: deploy-production, headSha: 3f9c2ab, actor: ci-bot, at: "@-7m", conclusion: failure } ]
slack:
  channels: [ { name: deploys, purpose: changes } ]
  messages:
    - { channel: deploys, at: "@-9m", username: ArgoCD, text: "Application api synced to 4.2.1 by tok_live_a1B2c3D4e5F6g7H8" }
    - { channel: alerts, at: "@-3h", username: Alertmanager, attachments: [ { title: "[RESOLVED] Old" } ] }
noise: [ Pod/shop/api-1, Namespace/shop ]
planted_secrets: [ "tok_live_a1B2c3D4e5F6g7H8" ]
expected:
  family: tls-certificate
  component: { kind: Secret, namespace: shop, name: shop-tls }
  ruled_out: [ { kind: Pod, namespace: shop, name: api-1 }, deploy-regression ]
`;

let s: Scenario;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'vigil-formats-'));
  await mkdir(join(root, 'formats'));
  await writeFile(join(root, 'formats', 'scenario.yaml'), SCENARIO);
  s = await loadScenario(join(root, 'formats'), { onset });
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('scenario format additions', () => {
  it('renders times in the formats real systems print', () => {
    const t = new Date('2026-12-01T21:15:54.123Z');
    expect(TIME_FORMATS.apache(t)).toBe('01/Dec/2026:21:15:54 +0000');
    expect(TIME_FORMATS.syslog(t)).toBe('Dec  1 21:15:54');
    expect(TIME_FORMATS.java(t)).toBe('2026-12-01 21:15:54,123');
    expect(TIME_FORMATS.klog(t)).toBe('1201 21:15:54.123000');
    expect(TIME_FORMATS.epoch_ns(t)).toBe('1796159754123000000');
    expect(TIME_FORMATS.rfc1123(t)).toBe('Tue, 01 Dec 2026 21:15:54 GMT');
    const a = (s.alert.attachments as { text: string; ts: number }[])[0]!;
    expect(a.text).toBe('started 21:18:54 (1796159934)');
    expect(a.ts).toBe(1796159934 + 60);
  });

  it('expands generated container logs, stamped, in time order, current and previous', () => {
    const log = s.logs['shop/api-1/api']!;
    const lines = log.current.trim().split('\n');
    expect(lines[0]).toBe('2026-12-01T21:10:54Z level=info msg=started at="2026-12-01 21:10:54,000"');
    expect(lines.slice(1)).toEqual([
      '2026-12-01T21:20:24.000Z level=error msg="upstream timed out" at=1796160024000',
      '2026-12-01T21:20:34.000Z level=error msg="upstream timed out" at=1796160034000',
      '2026-12-01T21:20:44.000Z level=error msg="upstream timed out" at=1796160044000',
    ]);
    expect(log.previous?.trim().split('\n')).toEqual(['2026-12-01T21:18:54.000Z panic: boom', '2026-12-01T21:19:24.000Z panic: boom']);
  });

  it('signs real certificates valid relative to the onset', () => {
    const secret = s.objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'shop-tls')!;
    expect(secret['type']).toBe('kubernetes.io/tls');
    const pem = Buffer.from((secret['data'] as Record<string, string>)['tls.crt']!, 'base64').toString();
    const cert = new X509Certificate(pem);
    expect(new Date(cert.validTo).getTime()).toBe(onset.getTime() - 10 * 60_000);
    expect(cert.subjectAltName).toBe('DNS:shop.example.com, DNS:www.shop.example.com');
  });

  it('keeps raw samples, CI runs, past Slack traffic and provenance', () => {
    expect(s.prometheus?.samples[0]?.points).toEqual([
      { t: new Date(onset.getTime() - 120_000), v: 12 },
      { t: new Date(onset.getTime() - 60_000), v: 840 },
    ]);
    expect(s.github?.repos['acme/api']?.workflowRuns?.[0]).toMatchObject({ name: 'deploy-production', conclusion: 'failure', headBranch: 'main' });
    expect(s.slack.messages.map((m) => m.channel)).toEqual(['alerts', 'deploys']);
    expect(s).toMatchObject({ source: 'test', stack: 'prometheus client defaults', alertPointsAt: 'symptom' });
  });

  it('the checker accepts component refs and families in ruled_out', async () => {
    expect(await checkScenario(join(root, 'formats'), true)).toEqual([]);
  });
});
