import type { KnownBlock } from '@slack/types';
import { contextBlock, dividerBlock, headerBlock, sectionBlock } from './elements.js';
import { slackTime } from './format.js';
import { fitBlocks, SLACK_LIMITS } from './limits.js';
import { mrkdwnLink, mrkdwnText } from './mrkdwn.js';
import type { InvestigationPhase, StatusModel } from './models.js';

const PHASE: Record<InvestigationPhase, string> = {
  investigating: '🔎 investigating',
  triaged: '🧭 triaged',
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
  // Each incident is a section and a divider: the omission counts incidents, not blocks.
  return { type: 'home', blocks: fitBlocks(blocks, SLACK_LIMITS.blocksPerView, { keepTail: 1, noun: 'incidents', isItem: (b) => b.type === 'section' }) };
}
