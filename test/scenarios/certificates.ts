/**
 * `kubernetes.tlsSecrets` shorthand: real X.509 certificates whose validity is relative to the onset,
 * written as `kubernetes.io/tls` Secrets exactly as cert-manager (or `kubectl create secret tls`) leaves
 * them. A scenario cannot carry a fixed PEM for "expired ten minutes ago": certificates hold absolute
 * dates, so the loader signs one per run. The private key is a placeholder: nothing should read it.
 */
import forge from 'node-forge';
import type { KubeObject } from '../fakes/kubernetes/server.js';

export interface TlsSecretShorthand {
  name: string;
  namespace: string;
  commonName: string;
  /** Subject alternative names (DNS); default: the common name. */
  dnsNames?: string[];
  /** ISO times (the loader has already shifted `@` offsets). */
  notBefore: string;
  notAfter: string;
  /** Issuer common name; default a self-signed "<commonName>" issuer named like a public CA's intermediate. */
  issuer?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
}

let signingKey: forge.pki.rsa.KeyPair | undefined;

/** One key pair per process: generating RSA keys is the slow part, and the key's value does not matter here. */
function key(): forge.pki.rsa.KeyPair {
  signingKey ??= forge.pki.rsa.generateKeyPair({ bits: 2048, e: 0x10001 });
  return signingKey;
}

export function certificatePem(t: TlsSecretShorthand): string {
  const pair = key();
  const cert = forge.pki.createCertificate();
  cert.publicKey = pair.publicKey;
  cert.serialNumber = forge.util.bytesToHex(forge.util.encodeUtf8(`${t.namespace}/${t.name}`)).slice(0, 30).replace(/^[89a-f]/, '1');
  cert.validity.notBefore = new Date(t.notBefore);
  cert.validity.notAfter = new Date(t.notAfter);
  cert.setSubject([{ name: 'commonName', value: t.commonName }]);
  cert.setIssuer([
    { name: 'countryName', value: 'US' },
    { name: 'organizationName', value: 'Example Trust Services' },
    { name: 'commonName', value: t.issuer ?? 'Example TLS Issuing CA R3' },
  ]);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: (t.dnsNames ?? [t.commonName]).map((value) => ({ type: 2, value })) },
  ]);
  cert.sign(pair.privateKey, forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

export function tlsSecret(t: TlsSecretShorthand): KubeObject {
  const crt = certificatePem(t);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: {
      name: t.name,
      namespace: t.namespace,
      ...(t.creationTimestamp ? { creationTimestamp: t.creationTimestamp } : { creationTimestamp: t.notBefore }),
      ...(t.labels ? { labels: t.labels } : {}),
      ...(t.annotations ? { annotations: t.annotations } : {}),
    },
    data: {
      'tls.crt': Buffer.from(crt).toString('base64'),
      // Not a key: Vigil must never read tls.key, so a placeholder proves it does not need to.
      'tls.key': Buffer.from('-----BEGIN PRIVATE KEY-----\nplaceholder: scenario worlds carry no private keys\n-----END PRIVATE KEY-----\n').toString('base64'),
    },
  } as KubeObject;
}
