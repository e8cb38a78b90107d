import { describe, expect, it } from 'vitest';
import { BASE_RISK, describeRisk, guessEnvironment, scoreRisk, type RiskInput } from '../../src/actions/risk.js';

const input = (over: Partial<RiskInput>): RiskInput => ({ kind: 'scale_up', environment: 'staging', podsDisrupted: 0, reversible: 'yes', recentFailures: 0, ...over });

describe('scoreRisk', () => {
  it('explains the score with its factors, which sum to it', () => {
    const r = scoreRisk(input({ kind: 'rollout_restart', environment: 'production', podsDisrupted: 3, reversible: 'partial' }));
    expect(r.factors).toEqual([
      { name: 'action', points: 20, detail: 'rollout restart' },
      { name: 'environment', points: 25, detail: 'production' },
      { name: 'blast radius', points: 10, detail: '3 running pods stopped or replaced' },
      { name: 'reversibility', points: 10, detail: 'partly reversible' },
      { name: 'recent failures', points: 0, detail: '0 recent failures of this action on the target' },
    ]);
    expect(r.score).toBe(65);
    expect(describeRisk(r)).toBe('risk 65/100 (rollout restart +20, production +25, 3 running pods stopped or replaced +10, partly reversible +10)');
  });

  it('orders actions sensibly', () => {
    const scaleUpStaging = scoreRisk(input({})).score;
    const scaleUpProd = scoreRisk(input({ environment: 'production' })).score;
    const deletePodProd = scoreRisk(input({ kind: 'delete_pod', environment: 'production', podsDisrupted: 1, reversible: 'partial' })).score;
    const bareDeleteProd = scoreRisk(input({ kind: 'delete_pod', environment: 'production', podsDisrupted: 1, reversible: 'no' })).score;
    const scaleToZeroProd = scoreRisk(input({ kind: 'scale_to_zero', environment: 'production', podsDisrupted: 3, reversible: 'partial' })).score;
    expect(deletePodProd).toBeGreaterThan(scaleUpStaging);
    expect(scaleUpProd).toBeGreaterThan(scaleUpStaging);
    expect(bareDeleteProd).toBeGreaterThan(deletePodProd);
    expect(scaleToZeroProd).toBeGreaterThan(scaleUpProd);
    expect(scoreRisk(input({ environment: 'unknown' })).score).toBeGreaterThan(scaleUpStaging);
    expect(BASE_RISK.set_image).toBeGreaterThan(BASE_RISK.rollout_restart);
  });

  it('raises the score for recent failures of the same action, capped, and stays within 0–100', () => {
    const once = scoreRisk(input({ recentFailures: 1 })).score;
    const many = scoreRisk(input({ recentFailures: 10 })).score;
    expect(once - scoreRisk(input({})).score).toBe(15);
    expect(many - scoreRisk(input({})).score).toBe(30);
    const worst = scoreRisk({ kind: 'scale_to_zero', environment: 'production', podsDisrupted: 500, reversible: 'no', recentFailures: 9 });
    expect(worst.score).toBe(100);
    expect(scoreRisk(input({ kind: 'resume_cronjob', environment: 'development', podsDisrupted: -2 })).score).toBe(10);
  });
});

describe('guessEnvironment', () => {
  it('reads common namespace names', () => {
    expect(guessEnvironment('shop-prod')).toBe('production');
    expect(guessEnvironment('staging')).toBe('staging');
    expect(guessEnvironment('team-dev')).toBe('development');
    expect(guessEnvironment('shop')).toBe('unknown');
    expect(guessEnvironment('product')).toBe('unknown');
  });
});
