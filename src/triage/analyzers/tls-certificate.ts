/**
 * `tls-certificate`: the certificate an Ingress of the target serves (a `kubernetes.io/tls` Secret,
 * parsed from its public `tls.crt`) expired — browsers and clients refuse the TLS handshake, so every
 * request to the Ingress hosts fails before it reaches the target. A certificate expiring within
 * `SOON_DAYS` is reported as an open warning; one served by an Ingress that does not route to the
 * target is left alone.
 *
 * Facts (camelCase): `secretName` (not `secret`: the redactor masks values under secret-like keys),
 * `notAfter` (ISO), `daysLeft` (days from the onset to notAfter, negative
 * once expired, two decimals), `hosts` (comma-separated Ingress hosts), `ingress` (comma-separated),
 * `issuer` (cert-manager's issuer when a Certificate writes the Secret, else the X.509 issuer), `issuerDN`,
 * `subject`, and with cert-manager `certificate`, `issuerKind`, `renewal` (why the Certificate is not Ready).
 * No mitigation: renewal (cert-manager, the CA) is outside the action catalog; the mechanism says what to renew.
 */
import type { V1Ingress } from '@kubernetes/client-node';
import { writersOf } from '../../evidence/kubernetes/managed-fields.js';
import type { TlsCertificate } from '../../evidence/kubernetes/surroundings.js';
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import type { Analyzer, TriageInput } from '../analyzer.js';
import { CHANGE_WINDOW_MS } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { humanDuration } from '../time.js';
import type { Finding } from '../types.js';

const DAY_MS = 86_400_000;
export const SOON_DAYS = 7;

/** Service names an Ingress sends traffic to. */
function backendServices(i: V1Ingress): string[] {
  const names = (i.spec?.rules ?? []).flatMap((r) => (r.http?.paths ?? []).map((p) => p.backend?.service?.name));
  names.push(i.spec?.defaultBackend?.service?.name);
  return names.filter((n): n is string => !!n);
}

/** Hosts an Ingress serves with this secret (its TLS entry's hosts, else its rules' hosts). */
function hostsFor(i: V1Ingress, secret: string): string[] {
  const tls = (i.spec?.tls ?? []).filter((t) => t.secretName === secret).flatMap((t) => t.hosts ?? []);
  return tls.length ? tls : (i.spec?.rules ?? []).map((r) => r.host).filter((h): h is string => !!h);
}

const fmtDate = (d: Date) => d.toISOString().replace('.000Z', 'Z');

export const tlsCertificate: Analyzer = {
  name: 'tls-certificate',
  analyze(input: TriageInput): Finding[] {
    const t = input.kube.target;
    if (!t) return [];
    const onset = input.onset.getTime();
    const targetServices = new Set(input.kube.services.map(({ service }) => service.metadata?.name));
    const out: Finding[] = [];
    for (const cert of input.kube.certificates) {
      const daysLeft = (cert.notAfter.getTime() - onset) / DAY_MS;
      const ingresses = input.kube.ingresses.filter((i) => cert.usedBy.includes(i.metadata?.name ?? '') && backendServices(i).some((s) => targetServices.has(s)));
      if (!ingresses.length) continue;
      if (daysLeft <= SOON_DAYS) out.push(certFinding(input, cert, ingresses, daysLeft));
      else {
        const untrusted = untrustedIssuer(input, cert);
        if (untrusted) out.push(untrustedFinding(input, cert, ingresses, untrusted));
      }
    }
    return out;
  },
};

