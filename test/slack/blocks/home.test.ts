import { describe, expect, it } from 'vitest';
import { renderHome } from '../../../src/slack/blocks/home.js';
import type { StatusModel } from '../../../src/slack/blocks/models.js';
import { SLACK_LIMITS } from '../../../src/slack/blocks/limits.js';

const incidents = (n: number): StatusModel['open'] =>
  Array.from({ length: n }, (_, i) => ({ incidentId: `inc-${i}`, title: `checkout 5xx #${i}`, target: 'shop/checkout', phase: 'triaged' as const, openedAt: new Date('2024-05-01T12:00:00Z') }));

const textOf = (blocks: unknown[]) => JSON.stringify(blocks);
/** Incidents shown: each is one section naming its title. */
const shown = (blocks: unknown[]) => (textOf(blocks).match(/checkout 5xx #\d+/g) ?? []).length;

describe('App Home', () => {
  it('counts the incidents it leaves out, not the blocks', () => {
    const view = renderHome({ open: incidents(120), resolvedRecently: 3 }, new Date('2024-05-01T13:00:00Z'));
    expect(view.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocksPerView);
    const listed = shown(view.blocks);
    expect(listed).toBeGreaterThan(0);
    expect(listed).toBeLessThan(120);
    const more = /… (\d+) more incidents not shown/.exec(textOf(view.blocks));
    expect(Number(more?.[1])).toBe(120 - listed);
    expect(textOf(view.blocks)).toContain('Open incidents (120)');
  });

  it('says nothing is left out when every incident fits', () => {
    const view = renderHome({ open: incidents(3), resolvedRecently: 0 }, new Date('2024-05-01T13:00:00Z'));
    expect(shown(view.blocks)).toBe(3);
    expect(textOf(view.blocks)).not.toMatch(/not shown/);
  });

  it('lists the skills in use, when they were loaded and each file that did not load', () => {
    const skills = {
      count: 13,
      dir: 'skills',
      loadedAt: new Date('2024-05-01T12:30:00Z'),
      errors: [
        { file: 'skills/dns.md', field: 'applies_to.families.0', message: 'unknown fault family "dns" (see docs/fault-families.md)' },
        { file: 'skills/<x>.md', message: 'expects YAML front matter' },
      ],
    };
    const view = renderHome({ open: incidents(120), resolvedRecently: 0, skills }, new Date('2024-05-01T13:00:00Z'));
    expect(view.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocksPerView);
    const last = JSON.stringify(view.blocks[view.blocks.length - 1]);
    expect(last).toContain('📘 *13 skills in use* from `skills` · loaded <!date^1714566600^');
    expect(last).toContain('⚠️ *2 skill files not loaded:*');
    expect(last).toContain('• `skills/dns.md` field `applies_to.families.0`: unknown fault family \\"dns\\"');
    expect(last).toContain('`skills/&lt;x&gt;.md`: expects YAML front matter');
    const ok = renderHome({ open: [], resolvedRecently: 0, skills: { ...skills, errors: [] } }, new Date('2024-05-01T13:00:00Z'));
    expect(JSON.stringify(ok.blocks.at(-1))).toContain('no load errors');
    expect(textOf(renderHome({ open: [], resolvedRecently: 0 }, new Date()).blocks)).not.toContain('skill');
  });
});
