/**
 * The canary world: the clock-skew scenario (fake Kubernetes, real Prometheus, fake Loki, fake GitHub,
 * Helm history) with the canary corpus (test/redact/canaries.ts) planted through every input channel Vigil
 * reads — container env values, an envFrom ConfigMap and Secret, ConfigMap data, annotations and labels,
 * Events, current and previous container logs, Loki lines, Prometheus label values, Helm release values and
 * manifest, flag changes (the flags webhook), GitHub pull request titles and bodies and commit messages, a
 * change announcement, the alert's title and text — plus what a test sends itself (a responder's reply,
 * `/sre investigate`, an Alertmanager webhook): see {@link slackTexts}.
 *
 * Every shape goes through at least two channels (three, spread round-robin), each time in another of the
 * forms it takes in real text, and every channel carries many shapes. Each channel also carries a marker
 * (`cxmark-<channel>`) that is no secret, so a test can prove the channel's text really reached a sink.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import type { Canary } from '../redact/canaries.js';

export const BASE_SCENARIO = 'clock-skew-token-rejected';
const BASE_DIR = join(fileURLToPath(new URL('../scenarios/', import.meta.url)), BASE_SCENARIO);

/** The channels the corpus is spread over; `oneLine` channels take only single-line forms. */
export const CHANNELS = [
  { id: 'env', oneLine: false },
  { id: 'envfrom', oneLine: false },
  { id: 'configmap', oneLine: false },
  { id: 'annotation', oneLine: false },
  { id: 'event', oneLine: true },
  { id: 'log', oneLine: false },
  { id: 'prevlog', oneLine: true },
  { id: 'loki', oneLine: true },
  { id: 'helm', oneLine: false },
  { id: 'alerttext', oneLine: true },
  { id: 'steering', oneLine: false },
  { id: 'announce', oneLine: true },
  { id: 'prbody', oneLine: false },
  { id: 'commit', oneLine: false },
  { id: 'manual', oneLine: false },
  { id: 'webhook', oneLine: false },
  { id: 'secret', oneLine: false },
  { id: 'promlabel', oneLine: true },
  { id: 'flag', oneLine: true },
] as const;
export type ChannelId = (typeof CHANNELS)[number]['id'] | 'label' | 'alerttitle' | 'prtitle';

export interface Placement {
  shape: string;
  channel: ChannelId;
  line: string;
}

export const marker = (channel: ChannelId): string => `cxmark-${channel}`;

/** Label values are at most 63 characters of `[A-Za-z0-9._-]`, starting and ending alphanumeric. */
const LABEL_VALUE = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;

/** A shape caught by its form alone (a provider prefix, a checksum): the corpus writes it bare, under a key that names nothing. */
const selfIdentifying = (c: Canary): boolean => c.lines.includes(`NOTE=${c.secret}`);

/** Each shape into three channels, round-robin, each time another of its lines; a few more go into titles and labels. */
export function spread(corpus: Canary[]): Placement[] {
  const out: Placement[] = [];
  corpus.forEach((c, i) => {
    for (let k = 0; k < 3; k++) {
      const ch = CHANNELS[(i * 3 + k) % CHANNELS.length]!;
      const lines = ch.oneLine ? c.lines.filter((l) => !l.includes('\n')) : c.lines;
      out.push({ shape: c.shape, channel: ch.id, line: lines[(i + k) % lines.length]! });
    }
  });
  const oneLine = (c: Canary, n = 0) => c.lines.filter((l) => !l.includes('\n'))[n]!;
  // Titles are short and cut: one shape each (the alert's title is cut at 200 characters for its name).
  const pick = (shape: string) => corpus.find((c) => c.shape === shape)!;
  out.push({ shape: 'github_pat_classic', channel: 'alerttitle', line: pick('github_pat_classic').secret });
  for (const shape of ['stripe_secret_live', 'email', 'authorization_bearer']) out.push({ shape, channel: 'prtitle', line: shape === 'authorization_bearer' ? oneLine(pick(shape)) : `fix: handle ${pick(shape).secret}` });
  // Labels, where the secret itself is a legal label value and identifies itself (a label key names nothing).
  for (const c of corpus) if (selfIdentifying(c) && LABEL_VALUE.test(c.secret) && c.secret.length >= 20) out.push({ shape: c.shape, channel: 'label', line: c.secret });
  return out;
}

