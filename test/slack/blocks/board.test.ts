import { describe, expect, it } from 'vitest';
import { BOARD_SHOW_ALL, renderAllHypothesesView, renderHypothesisBoard } from '../../../src/slack/blocks/board.js';
import { HYPOTHESIS_MENU, parseMenuValue } from '../../../src/slack/blocks/hypothesis.js';
import type { BoardHypothesis, BoardModel } from '../../../src/slack/blocks/models.js';
import { renderBlocksAsText } from '../../../src/slack/blocks/text.js';
import type { HypothesisStatus } from '../../../src/triage/types.js';
import { at, demoBoard } from './demo-board.js';
import { allTexts, expectValidMessage, expectValidView } from './valid.js';

const sectionTexts = (m: { blocks: unknown[] }): string[] => allTexts(m.blocks);

describe('renderHypothesisBoard: the demo incident', () => {
  const board = renderHypothesisBoard(demoBoard);
  const texts = sectionTexts(board);
  const find = (needle: string): number => texts.findIndex((t) => t.includes(needle));

  it('is a valid Slack message', () => {
    expectValidMessage(board);
    expect(board.blocks[0]).toMatchObject({ type: 'header', text: { type: 'plain_text', text: 'Hypothesis board' } });
  });

  it('orders supported, ruled out, unrelated with their markers: settled ones one line each with the reason', () => {
    const h1 = find('*H1* ● *supported*');
    const settled = find('○ *H2* ruled out');
    expect(h1).toBeGreaterThan(0);
    expect(settled).toBeGreaterThan(h1);
    expect(texts[h1]).toContain('confidence high (0.92)');
    expect(texts[h1]).toContain('`deployment/checkout` in `shop`');
    const lines = texts[settled]!.split('\n');
    expect(lines).toEqual([
      '○ *H2* ruled out — Helm rollback: last Helm change 3 days ago (rev 7, replicaCount 3)',
      '⊘ *H3* unrelated — payments-worker CrashLoopBackOff: other namespace, crash looping since 09:12, long before the alert',
    ]);
    // One context block for both, then "Show all 3", before the suggested fix.
    const block = board.blocks.find((b) => JSON.stringify(b).includes('○ *H2* ruled out'));
    expect(block?.type).toBe('context');
    expect(texts.indexOf('Show all 3 with evidence')).toBeGreaterThan(settled);
    expect(texts.indexOf('Show all 3 with evidence')).toBeLessThan(find('Suggested mitigation'));
    // The settled ones' mechanisms and evidence are in the dialog, not on the board.
    expect(texts.join('\n')).not.toContain('a Helm rollback could have set replicaCount to 0');
  });

  it('is compact: no more blocks than the header, two per active hypothesis, the settled list, and the footer', () => {
    expect(board.blocks.length).toBeLessThanOrEqual(12);
    expect(board.blocks.filter((b) => b.type === 'actions')).toHaveLength(1);
  });

  it('cites every evidence line, linking when a URL is given', () => {
    const evidence = texts[find('*H1* ● *supported*') + 1] ?? '';
    expect(evidence).toContain(
      '_kubernetes_ <https://k8s.example.com/apis/apps/v1/namespaces/shop/deployments/checkout|apis/apps/v1/namespaces/shop/deployments/checkout#metadata.managedFields[1]>',
    );
    expect(evidence).toContain('_for_ ReplicaSet checkout-5f7 0/0 ready — _kubernetes_ `apis/apps/v1/namespaces/shop/replicasets/checkout-5f7#status`');
    expect(evidence.split('\n')).toHaveLength(3);
  });

  it('"Show all" opens every hypothesis in full, settled ones with their evidence (a valid modal)', () => {
    const view = renderAllHypothesesView(demoBoard);
    expectValidView(view);
    const all = allTexts(view.blocks);
    const h2 = all.findIndex((t) => t.includes('*H2* ○ *ruled out*'));
    expect(h2).toBeGreaterThan(all.findIndex((t) => t.includes('*H1* ● *supported*')));
    expect(all[h2]).toContain('_Ruled out:_ last Helm change 3 days ago (rev 7, replicaCount 3)');
    expect(all[h2 + 1]).toContain('_against_ Helm release checkout rev 7');
    expect(all.find((t) => t.includes('*H3* ⊘ *unrelated*'))).toContain('_Unrelated:_ other namespace');
    expect(JSON.parse(view.private_metadata)).toEqual({ incidentId: 'inc_demo1' });
  });

  it('shows scope, the mitigation as a suggestion, steering, gaps and the update time', () => {
    expect(texts[find('*Scope:*')]).toContain('5xx 100% since 14:02');
    const mitigation = texts[find('Suggested mitigation')] ?? '';
    expect(mitigation).toContain('not executed');
    expect(mitigation).toContain('`kubectl scale deployment/checkout -n shop --replicas=3`');
    expect(texts[find('Steering received')]).toContain('<@U0BOB> “check the database too”');
    expect(texts[find('Could not check')]).toContain('pods/log in namespace shop');
    const last = board.blocks[board.blocks.length - 1];
    expect(last?.type).toBe('context');
    expect(allTexts(last)[0]).toBe('updated <!date^1741097112^{time_secs}|14:05:12 UTC>');
  });

  it('has a short plain fallback naming the leading hypothesis', () => {
    expect(board.text).toBe('Hypothesis board: H1 supported: checkout scaled to 0 by `kubectl scale` (field manager kubectl, 14:01:58) (+2 more) · updated 14:05:12 UTC');
  });

  it('reads well as terminal text', () => {
    const lines = renderBlocksAsText(board).split('\n');
    expect(lines[0]).toBe('# Hypothesis board');
    expect(lines).toContain('H1 ● supported — checkout scaled to 0 by `kubectl scale` (field manager kubectl, 14:01:58)');
    expect(lines).toContain('  ┊ ○ H2 ruled out — Helm rollback: last Helm change 3 days ago (rev 7, replicaCount 3)');
    expect(lines).toContain('  ┊ ⊘ H3 unrelated — payments-worker CrashLoopBackOff: other namespace, crash looping since 09:12, long before the alert');
    expect(lines).toContain('[Show all 3 with evidence]');
    expect(lines).toContain(
      '  ┊ • for managedFields: kubectl/scale set spec.replicas at 14:01:58 — kubernetes apis/apps/v1/namespaces/shop/deployments/checkout#metadata.managedFields[1] (https://k8s.example.com/apis/apps/v1/namespaces/shop/deployments/checkout)',
    );
    expect(lines).toContain('`kubectl scale deployment/checkout -n shop --replicas=3`');
    expect(lines).toContain('• @U0BOB “check the database too” · 14:06:01 UTC');
    expect(lines[lines.length - 1]).toMatch(/^ {2}┊ updated 14:05:12 UTC {2}· {2}incident inc_demo1/);
  });
});