function certFinding(input: TriageInput, cert: TlsCertificate, ingresses: V1Ingress[], daysLeft: number): Finding {
  const t = input.kube.target!;
  const onset = input.onset.getTime();
  const hosts = [...new Set(ingresses.flatMap((i) => hostsFor(i, cert.secret)))];
  const expired = daysLeft <= 0;
  const sinceExpiry = onset - cert.notAfter.getTime();
  const component: ComponentRef = { kind: 'Secret', namespace: cert.namespace, name: cert.secret };
  const affected: ComponentRef[] = [
    ...ingresses.map((i) => ({ kind: 'Ingress', namespace: cert.namespace, name: i.metadata?.name ?? '?' })),
    ...hosts.map((h) => ({ kind: 'Ingress', name: h })),
    { kind: t.kind, namespace: t.namespace, name: t.name },
    ...input.kube.services.map(({ service }) => ({ kind: 'Service', namespace: t.namespace, name: service.metadata?.name ?? '?' })),
  ];
  const when = expired ? `expired at ${fmtDate(cert.notAfter)}, ${humanDuration(sinceExpiry)} before the alert` : `expires at ${fmtDate(cert.notAfter)}, in ${humanDuration(-sinceExpiry)}`;
  return {
    key: `tls-certificate:${cert.namespace}/Secret/${cert.secret}`,
    analyzer: 'tls-certificate',
    status: expired ? 'supported' : 'open',
    // Expiry right before the onset explains its timing too; an older expiry still breaks every handshake.
    confidence: expired ? (sinceExpiry <= CHANGE_WINDOW_MS ? 0.94 : 0.9) : 0.35,
    title: expired ? `TLS certificate in ${cert.secret} expired (${hosts.join(', ')})` : `TLS certificate in ${cert.secret} expires soon (${hosts.join(', ')})`,
    component,
    mechanism:
      `The certificate in Secret ${cert.namespace}/${cert.secret} (subject ${cert.subject}, issuer ${cert.issuer}) ${when}; ` +
      `Ingress ${ingresses.map((i) => i.metadata?.name).join(', ')} serves it for ${hosts.join(', ')}` +
      (expired ? ', so clients reject the TLS handshake before any request reaches ' + t.name : '') +
      `. Renew it (cert-manager: check the Certificate/Order for ${cert.secret}; otherwise issue a new certificate and update the Secret).`,
    scope: `every HTTPS client of ${hosts.join(', ')} (Ingress ${ingresses.map((i) => i.metadata?.name).join(', ')} → ${t.name})`,
    affected,
    facts: {
      secretName: cert.secret,
      notAfter: fmtDate(cert.notAfter),
      daysLeft: Number(daysLeft.toFixed(2)),
      hosts: hosts.join(','),
      ingress: ingresses.map((i) => i.metadata?.name).join(','),
      // cert-manager's Certificate for the Secret names the issuer people act on; the X.509 issuer stays as issuerDN.
      issuer: cert.issuer,
      ...managedBy(input, cert.namespace, cert.secret),
      issuerDN: cert.issuer,
      subject: cert.subject,
    },
    supporting: [
      {
        kind: 'object',
        summary: `Secret ${cert.secret} tls.crt: notAfter ${fmtDate(cert.notAfter)} (${expired ? 'expired' : `${daysLeft.toFixed(1)} days left`}), SANs ${cert.sans.join(', ') || 'none'}`,
        citation: objectCitation('Secret', cert.namespace, cert.secret, 'data.tls.crt (public certificate, parsed)'),
        observedAt: cert.notAfter,
        detail: { notBefore: fmtDate(cert.notBefore), notAfter: fmtDate(cert.notAfter), sans: cert.sans, issuer: cert.issuer },
      },
      ...ingresses.map((i) => ({
        kind: 'object' as const,
        summary: `Ingress ${i.metadata?.name}: tls secretName ${cert.secret} for ${hostsFor(i, cert.secret).join(', ')} → service ${backendServices(i).join(', ')}`,
        citation: { source: 'kubernetes', ref: `apis/networking.k8s.io/v1/namespaces/${cert.namespace}/ingresses/${i.metadata?.name}#spec.tls` },
      })),
      ...certManagerEvents(input, cert.secret),
    ],
    refuting: [],
  };
}

/** cert-manager's own events about this certificate (renewal failures, expiry), newest first. */
function certManagerEvents(input: TriageInput, secret: string): Evidence[] {
  return input.kube.events
    .filter((e) => ['Certificate', 'CertificateRequest', 'Order'].includes(e.involvedObject?.kind ?? '') && (e.involvedObject?.name ?? '').startsWith(secret) && e.type === 'Warning')
    .slice(0, 3)
    .map((e) => {
      const at = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp;
      return {
        kind: 'event' as const,
        summary: `${e.involvedObject?.kind?.toLowerCase()}/${e.involvedObject?.name} ${e.reason}: ${(e.message ?? '').slice(0, 200)}${e.count && e.count > 1 ? ` (×${e.count})` : ''}`,
        citation: objectCitation('Event', e.metadata?.namespace, e.metadata?.name ?? '?'),
        ...(at ? { observedAt: new Date(at) } : {}),
      };
    });
}

