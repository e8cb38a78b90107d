import type { KnownBlock } from '@slack/types';
import { contextBlock, dividerBlock, headerBlock, sectionBlock } from './elements.js';
import { slackTime } from './format.js';
import { fitBlocks, SLACK_LIMITS } from './limits.js';
import { mrkdwnLink, mrkdwnText } from './mrkdwn.js';
import type { InvestigationPhase, StatusModel } from './models.js';

const PHASE: Record<InvestigationPhase, string> = {
  investigating: '🔎 investigating',
  triaged: '🧭 triaged',
  mitigating: '🛠️ mitigating',
  mitigated: '🩹 mitigated',
  needs_human: '🙋 needs a human',
  failed: '⚠️ investigation failed',
  resolved: '✅ resolved',
};

/**
 * App Home: the one shared view of every open incident — its leading hypothesis and pending approvals —
 * the same for whoever opens it, republished as incidents change. Within a Home view's 100 blocks.
 */
export function renderHome(m: StatusModel, updatedAt: Date): { type: 'home'; blocks: KnownBlock[] } {
  const blocks: KnownBlock[] = [headerBlock(`Open incidents (${m.open.length})`)];
  if (m.open.length === 0) blocks.push(sectionBlock('✅ *No open incidents.* Vigil is watching the alert channels.'));
  for (const i of m.open) {
    const title = i.permalink ? mrkdwnLink(i.permalink, i.title, 150) : `*${mrkdwnText(i.title, 150)}*`;
    const lines = [`${title}${i.target ? ` · \`${mrkdwnText(i.target, 100)}\`` : ''}`, `${PHASE[i.phase]} · since ${slackTime(i.openedAt, false)}`];
    if (i.leading) lines.push(`_Leading:_ ${mrkdwnText(i.leading, 300)}`);
    if (i.pendingApprovals) lines.push(`⏳ *${i.pendingApprovals} fix${i.pendingApprovals === 1 ? '' : 'es'} awaiting approval* — in the thread`);
    blocks.push(sectionBlock(lines.join('\n')), dividerBlock());
  }
  blocks.push(contextBlock([`${m.resolvedRecently} resolved in the last 24 h`, `updated ${slackTime(updatedAt)}`]));
  const tail = m.skills ? [skillsBlock(m.skills)] : [];
  blocks.push(...tail);
  // Each incident is a section and a divider: the omission counts incidents, not blocks.
  return { type: 'home', blocks: fitBlocks(blocks, SLACK_LIMITS.blocksPerView, { keepTail: 1 + tail.length, noun: 'incidents', isItem: (b) => b.type === 'section' }) };
}

const SKILL_ERRORS_SHOWN = 5;

/** The skills in use, when they were loaded and the files that did not load (file, field, why). */
function skillsBlock(s: NonNullable<StatusModel['skills']>): KnownBlock {
  const where = s.dir ? ` from \`${mrkdwnText(s.dir, 100)}\`` : '';
  const head = `📘 *${s.count} skill${s.count === 1 ? '' : 's'} in use*${where} · loaded ${slackTime(s.loadedAt)}`;
  if (s.errors.length === 0) return contextBlock([`${head} · no load errors`]);
  const shown = s.errors.slice(0, SKILL_ERRORS_SHOWN).map((e) => `• \`${mrkdwnText(e.file, 120)}\`${e.field ? ` field \`${mrkdwnText(e.field, 80)}\`` : ''}: ${mrkdwnText(e.message.replace(/\s*\n\s*/g, ' '), 300)}`);
  const more = s.errors.length - shown.length;
  return contextBlock([`${head}\n⚠️ *${s.errors.length} skill file${s.errors.length === 1 ? '' : 's'} not loaded:*\n${shown.join('\n')}${more > 0 ? `\n+${more} more (see the logs)` : ''}`]);
}