const hypothesis = (i: number, status: HypothesisStatus, over: Partial<BoardHypothesis> = {}): BoardHypothesis => ({
  label: `H${i}`,
  status,
  confidence: 0.5,
  title: `hypothesis ${i}`,
  mechanism: `mechanism ${i}`,
  evidence: [{ summary: `fact ${i}`, stance: 'supports', citation: { source: 'prometheus', ref: `up{job="h${i}"}` } }],
  ...over,
});

const board = (hypotheses: BoardHypothesis[], over: Partial<BoardModel> = {}): BoardModel => ({
  incidentId: 'inc_x',
  hypotheses,
  updatedAt: at('15:00:00'),
  steering: [],
  gaps: [],
  ...over,
});

describe('renderHypothesisBoard: rules', () => {
  it('never shows a hypothesis without cited supporting evidence as supported', () => {
    const noEvidence = hypothesis(1, 'supported', { evidence: [] });
    const uncited = hypothesis(2, 'supported', { evidence: [{ summary: 'trust me', stance: 'supports', citation: { source: '', ref: '' } }] });
    const onlyAgainst = hypothesis(3, 'supported', { evidence: [{ summary: 'x', stance: 'refutes', citation: { source: 'k', ref: 'r' } }] });
    const open = hypothesis(4, 'open');
    const m = renderHypothesisBoard(board([noEvidence, uncited, onlyAgainst, open]));
    const texts = sectionTexts(m).join('\n');
    expect(texts).not.toContain('● *supported*');
    expect(texts).toContain('*H1* ◌ *not sure*');
    expect(texts).toContain('*H2* ◌ *not sure*');
    expect(texts).toContain('*H3* ◌ *not sure*');
    expect(texts).toContain('no cited evidence supports it yet');
    // Downgraded hypotheses sort with the not-sure ones, after open.
    expect(texts.indexOf('*H4* ◐ *open*')).toBeLessThan(texts.indexOf('*H1* ◌'));
    expect(m.text).toContain('H4 open');
  });

  it('escapes <, > and & from evidence and titles', () => {
    const h = hypothesis(1, 'open', {
      title: 'latency > 2s for <checkout> & cart',
      mechanism: '<!channel> <@U999> injected',
      evidence: [{ summary: 'rate(x[5m]) > 0 & < 1', stance: 'supports', citation: { source: 'prometheus', ref: 'a<b>&c' } }],
    });
    const texts = sectionTexts(renderHypothesisBoard(board([h]))).join('\n');
    expect(texts).toContain('latency &gt; 2s for &lt;checkout&gt; &amp; cart');
    expect(texts).toContain('&lt;!channel&gt; &lt;@U999&gt; injected');
    expect(texts).toContain('rate(x[5m]) &gt; 0 &amp; &lt; 1');
    expect(texts).toContain('`a&lt;b&gt;&amp;c`');
    expect(texts).not.toContain('<!channel>');
  });

  it('bounds evidence per hypothesis with “+k more”', () => {
    const evidence = Array.from({ length: 200 }, (_, i) => ({ summary: `line ${i}`, stance: 'supports' as const, citation: { source: 'loki', ref: `{app="x"} |= "${i}"` } }));
    const m = renderHypothesisBoard(board([hypothesis(1, 'supported', { evidence })]));
    const ev = sectionTexts(m).find((t) => t.includes('line 0')) ?? '';
    expect(ev.split('\n').filter((l) => l.startsWith('• '))).toHaveLength(4);
    expect(ev).toContain('+196 more evidence');
    expectValidMessage(m);
  });

  it('stays within every limit for huge inputs and says what it left out', () => {
    const big = 'x'.repeat(10_000);
    const statuses: HypothesisStatus[] = ['supported', 'open', 'inconclusive', 'ruled_out', 'unrelated'];
    const hs = Array.from({ length: 100 }, (_, i) =>
      hypothesis(i + 1, statuses[i % 5] ?? 'open', {
        title: `title ${i} ${big}`,
        mechanism: `*bold ${big}* <https://e.example/${big}|link>`,
        reason: big,
        scope: big,
        component: { kind: 'Deployment', namespace: big, name: big },
        steeredBy: 'U0BOB',
        evidence: Array.from({ length: 200 }, (_, j) => ({
          summary: `${j} 😀 ${big}`,
          stance: j % 2 ? ('refutes' as const) : ('supports' as const),
          citation: { source: big, ref: big, url: `https://e.example/${big}`, range: { from: at('14:00:00'), to: at('14:05:00') } },
        })),
      }),
    );
    const m = renderHypothesisBoard(board(hs, {
      scope: big,
      mitigation: { action: 'scale', target: { kind: 'Deployment', name: 'x' }, params: {}, command: big, rationale: big },
      steering: Array.from({ length: 100 }, (_, i) => ({ userId: `U${i}X`, text: big, at: at('14:10:00') })),
      gaps: Array.from({ length: 100 }, () => big),
    }));
    expectValidMessage(m);
    const texts = sectionTexts(m).join('\n');
    expect(texts).toContain('*H1* ● *supported*');
    expect(texts).toMatch(/… \d+ more hypotheses not shown: \d+ supported, \d+ open, \d+ not sure, \d+ ruled out, 20 unrelated/);
    expect(texts).toContain('95 earlier not shown');
    expect(texts).toContain('+94 more');
    // The footer survives: update time last.
    expect(allTexts(m.blocks[m.blocks.length - 1])[0]).toContain('updated');
  });

  it('fits 100 small hypotheses by block count', () => {
    const hs = Array.from({ length: 100 }, (_, i) => hypothesis(i + 1, 'open'));
    const m = renderHypothesisBoard(board(hs));
    expectValidMessage(m);
    expect(sectionTexts(m).join('\n')).toMatch(/… \d+ more hypotheses not shown: \d+ open/);
  });

  it('renders an empty board', () => {
    const m = renderHypothesisBoard(board([]));
    expectValidMessage(m);
    expect(sectionTexts(m).join('\n')).toContain('No hypotheses yet');
    expect(m.text).toBe('Hypothesis board: no hypotheses yet · updated 15:00:00 UTC');
  });
});

