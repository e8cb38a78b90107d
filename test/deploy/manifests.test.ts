/**
 * The Kubernetes manifests in deploy/ are parsed (no cluster here) and checked for what Vigil's
 * safety rests on: the reader ServiceAccount cannot write, the executor can do exactly what the
 * example policy allows in the namespaces it allows it, the pod runs unprivileged with health probes,
 * and every name a manifest refers to exists.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse } from 'yaml';
import { CATALOG_ACCESS, READER_READS, describeAccess, executorNeeds, policyNamespaces, type Access } from '../../src/cli/doctor.js';
import { loadPolicy } from '../../src/policy/index.js';

const dir = new URL('../../deploy/', import.meta.url).pathname;

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  rules?: Rule[];
  roleRef?: { apiGroup: string; kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
  [field: string]: unknown;
}

const NOT_MANIFESTS = new Set(['policy.example.yaml', 'kustomization.yaml']);
/** The optional component binding the executor and Secret reads in the example policy's namespaces. */
const COMPONENT = 'components/example-namespaces/';
const files = [
  ...readdirSync(dir).filter((f) => f.endsWith('.yaml') && !NOT_MANIFESTS.has(f)),
  ...readdirSync(`${dir}${COMPONENT}`).filter((f) => f.endsWith('.yaml') && !NOT_MANIFESTS.has(f)).map((f) => `${COMPONENT}${f}`),
];
const byFile = new Map<string, Manifest[]>(
  files.map((f) => {
    const docs = parseAllDocuments(readFileSync(`${dir}${f}`, 'utf8'));
    for (const d of docs) if (d.errors.length) throw new Error(`${f}: ${d.errors.map((e) => e.message).join('; ')}`);
    return [f, docs.map((d) => d.toJS() as Manifest)];
  }),
);
const kustomization = parse(readFileSync(`${dir}kustomization.yaml`, 'utf8')) as {
  resources: string[];
  namespace?: string;
  configMapGenerator: { name: string; namespace: string; files: string[] }[];
};
const component = parse(readFileSync(`${dir}${COMPONENT}kustomization.yaml`, 'utf8')) as { kind: string; resources: string[] };
/** What `kubectl apply -k deploy/` creates by itself: no binding outside `vigil` (a fresh cluster has no shop). */
const base = kustomization.resources.flatMap((f) => byFile.get(f) ?? []);
/** …and with the example-namespaces component (the examples and the token alternative are applied by hand). */
const applied = [...base, ...component.resources.flatMap((f) => byFile.get(`${COMPONENT}${f}`) ?? [])];
const all = [...byFile.values()].flat();
const find = (kind: string, name: string, namespace?: string) =>
  all.find((m) => m.kind === kind && m.metadata.name === name && (namespace === undefined || m.metadata.namespace === namespace));
const policy = loadPolicy(`${dir}policy.example.yaml`);

const WRITE_VERBS = ['create', 'update', 'patch', 'delete', 'deletecollection', 'escalate', 'bind', 'impersonate', '*'];

