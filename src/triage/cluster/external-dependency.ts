/**
 * `external-dependency`: a host outside the cluster that the candidates call (a third-party API, a
 * managed database, another data centre) errors or times out. From the candidates' logs naming the host
 * with a failure (`timeout`, `deadline exceeded`, `connection reset`, `502/503/504`, `TLS handshake`), when
 * the host is one the graph knows as external (env/ConfigMap references, an ExternalName Service, an
 * Istio ServiceEntry) and the failures began near the onset. Resolution failures are `dns-failure`'s.
 *
 * Localised to the ServiceEntry that declares the host, else the ExternalName Service, else
 * `ExternalService/<host>`. Facts: `host`, `errorPattern`, `callers`. No mitigation on the cluster side.
 */
import type { ComponentRef, Evidence } from '../../evidence/types.js';
import { nodeId, refOfId } from '../../topology/graph.js';
import type { ClusterAnalyzer, ClusterTriageInput } from '../analyzer.js';
import { objectCitation } from '../citations.js';
import { clockTime, humanDuration } from '../time.js';
import type { Finding } from '../types.js';
import { clip, logEvidence, logHits, type LogHit } from './common.js';

const FAILURE = /timeout|timed out|deadline exceeded|connection reset|reset by peer|connection refused|EOF|broken pipe|\b50[234]\b|service unavailable|bad gateway|gateway time-?out|TLS handshake|upstream (connect )?error|circuit.*open|ECONNRESET|ETIMEDOUT|SocketTimeoutException|ReadTimeout|ConnectTimeout/i;
const DNS_SERVER = /^(coredns|kube-dns|node-local-dns|nodelocaldns)$/;
/** A query to a resolver (`read udp …->10.40.0.10:53: i/o timeout`, CoreDNS `plugin/errors`). */
const DNS_QUERY = /:53: (i\/o timeout|read: connection refused)|plugin\/errors/i;
const DNS = /dial tcp: lookup |lookup \S+ on \S+:53|\blookup \S+: (i\/o timeout|server misbehaving|no such host)|no such host|NXDOMAIN|Name or service not known|EAI_AGAIN|ENOTFOUND|UnknownHostException|name resolution|server misbehaving/i;
const WINDOW_MS = 90 * 60_000;
const QUIET = /^(info|debug|trace)$/;
/** `key=value` / `"key":"value"` pairs whose key names a timeout or a retry setting. */
const SETTING = /"?\w*(timeout|deadline|retry|retries)\w*"?\s*[:=]\s*"?[\w.]+"?/gi;
const withoutSettings = (line: string) => line.replace(SETTING, '');
/** A host's throttle, answered: 429s, "too many requests", rate-limit retries. */
const RATE_LIMITED = /\b429\b|too many requests|rate.?limit(ed)?\b/i;

