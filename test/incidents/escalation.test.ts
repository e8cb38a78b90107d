import { describe, expect, it } from 'vitest';
import { escalationFor } from '../../src/incidents/deepen.js';
import type { Finding } from '../../src/triage/types.js';

const finding = (status: Finding['status'], confidence: number): Finding => ({
  key: `k${confidence}`,
  analyzer: 'x',
  status,
  confidence,
  title: 't',
  mechanism: 'm',
  supporting: [],
  refuting: [],
});

describe('escalationFor', () => {
  it('hands over when nothing is supported, or only below the threshold', () => {
    expect(escalationFor([], 0.7)?.reason).toBe('no hypothesis is supported by evidence');
    expect(escalationFor([finding('supported', 0.6)], 0.7)?.reason).toMatch(/confidence 0\.60, below 0\.7/);
  });

  it('does not hand over a confident, supported diagnosis', () => {
    expect(escalationFor([finding('supported', 0.95), finding('open', 0.3)], 0.7)).toBeUndefined();
  });

  it('hands over when a needed read was forbidden, naming it, even with a supported hypothesis', () => {
    const gaps = ['list nodes: HTTP 403 nodes is forbidden: User "system:serviceaccount:vigil:vigil" cannot list resource "nodes"', 'prometheus: not configured (set PROMETHEUS_URL)'];
    const e = escalationFor([finding('supported', 0.95)], 0.7, gaps);
    expect(e?.reason).toMatch(/not allowed to read/);
    expect(e?.couldNotAccess).toEqual([gaps[0]]);
  });
});

describe('escalationFor and optional reads', () => {
  it('does not hand over a confident diagnosis because Helm release Secrets were refused, but does below the threshold', () => {
    const gaps = ['helm history kube-system/coredns: HTTP 403 secrets is forbidden: User "system:serviceaccount:vigil:vigil" cannot list resource "secrets" in API group "" in the namespace "kube-system"'];
    expect(escalationFor([finding('supported', 0.95)], 0.7, gaps)).toBeUndefined();
    expect(escalationFor([finding('supported', 0.5)], 0.7, gaps)).toMatchObject({ couldNotAccess: gaps });
  });
});
