import { describe, expect, it } from 'vitest';
import { parseAlertMessage } from '../../src/alerts/parse/index.js';
import type { AlertMessage } from '../../src/alerts/types.js';

/** Inputs that arrive from the wire and are not what the types promise. */
const asMessage = (value: unknown): AlertMessage => value as AlertMessage;

describe('parseAlertMessage never throws on bad input', () => {
  it.each([
    ['attachments is not an array', { attachments: 'oops' }, /attachments/],
    ['an attachment title is a number', { attachments: [{ title: 42 }] }, /attachments\.0\.title/],
    ['a field value is an object', { attachments: [{ title: 'x', fields: [{ title: 'a', value: { nested: true } }] }] }, /fields/],
    ['a block without a type', { blocks: [{ text: 'hello' }] }, /blocks\.0\.type/],
    ['text is an array', { text: ['ALERT'] }, /text/],
    ['the message is not an object', 'ALERT: checkout down', /message/],
    ['the message is null', null, /message/],
  ])('%s → malformed', (_name, input, reason) => {
    const result = parseAlertMessage(asMessage(input));
    expect(result.kind).toBe('malformed');
    expect(result.kind !== 'alert' && result.reason).toMatch(reason);
  });

  it('huge text → malformed with the size', () => {
    const result = parseAlertMessage({ text: `ALERT ${'x'.repeat(200_000)}` });
    expect(result).toMatchObject({ kind: 'malformed' });
    expect(result.kind === 'malformed' && result.reason).toMatch(/too large/);
  });

  it('an Alertmanager post whose attachment has no title or text → malformed', () => {
    expect(parseAlertMessage({ username: 'Alertmanager', attachments: [{ color: 'danger' }] })).toMatchObject({
      kind: 'malformed',
      reason: expect.stringMatching(/no attachment title/) as unknown as string,
    });
  });

  it('a PagerDuty post without a title → malformed', () => {
    expect(parseAlertMessage({ bot_profile: { name: 'PagerDuty' }, attachments: [{ fields: [{ title: 'Status', value: 'Triggered' }] }] })).toMatchObject({
      kind: 'malformed',
    });
  });

  it('null fields, as Slack sometimes sends, are accepted', () => {
    const result = parseAlertMessage(asMessage({ text: null, attachments: [{ title: '[FIRING:1] Foo (bar)', text: null, fields: null }], username: 'Alertmanager' }));
    expect(result).toMatchObject({ kind: 'alert', alert: { alertName: 'Foo', labelValues: ['Foo', 'bar'] } });
  });

  it('odd titles still parse', () => {
    const empty = parseAlertMessage({ username: 'Alertmanager', attachments: [{ title: '[FIRING:2]  ' }] });
    expect(empty).toMatchObject({ kind: 'alert', alert: { count: 2, labelValues: [] } });
    const unbalanced = parseAlertMessage({ username: 'Alertmanager', attachments: [{ title: '[FIRING:1] Foo (bar (baz)' }] });
    expect(unbalanced.kind).toBe('alert');
  });
});