export const linesOf = (placements: Placement[], channel: ChannelId): string[] => placements.filter((p) => p.channel === channel).map((p) => p.line);

const GW_POD = 'auth-gateway-5c7d9f8b6-zq7tw';
const OTHER_POD = 'auth-gateway-5c7d9f8b6-r2m8k';
export const WORLD = { namespace: 'edge', deployment: 'auth-gateway', pod: GW_POD, otherPod: OTHER_POD, container: 'auth-gateway', repo: 'acme/auth-gateway', release: 'auth-gateway', envConfigMap: 'auth-gateway-env', secret: 'auth-gateway-credentials', fileConfigMap: 'auth-gateway-config', changeChannel: 'deploys' };

type Obj = { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown }; [k: string]: any };

/**
 * Writes the canary scenario into `dir/<id>/scenario.yaml` and returns its folder. The Slack texts (alert,
 * reply, command) are the test's to send; see {@link slackTexts}.
 */
export function writeCanaryScenario(dir: string, placements: Placement[]): string {
  const s = parseYaml(readFileSync(join(BASE_DIR, 'scenario.yaml'), 'utf8'), { merge: true }) as any;
  // The parsed YAML shares aliased nodes (the pods' container is the Deployment's): copy before changing.
  s.kubernetes.objects = structuredClone(s.kubernetes.objects);
  const objects = s.kubernetes.objects as Obj[];
  const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === WORLD.namespace)!;
  const deployment = find('Deployment', WORLD.deployment);
  const pod = find('Pod', GW_POD);
  const lines = (ch: ChannelId) => linesOf(placements, ch);

  // Container env values, and an envFrom ConfigMap, on the Deployment's template and the pod alike.
  const env = [{ name: 'CANARY_MARK', value: marker('env') }, ...lines('env').map((value, i) => ({ name: `CANARY_NOTE_${i}`, value }))];
  for (const target of [deployment.spec.template.spec, pod.spec]) {
    const c = target.containers[0];
    c.env = [...c.env, ...env];
    c.envFrom = [{ configMapRef: { name: WORLD.envConfigMap } }];
    target.volumes = [{ name: 'config', configMap: { name: WORLD.fileConfigMap } }];
    c.volumeMounts = [{ name: 'config', mountPath: '/etc/auth-gateway' }];
  }
  const cm = (name: string, data: Record<string, string>): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: WORLD.namespace, creationTimestamp: '@-2d', labels: { app: WORLD.deployment } }, data });
  // A Secret the pod reads (envFrom): Vigil must never show its values, even asked for it by name.
  const secretData = { CANARY_MARK: marker('secret'), ...Object.fromEntries(lines('secret').map((l, i) => [`NOTE_${i}`, l])) };
  objects.push({ apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: WORLD.secret, namespace: WORLD.namespace, creationTimestamp: '@-2d', labels: { app: WORLD.deployment } }, data: Object.fromEntries(Object.entries(secretData).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) });
  for (const target of [deployment.spec.template.spec, pod.spec]) target.containers[0].envFrom.push({ secretRef: { name: WORLD.secret } });
  objects.push(cm(WORLD.envConfigMap, { CANARY_MARK: marker('envfrom'), ...Object.fromEntries(lines('envfrom').map((l, i) => [`NOTE_${i}`, l])) }));
  objects.push(cm(WORLD.fileConfigMap, { 'gateway.yaml': [`# ${marker('configmap')}`, 'listen: ":8080"', ...lines('configmap')].join('\n') + '\n', ...Object.fromEntries(lines('configmap').map((l, i) => [`note-${i}.txt`, l])) }));

  // Annotations on the Deployment and the pod; labels on the pod where the value is legal.
  const annotations = { 'acme.io/mark': marker('annotation'), ...Object.fromEntries(lines('annotation').map((l, i) => [`acme.io/note-${i}`, l])) };
  deployment.metadata.annotations = { ...deployment.metadata.annotations, ...annotations };
  pod.metadata = { ...pod.metadata, annotations: { ...pod.metadata.annotations, ...annotations }, labels: { ...pod.metadata.labels, 'acme.io/mark': marker('label'), ...Object.fromEntries(lines('label').map((l, i) => [`acme.io/tag-${i}`, l])) } };

  // Events about the failing pod, one per line.
  const event = (i: number, message: string): Obj => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${GW_POD}.canary${String(i).padStart(4, '0')}`, namespace: WORLD.namespace, creationTimestamp: `@-${3 + i}m` },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', name: GW_POD, namespace: WORLD.namespace },
    reason: i === 0 ? 'CanaryMark' : 'BackendError',
    message,
    source: { component: 'kubelet', host: 'node-2' },
    firstTimestamp: `@-${3 + i}m`,
    lastTimestamp: `@-${2 + i}m`,
    count: 2,
    type: 'Warning',
  });
  objects.push(event(0, `probe note ${marker('event')}`), ...lines('event').map((l, i) => event(i + 1, l)));

  // Container logs: the current log of the failing pod, and a previous (crashed) instance.
  const stamped = (ls: string[], from: number) => ls.map((l, i) => `{{@-${from - i * 5}s}} ${l}`).join('\n') + '\n';
  const logKey = `${WORLD.namespace}/${GW_POD}/${WORLD.container}`;
  const current = s.kubernetes.logs[logKey].current as string;
  s.kubernetes.logs[logKey] = { current: current + stamped([`level=info msg=${marker('log')}`, ...lines('log')], 280), previous: stamped([`level=info msg=${marker('prevlog')}`, ...lines('prevlog'), 'level=fatal msg="exiting"'], 1900) };
  pod.status.containerStatuses[0].restartCount = 1;
  pod.status.containerStatuses[0].lastState = { terminated: { exitCode: 1, reason: 'Error', startedAt: '@-40m', finishedAt: '@-26m' } };

  // Loki: lines of the failing pod's stream.
  const stream = s.loki.streams.find((st: any) => st.labels.pod === GW_POD);
  stream.entries = [...stream.entries, ...[`level=info msg=${marker('loki')}`, ...lines('loki')].map((line, i) => ({ at: `@-${240 - i * 3}s`, line }))];

  // Helm: auth-gateway becomes a Helm release in edge, its values and manifest carrying canaries.
  const helmValues = { mark: marker('helm'), notes: Object.fromEntries(lines('helm').map((l, i) => [`note${i}`, l])), replicaCount: 3 };
  deployment.metadata.labels = { ...deployment.metadata.labels, 'app.kubernetes.io/managed-by': 'Helm' };
  deployment.metadata.annotations = { ...deployment.metadata.annotations, 'meta.helm.sh/release-name': WORLD.release, 'meta.helm.sh/release-namespace': WORLD.namespace };
  s.kubernetes.helmReleases.push({
    name: WORLD.release,
    namespace: WORLD.namespace,
    manifest: ['---', '# Source: auth-gateway/templates/configmap.yaml', 'apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: auth-gateway-notes', 'data:', ...lines('helm').map((l, i) => `  note${i}: ${JSON.stringify(l)}`)].join('\n') + '\n',
    revisions: [
      { version: 8, status: 'superseded', chart: 'auth-gateway-3.1.0', appVersion: '3.1.0', description: 'Upgrade complete', deployedAt: '@-30d', values: { replicaCount: 3 } },
      { version: 9, status: 'deployed', chart: 'auth-gateway-3.2.0', appVersion: '3.2.0', description: 'Upgrade complete', deployedAt: '@-14d', values: helmValues },
    ],
  });

  // Prometheus: an info metric whose label values carry canaries (a URL label, a query string).
  s.prometheus.samples = [
    ...(s.prometheus.samples ?? []),
    ...[marker('promlabel'), ...lines('promlabel')].map((note, i) => ({ metric: 'auth_gateway_upstream_info', labels: { namespace: WORLD.namespace, pod: GW_POD, upstream: `u${i}`, note }, type: 'gauge', points: [['@-10m', 1], ['@-5m', 1], ['@-1m', 1]] })),
  ];

  // GitHub: pull requests (titles, bodies) and commit messages.
  const repo = s.github.repos[WORLD.repo];
  const titles = lines('prtitle');
  const bodies = lines('prbody');
  const third = Math.ceil(bodies.length / 3);
  titles.forEach((title, i) =>
    repo.pulls.push({ number: 150 + i, title, author: 'lena', mergedBy: 'omar', mergedAt: `@-${3 + i}h`, body: [`${marker('prbody')} ${marker('prtitle')}`, ...bodies.slice(i * third, (i + 1) * third)].join('\n\n') }),
  );
  const commits = lines('commit');
  repo.commits.push(...[marker('commit'), ...commits].map((c, i) => ({ message: i === 0 ? `chore: ${c}` : `fix: retry upstream (#${160 + i})\n\n${c}`, author: 'omar', at: `@-${2 * 60 + i}m` })));

  // Flag changes (delivered to the flags webhook before the alert), their values carrying canaries.
  const flagValues = [marker('flag'), ...lines('flag')];
  s.flags = Array.from({ length: Math.ceil(flagValues.length / 2) }, (_, i) => ({ flag: `auth-gateway.setting-${i}`, before: flagValues[2 * i]!, after: flagValues[2 * i + 1] ?? 'on', actor: 'dana', at: `@-${6 + i}m`, environment: 'production' }));

  // A change announcement in the change channel, before the alert.
  s.slack = {
    channels: [{ name: WORLD.changeChannel, purpose: 'changes' }],
    messages: [{ channel: WORLD.changeChannel, at: '@-12m', username: 'flagbot', bot_id: 'B0FLAGBOT1', text: `alice changed the flag auth-gateway.strict-iat in production: ${marker('announce')} ; ${lines('announce').join(' ; ')}` }],
  };

  // The alert: title and text (the annotations a rule templated from labels it saw).
  const att = s.alert.attachments[0];
  att.title = `${att.title} ${lines('alerttitle').join(' ')}`;
  att.text = att.text.replace(' - runbook_url', [` - mark = ${marker('alerttext')}`, ...lines('alerttext').map((l, i) => ` - note${i} = ${l}`), ' - runbook_url'].join('\n'));

  s.planted_secrets = [];
  s.expected = {};
  const out = join(dir, BASE_SCENARIO);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'scenario.yaml'), toYaml(s, { lineWidth: 0, aliasDuplicateObjects: false }));
  return out;
}