export const externalDependency: ClusterAnalyzer = {
  name: 'external-dependency',
  analyze(input: ClusterTriageInput): Finding[] {
    const t = input.cluster.topology;
    const external = new Map<string, { host: string; node: string }>();
    for (const [id, edges] of t.out) {
      void id;
      for (const e of edges) {
        if (e.kind !== 'calls') continue;
        const ref = refOfId(e.to);
        if (ref.kind === 'ExternalService') external.set(ref.name, { host: ref.name, node: e.to });
      }
    }
    for (const [host, node] of t.externalHosts) if (!host.startsWith('*')) external.set(host, { host, node });
    if (!external.size) return [];
    // DNS trouble is dns-failure's: resolver errors, and the cluster DNS server's own upstream timeouts.
    // A setting logged at start ("fraud_dial_timeout":"2s") is not a failure: an info or debug line counts
    // only when it still reads as one without its key=value settings (an access log's 503 does).
    const hits = logHits(input.inputs, FAILURE).filter((h) => (!QUIET.test(h.level ?? '') || FAILURE.test(withoutSettings(h.example))) && !DNS.test(h.example) && !DNS.test(h.template) && !DNS_SERVER.test(h.workload.name) && !DNS_QUERY.test(h.example));
    const byHost = new Map<string, LogHit[]>();
    // Failures naming the host that began long before the onset: a standing condition (a rate-limited
    // feed, a flaky partner API), the look-alike a responder asks about.
    const standing = new Map<string, LogHit[]>();
    // A failure line that names no host ("payment authorization failed: upstream request timeout") is the
    // one outside host its workload calls, when it calls exactly one.
    const soleExternal = (w: ComponentRef): string | undefined => {
      const hosts = t.outgoing(nodeId(w)).map((e) => refOfId(e.to)).filter((r) => r.kind === 'ExternalService').map((r) => r.name);
      return hosts.length === 1 ? hosts[0] : undefined;
    };
    for (const h of hits) {
      const text = `${h.example} ${h.template}`.toLowerCase();
      const named = [...external.keys()].filter((x) => text.includes(x)).sort((a, b) => b.length - a.length)[0];
      const host = named ?? (/(^|[^\w-])(upstream|provider|third[- ]party)([^\w-]|$)/i.test(text) ? soleExternal(h.workload) : undefined);
      if (!host) continue;
      if (h.first && h.first.getTime() < input.onset.getTime() - WINDOW_MS) standing.set(host, [...(standing.get(host) ?? []), h]);
      if (h.first && (h.first.getTime() < input.onset.getTime() - WINDOW_MS || h.first.getTime() > input.onset.getTime() + 10 * 60_000)) continue;
      byHost.set(host, [...(byHost.get(host) ?? []), h]);
    }
    const out: Finding[] = [];
    // Rate limiting (429, "too many requests") answered and retried: the host is up and says so; the
    // look-alike of an outage, raised and cleared when nothing harder fails towards it.
    const soft = logHits(input.inputs, RATE_LIMITED);
    for (const host of [...external.keys()].filter((h) => !byHost.has(h) && !standing.has(h)).slice(0, 50)) {
      const hs = soft.filter((h) => `${h.example} ${h.template}`.toLowerCase().includes(host));
      if (!hs.length || out.length >= 2) continue;
      out.push(clearedHost(input, host, hs, `log rate-limited answers from ${host}`, `${host} answers, with 429 (rate limited) that the callers retry ("${clip(hs[0]!.example, 120)}"): a throttle it applies, not an outage, and nothing harder fails towards it`, `${host} rate-limits`));
    }
    for (const [host, hs] of [...standing].filter(([h]) => !byHost.has(h)).slice(0, 2)) {
      const first = hs.map((h) => h.first!).sort((a, b) => a.getTime() - b.getTime())[0]!;
      out.push(clearedHost(input, host, hs, `log failures naming ${host}`, `they began at ${clockTime(first)}, ${humanDuration(input.onset.getTime() - first.getTime())} before the alert, and kept their pace: a standing condition, not what changed at the onset`, `failing towards ${host} since before the onset`));
    }
    // The look-alike: errors that name an outside host but fail at name resolution say nothing about
    // the host ("is Stripe down?"); raised and ruled out, so the board answers the question.
    const dnsHits = logHits(input.inputs, FAILURE).filter((h) => DNS.test(h.example) || DNS.test(h.template));
    for (const host of [...external.keys()].filter((x) => !byHost.has(x)).slice(0, 50)) {
      const hs = dnsHits.filter((h) => `${h.example} ${h.template}`.toLowerCase().includes(host) && !DNS_SERVER.test(h.workload.name));
      if (!hs.length || out.length >= 2) continue;
      out.push(clearedHost(input, host, hs, `log failures naming ${host}`, `the calls fail resolving ${host} ("${clip(hs[0]!.example, 140)}"): name resolution, not ${host}, is failing`, `cannot resolve ${host}`, 'is down'));
    }
    for (const [host, hs] of byHost) {
      const component = declaredBy(input, host);
      const callers = [...new Map(hs.map((h) => [nodeId(h.workload), h.workload])).values()];
      const first = hs.map((h) => h.first).filter((d): d is Date => !!d).sort((a, b) => a.getTime() - b.getTime())[0];
      const pattern = errorPhrase(hs[0]!.example) ?? errorPhrase(hs[0]!.template) ?? clip(hs[0]!.template.replace(/<\*>/g, '…'), 160);
      const supporting: Evidence[] = hs.slice(0, 3).map((h) => logEvidence(h, `${h.workload.name} → ${host}`));
      if (component.kind === 'ServiceEntry') supporting.push({ kind: 'object', summary: `ServiceEntry ${component.namespace}/${component.name} declares ${host} as an external host`, citation: objectCitation('ServiceEntry', component.namespace, component.name, 'spec.hosts') });
      if (component.kind === 'Service') supporting.push({ kind: 'object', summary: `Service ${component.namespace}/${component.name} is an ExternalName for ${host}: the callers reach it through the cluster's DNS, the server is outside`, citation: objectCitation('Service', component.namespace, component.name, 'spec.externalName') });
      out.push({
        key: `external-dependency:${component.namespace ?? ''}/${component.kind}/${component.name}`,
        analyzer: 'external-dependency',
        family: 'external-dependency',
        status: 'supported',
        confidence: hs.length > 1 || (hs[0]?.count ?? 0) >= 5 ? 0.84 : 0.72,
        title: `${host} (outside the cluster) fails for ${callers.map((c) => c.name).join(', ')}`,
        component,
        mechanism: `Calls from ${callers.map((c) => c.name).join(', ')} to ${host} fail${first ? ` since ${clockTime(first)}` : ''} ("${pattern}"); ${host} is outside the cluster${component.kind === 'ServiceEntry' ? ` (ServiceEntry ${component.name})` : ''}, so nothing in the cluster changed it.`,
        scope: `requests of ${callers.map((c) => c.name).join(', ')} that need ${host}`,
        affected: callers,
        facts: { host, errorPattern: pattern, callers: callers.map((c) => c.name).join(',') },
        supporting,
        refuting: [],
      });
    }
    return out;
  },
};