/** The cert-manager Certificate that writes a Secret: its name, its issuer and why it is not Ready. */
function managedBy(input: TriageInput, namespace: string, secret: string): { certificate?: string; issuer?: string; issuerKind?: string; renewal?: string } {
  const c = (input.cluster?.snapshot.custom['Certificate'] ?? []).find((x) => x.metadata.namespace === namespace && x.spec?.['secretName'] === secret);
  if (!c) return {};
  const ref = c.spec?.['issuerRef'] as { name?: string; kind?: string } | undefined;
  const ready = ((c.status?.['conditions'] as { type?: string; status?: string; message?: string }[] | undefined) ?? []).find((x) => x.type === 'Ready');
  return {
    certificate: c.metadata.name ?? secret,
    ...(ref?.name ? { issuer: ref.name, issuerKind: ref.kind ?? 'Issuer' } : {}),
    ...(ready && ready.status !== 'True' && ready.message ? { renewal: ready.message.slice(0, 200) } : {}),
  };
}

/** Test CAs no client trusts: Let's Encrypt staging ("(STAGING) …", the older "Fake LE"), Pebble. */
const TEST_CA_DN = /\(STAGING\)|\bFake LE\b|\bPebble\b|\bstaging\b/i;
const STAGING_ACME = /acme-staging|staging/i;
/** A certificate issued this recently by a test CA is the change that broke the clients. */
const REISSUED_MS = 24 * 3600_000;

interface Untrusted {
  why: string;
  /** The cert-manager issuer it now comes from, when one writes the Secret. */
  issuer?: string;
  issuerKind?: string;
  certificate?: string;
  evidence: Evidence[];
}

/**
 * A valid, unexpired certificate from a CA clients do not trust: its X.509 issuer is a test CA, or its
 * cert-manager issuer is an ACME staging directory. The classic: an issuer annotation switched to
 * letsencrypt-staging, cert-manager re-issues at once, every client fails verification.
 */
function untrustedIssuer(input: TriageInput, cert: TlsCertificate): Untrusted | undefined {
  const m = managedBy(input, cert.namespace, cert.secret);
  const custom = input.cluster?.snapshot.custom ?? {};
  const issuerObj = m.issuer ? (custom[m.issuerKind === 'ClusterIssuer' ? 'ClusterIssuer' : 'Issuer'] ?? []).find((x) => x.metadata.name === m.issuer && (m.issuerKind === 'ClusterIssuer' || x.metadata.namespace === cert.namespace)) : undefined;
  const server = String((issuerObj?.spec?.['acme'] as { server?: string } | undefined)?.server ?? '');
  const byDn = TEST_CA_DN.test(cert.issuer);
  const byServer = !!server && STAGING_ACME.test(server);
  if (!byDn && !byServer) return undefined;
  const evidence: Evidence[] = [
    {
      kind: 'object',
      summary: `Secret ${cert.secret} tls.crt: issued by "${cert.issuer}" at ${fmtDate(cert.notBefore)} (valid until ${fmtDate(cert.notAfter)}), SANs ${cert.sans.join(', ') || 'none'}`,
      citation: objectCitation('Secret', cert.namespace, cert.secret, 'data.tls.crt (public certificate, parsed)'),
      observedAt: cert.notBefore,
    },
  ];
  if (issuerObj && byServer) evidence.push({ kind: 'object', summary: `${issuerObj.kind} ${m.issuer}: ACME server ${server} (a staging directory: its certificates chain to a test root)`, citation: objectCitation(issuerObj.kind, issuerObj.kind === 'ClusterIssuer' ? undefined : issuerObj.metadata.namespace, m.issuer!, 'spec.acme.server') });
  return {
    why: byDn ? `its issuer "${cert.issuer}" is a test CA no client trusts` : `it comes from ${m.issuerKind ?? 'Issuer'} ${m.issuer}, an ACME staging directory whose root no client trusts`,
    ...(m.issuer ? { issuer: m.issuer } : {}),
    ...(m.issuerKind ? { issuerKind: m.issuerKind } : {}),
    ...(m.certificate ? { certificate: m.certificate } : {}),
    evidence,
  };
}

