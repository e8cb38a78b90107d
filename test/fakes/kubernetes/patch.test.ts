import { describe, expect, it } from 'vitest';
import { applyPatch, jsonPatch, mergePatch } from './patch.js';
import { KubeError } from './status.js';

describe('patch formats', () => {
  it('merge patch: null deletes, maps merge, lists replace', () => {
    expect(mergePatch({ a: 1, b: { c: 2, d: 3 }, l: [1, 2] }, { a: null, b: { c: 5 }, l: [9] })).toEqual({ b: { c: 5, d: 3 }, l: [9] });
  });

  it('json patch: add, replace, remove, move, copy, test', () => {
    const doc = { spec: { replicas: 1, list: ['a'] } };
    const out = jsonPatch(doc, [
      { op: 'replace', path: '/spec/replicas', value: 3 },
      { op: 'add', path: '/spec/list/-', value: 'b' },
      { op: 'copy', from: '/spec/replicas', path: '/spec/copy' },
      { op: 'move', from: '/spec/copy', path: '/spec/moved' },
      { op: 'remove', path: '/spec/list/0' },
      { op: 'test', path: '/spec/moved', value: 3 },
    ]);
    expect(out).toEqual({ spec: { replicas: 3, list: ['b'], moved: 3 } });
    expect(doc.spec.replicas).toBe(1);
    expect(() => jsonPatch(doc, [{ op: 'test', path: '/spec/replicas', value: 2 }])).toThrow('testing value /spec/replicas failed');
    expect(() => jsonPatch(doc, [{ op: 'remove', path: '/spec/nope' }])).toThrow(/missing path/);
    // Both answer 422 with kube-apiserver's generic message; the detail above is not sent.
    for (const ops of [[{ op: 'test', path: '/spec/replicas', value: 2 }], [{ op: 'remove', path: '/spec/nope' }]]) {
      const err = (() => {
        try {
          jsonPatch(doc, ops);
        } catch (e) {
          return e as KubeError;
        }
      })();
      expect(err?.status).toMatchObject({ code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request' });
    }
    // `test` compares JSON values, map keys in any order.
    expect(jsonPatch({ a: { x: 1, y: [1, { z: 2 }] } }, [{ op: 'test', path: '/a', value: { y: [1, { z: 2 }], x: 1 } }])).toEqual({ a: { x: 1, y: [1, { z: 2 }] } });
  });

  it('chooses by content type and refuses apply patches with 415', () => {
    expect(applyPatch({ a: 1 }, 'application/strategic-merge-patch+json; charset=utf-8', { b: 2 })).toEqual({ a: 1, b: 2 });
    try {
      applyPatch({}, 'application/apply-patch+yaml', {});
      expect.unreachable();
    } catch (err) {
      expect((err as KubeError).status.code).toBe(415);
    }
  });
});
