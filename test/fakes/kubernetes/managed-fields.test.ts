import { describe, expect, it } from 'vitest';
import { changedPaths, fromFieldsV1, recordUpdate, toFieldsV1, type ManagedFieldsEntry } from './managed-fields.js';

const helm: ManagedFieldsEntry = {
  manager: 'helm',
  operation: 'Update',
  apiVersion: 'apps/v1',
  time: '2025-01-01T00:00:00Z',
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:paused': {} } },
};

describe('managedFields bookkeeping', () => {
  it('finds changed leaf paths, ignoring server-owned metadata', () => {
    const before = { metadata: { resourceVersion: '1', labels: { a: '1' } }, spec: { replicas: 3, x: [1] } };
    const after = { metadata: { resourceVersion: '2', labels: { a: '1', b: '2' } }, spec: { replicas: 0, x: [1] } };
    expect(changedPaths(before, after)).toEqual([
      ['metadata', 'labels', 'b'],
      ['spec', 'replicas'],
    ]);
  });

  it('round-trips FieldsV1 and strips k:/v: prefixes', () => {
    expect(toFieldsV1([['spec', 'replicas']])).toEqual({ 'f:spec': { 'f:replicas': {} } });
    expect(fromFieldsV1({ 'f:spec': { 'f:containers': { 'k:{"name":"a"}': { '.': {}, 'f:image': {} } } } })).toEqual([
      ['spec', 'containers', '{"name":"a"}', '.'],
      ['spec', 'containers', '{"name":"a"}', 'image'],
    ]);
  });

  it('gives the writer the fields and takes them from others; empty entries disappear', () => {
    const scaled = recordUpdate([helm], {
      manager: 'kubectl',
      apiVersion: 'apps/v1',
      time: '2025-01-02T00:00:00Z',
      subresource: 'scale',
      changed: [['spec', 'replicas']],
      removed: [],
    });
    expect(scaled).toEqual([
      { ...helm, fieldsV1: { 'f:spec': { 'f:paused': {} } } },
      {
        manager: 'kubectl',
        operation: 'Update',
        apiVersion: 'apps/v1',
        time: '2025-01-02T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:replicas': {} } },
        subresource: 'scale',
      },
    ]);
    const again = recordUpdate(scaled, { manager: 'vigil', apiVersion: 'apps/v1', time: 't', changed: [['spec', 'replicas'], ['spec', 'paused']], removed: [] });
    expect(again.map((e) => e.manager)).toEqual(['vigil']);
  });
});
