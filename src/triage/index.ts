import type { Analyzer, TriageInput } from './analyzer.js';
import { backgroundNoise } from './analyzers/background-noise.js';
import { helmRelease } from './analyzers/helm-release.js';
import { scaledToZero } from './analyzers/scaled-to-zero.js';
import { capacityAnalyzers } from './registry/capacity.js';
import { changesAnalyzers } from './registry/changes.js';
import { podsAnalyzers } from './registry/pods.js';
import type { Finding } from './types.js';

/** The analyzer registry, one family per file; background noise runs last. */
export const analyzers: Analyzer[] = [scaledToZero, helmRelease, ...podsAnalyzers, ...capacityAnalyzers, ...changesAnalyzers, backgroundNoise];

export interface TriageResult {
  findings: Finding[];
  /** Analyzers that threw; reported as gaps, never fatal. */
  errors: string[];
}

/**
 * Run every analyzer. A hypothesis without cited evidence is never reported as supported: it is
 * downgraded to inconclusive here, whatever the analyzer said.
 */
export function runTriage(input: TriageInput, registry: Analyzer[] = analyzers): TriageResult {
  const findings: Finding[] = [];
  const errors: string[] = [];
  for (const a of registry) {
    try {
      for (const f of a.analyze(input)) {
        findings.push(f.status === 'supported' && f.supporting.length === 0 ? { ...f, status: 'inconclusive', confidence: Math.min(f.confidence, 0.5) } : f);
      }
    } catch (err) {
      errors.push(`analyzer ${a.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { findings, errors };
}
