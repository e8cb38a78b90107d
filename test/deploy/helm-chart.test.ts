/**
 * The Helm chart deploy/helm/vigil, rendered offline by scripts/helm-render.mjs (no `helm` binary on
 * these machines) with its default values and with ci/full-values.yaml (+ the example policy). Every
 * document must parse and match the Kubernetes object models (k8s-schema.ts: known fields, types,
 * required fields; not formats, admission or CRDs), and the safety properties hold: a default install
 * is read-only and binds nothing outside its namespace, Secret reads only in listed namespaces, the pod
 * unprivileged with probes on the endpoints src/http serves, a NetworkPolicy and a PDB. The chart's RBAC
 * is deploy/'s, so the kustomize base and the chart stay in step; `kubectl kustomize` renders the base
 * when kubectl is installed.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { renderChart, renderManifests } from '../../scripts/helm-render.mjs';
import { validateObject } from './k8s-schema.js';

const root = new URL('../../', import.meta.url).pathname;
const chart = `${root}deploy/helm/vigil`;
const NS = 'vigil';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
  [k: string]: any;
}

const render = (values: object = {}, namespace = NS): Obj[] =>
  parseAllDocuments(renderManifests(chart, { values, name: 'vigil', namespace })).map((d) => {
    if (d.errors.length) throw new Error(d.errors.map((e) => e.message).join('; '));
    return d.toJS() as Obj;
  });

const examplePolicy = parse(readFileSync(`${root}deploy/policy.example.yaml`, 'utf8'));
const fullValues = { ...parse(readFileSync(`${chart}/ci/full-values.yaml`, 'utf8')), policy: { enabled: true, content: examplePolicy } };
const defaults = render();
const full = render(fullValues);
// Split mode: the executor as its own Deployment, with its own Slack app's Secret created from values.
const splitValues = { ...fullValues, executor: { ...fullValues.executor, split: { enabled: true, existingSecret: '', botToken: 'xoxb-3333-4444-executor', signingSecret: '0123456789abcdef0123456789abcdef' } } };
const split = render(splitValues);

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection', 'escalate', 'bind', 'impersonate', '*']);
const byKind = (docs: Obj[], kind: string) => docs.filter((d) => d.kind === kind);
const roleOf = (docs: Obj[], b: Obj) => docs.find((d) => d.kind === b.roleRef!.kind && d.metadata.name === b.roleRef!.name && (d.kind === 'ClusterRole' || d.metadata.namespace === b.metadata.namespace));
const writes = (r: Obj | undefined) => (r?.rules ?? []).some((rule) => rule.verbs.some((v) => WRITE_VERBS.has(v)));
const readsSecrets = (r: Obj | undefined) => (r?.rules ?? []).some((rule) => rule.resources.includes('secrets') || rule.resources.includes('*'));
const deploymentOf = (docs: Obj[]) => byKind(docs, 'Deployment')[0]!;
const deployDocs = (file: string): Obj[] => parseAllDocuments(readFileSync(`${root}deploy/${file}`, 'utf8')).map((d) => d.toJS() as Obj);

describe.each([
  ['default values', defaults],
  ['full values', full],
  ['split mode', split],
])('the chart rendered with %s', (_name, docs) => {
  it('renders documents that all match the Kubernetes object models', () => {
    expect(docs.length).toBeGreaterThan(8);
    for (const d of docs) expect(validateObject(d), `${d.kind}/${d.metadata?.name}`).toEqual([]);
  });

  it('puts namespaced objects in the release namespace, bindings aside', () => {
    for (const d of docs.filter((d) => !['ClusterRole', 'ClusterRoleBinding', 'RoleBinding'].includes(d.kind))) expect(d.metadata.namespace, `${d.kind}/${d.metadata.name}`).toBe(NS);
  });

  it('refers only to roles and ServiceAccounts it creates', () => {
    for (const b of docs.filter((d) => d.kind.endsWith('Binding'))) {
      expect(roleOf(docs, b), `${b.kind}/${b.metadata.name}`).toBeDefined();
      for (const s of b.subjects!) expect(docs.some((d) => d.kind === 'ServiceAccount' && d.metadata.name === s.name && s.namespace === NS)).toBe(true);
    }
  });

  it('never lets a ClusterRoleBinding read Secrets, nor any binding read them in its own namespace or kube-system', () => {
    for (const b of byKind(docs, 'ClusterRoleBinding')) expect(readsSecrets(roleOf(docs, b)), b.metadata.name).toBe(false);
    for (const b of byKind(docs, 'RoleBinding').filter((b) => readsSecrets(roleOf(docs, b)))) expect([NS, 'kube-system']).not.toContain(b.metadata.namespace);
  });

  it('runs the pod non-root, read-only, without capabilities, with RuntimeDefault seccomp and requests above the measured RSS', () => {
    const pod = deploymentOf(docs).spec.template.spec;
    const c = pod.containers[0];
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(pod.serviceAccountName).toBe('vigil');
    // docs/benchmarks.md: peak RSS 554 MB in the alert storm.
    expect(c.resources.requests.memory).toBe('640Mi');
    expect(640 * 2 ** 20).toBeGreaterThan(554e6);
    expect(c.resources.limits.memory).toBeDefined();
  });

  it('probes /readyz (start-up, readiness) and /livez (liveness), which src/http/probes.ts serves', () => {
    const served = readFileSync(`${root}src/http/probes.ts`, 'utf8');
    const c = deploymentOf(docs).spec.template.spec.containers[0];
    const paths = { startupProbe: '/readyz', readinessProbe: '/readyz', livenessProbe: '/livez' };
    for (const [probe, path] of Object.entries(paths)) {
      expect(c[probe].httpGet).toEqual({ path, port: 'http' });
      expect(served).toContain(`path: '${path}'`);
    }
    expect(c.ports[0]).toMatchObject({ name: 'http', containerPort: 3000 });
  });

  it('has a NetworkPolicy (egress: DNS, the API server, HTTPS to public addresses, and what is added) and a PDB', () => {
    const [np] = byKind(docs, 'NetworkPolicy');
    expect(np!.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(np!.spec.podSelector.matchLabels).toEqual(deploymentOf(docs).spec.selector.matchLabels);
    const [dns, api, internet] = np!.spec.egress;
    expect(dns.ports).toEqual([{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }]);
    expect(api.ports.map((p: { port: number }) => p.port)).toEqual([443, 6443]);
    expect(internet).toMatchObject({ ports: [{ port: 443, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '0.0.0.0/0', except: expect.arrayContaining(['10.0.0.0/8']) } }] });
    expect(np!.spec.ingress).toHaveLength(1);
    expect(np!.spec.ingress[0].ports).toEqual([{ port: 'http', protocol: 'TCP' }]);
    expect(byKind(docs, 'PodDisruptionBudget')[0]!.spec.selector.matchLabels).toEqual(deploymentOf(docs).spec.selector.matchLabels);
  });

  it('sets only settings the app knows (.env.example), from a ConfigMap and Secrets', () => {
    const known = new Set([...readFileSync(`${root}.env.example`, 'utf8').matchAll(/^([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]));
    for (const cm of byKind(docs, 'ConfigMap').filter((c) => c.metadata.name === 'vigil-config')) for (const k of Object.keys(cm.data)) expect(known.has(k), k).toBe(true);
    for (const s of byKind(docs, 'Secret')) for (const k of Object.keys(s.stringData)) expect(known.has(k), `${s.metadata.name}: ${k}`).toBe(true);
  });
});

describe('a default install', () => {
  it('is read-only: no RoleBinding or ClusterRoleBinding grants a write anywhere, no policy file', () => {
    for (const b of defaults.filter((d) => d.kind.endsWith('Binding'))) expect(writes(roleOf(defaults, b)), `${b.kind}/${b.metadata.name}`).toBe(false);
    const cm = defaults.find((d) => d.metadata.name === 'vigil-config')!;
    expect(cm.data.VIGIL_POLICY_FILE).toBeUndefined();
  });

  it('binds nothing outside its own namespace and reads no Secrets, so it applies on a fresh cluster', () => {
    expect(byKind(defaults, 'RoleBinding').filter((b) => b.metadata.namespace !== NS)).toEqual([]);
    expect(defaults.filter((d) => d.kind === 'ClusterRole' && readsSecrets(d))).toEqual([]);
    expect(defaults.some((d) => d.kind === 'Secret')).toBe(false); // tokens come from slack.existingSecret
  });

  it('reads, cluster-wide, exactly what deploy/reader-rbac.yaml grants', () => {
    const reader = defaults.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'vigil-reader')!;
    const base = deployDocs('reader-rbac.yaml').find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'vigil-reader')!;
    expect(reader.rules).toEqual(base.rules);
  });
});

describe('the full values', () => {
  const bindings = byKind(full, 'RoleBinding');
  const executorBindings = bindings.filter((b) => b.subjects!.some((s) => s.name === 'vigil-executor'));

  it('binds the executor only in executor.namespaces, with deploy/executor-rbac.yaml\'s roles', () => {
    expect(executorBindings.map((b) => `${b.metadata.namespace}:${b.roleRef!.name}`).sort()).toEqual(
      ['payments:vigil-executor-production', 'payments-staging:vigil-executor-staging', 'shop:vigil-executor-production', 'shop-staging:vigil-executor-staging'].sort(),
    );
    const base = deployDocs('executor-rbac.yaml');
    for (const name of ['vigil-executor-production', 'vigil-executor-staging', 'vigil-executor-nodes'])
      expect(full.find((d) => d.kind === 'ClusterRole' && d.metadata.name === name)!.rules, name).toEqual(base.find((d) => d.metadata.name === name)!.rules);
    // Cluster-wide writes: cordon_node's get/patch nodes, and impersonation's two audit extras; nothing else.
    const crbWrites = byKind(full, 'ClusterRoleBinding').map((b) => roleOf(full, b)!).filter(writes).map((r) => r.rules);
    expect(crbWrites).toEqual(expect.arrayContaining([
      [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'patch'] }],
      [{ apiGroups: ['authentication.k8s.io'], resources: ['userextras/approved-by', 'userextras/incident'], verbs: ['impersonate'] }],
    ]));
    expect(crbWrites).toHaveLength(2);
  });

  it('reads Secrets only in reader.secretNamespaces, one RoleBinding each', () => {
    const secretBindings = bindings.filter((b) => readsSecrets(roleOf(full, b)));
    expect(secretBindings.map((b) => b.metadata.namespace).sort()).toEqual([...fullValues.reader.secretNamespaces].sort());
    expect(secretBindings.every((b) => b.roleRef!.kind === 'ClusterRole' && b.subjects![0]!.name === 'vigil')).toBe(true);
  });

  it('mounts the policy it was given, and creates the Secrets from values', () => {
    const policy = full.find((d) => d.metadata.name === 'vigil-policy')!;
    expect(parse(policy.data['policy.yaml'])).toEqual(examplePolicy);
    const cm = full.find((d) => d.metadata.name === 'vigil-config')!;
    expect(cm.data).toMatchObject({ VIGIL_POLICY_FILE: '/etc/vigil/policy/policy.yaml', OPENAI_MODEL: 'gpt-4.1', PROMETHEUS_URL: 'http://prometheus.monitoring:9090', VIGIL_ALERT_CHANNELS: 'C0ALERTS1,C0ALERTS2' });
    const slack = full.find((d) => d.kind === 'Secret' && d.metadata.name === 'vigil-slack')!;
    expect(slack.stringData).toEqual({ SLACK_BOT_TOKEN: 'xoxb-1111-2222-placeholder', SLACK_APP_TOKEN: 'xapp-1-placeholder' });
    const d = deploymentOf(full);
    expect(d.spec.strategy.type).toBe('RollingUpdate');
    expect(d.spec.template.spec.containers[0].image).toBe(`registry.example.com/vigil@${fullValues.image.digest}`);
  });

  it('token mode grants TokenRequest for the executor only, and no impersonation', () => {
    const docs = render({ ...fullValues, executor: { ...fullValues.executor, mode: 'token' } });
    const roles = byKind(docs, 'Role');
    expect(roles.map((r) => r.rules)).toEqual([[{ apiGroups: [''], resources: ['serviceaccounts/token'], resourceNames: ['vigil-executor'], verbs: ['create'] }]]);
    expect(docs.some((d) => d.rules?.some((r) => r.verbs.includes('impersonate')))).toBe(false);
  });
});

describe('split mode (executor.split.enabled)', () => {
  const investigatorSa = 'vigil';
  const executorSa = 'vigil-executor';
  const boundTo = (sa: string) => split.filter((d) => d.kind.endsWith('Binding') && d.subjects!.some((x) => x.kind === 'ServiceAccount' && x.name === sa));

  it('gives the investigator\'s ServiceAccount no impersonation, no TokenRequest and no write anywhere', () => {
    const roles = boundTo(investigatorSa).map((b) => roleOf(split, b)!);
    expect(roles.length).toBeGreaterThan(0);
    for (const r of roles) expect(writes(r), r.metadata.name).toBe(false);
    expect(split.some((d) => d.rules?.some((r) => r.verbs.includes('impersonate')))).toBe(false);
    expect(split.some((d) => d.rules?.some((r) => r.resources.includes('serviceaccounts/token')))).toBe(false);
  });

  it('runs the investigator with VIGIL_ROLE=investigator and its own Slack Secret, the executor as its own SA with its own', () => {
    const [bot, executor] = [split.find((d) => d.kind === 'Deployment' && d.metadata.name === 'vigil')!, split.find((d) => d.kind === 'Deployment' && d.metadata.name === 'vigil-executor')!];
    expect(bot.spec.template.spec.serviceAccountName).toBe(investigatorSa);
    expect(bot.spec.template.spec.containers[0].env).toContainEqual({ name: 'VIGIL_ROLE', value: 'investigator' });
    const pod = executor.spec.template.spec;
    expect(pod.serviceAccountName).toBe(executorSa);
    expect(pod.automountServiceAccountToken).toBe(true);
    expect(pod.containers[0].command).toEqual(['node', 'dist/main-executor.js']);
    expect(pod.containers[0].env).toContainEqual({ name: 'VIGIL_ROLE', value: 'executor' });
    const secretsOf = (d: Obj) => d.spec.template.spec.containers[0].envFrom.filter((e: { secretRef?: { name: string } }) => e.secretRef).map((e: { secretRef: { name: string } }) => e.secretRef.name);
    expect(secretsOf(executor)).not.toContain('vigil-slack');
    expect(secretsOf(bot)).not.toContain('vigil-executor-slack');
    expect(split.find((d) => d.kind === 'Secret' && d.metadata.name === 'vigil-executor-slack')!.stringData).toEqual({ VIGIL_EXECUTOR_SLACK_BOT_TOKEN: 'xoxb-3333-4444-executor', VIGIL_EXECUTOR_SLACK_SIGNING_SECRET: '0123456789abcdef0123456789abcdef' });
    // The bot's Service selects the investigator only; the executor has its own (its Slack Request URL).
    const services = byKind(split, 'Service');
    expect(services.find((x) => x.metadata.name === 'vigil')!.spec.selector['app.kubernetes.io/component']).toBe('bot');
    expect(services.find((x) => x.metadata.name === 'vigil-executor')!.spec.selector['app.kubernetes.io/component']).toBe('executor');
  });

  it('the executor reads as the reader does and writes only where executor.namespaces binds it', () => {
    const reader = split.find((d) => d.kind === 'ClusterRoleBinding' && d.metadata.name === 'vigil-executor-reader')!;
    expect(reader.roleRef!.name).toBe('vigil-reader');
    expect(byKind(split, 'RoleBinding').filter((b) => b.subjects!.some((x) => x.name === executorSa)).map((b) => b.metadata.namespace).sort()).toEqual(['payments', 'payments-staging', 'shop', 'shop-staging']);
  });

  const selects = (sel: Record<string, string>, labels: Record<string, string>) => Object.entries(sel).every(([k, v]) => labels[k] === v);
  const podsOf = (docs: Obj[]) => byKind(docs, 'Deployment').map((d) => ({ name: d.metadata.name, labels: d.spec.template.metadata.labels as Record<string, string> }));
  const coverage = (docs: Obj[]) =>
    podsOf(docs).map(({ name, labels }) => ({
      pod: name,
      pdbs: byKind(docs, 'PodDisruptionBudget').filter((p) => selects(p.spec.selector.matchLabels, labels)).map((p) => p.metadata.name),
      policies: byKind(docs, 'NetworkPolicy').filter((n) => selects(n.spec.podSelector.matchLabels, labels)).map((n) => n.metadata.name),
    }));

  it('covers each pod, investigator and executor, by exactly one PDB and one NetworkPolicy of its own', () => {
    expect(coverage(split)).toEqual([
      { pod: 'vigil', pdbs: ['vigil'], policies: ['vigil'] },
      { pod: 'vigil-executor', pdbs: ['vigil-executor'], policies: ['vigil-executor'] },
    ]);
    // The executor's Deployment and Service select its pod with the same labels as its PDB and policy.
    const executor = split.find((d) => d.kind === 'Deployment' && d.metadata.name === 'vigil-executor')!;
    const sel = executor.spec.selector.matchLabels;
    expect(sel['app.kubernetes.io/component']).toBe('executor');
    expect(split.find((d) => d.kind === 'PodDisruptionBudget' && d.metadata.name === 'vigil-executor')!.spec.selector.matchLabels).toEqual(sel);
    expect(split.find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'vigil-executor')!.spec.podSelector.matchLabels).toEqual(sel);
    expect(split.find((d) => d.kind === 'Service' && d.metadata.name === 'vigil-executor')!.spec.selector).toEqual(sel);
  });

  it("the executor's NetworkPolicy: egress to DNS, the API server, HTTPS (Slack) and PostgreSQL only; ingress on port http in HTTP mode", () => {
    const np = split.find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'vigil-executor')!;
    const bot = split.find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'vigil')!;
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    const [dns, api, internet, db, ...rest] = np.spec.egress;
    // The same DNS, API server and internet rules as the investigator's, none of its extraEgress (LLM gateway, Prometheus).
    expect([dns, api, internet]).toEqual(bot.spec.egress.slice(0, 3));
    expect(api.to).toEqual([{ ipBlock: { cidr: '172.18.0.2/32' } }, { ipBlock: { cidr: '10.96.0.1/32' } }]);
    expect(db).toEqual({ ports: [{ port: 5432, protocol: 'TCP' }] });
    expect(rest).toEqual([]);
    expect(np.spec.ingress).toEqual([{ ports: [{ port: 'http', protocol: 'TCP' }] }]);
    expect(split.find((d) => d.kind === 'Deployment' && d.metadata.name === 'vigil-executor')!.spec.template.spec.containers[0].ports[0].name).toBe('http');
  });

  it("the executor's NetworkPolicy takes no inbound traffic in Socket Mode, and no database rule with SQLite unless told", () => {
    const socket = render({ ...splitValues, executor: { ...splitValues.executor, split: { ...splitValues.executor.split, signingSecret: '', appToken: 'xapp-1-executor' } } });
    const np = socket.find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'vigil-executor')!;
    expect(validateObject(np)).toEqual([]);
    expect(np.spec.ingress).toEqual([]);
    const explicit = render({ ...splitValues, executor: { ...splitValues.executor, split: { ...splitValues.executor.split, slackMode: 'socket' } } });
    expect(explicit.find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'vigil-executor')!.spec.ingress).toEqual([]);
    const dbPeer = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'db' } } }];
    const sqlite = render({ ...splitValues, database: { url: 'file:/data/vigil.db' }, networkPolicy: { ...splitValues.networkPolicy, executor: { ingressFrom: dbPeer, extraEgress: [] } } });
    const sqliteNp = sqlite.find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'vigil-executor')!;
    expect(sqliteNp.spec.egress).toHaveLength(3);
    expect(sqliteNp.spec.ingress[0].from).toEqual(dbPeer);
    const inSecret = render({ ...splitValues, database: { url: 'file:/data/vigil.db' }, networkPolicy: { ...splitValues.networkPolicy, database: { to: dbPeer, ports: [5432] } } });
    expect(inSecret.find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'vigil-executor')!.spec.egress[3]).toEqual({ ports: [{ port: 5432, protocol: 'TCP' }], to: dbPeer });
  });

  it('changes nothing for the investigator, and adds no PDB or NetworkPolicy, with split mode off', () => {
    for (const docs of [defaults, full]) expect(coverage(docs)).toEqual([{ pod: 'vigil', pdbs: ['vigil'], policies: ['vigil'] }]);
    for (const kind of ['PodDisruptionBudget', 'NetworkPolicy']) expect(split.filter((d) => d.kind === kind && d.metadata.name === 'vigil'), kind).toEqual(byKind(full, kind));
    // Split settings given but split off: the same documents as without them.
    const off = render({ ...fullValues, executor: { ...fullValues.executor, split: { ...splitValues.executor.split, enabled: false, slackMode: 'http' } }, networkPolicy: { ...fullValues.networkPolicy, executor: { extraEgress: [{ to: [{ ipBlock: { cidr: '10.1.0.0/16' } }] }], ingressFrom: [] } } });
    expect(off).toEqual(full);
    // And with PDBs or NetworkPolicies switched off, split mode renders none for the executor either.
    const none = render({ ...splitValues, podDisruptionBudget: { enabled: false }, networkPolicy: { ...splitValues.networkPolicy, enabled: false } });
    expect(none.filter((d) => d.kind === 'PodDisruptionBudget' || d.kind === 'NetworkPolicy')).toEqual([]);
  });

  it('matches deploy/components/split-executor (the kustomize component)', () => {
    const binding = deployDocs('components/split-executor/executor-reader-binding.yaml')[0]!;
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'vigil-reader' });
    const dropped = deployDocs('components/split-executor/drop-executor-access.yaml').map((d) => `${d.kind}/${d.metadata.name}`);
    expect(dropped.sort()).toEqual(deployDocs('executor-access.yaml').map((d) => `${d.kind}/${d.metadata.name}`).sort());
  });
});

describe('values the chart refuses', () => {
  it.each([
    ['Secret reads in its own namespace', { reader: { secretNamespaces: ['vigil'] } }, /never bind Secret reads there/],
    ['Secret reads in kube-system', { reader: { secretNamespaces: ['kube-system'] } }, /never bind Secret reads there/],
    ['executor in kube-system', { executor: { namespaces: [{ namespace: 'kube-system', role: 'production' }] } }, /never writes in kube-system/],
    ['an unknown executor role', { executor: { namespaces: [{ namespace: 'shop', role: 'admin' }] } }, /must be one of/],
    ['root', { podSecurityContext: { runAsNonRoot: false } }, /runAsNonRoot/],
    ['no alert channel', { slack: { alertChannels: [] } }, /alertChannels/],
    ['a created Secret without a bot token', { slack: { existingSecret: '' } }, /slack.botToken/],
    ['an unknown value', { replicas: 2 }, /Additional property replicas/],
  ])('%s', (_what, values, error) => {
    expect(() => render(values)).toThrow(error);
  });
});

it('NOTES.txt says how to check the install, and that a default install is read-only', () => {
  const notes = renderChart(chart, { namespace: NS }).get('vigil/templates/NOTES.txt')!;
  expect(notes).toContain('vigil doctor');
  expect(notes).toContain('/sre status');
  expect(notes).toContain('Read-only');
});

// The kustomize base renders (kubectl from Debian's kubernetes-client, or any kubectl ≥ 1.14) and, like
// the chart's default, binds nothing outside `vigil`; the example namespaces are an optional component.
const kubectl = (() => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
describe.skipIf(!kubectl)('kubectl kustomize deploy/', () => {
  const docs = parseAllDocuments(execFileSync('kubectl', ['kustomize', `${root}deploy`], { encoding: 'utf8' })).map((d) => d.toJS() as Obj);

  it('renders objects that match the Kubernetes models, all in vigil, none writable beyond impersonating the executor', () => {
    expect(docs.length).toBeGreaterThan(10);
    for (const d of docs) expect(validateObject(d), `${d.kind}/${d.metadata.name}`).toEqual([]);
    expect(docs.filter((d) => d.metadata.namespace && d.metadata.namespace !== 'vigil')).toEqual([]);
    expect(docs.filter((d) => d.kind === 'ClusterRoleBinding' && readsSecrets(roleOf(docs, d)))).toEqual([]);
  });

  it('has the chart\'s pod: same probes, security context and resources', () => {
    const pod = deploymentOf(docs).spec.template.spec;
    const chartPod = deploymentOf(defaults).spec.template.spec;
    for (const k of ['startupProbe', 'readinessProbe', 'livenessProbe', 'securityContext', 'resources']) expect(pod.containers[0][k], k).toEqual(chartPod.containers[0][k]);
    expect(pod.securityContext).toEqual(chartPod.securityContext);
  });
});