/**
 * The error itself, out of a client's log line: Go's `context deadline exceeded (Client.Timeout …)`,
 * `i/o timeout`, `connection refused`, a TLS handshake timeout, a reset, a 5xx status — what an SRE
 * quotes, rather than the whole line with its timestamps and partitions.
 */
const ERROR_PHRASE = /context deadline exceeded(?: \(Client\.Timeout exceeded while awaiting headers\))?|i\/o timeout|connection refused|connection reset by peer|TLS handshake timeout|no such host|(?:Read|Connect|Socket)TimeoutException[^"\n]{0,80}|timed out after \S+|certificate (?:has expired|is not valid)[^"\n]{0,60}|\b(?:502|503|504) (?:Bad Gateway|Service Unavailable|Gateway Timeout)/i;

export function errorPhrase(line: string): string | undefined {
  return ERROR_PHRASE.exec(line)?.[0];
}

/** The object that declares an external host: a ServiceEntry, an ExternalName Service, else the host itself. */
function declaredBy(input: ClusterTriageInput, host: string): ComponentRef {
  const t = input.cluster.topology;
  const entry = t.externalHosts.get(host) ?? [...t.externalHosts.entries()].find(([h]) => h.startsWith('*.') && host.endsWith(h.slice(1)))?.[1];
  return entry ? refOfId(entry) : { kind: 'ExternalService', name: host };
}

/** An outside host raised as a look-alike and ruled out, with what its callers log and why it is cleared. */
function clearedHost(input: ClusterTriageInput, host: string, hs: LogHit[], logs: string, reason: string, label: string, what = 'is failing'): Finding {
  const component = declaredBy(input, host);
  return {
    key: `external-dependency:${component.namespace ?? ''}/${component.kind}/${component.name}`,
    analyzer: 'external-dependency',
    family: 'external-dependency',
    status: 'ruled_out',
    confidence: 0.05,
    title: `${host} (outside the cluster) ${what}`,
    component,
    mechanism: `${[...new Set(hs.map((h) => h.workload.name))].join(', ')} ${logs}.`,
    reason,
    facts: { host },
    supporting: [],
    refuting: hs.slice(0, 2).map((h) => logEvidence(h, `${h.workload.name}: ${label}`)),
  };
}
