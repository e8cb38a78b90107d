/**
 * The workloads behind an object `restore_object` changes: the ones whose pods it selects (a Service, a
 * NetworkPolicy), routes to (an Ingress or an Istio object, through the Services it names) or scales (an
 * HPA), under its live spec or the one being restored. The policy judges the restore by them (each must
 * be in the incident's scope) and the risk counts their pods.
 */
import type { V1LabelSelector } from '@kubernetes/client-node';
import { labelSelectorMatches } from '../../evidence/kubernetes/objects.js';
import type { TargetReader } from '../reader.js';
import type { ConfigReader, KubeObject } from '../types.js';
import type { SpecFields } from './fields.js';
import type { RestorableKind } from './kinds.js';

function templateLabels(o: KubeObject): Record<string, string> | undefined {
  const spec = o.spec as { template?: { metadata?: { labels?: Record<string, string> } }; jobTemplate?: { spec?: { template?: { metadata?: { labels?: Record<string, string> } } } } } | undefined;
  return o.kind === 'CronJob' ? spec?.jobTemplate?.spec?.template?.metadata?.labels : spec?.template?.metadata?.labels;
}

function podsOf(o: KubeObject): number {
  if (o.kind === 'CronJob') return 0;
  if (o.kind === 'DaemonSet') {
    const n = (o.status as { desiredNumberScheduled?: unknown } | undefined)?.desiredNumberScheduled;
    return typeof n === 'number' ? n : 0;
  }
  const r = o.spec?.['replicas'];
  return typeof r === 'number' ? r : 1;
}

const asReader = (o: KubeObject): ConfigReader => ({ kind: o.kind as ConfigReader['kind'], name: o.metadata?.name ?? '', via: ['selected'], pods: podsOf(o) });

/** Owners whose pod template a Service selector (a plain map; empty selects nothing) matches. */
const bySelector = (owners: KubeObject[], selector: unknown): KubeObject[] => {
  const s = (selector ?? {}) as Record<string, string>;
  if (!Object.keys(s).length) return [];
  return owners.filter((o) => Object.entries(s).every(([k, v]) => templateLabels(o)?.[k] === v));
};

/** Service names an Ingress routes to. */
function ingressServices(f: SpecFields): string[] {
  const out: string[] = [];
  const add = (b: unknown) => {
    const n = (b as { service?: { name?: unknown } } | undefined)?.service?.name;
    if (typeof n === 'string') out.push(n);
  };
  add(f['defaultBackend']);
  for (const r of (f['rules'] as { http?: { paths?: { backend?: unknown }[] } }[] | undefined) ?? []) for (const p of r.http?.paths ?? []) add(p.backend);
  return out;
}

/** `checkout`, `checkout.shop`, `checkout.shop.svc.cluster.local` in namespace shop → `checkout`; another namespace's host → nothing. */
function shortHost(host: string, namespace: string): string | undefined {
  const parts = host.split('.');
  if (parts.length === 1) return parts[0];
  if (parts[1] === namespace && (parts.length === 2 || parts.slice(2).join('.').startsWith('svc'))) return parts[0];
  return undefined;
}

/** Service names an Istio VirtualService or DestinationRule sends traffic to (in the object's namespace). */
function meshServices(kind: RestorableKind, f: SpecFields, namespace: string): string[] {
  const hosts: string[] = [];
  if (kind === 'DestinationRule' && typeof f['host'] === 'string') hosts.push(f['host']);
  if (kind === 'VirtualService') {
    for (const h of (f['hosts'] as unknown[] | undefined) ?? []) if (typeof h === 'string') hosts.push(h);
    for (const section of ['http', 'tcp', 'tls'])
      for (const r of (f[section] as { route?: { destination?: { host?: unknown } }[] }[] | undefined) ?? [])
        for (const d of r.route ?? []) if (typeof d.destination?.host === 'string') hosts.push(d.destination.host);
  }
  return hosts.flatMap((h) => shortHost(h, namespace) ?? []);
}

/**
 * The workloads behind `current` and `previous` fields of a `kind` object in `namespace`, and whether
 * that list is complete (every pod template owner was listed, every named Service read).
 */
export async function objectReaders(reader: TargetReader, kind: RestorableKind, namespace: string, specs: SpecFields[]): Promise<{ readers: ConfigReader[]; complete: boolean }> {
  const owners = await reader.podTemplateOwners(namespace);
  let complete = owners.complete;
  const found = new Map<string, KubeObject>();
  const add = (os: KubeObject[]) => os.forEach((o) => found.set(`${o.kind}/${o.metadata?.name}`, o));
  const viaServices = async (names: string[]) => {
    for (const name of new Set(names)) {
      const svc = await reader.get({ kind: 'Service', namespace, name });
      if (!svc) continue; // a route to a missing Service reaches no pod
      add(bySelector(owners.objects, svc.spec?.['selector']));
    }
  };
  for (const f of specs) {
    switch (kind) {
      case 'Service':
        add(bySelector(owners.objects, f['selector']));
        break;
      case 'NetworkPolicy': {
        const sel = f['podSelector'] as V1LabelSelector | undefined;
        if (sel) add(owners.objects.filter((o) => labelSelectorMatches(sel, templateLabels(o))));
        break;
      }
      case 'HorizontalPodAutoscaler': {
        // The scale target is not a restored field; it is the same in both.
        break;
      }
      case 'Ingress':
        await viaServices(ingressServices(f));
        break;
      case 'VirtualService':
      case 'DestinationRule':
        await viaServices(meshServices(kind, f, namespace));
        break;
    }
  }
  const readers = [...found.values()].map(asReader).sort((a, b) => (a.name === b.name ? a.kind.localeCompare(b.kind) : a.name.localeCompare(b.name)));
  return { readers, complete };
}

/** An HPA's scale target, as a reader (its pods are what the HPA scales). */
export async function hpaTarget(reader: TargetReader, hpa: KubeObject): Promise<ConfigReader | undefined> {
  const ref = hpa.spec?.['scaleTargetRef'] as { kind?: string; name?: string } | undefined;
  if ((ref?.kind !== 'Deployment' && ref?.kind !== 'StatefulSet') || !ref.name) return undefined;
  const o = await reader.get({ kind: ref.kind, namespace: hpa.metadata?.namespace ?? '', name: ref.name });
  return { kind: ref.kind, name: ref.name, via: ['selected'], pods: o ? podsOf({ ...o, kind: ref.kind }) : 0 };
}
