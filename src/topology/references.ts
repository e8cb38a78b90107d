/**
 * Which hosts a piece of configuration names: URLs (`http://payments-api.payments.svc:8080/v1`),
 * connection strings (`postgres://u:p@orders-db:5432/orders`, `jdbc:mysql://…`, `redis://…`,
 * `mongodb+srv://…`, `amqp://…`), `host:port` lists (`kafka-0.kafka:9092,kafka-1.kafka:9092`), Kubernetes
 * DNS names (`quotes.shop.svc.cluster.local`) and, for settings whose name says they hold an address
 * (`*_HOST`, `*_ADDR`, `*_URL`, `*_SERVICE`, `*_ENDPOINT`), bare names (`payment`, `payment:8080`).
 * Credentials in a URL are never returned.
 */

export interface HostRef {
  /** Lower-case host, without a trailing dot. */
  host: string;
  port?: number;
}

const URL_LIKE = /\b([a-z][a-z0-9+.-]{1,20}):\/\/(?:[^\s/@'"]*@)?([a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?)(?::(\d{1,5}))?/gi;
const HOST_PORT = /(?:^|[\s,;='"(])([a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9-]{1,63})*):(\d{2,5})\b/gi;
const SVC_NAME = /\b([a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9-]{1,63}){1,2}\.svc(?:\.cluster\.local)?)\b/gi;
const ADDRESS_SETTING = /(^|_)(HOST|HOSTNAME|ADDR|ADDRESS|URL|URI|SERVICE|SVC|ENDPOINT|ENDPOINTS|SERVER|SERVERS|BROKERS|BOOTSTRAP_SERVERS|DSN|UPSTREAM|TARGET)S?$/i;
const BARE = /^([a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9-]{1,63})*)(?::(\d{1,5}))?$/i;
/** Words that look like hosts in settings but are not. */
const NOT_HOSTS = new Set(['localhost', 'true', 'false', 'none', 'null', 'yes', 'no', 'on', 'off', 'enabled', 'disabled', 'debug', 'info', 'warn', 'error', 'json', 'text', 'http', 'https', 'tcp', 'udp', 'grpc']);

/** `"addr": "compose-post-service"`, `host: orders-db`, `server = cache`: a bare name under an address key in JSON, YAML or INI. */
const KEYED_ADDRESS = /["']?\b(?:addr|address|host|hostname|server|endpoint|upstream|backend|service)["']?\s*[:=]\s*["']?([a-z0-9][a-z0-9-]{1,62}(?:\.[a-z0-9-]{1,63})*)["']?/gi;

/** Host references in free text (a ConfigMap value, an argument, a log line). */
export function hostReferences(text: string): string[] {
  return hostRefs(text).map(formatHostRef);
}

export function hostRefs(text: string): HostRef[] {
  if (!text || text.length > 200_000) return [];
  const out = new Map<string, HostRef>();
  const add = (host: string, port?: string) => {
    const h = host.toLowerCase().replace(/\.$/, '');
    if (!h || NOT_HOSTS.has(h) || /^\d+(\.\d+){0,2}$/.test(h) || h.length > 253) return;
    if (/^\d+\.\d+\.\d+\.\d+$/.test(h) && (h.startsWith('127.') || h === '0.0.0.0')) return;
    const ref: HostRef = { host: h, ...(port ? { port: Number(port) } : {}) };
    out.set(formatHostRef(ref), ref);
  };
  for (const m of text.matchAll(URL_LIKE)) add(m[2]!, m[3]);
  for (const m of text.matchAll(HOST_PORT)) if (!/^\d+$/.test(m[1]!)) add(m[1]!, m[2]);
  for (const m of text.matchAll(SVC_NAME)) add(m[1]!);
  for (const m of text.matchAll(KEYED_ADDRESS)) if (/[a-z]/.test(m[1]!) && !/^\d/.test(m[1]!)) add(m[1]!);
  // `orders-db.data.svc` seen bare and as `orders-db.data.svc:5432` is one reference.
  return [...out.values()].filter((r) => r.port !== undefined || ![...out.values()].some((o) => o.host === r.host && o.port !== undefined));
}

/** Host references of one setting (`NAME=value`): bare names count when the name says it is an address. */
export function settingHostRefs(name: string, value: string): HostRef[] {
  const refs = hostRefs(value);
  if (refs.length || !ADDRESS_SETTING.test(name)) return refs;
  const out: HostRef[] = [];
  for (const part of value.split(/[\s,;]+/)) {
    const m = BARE.exec(part.trim());
    if (m && !NOT_HOSTS.has(m[1]!.toLowerCase()) && /[a-z]/i.test(m[1]!)) out.push({ host: m[1]!.toLowerCase(), ...(m[2] ? { port: Number(m[2]) } : {}) });
  }
  return out;
}

export function formatHostRef(r: HostRef): string {
  return r.port ? `${r.host}:${r.port}` : r.host;
}

/**
 * The Service a cluster host name means, given the namespace it is used from: `quotes`,
 * `quotes.shop`, `quotes.shop.svc`, `quotes.shop.svc.cluster.local`, and StatefulSet pod names
 * `kafka-0.kafka-headless.kafka.svc…` (→ Service `kafka-headless` in `kafka`). Undefined for names that
 * are not cluster names (they may still be an ExternalName Service or a ServiceEntry host).
 */
export function serviceOfHost(host: string, fromNamespace: string): { namespace: string; name: string; pod?: string } | undefined {
  const h = host.toLowerCase().replace(/\.cluster\.local$/, '');
  const parts = h.split('.');
  if (parts.length === 1) return { namespace: fromNamespace, name: parts[0]! };
  if (parts.length === 2) return { namespace: parts[1]!, name: parts[0]! };
  if (parts.length === 3 && parts[2] === 'svc') return { namespace: parts[1]!, name: parts[0]! };
  if (parts.length === 4 && parts[3] === 'svc') return { namespace: parts[2]!, name: parts[1]!, pod: parts[0]! };
  return undefined;
}