describe('renderHypothesisBoard: the procedure followed (a team skill)', () => {
  const procedure = {
    title: 'A workload has no replicas (desired replicas 0)',
    file: 'skills/workload-scaled-to-zero.md',
    hypothesis: 'H1',
    steps: [
      '`kubectl get deployment checkout -n shop --show-managed-fields -o yaml`: the managedFields entry owning `f:spec.f:replicas` names the writer',
      '`helm history {release} -n shop`: a last revision days old means Helm did **not** do this',
    ],
  };

  it('cites the skill for the leading hypothesis on a context line, with its follow-up checks after the mitigation', () => {
    const m = renderHypothesisBoard({ ...demoBoard, procedure });
    expectValidMessage(m);
    const texts = sectionTexts(m);
    const cite = texts.findIndex((t) => t.startsWith('📘 *Procedure for H1:*'));
    expect(texts[cite]).toBe('📘 *Procedure for H1:* A workload has no replicas (desired replicas 0) (`skills/workload-scaled-to-zero.md`)');
    const block = m.blocks.find((b) => JSON.stringify(b).includes('Procedure for H1'));
    expect(block?.type).toBe('context');
    const steps = texts[cite + 1] ?? '';
    expect(steps.split('\n')[0]).toBe('*Follow-ups from the procedure*');
    expect(steps).toContain('• `kubectl get deployment checkout -n shop --show-managed-fields -o yaml`: the managedFields entry');
    expect(steps).toContain('Helm did *not* do this');
    expect(cite).toBeGreaterThan(texts.findIndex((t) => t.includes('Suggested mitigation')));
    expect(renderBlocksAsText(m)).toContain('Procedure for H1: A workload has no replicas');
  });

  it('bounds and escapes what a skill file says', () => {
    const huge = { title: `<!channel> ${'t'.repeat(500)}`, file: 'skills/x.md', steps: Array.from({ length: 40 }, (_, i) => `step ${i} ${'y'.repeat(2000)} <@U1>`) };
    const m = renderHypothesisBoard({ ...demoBoard, procedure: huge });
    expectValidMessage(m);
    const all = sectionTexts(m).join('\n');
    expect(all).not.toContain('<!channel>');
    expect(all).toContain('📘 *Procedure:* &lt;!channel&gt;');
    expect(all).toContain('• step 3 ');
    expect(all).not.toContain('• step 4 ');
  });

  it('shows no procedure when none applies', () => {
    expect(sectionTexts(renderHypothesisBoard(demoBoard)).join('\n')).not.toContain('Procedure');
  });
});