/** The Slack texts the test sends: a responder's reply in the incident thread and `/sre investigate`. */
export function slackTexts(placements: Placement[]): { steering: string; manual: string; webhook: Record<string, unknown> } {
  const notes = linesOf(placements, 'webhook');
  const labels = { alertname: 'AuthGatewayUpstreamErrors', namespace: WORLD.namespace, deployment: WORLD.deployment, severity: 'warning' };
  const annotations = { summary: `auth-gateway upstream errors ${marker('webhook')}`, description: notes.slice(0, 4).join('\n'), ...Object.fromEntries(notes.slice(4).map((l, i) => [`note_${i}`, l])) };
  return {
    webhook: {
      version: '4',
      groupKey: '{}:{alertname="AuthGatewayUpstreamErrors"}',
      truncatedAlerts: 0,
      status: 'firing',
      receiver: 'vigil',
      groupLabels: { alertname: labels.alertname },
      commonLabels: labels,
      commonAnnotations: annotations,
      externalURL: 'http://alertmanager.acme.internal:9093',
      alerts: [{ status: 'firing', labels, annotations, startsAt: new Date(Date.now() - 60_000).toISOString(), endsAt: '0001-01-01T00:00:00Z', generatorURL: 'http://prometheus.acme.internal:9090/graph', fingerprint: '5c1a9e0d3b7f2a64' }],
    },
    steering: [`check this too (${marker('steering')}), from the client logs:`, ...linesOf(placements, 'steering')].join('\n'),
    manual: [`auth-gateway 401s again ${marker('manual')}`, ...linesOf(placements, 'manual')].join('\n'),
  };
}
