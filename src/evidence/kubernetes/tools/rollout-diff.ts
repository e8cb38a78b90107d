/** What changed in a pod template between two rollout revisions, in the terms an SRE checks first. */
import type { V1Container, V1EnvVar, V1PodTemplateSpec } from '@kubernetes/client-node';
import { describeProbe } from '../describe.js';

export interface TemplateDiff {
  images: { container: string; from?: string; to?: string }[];
  /** `container/NAME`; values never appear, only that they changed. */
  envAdded: string[];
  envRemoved: string[];
  envChanged: string[];
  resources: { container: string; from: string; to: string }[];
  probes: { container: string; probe: string; from?: string; to?: string }[];
  containersAdded: string[];
  containersRemoved: string[];
  /** Something else in the template differs (volumes, command, labels outside pod-template-hash, …). */
  otherChanges: boolean;
}

function envMap(c: V1Container | undefined): Map<string, string> {
  return new Map((c?.env ?? []).map((e: V1EnvVar) => [e.name, JSON.stringify({ v: e.value, f: e.valueFrom })]));
}

function resourcesText(c: V1Container | undefined): string {
  const r = c?.resources;
  const fmt = (x: Record<string, unknown> | undefined) => Object.entries(x ?? {}).map(([k, v]) => `${k}=${String(v)}`).join(',');
  return `requests{${fmt(r?.requests)}} limits{${fmt(r?.limits)}}`;
}

/** Template without the fields a diff already reports or that always differ (the RS hash label). */
function residue(t: V1PodTemplateSpec | undefined): string {
  const labels = { ...(t?.metadata?.labels ?? {}) };
  delete labels['pod-template-hash'];
  const strip = (c: V1Container) => {
    const { image: _i, env: _e, resources: _r, readinessProbe: _a, livenessProbe: _b, startupProbe: _c, ...rest } = c;
    return rest;
  };
  return JSON.stringify({ labels, spec: { ...(t?.spec ?? {}), containers: (t?.spec?.containers ?? []).map(strip), initContainers: (t?.spec?.initContainers ?? []).map(strip) } }, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined && x !== null).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}

/** Changes from `prev` to `next`; an absent `prev` (the first revision) reports nothing. */
export function diffPodTemplates(prev: V1PodTemplateSpec | undefined, next: V1PodTemplateSpec | undefined): TemplateDiff {
  const diff: TemplateDiff = { images: [], envAdded: [], envRemoved: [], envChanged: [], resources: [], probes: [], containersAdded: [], containersRemoved: [], otherChanges: false };
  if (!prev || !next) return diff;
  const all = (t: V1PodTemplateSpec) => [...(t.spec?.initContainers ?? []), ...(t.spec?.containers ?? [])];
  const before = new Map(all(prev).map((c) => [c.name, c]));
  const after = new Map(all(next).map((c) => [c.name, c]));
  for (const name of before.keys()) if (!after.has(name)) diff.containersRemoved.push(name);
  for (const [name, c] of after) {
    const old = before.get(name);
    if (!old) {
      diff.containersAdded.push(name);
      continue;
    }
    if (old.image !== c.image) diff.images.push({ container: name, ...(old.image ? { from: old.image } : {}), ...(c.image ? { to: c.image } : {}) });
    const oe = envMap(old);
    const ne = envMap(c);
    for (const [k, v] of ne) {
      if (!oe.has(k)) diff.envAdded.push(`${name}/${k}`);
      else if (oe.get(k) !== v) diff.envChanged.push(`${name}/${k}`);
    }
    for (const k of oe.keys()) if (!ne.has(k)) diff.envRemoved.push(`${name}/${k}`);
    const or = resourcesText(old);
    const nr = resourcesText(c);
    if (or !== nr) diff.resources.push({ container: name, from: or, to: nr });
    for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe'] as const) {
      const a = describeProbe(old[probe]);
      const b = describeProbe(c[probe]);
      if (a !== b) diff.probes.push({ container: name, probe: probe.replace('Probe', ''), ...(a ? { from: a } : {}), ...(b ? { to: b } : {}) });
    }
  }
  diff.otherChanges = residue(prev) !== residue(next);
  return diff;
}

export function isEmptyDiff(d: TemplateDiff): boolean {
  return !d.otherChanges && [d.images, d.envAdded, d.envRemoved, d.envChanged, d.resources, d.probes, d.containersAdded, d.containersRemoved].every((x) => x.length === 0);
}