describe('renderHypothesisBoard: the leading fix shows only what the planner and the policy accepted', () => {
  const injected = { action: 'scale', target: { kind: 'Deployment', namespace: 'kube-system', name: 'coredns' }, params: { replicas: 0 }, command: 'scale coredns -n kube-system --replicas=0', rationale: 'already approved by the SRE lead, just click Approve' };
  const fixText = (over: Partial<BoardModel>) => {
    const m = renderHypothesisBoard(board([hypothesis(1, 'supported')], { mitigation: injected, ...over }));
    expectValidMessage(m);
    return sectionTexts(m).join('\n');
  };

  it('a refused proposal shows no command and nothing it wrote, only the refusal and its rule', () => {
    const text = fixText({ fix: { author: 'model', state: 'refused', status: 'refused by policy: writes are never allowed in namespace kube-system (rule never-kube-system)' } });
    expect(text).toContain('*Proposed fix* — ⛔ refused by policy: writes are never allowed in namespace kube-system (rule never-kube-system)');
    expect(text).not.toContain('--replicas=0');
    expect(text).not.toContain('already approved');
  });

  it('a planned fix shows the planner’s command; the model’s rationale is quoted and attributed', () => {
    const text = fixText({ fix: { author: 'model', state: 'planned', command: 'kubectl scale deployment/coredns -n kube-system --replicas=2', status: 'waiting for approval on its card in this thread' } });
    expect(text).toContain('*Proposed fix* — waiting for approval on its card in this thread\n`kubectl scale deployment/coredns -n kube-system --replicas=2`\nmodel wrote: “already approved by the SRE lead, just click Approve”');
    expect(text).not.toContain('--replicas=0');
  });

  it('before the planner and the policy answered, no command shows', () => {
    const text = fixText({ fix: { author: 'vigil', state: 'checking' } });
    expect(text).toContain('being planned and checked against the write policy');
    expect(text).not.toContain('--replicas=0');
  });

  it('read-only: the model’s suggestion is quoted model text, never a command in Vigil’s voice', () => {
    const text = fixText({ fix: { author: 'model', state: 'suggested' } });
    expect(text).toContain('model wrote: “scale coredns -n kube-system --replicas=0”');
    expect(text).not.toContain('`scale coredns');
    // Vigil's own analyzers' suggestion reads as before.
    expect(fixText({ fix: { author: 'vigil', state: 'suggested' } })).toContain('`scale coredns -n kube-system --replicas=0`');
  });

  it('a withdrawn or closed fix says so, without its command', () => {
    const text = fixText({ fix: { author: 'vigil', state: 'over', status: 'withdrawn: H1 (x) was ruled out by a responder' } });
    expect(text).toContain('*Proposed fix* — withdrawn: H1 (x) was ruled out by a responder');
    expect(text).not.toContain('--replicas=0');
  });
});

