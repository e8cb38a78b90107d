/**
 * What the doctor tests share: the identities deploy/ binds (as the fake API server's rules), a
 * kubeconfig file for a fake as an operator would have one, and `runDoctor` with its lines collected.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { runDoctor } from '../../src/cli/doctor.js';
import type { Identity, PolicyRule } from '../fakes/kubernetes/server.js';

export const deployDir = new URL('../../deploy/', import.meta.url).pathname;
export const POLICY = `${deployDir}policy.example.yaml`;
export const EXECUTOR = 'system:serviceaccount:vigil:vigil-executor';

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}
// The base plus the component that binds the example policy's namespaces (shop, payments, …): what the
// doctor is proven against is deploy/ as installed with the example policy.
const COMPONENT = 'components/example-namespaces/';
const manifests: Manifest[] = [...readdirSync(deployDir), ...readdirSync(`${deployDir}${COMPONENT}`).map((f) => `${COMPONENT}${f}`)]
  .filter((f) => f.endsWith('.yaml') && !['policy.example.yaml', 'kustomization.yaml', 'executor-token.yaml'].some((x) => f === x || f.endsWith(`/${x}`)))
  .flatMap((f) => parseAllDocuments(readFileSync(`${deployDir}${f}`, 'utf8')).map((d) => d.toJS() as Manifest));

/**
 * The fake's rules for what deploy/ binds to ServiceAccount vigil/<sa>. The fake has no resourceNames,
 * so a by-name grant becomes a grant in that namespace (doctor only asks by name where the manifests
 * grant by name).
 */
export function rulesFromManifests(sa: string): PolicyRule[] {
  const rules: PolicyRule[] = [];
  for (const b of manifests.filter((m) => m.kind === 'RoleBinding' || m.kind === 'ClusterRoleBinding')) {
    if (!b.subjects!.some((s) => s.name === sa && s.namespace === 'vigil')) continue;
    const role = manifests.find((m) => m.kind === b.roleRef!.kind && m.metadata.name === b.roleRef!.name && (m.kind === 'ClusterRole' || m.metadata.namespace === b.metadata.namespace))!;
    for (const r of role.rules!) rules.push({ verbs: r.verbs, apiGroups: r.apiGroups, resources: r.resources, ...(b.kind === 'RoleBinding' ? { namespaces: [b.metadata.namespace!] } : {}) });
  }
  return rules;
}

export const readerRules = rulesFromManifests('vigil');
export const reader: Identity = { user: 'system:serviceaccount:vigil:vigil', rules: readerRules, canImpersonate: [EXECUTOR] };
export const executor: Identity = { user: EXECUTOR, rules: rulesFromManifests('vigil-executor') };

const dirs: string[] = [];

/** A temporary file (removed by `removeTempFiles`). */
export function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-doctor-'));
  dirs.push(dir);
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** A kubeconfig file for the fake (client-node refuses plain HTTP without skip-TLS-verify). */
export function kubeconfig(server: string, token: string): string {
  return tempFile(
    'config',
    `apiVersion: v1
kind: Config
clusters: [{ name: fake, cluster: { server: "${server}", insecure-skip-tls-verify: true } }]
users: [{ name: vigil, user: { token: ${token} } }]
contexts: [{ name: fake, context: { cluster: fake, user: vigil } }]
current-context: fake
`,
  );
}

export function removeTempFiles(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export async function doctor(argv: string[], env: Record<string, string | undefined>): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  const code = await runDoctor(['doctor', ...argv], env, (l) => lines.push(l));
  return { code, text: lines.join('\n') };
}