function untrustedFinding(input: TriageInput, cert: TlsCertificate, ingresses: V1Ingress[], u: Untrusted): Finding {
  const t = input.kube.target!;
  const onset = input.onset.getTime();
  const hosts = [...new Set(ingresses.flatMap((i) => hostsFor(i, cert.secret)))];
  const recent = onset - cert.notBefore.getTime() <= REISSUED_MS && cert.notBefore.getTime() <= onset + 5 * 60_000;
  // Who pointed it at that issuer: the Ingress annotation cert-manager's ingress-shim reads, written recently.
  const switched = ingresses
    .map((i) => ({ i, w: annotationWrite(i, ISSUER_ANNOTATIONS) }))
    .find((x) => x.w && onset - x.w.at.getTime() <= REISSUED_MS);
  const component: ComponentRef = u.certificate ? { kind: 'Certificate', namespace: cert.namespace, name: u.certificate } : { kind: 'Secret', namespace: cert.namespace, name: cert.secret };
  const affected: ComponentRef[] = [
    ...ingresses.map((i) => ({ kind: 'Ingress', namespace: cert.namespace, name: i.metadata?.name ?? '?' })),
    { kind: 'Secret', namespace: cert.namespace, name: cert.secret },
    { kind: t.kind, namespace: t.namespace, name: t.name },
    ...input.kube.services.map(({ service }) => ({ kind: 'Service', namespace: t.namespace, name: service.metadata?.name ?? '?' })),
  ];
  const supporting: Evidence[] = [...u.evidence];
  if (switched?.w) supporting.push({ kind: 'managed_fields', summary: `managedFields: \`${switched.w.manager}\` wrote Ingress ${switched.i.metadata?.name}'s issuer annotation at ${fmtDate(switched.w.at)}`, citation: objectCitation('Ingress', cert.namespace, switched.i.metadata?.name ?? '?', `metadata.managedFields[${switched.w.index}]`), observedAt: switched.w.at });
  return {
    key: `tls-certificate:${cert.namespace}/Secret/${cert.secret}/issuer`,
    analyzer: 'tls-certificate',
    family: 'tls-certificate',
    status: recent || switched ? 'supported' : 'open',
    confidence: recent || switched ? 0.88 : 0.5,
    title: `TLS certificate in ${cert.secret} is from an untrusted issuer${u.issuer ? ` (${u.issuer})` : ''} (${hosts.join(', ')})`,
    component,
    mechanism:
      `The certificate Ingress ${ingresses.map((i) => i.metadata?.name).join(', ')} serves for ${hosts.join(', ')} is valid but ${u.why}` +
      (recent ? `; it was issued at ${fmtDate(cert.notBefore)}, ${humanDuration(onset - cert.notBefore.getTime())} before the alert` : '') +
      (switched?.w ? `, after \`${switched.w.manager}\` set the Ingress's issuer annotation` : '') +
      `. Clients fail verification ("certificate signed by unknown authority") before any request reaches ${t.name}. Point the Certificate back at the production issuer and let cert-manager re-issue.`,
    scope: `every HTTPS client of ${hosts.join(', ')} (Ingress ${ingresses.map((i) => i.metadata?.name).join(', ')} → ${t.name})`,
    affected,
    facts: {
      secretName: cert.secret,
      ...(u.certificate ? { certificate: u.certificate } : {}),
      issuer: u.issuer ?? cert.issuer,
      ...(u.issuerKind ? { issuerKind: u.issuerKind } : {}),
      issuerDN: cert.issuer,
      notBefore: fmtDate(cert.notBefore),
      hosts: hosts.join(','),
      ingress: ingresses.map((i) => i.metadata?.name).join(','),
      ...(switched?.w ? { manager: switched.w.manager, changedAt: switched.w.at.toISOString() } : {}),
    },
    supporting,
    refuting: [],
  };
}

const ISSUER_ANNOTATIONS = ['cert-manager.io/cluster-issuer', 'cert-manager.io/issuer'];

/** The newest managedFields write of one of these annotations, with its time. */
function annotationWrite(o: V1Ingress, keys: string[]): { manager: string; at: Date; index: number } | undefined {
  const w = keys.flatMap((k) => writersOf(o.metadata?.managedFields, ['metadata', 'annotations', k])).filter((x) => x.time).sort((a, b) => b.time!.getTime() - a.time!.getTime())[0];
  return w ? { manager: w.manager, at: w.time!, index: w.index } : undefined;
}
