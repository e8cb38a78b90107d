import type { Analyzer, TriageInput } from './analyzer.js';
import { backgroundNoise } from './analyzers/background-noise.js';
import { helmRelease } from './analyzers/helm-release.js';
import { scaledToZero } from './analyzers/scaled-to-zero.js';
import { capacityAnalyzers } from './registry/capacity.js';
import { changesAnalyzers } from './registry/changes.js';
import { dependencyAnalyzers } from './registry/dependencies.js';
import { podsAnalyzers } from './registry/pods.js';
import type { Finding } from './types.js';

/** The analyzer registry, one family per file; background noise runs last. */
export const analyzers: Analyzer[] = [scaledToZero, helmRelease, ...podsAnalyzers, ...capacityAnalyzers, ...changesAnalyzers, ...dependencyAnalyzers, backgroundNoise];

export interface TriageResult {
  findings: Finding[];
  /** Analyzers that threw; reported as gaps, never fatal. */
  errors: string[];
}

/** The family an analyzer's finding claims when the analyzer does not say (docs/fault-families.md). */
export function defaultFamily(f: Finding): string | undefined {
  switch (f.analyzer) {
    case 'helm-release':
      return 'deploy-regression';
    case 'unschedulable':
      return /^(pvc_unbound|pv_unavailable|volume_node_affinity)$/.test(String(f.facts?.['reason'] ?? '')) ? 'storage-unavailable' : 'unschedulable';
    case 'node-pressure':
      return f.facts?.['condition'] === 'NotReady' ? 'node-not-ready' : 'node-pressure';
    case 'dependency-degraded':
      return f.facts?.['metric'] === 'db_pool_saturation' ? 'connection-pool-exhaustion' : 'dependency-degraded';
    case 'background-noise':
      return undefined;
    default:
      return f.analyzer;
  }
}

/**
 * Run every analyzer. A hypothesis without cited evidence is never reported as supported: it is
 * downgraded to inconclusive here, whatever the analyzer said. Each finding gets its family.
 */
export function runTriage(input: TriageInput, registry: Analyzer[] = analyzers): TriageResult {
  const findings: Finding[] = [];
  const errors: string[] = [];
  for (const a of registry) {
    try {
      for (const raw of a.analyze(input)) {
        const family = raw.family ?? defaultFamily(raw);
        const f = family ? { ...raw, family } : raw;
        findings.push(f.status === 'supported' && f.supporting.length === 0 ? { ...f, status: 'inconclusive', confidence: Math.min(f.confidence, 0.5) } : f);
      }
    } catch (err) {
      errors.push(`analyzer ${a.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { findings, errors };
}
