import type { KnownBlock } from '@slack/types';
import { describe, expect, it } from 'vitest';
import { blocksTextLength, fitBlocks, SLACK_LIMITS } from '../../../src/slack/blocks/limits.js';
import { contextBlock, headerBlock, sectionBlock } from '../../../src/slack/blocks/elements.js';
import { validateBlocks } from '../../fakes/slack/blockkit.js';
import { allTexts } from './valid.js';

const sections = (n: number, size = 10): KnownBlock[] => Array.from({ length: n }, (_, i) => sectionBlock(`${i} ${'x'.repeat(size)}`));

describe('fitBlocks', () => {
  it('returns the blocks unchanged when they fit', () => {
    const blocks = sections(5);
    expect(fitBlocks(blocks)).toEqual(blocks);
  });

  it('keeps the leading blocks and replaces the rest with one “N more not shown” context', () => {
    const out = fitBlocks(sections(80), 50);
    expect(out).toHaveLength(50);
    expect(allTexts(out[0])[0]).toMatch(/^0 /);
    expect(allTexts(out[48])[0]).toMatch(/^48 /);
    expect(out[49]).toEqual({ type: 'context', elements: [{ type: 'mrkdwn', text: '… 31 more not shown' }] });
    expect(validateBlocks(out, 'message')).toEqual([]);
  });

  it('keeps a pinned tail and names what was omitted', () => {
    const blocks = [...sections(60), contextBlock(['updated 14:05'])];
    const out = fitBlocks(blocks, 10, { keepTail: 1, noun: 'incidents' });
    expect(out).toHaveLength(10);
    expect(allTexts(out[8])).toEqual(['… 52 more incidents not shown']);
    expect(allTexts(out[9])).toEqual(['updated 14:05']);
  });

  it('also drops blocks to respect the cumulative text budget', () => {
    const out = fitBlocks(sections(10, 2000), 50, { textBudget: 9000 });
    expect(blocksTextLength(out)).toBeLessThanOrEqual(9000);
    expect(allTexts(out[out.length - 1])[0]).toBe('… 6 more not shown');
  });
});

describe('block constructors enforce field limits', () => {
  it('cuts header, section and context text and never sends empty text', () => {
    const blocks = [headerBlock('h'.repeat(500)), sectionBlock('s'.repeat(5000)), contextBlock(Array.from({ length: 15 }, (_, i) => `c${i}`)), sectionBlock('  ')];
    expect(validateBlocks(blocks, 'message')).toEqual([]);
    expect(allTexts(blocks[0])[0]).toHaveLength(SLACK_LIMITS.headerText);
    expect(allTexts(blocks[1])[0]).toHaveLength(SLACK_LIMITS.sectionText);
    const ctx = allTexts(blocks[2]);
    expect(ctx).toHaveLength(SLACK_LIMITS.contextElements);
    expect(ctx[9]).toBe('c9 · c10 · c11 · c12 · c13 · c14');
  });
});
