/** The pure parts of a plan: the field diff and the change annotation on each kind of write. */
import { describe, expect, it } from 'vitest';
import { diffObjects, MASKED, renderChanges } from '../../src/actions/diff.js';
import { CHANGE_ANNOTATION, changeAnnotation, stampWrite } from '../../src/actions/stamp.js';
import type { KubeWrite } from '../../src/actions/types.js';

describe('diffObjects', () => {
  it('lists changed leaves by readable path, matches named lists by name, ignores bookkeeping', () => {
    const before = {
      metadata: { name: 'w', resourceVersion: '1', generation: 1, managedFields: [] },
      spec: { replicas: 1, template: { spec: { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] } } },
      status: { readyReplicas: 1 },
    };
    const after = {
      metadata: { name: 'w', resourceVersion: '2', generation: 2, managedFields: [{}] },
      spec: { replicas: 1, template: { spec: { containers: [{ name: 'b', image: 'b:2' }, { name: 'a', image: 'a:1' }] } } },
      status: { readyReplicas: 0 },
    };
    const changes = diffObjects(before, after);
    expect(changes).toEqual([{ path: 'spec.template.spec.containers[b].image', before: 'b:1', after: 'b:2' }]);
    expect(renderChanges(changes)).toEqual(['spec.template.spec.containers[b].image: b:1 → b:2']);
  });

  it('masks environment variable values, including added and removed variables', () => {
    const env = (vars: { name: string; value: string }[]) => ({ spec: { template: { spec: { containers: [{ name: 'c', env: vars }] } } } });
    const changes = diffObjects(env([{ name: 'PASSWORD', value: 'hunter2' }]), env([{ name: 'PASSWORD', value: 'hunter3' }, { name: 'TOKEN', value: 'abc' }]));
    expect(changes).toEqual([
      { path: 'spec.template.spec.containers[c].env[PASSWORD].value', before: MASKED, after: MASKED },
      { path: 'spec.template.spec.containers[c].env[TOKEN]', before: undefined, after: '(variable)' },
    ]);
    expect(JSON.stringify(changes)).not.toMatch(/hunter|abc/);
  });
});

describe('stampWrite', () => {
  const target = { kind: 'Deployment' as const, namespace: 'shop', name: 'web' };
  const text = changeAnnotation('INC-1', { userId: 'U1', at: new Date('2025-03-01T12:00:00.000Z') });

  it('formats who approved it and when', () => {
    expect(text).toBe('INC-1, approved by U1 at 2025-03-01T12:00:00Z');
    expect(changeAnnotation('INC-1')).toBe('INC-1, pending approval');
  });

  it('puts the annotation in a merge patch, after a scale, before a delete, and into JSON patches', () => {
    const merge: KubeWrite = { op: 'patch', target, patchType: 'merge', body: { spec: { suspend: true } }, purpose: '' };
    expect(stampWrite(merge, text)).toEqual([{ ...merge, body: { spec: { suspend: true }, metadata: { annotations: { [CHANGE_ANNOTATION]: text } } } }]);

    const scale: KubeWrite = { op: 'patch', target, subresource: 'scale', patchType: 'merge', body: { spec: { replicas: 3 } }, purpose: '' };
    const [first, second] = stampWrite(scale, text);
    expect(first).toEqual(scale);
    expect(second).toMatchObject({ op: 'patch', patchType: 'merge', body: { metadata: { annotations: { [CHANGE_ANNOTATION]: text } } } });
    expect(second).not.toHaveProperty('subresource');

    const del: KubeWrite = { op: 'delete', target: { ...target, kind: 'Pod' }, purpose: '' };
    expect(stampWrite(del, text).map((w) => w.op)).toEqual(['patch', 'delete']);

    const json = (hasAnnotations: boolean): KubeWrite => ({ op: 'patch', target, patchType: 'json', body: [{ op: 'replace', path: '/spec/x', value: 1 }], hasAnnotations, purpose: '' });
    expect((stampWrite(json(true), text)[0] as { body: unknown }).body).toContainEqual({ op: 'add', path: '/metadata/annotations/vigil.dev~1change', value: text });
    expect((stampWrite(json(false), text)[0] as { body: unknown }).body).toContainEqual({ op: 'add', path: '/metadata/annotations', value: { [CHANGE_ANNOTATION]: text } });
  });
});
