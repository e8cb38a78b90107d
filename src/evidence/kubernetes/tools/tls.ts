import { X509Certificate } from 'node:crypto';
import type { V1Ingress, V1Secret } from '@kubernetes/client-node';
import { z } from 'zod';
import type { EvidenceTool } from '../../tool.js';
import type { KubeReader } from '../client.js';
import { apiPath, KubeObjects, toFailure } from '../objects.js';
import { failure, kubeCitation, noData, success } from './result.js';

const parameters = z.object({
  namespace: z.string().min(1).describe('Namespace.'),
  secret: z.string().optional().describe('One Secret.'),
  ingress: z.string().optional().describe('An Ingress: the Secrets its spec.tls names.'),
});

export interface CertSummary {
  subject: string;
  sans: string[];
  issuer: string;
  notBefore: string;
  notAfter: string;
  daysLeft: number;
  expired: boolean;
  selfSigned: boolean;
  /** Certificates in the PEM bundle (leaf + chain). */
  chainLength: number;
}

/** Parse the leaf certificate of a PEM bundle (a Secret's public `tls.crt`); never touches `tls.key`. */
export function summariseCertificate(pem: string, now: Date): CertSummary {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error('tls.crt holds no PEM certificate');
  const cert = new X509Certificate(blocks[0]!);
  const notAfter = new Date(cert.validTo);
  const daysLeft = Math.floor((notAfter.getTime() - now.getTime()) / 86_400_000);
  return {
    subject: cert.subject.replace(/\n/g, ', '),
    sans: (cert.subjectAltName ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    issuer: cert.issuer.replace(/\n/g, ', '),
    notBefore: new Date(cert.validFrom).toISOString(),
    notAfter: notAfter.toISOString(),
    daysLeft,
    expired: notAfter.getTime() <= now.getTime(),
    selfSigned: cert.subject === cert.issuer,
    chainLength: blocks.length,
  };
}

export function k8sTlsCertificatesTool(reader: KubeReader): EvidenceTool<typeof parameters> {
  return {
    name: 'k8s_tls_certificates',
    description:
      'Certificates in kubernetes.io/tls Secrets: subject, SANs, issuer, validity, days left. Give a secret, an ingress (its hosts are checked against the SANs), or neither for the whole namespace.',
    onDemand: 'TLS certificates: SANs, validity, days left',
    parameters,
    effect: 'read',
    async execute(p, ctx) {
      const objects = new KubeObjects(reader);
      const secretInfo = KubeObjects.kind('Secret');
      let citation = kubeCitation(p.secret ? apiPath(secretInfo, p.namespace, p.secret) : `${apiPath(secretInfo, p.namespace)}?fieldSelector=type=kubernetes.io/tls`);
      let names: string[] | undefined;
      let hosts: Record<string, string[]> = {};
      try {
        if (p.ingress) {
          const ingInfo = KubeObjects.kind('Ingress');
          citation = kubeCitation(`${apiPath(ingInfo, p.namespace, p.ingress)}#spec.tls`);
          const ing = await objects.get<V1Ingress>(ingInfo, p.namespace, p.ingress);
          const tls = (ing.spec?.tls ?? []).filter((t) => t.secretName);
          if (tls.length === 0) return noData(citation, `Ingress ${p.namespace}/${p.ingress} has no spec.tls secrets`);
          names = tls.map((t) => t.secretName!);
          hosts = Object.fromEntries(tls.map((t) => [t.secretName!, t.hosts ?? []]));
        } else if (p.secret) names = [p.secret];
        let secrets: (V1Secret | { name: string; error: string })[];
        if (names) {
          secrets = await Promise.all(
            names.map((n) =>
              objects.get<V1Secret>(secretInfo, p.namespace, n).catch((err: unknown) => {
                if (p.secret) throw err;
                const f = toFailure(err, 'get', 'secrets', p.namespace);
                return { name: n, error: f.status === 404 ? `secret "${n}" not found` : f.message };
              }),
            ),
          );
        } else {
          secrets = (await objects.list<V1Secret>(secretInfo, { namespace: p.namespace, fieldSelector: 'type=kubernetes.io/tls', limit: 500 })).items;
        }
        if (secrets.length === 0) return noData(citation, `no kubernetes.io/tls Secrets in ${p.namespace}`);
        const certs = secrets.map((s) => {
          if ('error' in s) return { secretName: s.name, error: s.error };
          const name = s.metadata?.name ?? '?';
          const crt = s.data?.['tls.crt'];
          if (!crt) return { secretName: name, type: s.type, error: 'no tls.crt key' };
          try {
            const cert = summariseCertificate(Buffer.from(crt, 'base64').toString('utf8'), ctx.now);
            const want = hosts[name] ?? [];
            const uncovered = want.filter((h) => !cert.sans.some((san) => sanCovers(san, h)));
            return { secretName: name, ...cert, ...(want.length ? { ingressHosts: want, hostsNotInSans: uncovered } : {}) };
          } catch (err) {
            return { secretName: name, error: `tls.crt does not parse: ${err instanceof Error ? err.message : String(err)}` };
          }
        });
        const soon = certs.filter((c) => 'daysLeft' in c && typeof c.daysLeft === 'number' && c.daysLeft < 14);
        return success(citation, { certificates: certs }, ctx, [
          {
            kind: 'object',
            summary: `${certs.length} TLS certificate(s) in ${p.namespace}${soon.length ? `; expiring/expired: ${soon.map((c) => `${c.secretName} (${(c as { daysLeft: number }).daysLeft}d)`).join(', ')}` : '; none expiring within 14 days'}`,
            citation,
            observedAt: ctx.now,
          },
        ]);
      } catch (err) {
        return failure(citation, err, ctx, p.secret || p.ingress ? 'get' : 'list', 'secrets', p.namespace);
      }
    },
  };
}

/** `DNS:*.example.com` covers `a.example.com` (one label), `DNS:example.com` covers itself. */
function sanCovers(san: string, host: string): boolean {
  const name = san.replace(/^DNS:/, '').toLowerCase();
  const h = host.toLowerCase();
  if (name === h) return true;
  if (name.startsWith('*.')) {
    const rest = h.split('.').slice(1).join('.');
    return rest === name.slice(2);
  }
  return false;
}