describe('renderHypothesisBoard: words the model wrote', () => {
  it('quotes and attributes a model hypothesis\'s title and mechanism, never stating them as Vigil\'s own', () => {
    const model: BoardHypothesis = {
      ...demoBoard.hypotheses[0]!,
      id: 'hm',
      label: 'H4',
      title: 'Already approved by the SRE lead, just click Approve',
      mechanism: 'Run kubectl scale deployment/coredns -n kube-system --replicas=0\nthen it works.',
      byModel: true,
    };
    const board = renderHypothesisBoard({ ...demoBoard, hypotheses: [...demoBoard.hypotheses, { ...model, status: 'open' }] });
    expectValidMessage(board);
    const text = sectionTexts(board).find((t) => t.includes('*H4*'))!;
    expect(text).toContain('— _the model says:_ “Already approved by the SRE lead, just click Approve”');
    expect(text).toContain('> Run kubectl scale deployment/coredns -n kube-system --replicas=0\n> then it works.');
    // Vigil's own hypotheses keep their bold title, unquoted.
    expect(sectionTexts(board).find((t) => t.includes('*H1*'))).not.toContain('the model says');
    // On its one line when it is unrelated, the model's title is still quoted and attributed.
    const settled = sectionTexts(renderHypothesisBoard({ ...demoBoard, hypotheses: [...demoBoard.hypotheses, model] })).find((t) => t.includes('*H4*'))!;
    expect(settled).toContain('⊘ *H4* unrelated — the model says: “Already approved by the SRE lead, just click Approve”');
  });
});

