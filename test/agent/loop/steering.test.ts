import { describe, expect, it } from 'vitest';
import { foldSteering, parseSteering } from '../../../src/agent/steering.js';
import { steeringDirectives } from '../../../src/agent/prompt.js';

describe('parseSteering', () => {
  it.each([
    ['rule out H2', { kind: 'rule_out', label: 'H2' }],
    ['Rule out h2.', { kind: 'rule_out', label: 'H2' }],
    ['H2 is wrong because the helm change was 3 days ago', { kind: 'rule_out', label: 'H2', reason: 'the helm change was 3 days ago' }],
    ['h3 is a red herring', { kind: 'rule_out', label: 'H3' }],
    ['not H4', { kind: 'rule_out', label: 'H4' }],
    ['<@U0VIGIL> rule out H2: payments is unrelated', { kind: 'rule_out', label: 'H2', reason: 'payments is unrelated' }],
    ['confirm H1', { kind: 'confirm', label: 'H1' }],
    ['H1 is right', { kind: 'confirm', label: 'H1' }],
    ['pin H1', { kind: 'pin', label: 'H1' }],
    ['ignore the cache', { kind: 'exclude', topic: 'cache' }],
    ['not the cache', { kind: 'exclude', topic: 'cache' }],
    ["it's not the redis cluster", { kind: 'exclude', topic: 'redis cluster' }],
    ['Vigil, forget about payments-worker', { kind: 'exclude', topic: 'payments-worker' }],
    ['check the database instead', { kind: 'focus', topic: 'database', instead: true }],
    ['check the database too', { kind: 'focus', topic: 'database', instead: false }],
    ['focus on payments', { kind: 'focus', topic: 'payments', instead: false }],
    ['what about the ingress?', { kind: 'focus', topic: 'ingress', instead: false }],
  ])('%s', (text, expected) => {
    expect(parseSteering(text)).toEqual(expected);
  });

  it.each(['not sure what is going on', 'looks like the deploy at 14:00 broke it, the logs show timeouts', 'not yet', ''])('leaves "%s" to the model as free text', (text) => {
    expect(parseSteering(text)).toEqual({ kind: 'free_text', text });
  });
});

describe('foldSteering', () => {
  it('folds oldest to newest: the latest word on a label wins, the newest focus wins', () => {
    const t = (s: number) => new Date(Date.UTC(2025, 0, 1, 12, 0, s));
    const state = foldSteering([
      { userId: 'U2', userName: 'carol', text: 'confirm H2', at: t(3) },
      { userId: 'U1', userName: 'bob', text: 'rule out H2 because it is old', at: t(1) },
      { userId: 'U1', userName: 'bob', text: 'check the cache', at: t(2) },
      { userId: 'U3', text: 'focus on payments instead', at: t(4) },
      { userId: 'U1', userName: 'bob', text: 'ignore the cache', at: t(5) },
      { userId: 'U2', userName: 'carol', text: 'the pager went off twice', at: t(6) },
    ]);
    expect(state.ruledOut).toEqual([]);
    expect(state.confirmed).toEqual([{ label: 'H2', by: 'carol' }]);
    expect(state.focus).toEqual({ topic: 'payments', instead: true, by: '<@U3>' });
    expect(state.excluded).toEqual(['cache']);
    expect(state.notes.map((n) => n.text)).toEqual(['the pager went off twice']);
    const directives = steeringDirectives(state, { k1: 'H2' }, []);
    expect(directives).toContain('FOCUS: examine "payments" now, instead of the current leading hypothesis');
    expect(directives).toContain('EXCLUDED: do not investigate or blame "cache"');
    expect(directives).toContain('CONFIRMED by carol: H2');
  });
});