/** The rules bound to a ServiceAccount, with the namespace each applies in (undefined: cluster-wide). */
function rulesOf(sa: string, docs: Manifest[] = applied): { rule: Rule; namespace?: string; role: string }[] {
  const out: { rule: Rule; namespace?: string; role: string }[] = [];
  for (const b of docs.filter((m) => m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding')) {
    if (!b.subjects?.some((s) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === 'vigil')) continue;
    const role = b.roleRef!.kind === 'Role' ? find('Role', b.roleRef!.name, b.metadata.namespace) : find('ClusterRole', b.roleRef!.name);
    for (const rule of role?.rules ?? []) out.push({ rule, role: role!.metadata.name, ...(b.kind === 'RoleBinding' ? { namespace: b.metadata.namespace! } : {}) });
  }
  return out;
}

/** Each verb × group × resource of a rule, as doctor's Access (`deployments/scale` → subresource). */
function expand(rule: Rule): Access[] {
  return rule.verbs.flatMap((verb) =>
    rule.apiGroups.flatMap((group) =>
      rule.resources.map((r) => {
        const [resource, subresource] = r.split('/');
        return { verb, group, resource: resource!, ...(subresource ? { subresource } : {}) };
      }),
    ),
  );
}
const key = (a: Access): string => `${describeAccess(a)} (${a.group || 'core'})`;

describe('deploy/ manifests', () => {
  it('parse, and every object has apiVersion, kind and a name', () => {
    expect(files.length).toBeGreaterThanOrEqual(8);
    for (const m of all) {
      expect(m.apiVersion, JSON.stringify(m.metadata)).toMatch(/^[\w.]+(\/v\w+)?$/);
      expect(m.kind).toMatch(/^[A-Z]\w+$/);
      expect(m.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    }
  });

  it('kustomization lists every manifest except the examples, the token alternative and the optional component, and sets no namespace', () => {
    for (const f of kustomization.resources) expect(byFile.has(f), f).toBe(true);
    expect(files.filter((f) => !kustomization.resources.includes(f) && !f.startsWith(COMPONENT)).sort()).toEqual(['executor-token.yaml', 'secrets.example.yaml']);
    expect(component.kind).toBe('Component');
    for (const f of component.resources) expect(byFile.has(`${COMPONENT}${f}`), f).toBe(true);
    // Without the component, a fresh cluster needs no namespace but `vigil` (issue 16).
    expect(base.filter((m) => m.metadata.namespace && m.metadata.namespace !== 'vigil')).toEqual([]);
    // A top-level namespace would move the executor's RoleBindings out of the namespaces they grant.
    expect(kustomization.namespace).toBeUndefined();
    expect(kustomization.configMapGenerator).toEqual([{ name: 'vigil-policy', namespace: 'vigil', files: ['policy.yaml=policy.example.yaml'] }]);
  });

  it('creates the expected kinds in the vigil namespace', () => {
    const kinds = applied.map((m) => m.kind);
    for (const k of ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ConfigMap', 'PersistentVolumeClaim', 'Deployment', 'Service'])
      expect(kinds, k).toContain(k);
    expect(find('Namespace', 'vigil')).toBeDefined();
    const namespaced = applied.filter((m) => !['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(m.kind));
    for (const m of namespaced) expect(m.metadata.namespace, `${m.kind}/${m.metadata.name}`).toBeDefined();
    for (const m of namespaced.filter((m) => m.kind !== 'RoleBinding')) expect(m.metadata.namespace, `${m.kind}/${m.metadata.name}`).toBe('vigil');
  });

  it('every binding refers to a role and ServiceAccounts that exist', () => {
    for (const b of all.filter((m) => m.kind.endsWith('Binding'))) {
      const ref = b.roleRef!;
      expect(ref.apiGroup).toBe('rbac.authorization.k8s.io');
      const role = ref.kind === 'Role' ? find('Role', ref.name, b.metadata.namespace) : find('ClusterRole', ref.name);
      expect(role, `${b.kind}/${b.metadata.name} → ${ref.kind}/${ref.name}`).toBeDefined();
      for (const s of b.subjects!) {
        expect(s.kind).toBe('ServiceAccount');
        expect(find('ServiceAccount', s.name, s.namespace), `${b.metadata.name}: ${s.namespace}/${s.name}`).toBeDefined();
      }
    }
  });
});

describe('the reader ServiceAccount `vigil`', () => {
  const rules = rulesOf('vigil');

  it('has no write verb and no wildcard, outside the impersonation of the executor', () => {
    expect(rules.length).toBeGreaterThan(5);
    for (const { rule, role } of rules) {
      for (const list of [rule.verbs, rule.resources, rule.apiGroups]) expect(list, role).not.toContain('*');
      const writes = rule.verbs.filter((v) => WRITE_VERBS.includes(v));
      if (!writes.length) continue;
      // The only exception: `impersonate` on the executor SA (by name) and on the two audit extras.
      expect(rule.verbs, role).toEqual(['impersonate']);
      const executorSa = rule.apiGroups[0] === '' && rule.resources.join() === 'serviceaccounts' && rule.resourceNames?.join() === 'vigil-executor';
      const extras = rule.apiGroups.join() === 'authentication.k8s.io' && rule.resources.sort().join() === 'userextras/approved-by,userextras/incident' && !rule.resourceNames;
      expect(executorSa || extras, `${role}: ${JSON.stringify(rule)}`).toBe(true);
    }
  });

  it('only reads with get, list and watch, and never watches Secrets', () => {
    const reads = rules.filter(({ rule }) => !rule.verbs.includes('impersonate'));
    for (const { rule } of reads) for (const v of rule.verbs) expect(['get', 'list', 'watch']).toContain(v);
    const secrets = reads.filter(({ rule }) => rule.resources.includes('secrets'));
    expect([...new Set(secrets.map(({ role }) => role))]).toEqual(['vigil-reader-secrets']);
    for (const { rule } of secrets) expect(rule.verbs).toEqual(['get', 'list']);
  });

  it('reads Secrets only per namespace, in the namespaces the policy lets Vigil act in; never cluster-wide, in vigil or kube-system', () => {
    const secrets = rules.filter(({ rule }) => rule.resources.includes('secrets') || rule.resources.includes('*'));
    expect(secrets.filter(({ namespace }) => namespace === undefined)).toEqual([]);
    const where = secrets.map(({ namespace }) => namespace!).sort();
    expect(where).toEqual(policyNamespaces(policy).names.filter((ns) => executorNeeds(policy, ns).length > 0).sort());
    for (const ns of ['vigil', 'kube-system']) expect(where).not.toContain(ns);
  });

  it('is granted, cluster-wide, every read `vigil doctor` requires (and the per-namespace ones where Secrets are bound)', () => {
    const granted = new Set(rules.filter(({ namespace }) => namespace === undefined).flatMap(({ rule }) => expand(rule).map(key)));
    const inShop = new Set(rules.filter(({ namespace }) => namespace === 'shop').flatMap(({ rule }) => expand(rule).map(key)));
    for (const { access, perNamespace } of READER_READS) expect((perNamespace ? inShop : granted).has(key(access)), key(access)).toBe(true);
  });

  it('reaches the executor by impersonation (default) or, in the alternative, by TokenRequest for that SA only', () => {
    const sa = rules.find(({ rule }) => rule.resources.includes('serviceaccounts') && rule.verbs.includes('impersonate'));
    expect(sa?.namespace).toBe('vigil');
    const token = rulesOf('vigil', byFile.get('executor-token.yaml')!);
    expect(token).toEqual([
      { role: 'vigil-executor-token', namespace: 'vigil', rule: { apiGroups: [''], resources: ['serviceaccounts/token'], resourceNames: ['vigil-executor'], verbs: ['create'] } },
    ]);
  });
});

describe('the executor ServiceAccount `vigil-executor`', () => {
  // Cluster-wide: only cordon_node's `patch nodes` (Nodes are cluster-scoped); everything else per namespace.
  const clusterWide = rulesOf('vigil-executor').filter((r) => r.namespace === undefined);
  const rules = rulesOf('vigil-executor').filter((r) => r.namespace !== undefined);

  it('is bound per namespace, cluster-wide only for get/patch nodes (cordon_node), and mounts no token', () => {
    expect(rules.length).toBeGreaterThan(0);
    expect(clusterWide).toEqual([{ role: 'vigil-executor-nodes', rule: { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'patch'] } }]);
    expect(find('ServiceAccount', 'vigil-executor', 'vigil')!['automountServiceAccountToken']).toBe(false);
  });

  it('may do, in each namespace, exactly what the example policy lets the catalog do there, plus get', () => {
    const { names } = policyNamespaces(policy);
    const bound = [...new Set(rules.map(({ namespace }) => namespace!))].sort();
    expect(bound).toEqual(names.filter((ns) => executorNeeds(policy, ns).length > 0).sort());
    expect(bound).toEqual(['payments', 'payments-staging', 'shop', 'shop-staging']);
    for (const ns of names) {
      const granted = rules.filter((r) => r.namespace === ns).flatMap(({ rule }) => expand(rule));
      const writes = granted.filter((a) => a.verb !== 'get').map(key).sort();
      expect(writes, ns).toEqual([...new Set(executorNeeds(policy, ns).map(key))].sort());
      // `get` only on what it also writes.
      const same = (a: Access, b: Access) => a.group === b.group && a.resource === b.resource && a.subresource === b.subresource;
      for (const g of granted.filter((a) => a.verb === 'get')) expect(granted.some((w) => w.verb !== 'get' && same(w, g)), `${ns}: ${key(g)}`).toBe(true);
    }
  });

  it('can suspend cronjobs only in staging, and never touches the frozen or never-write namespaces', () => {
    const cron = key(CATALOG_ACCESS.suspend_cronjob['cronjobs']![0]!);
    const where = rules.filter(({ rule }) => expand(rule).some((a) => key(a) === cron)).map(({ namespace }) => namespace);
    expect(where.sort()).toEqual(['payments-staging', 'shop-staging']);
    for (const ns of ['shop-dr', 'kube-system', 'monitoring', 'cert-manager', 'vigil']) expect(rules.filter((r) => r.namespace === ns), ns).toEqual([]);
  });
});

describe('the bot Deployment', () => {
  const deployment = find('Deployment', 'vigil', 'vigil') as Manifest & {
    spec: {
      replicas: number;
      strategy: { type: string };
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string> }; spec: Record<string, any> };
    };
  };
  const pod = deployment.spec.template.spec;
  const container = pod['containers'][0];

  it('runs one replica of the pinned image as the reader ServiceAccount, replaced with Recreate (SQLite)', () => {
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy.type).toBe('Recreate');
    expect(container.image).toBe('ghcr.io/example/vigil:0.1.0');
    expect(pod['serviceAccountName']).toBe('vigil');
    expect(find('ServiceAccount', pod['serviceAccountName'], 'vigil')).toBeDefined();
    expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
  });

  it('runs non-root, without privilege escalation, on a read-only root filesystem with writable /data and /tmp', () => {
    expect(pod['securityContext'].runAsNonRoot).toBe(true);
    expect(pod['securityContext'].runAsUser).toBeGreaterThan(0);
    expect(pod['securityContext'].seccompProfile.type).toBe('RuntimeDefault');
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    const mounts = Object.fromEntries((container.volumeMounts as { name: string; mountPath: string }[]).map((m) => [m.mountPath, m.name]));
    const volumes = Object.fromEntries((pod['volumes'] as { name: string }[]).map((v) => [v.name, v]));
    expect(volumes[mounts['/data']!]).toMatchObject({ persistentVolumeClaim: { claimName: 'vigil-data' } });
    expect(find('PersistentVolumeClaim', 'vigil-data', 'vigil')).toBeDefined();
    expect(volumes[mounts['/tmp']!]).toHaveProperty('emptyDir');
    expect(container.resources.requests).toBeDefined();
    expect(container.resources.limits.memory).toBeDefined();
  });

  // Readiness (and start-up) on /readyz, which checks the database and Slack; liveness on /livez, which
  // checks neither: a database blip must take the pod out of service, not restart it (issue 16).
  it('probes start-up and readiness on /readyz and liveness on /livez, at port 3000', () => {
    const ports = Object.fromEntries((container.ports as { name: string; containerPort: number }[]).map((p) => [p.name, p.containerPort]));
    const paths = { startupProbe: '/readyz', readinessProbe: '/readyz', livenessProbe: '/livez' };
    for (const [probe, path] of Object.entries(paths)) {
      expect(container[probe].httpGet.path, probe).toBe(path);
      const port = container[probe].httpGet.port;
      expect(typeof port === 'number' ? port : ports[port]).toBe(3000);
      expect(container[probe].timeoutSeconds, probe).toBeGreaterThanOrEqual(2);
    }
  });

  it('takes settings from existing ConfigMaps and Secrets, all of them known settings', () => {
    const known = new Set([...readFileSync(new URL('../../.env.example', import.meta.url), 'utf8').matchAll(/^([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]));
    const envFrom = container.envFrom as { configMapRef?: { name: string }; secretRef?: { name: string; optional?: boolean } }[];
    const config = find('ConfigMap', envFrom.find((e) => e.configMapRef)!.configMapRef!.name, 'vigil') as Manifest & { data: Record<string, string> };
    expect(config).toBeDefined();
    const secretRefs = envFrom.filter((e) => e.secretRef).map((e) => e.secretRef!);
    expect(secretRefs.map((s) => s.name)).toContain('vigil-slack');
    for (const ref of secretRefs) {
      const secret = find('Secret', ref.name, 'vigil') as Manifest & { stringData: Record<string, string> };
      expect(secret, ref.name).toBeDefined();
      for (const k of Object.keys(secret.stringData)) expect(known.has(k), `${ref.name}: ${k}`).toBe(true);
    }
    for (const k of Object.keys(config.data)) expect(known.has(k), `vigil-config: ${k}`).toBe(true);
    expect(config.data['VIGIL_KUBE_IN_CLUSTER']).toBe('true');
    expect(config.data['PORT']).toBe('3000');
    // The policy file the ConfigMap names is the one the generated ConfigMap mounts.
    const policyVolume = (pod['volumes'] as { name: string; configMap?: { name: string } }[]).find((v) => v.configMap?.name === 'vigil-policy')!;
    const mount = (container.volumeMounts as { name: string; mountPath: string }[]).find((m) => m.name === policyVolume.name)!;
    expect(config.data['VIGIL_POLICY_FILE']).toBe(`${mount.mountPath}/policy.yaml`);
  });

  it('is reached through a Service that selects its pods on the http port', () => {
    const svc = find('Service', 'vigil', 'vigil') as Manifest & { spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] } };
    expect(deployment.spec.template.metadata.labels).toMatchObject(svc.spec.selector);
    expect(svc.spec.ports[0]).toMatchObject({ port: 3000, targetPort: 'http' });
  });
});