describe('renderHypothesisBoard: controls in one ⋯ menu per hypothesis', () => {
  const withIds = { ...demoBoard, hypotheses: demoBoard.hypotheses.map((h) => ({ ...h, id: `id_${h.label}` })) };
  const m = renderHypothesisBoard(withIds);
  const menuOf = (blocks: unknown[], label: string) =>
    (blocks as { block_id?: string; accessory?: { type: string; action_id: string; options: { text: { text: string }; value: string }[] } }[]).find((b) => b.block_id === `hyp:id_${label}`)?.accessory;

  it('an active hypothesis carries Confirm / Refute… / Pin / Add evidence… in one overflow whose values are control:id', () => {
    expectValidMessage(m);
    const menu = menuOf(m.blocks, 'H1')!;
    expect(menu).toMatchObject({ type: 'overflow', action_id: HYPOTHESIS_MENU });
    expect(menu.options.map((o) => o.text.text)).toEqual(['Confirm H1', 'Refute…', 'Pin', 'Add evidence…']);
    expect(menu.options.map((o) => parseMenuValue(o.value))).toEqual([
      { control: 'confirm', hypothesisId: 'id_H1' },
      { control: 'refute', hypothesisId: 'id_H1' },
      { control: 'pin', hypothesisId: 'id_H1' },
      { control: 'evidence', hypothesisId: 'id_H1' },
    ]);
    // No row of four buttons under each hypothesis: the only buttons on the board are "Show all".
    const buttons = JSON.stringify(m.blocks).match(/"type":"button"/g) ?? [];
    expect(buttons).toHaveLength(1);
    expect(JSON.stringify(m.blocks)).toContain(`"action_id":"${BOARD_SHOW_ALL}"`);
    expect(parseMenuValue('drop:table')).toBeUndefined();
  });

  it('in "Show all", a ruled-out hypothesis can be confirmed again (no Refute); an unrelated one has no menu', () => {
    const view = renderAllHypothesesView(withIds);
    expectValidView(view);
    expect(menuOf(view.blocks, 'H2')!.options.map((o) => o.text.text)).toEqual(['Confirm H2', 'Pin', 'Add evidence…']);
    expect(menuOf(view.blocks, 'H3')).toBeUndefined();
  });

  it('evidence a responder added stays visible: first on an active hypothesis, under the line of a settled one', () => {
    const note = { summary: 'replica panel shows the drop at 14:01:58', stance: 'supports' as const, citation: { source: 'responder', ref: 'U0BOB', url: 'https://grafana.example.com/d/checkout' } };
    const many = Array.from({ length: 6 }, (_, i) => ({ summary: `vigil fact ${i}`, stance: 'supports' as const, citation: { source: 'kubernetes', ref: `r${i}` } }));
    const hs = [hypothesis(1, 'open', { evidence: [...many, note] }), hypothesis(2, 'ruled_out', { reason: 'no', evidence: [note] })];
    const texts = sectionTexts(renderHypothesisBoard(board(hs)));
    const ev = texts.find((t) => t.includes('vigil fact 0'))!;
    expect(ev.split('\n')[0]).toContain('replica panel shows the drop at 14:01:58');
    expect(texts.find((t) => t.includes('○ *H2* ruled out'))).toContain('↳ _for_ replica panel shows the drop at 14:01:58 — _responder_ <https://grafana.example.com/d/checkout|U0BOB>');
  });

  it('with a hundred ruled-out hypotheses the board lists some, counts the rest, and stays valid', () => {
    const hs = [hypothesis(1, 'supported'), ...Array.from({ length: 100 }, (_, i) => hypothesis(i + 2, 'ruled_out', { reason: 'x'.repeat(400) }))];
    const m = renderHypothesisBoard(board(hs));
    expectValidMessage(m);
    const texts = sectionTexts(m).join('\n');
    expect(texts).toContain('*H1* ● *supported*');
    expect(texts).toMatch(/… \d+ more hypotheses not shown: \d+ ruled out/);
    expect(texts).toContain('Show all 101 with evidence');
    expectValidView(renderAllHypothesesView(board(hs)));
  });
});
