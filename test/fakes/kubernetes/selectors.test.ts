import { describe, expect, it } from 'vitest';
import { parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';

describe('selectors', () => {
  it('parses every label selector operator', () => {
    const labels = { app: 'web', tier: 'front' };
    const ok = (s: string): boolean => parseLabelSelector(s)(labels);
    expect(ok('app=web,tier==front')).toBe(true);
    expect(ok('app in (db, web),!canary')).toBe(true);
    expect(ok('app notin (web)')).toBe(false);
    expect(ok('tier!=front')).toBe(false);
    expect(ok('missing!=x')).toBe(true);
    expect(ok('tier')).toBe(true);
    expect(ok('')).toBe(true);
    expect(() => parseLabelSelector('a in b')).toThrow(SelectorError);
  });

  it('matches event field selectors and rejects unknown field labels', () => {
    const match = parseFieldSelector('involvedObject.kind=Pod,source=kubelet,type!=Normal', 'Event');
    expect(match({ involvedObject: { kind: 'Pod' }, source: { component: 'kubelet' }, type: 'Warning' })).toBe(true);
    expect(match({ involvedObject: { kind: 'Pod' }, source: { component: 'kubelet' }, type: 'Normal' })).toBe(false);
    expect(() => parseFieldSelector('status.phase=Running', 'Deployment')).toThrow('field label not supported: status.phase');
  });
});
