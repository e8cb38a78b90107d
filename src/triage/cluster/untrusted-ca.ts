/**
 * `tls-certificate`, the client's side: a workload's calls fail TLS verification ("x509: certificate
 * signed by unknown authority", "CERTIFICATE_VERIFY_FAILED … unable to get local issuer certificate",
 * "PKIX path building failed") towards a host, while it trusts a CA bundle of its own (a ConfigMap of
 * .pem/.crt keys mounted as its trust store). The server rotated to a chain the bundle does not hold (a
 * new intermediate or root), so the bundle is the object to fix; every workload mounting it is hurt.
 * Without such a bundle the host itself is named (its certificate, or the system trust store). Pure.
 */
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { hostReferences } from '../../topology/references.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import type { Finding } from '../types.js';
import { logEvidence, logHits } from './common.js';

const UNTRUSTED = /certificate signed by unknown authority|CERTIFICATE_VERIFY_FAILED|unable to get local issuer certificate|PKIX path building failed|unable to find valid certification path|self[- ]signed certificate in certificate chain|UNABLE_TO_GET_ISSUER_CERT/i;
const BUNDLE_KEY = /\.(pem|crt|cer)$|ca[-_]?bundle|ca[-_]?certificates/i;

export const untrustedCa: ClusterAnalyzer = {
  name: 'untrusted-ca',
  analyze(input: ClusterTriageInput): Finding[] {
    // Mined patterns keep a 300-character example: in a JSON line the error field often comes later, so the
    // raw tail lines of each container are read too.
    const hits = [...logHits(input.inputs, UNTRUSTED), ...tailHits(input)];
    if (!hits.length) return [];
    const s = input.cluster.snapshot;
    const out: Finding[] = [];
    const byBundle = new Map<string, { bundle: ComponentRef; hits: typeof hits; hosts: Set<string> }>();
    for (const h of hits) {
      const w = [...s.deployments, ...s.statefulSets].find((d) => d.metadata?.namespace === h.workload.namespace && d.metadata?.name === h.workload.name);
      const volumes = w?.spec?.template?.spec?.volumes ?? [];
      const bundle = volumes
        .map((v) => v.configMap?.name)
        .filter((n): n is string => !!n)
        .map((n) => s.configMaps.find((c) => c.metadata.namespace === h.workload.namespace && c.metadata.name === n))
        .find((c) => c && c.keys.some((k) => BUNDLE_KEY.test(k)));
      if (!bundle) continue;
      const ref: ComponentRef = { kind: 'ConfigMap', namespace: bundle.metadata.namespace, name: bundle.metadata.name ?? '?' };
      const key = `${ref.namespace}/${ref.name}`;
      const entry = byBundle.get(key) ?? { bundle: ref, hits: [], hosts: new Set<string>() };
      entry.hits.push(h);
      for (const host of hostReferences(`${h.example} ${h.template}`)) if (host.includes('.') && !/\.svc(\.|$)|cluster\.local/.test(host)) entry.hosts.add(host.split(':')[0]!);
      byBundle.set(key, entry);
    }
    for (const { bundle, hits: hs, hosts } of byBundle.values()) {
      const readers = [...s.deployments, ...s.statefulSets]
        .filter((d) => d.metadata?.namespace === bundle.namespace && (d.spec?.template?.spec?.volumes ?? []).some((v) => v.configMap?.name === bundle.name))
        .map((d) => ({ kind: s.statefulSets.includes(d as never) ? 'StatefulSet' : 'Deployment', namespace: bundle.namespace, name: d.metadata?.name ?? '?' }));
      const first = hs.map((h) => h.first).filter((d): d is Date => !!d).sort((a, b) => a.getTime() - b.getTime())[0];
      const hostList = [...hosts];
      const supporting: Evidence[] = [
        ...hs.slice(0, 2).map((h) => logEvidence(h, 'TLS verification fails')),
        { kind: 'object', summary: `ConfigMap ${bundle.namespace}/${bundle.name} is the trust store ${readers.map((r) => r.name).join(', ')} mount${readers.length === 1 ? 's' : ''} (CA keys); the server's new chain is not in it`, citation: objectCitation('ConfigMap', bundle.namespace, bundle.name, 'data') },
      ];
      out.push({
        key: `tls-certificate:${bundle.namespace}/ConfigMap/${bundle.name}/untrusted`,
        analyzer: 'tls-certificate',
        family: 'tls-certificate',
        status: 'supported',
        confidence: 0.85,
        title: `${hostList[0] ?? 'an upstream'}'s certificate chain is not trusted by the CA bundle ${bundle.name}`,
        component: bundle,
        mechanism:
          `${readers.map((r) => r.name).join(', ') || hs[0]!.workload.name} fail TLS verification${hostList.length ? ` towards ${hostList.join(', ')}` : ''} ("${hs[0]!.template.slice(0, 140)}")${first ? ` since ${first.toISOString().slice(11, 19)}` : ''}, and trust only the CA bundle in ConfigMap ${bundle.name}: the server now presents a chain (a new intermediate or root) the bundle lacks. ` +
          `Fix: add the new intermediate/root to ${bundle.name} (from the provider's published chain) and restart its readers; do not disable verification.`,
        scope: `every call of ${readers.map((r) => r.name).join(', ')} to ${hostList.join(', ') || 'the upstream'}`,
        affected: readers,
        facts: { ...(hostList.length ? { hosts: hostList.join(',') } : {}), bundle: `ConfigMap/${bundle.name}`, ...(first ? { since: first.toISOString() } : {}) },
        supporting,
        refuting: [],
      });
    }
    return out;
  },
};

function tailHits(input: ClusterTriageInput): ReturnType<typeof logHits> {
  const out: ReturnType<typeof logHits> = [];
  for (const i of input.inputs) {
    const t = i.kube.target;
    if (!t) continue;
    for (const c of i.kube.containerLogs) {
      const line = (c.tail ?? []).find((l) => UNTRUSTED.test(l));
      if (!line) continue;
      const m = UNTRUSTED.exec(line)!;
      const start = Math.max(0, m.index - 160);
      out.push({
        workload: { kind: t.kind, namespace: t.namespace, name: t.name },
        pod: c.pod,
        container: c.container,
        template: line.slice(start, m.index + 140),
        example: line.slice(0, 600),
        count: 1,
        citation: { source: 'kubernetes', ref: `api/v1/namespaces/${t.namespace}/pods/${c.pod}/log?container=${c.container}${c.previous ? '&previous=true' : ''}` },
      });
    }
  }
  return out;
}
