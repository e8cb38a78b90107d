import type { KnownBlock } from '@slack/types';
import { contextBlock, sectionBlock, type RenderedMessage } from './elements.js';
import { slackTime } from './format.js';
import { fitBlocks, SLACK_LIMITS } from './limits.js';
import { fallbackText, mrkdwnLink, mrkdwnText } from './mrkdwn.js';
import type { InvestigationPhase, StatusModel } from './models.js';

/** Ephemeral answers to `/sre`. */

const SUBCOMMANDS = [
  {
    usage: '/sre investigate <text or alert link>',
    what: 'start an investigation thread in this channel',
    examples: ['/sre investigate checkout returns 503 since 14:00', '/sre investigate https://alertmanager.example.com/#/alerts?filter=%7Balertname%3D%22KubeDeploymentReplicasMismatch%22%7D'],
  },
  { usage: '/sre status', what: 'list open incidents and their leading hypothesis', examples: [] },
  { usage: '/sre postmortem [incident id]', what: 'post a postmortem draft from the stored record (timeline, impact, root cause with evidence, what was ruled out, actions and who took them, follow-ups); opens a GitHub issue when configured', examples: [] },
  { usage: '/sre stop [all]', what: 'kill switch: cancel pending fixes, stop writes, and end the model call and evidence reads under way for this incident (all: every incident, admins only); only members of its alert channel', examples: [] },
  { usage: '/sre resume [all]', what: 'lift the kill switch (only whoever stopped it, or a policy admin); ask again with a thread reply or /sre investigate', examples: [] },
  { usage: '/sre help', what: 'show this help', examples: [] },
] as const;

export function renderHelp(opts: { error?: string } = {}): RenderedMessage {
  const blocks: KnownBlock[] = [];
  if (opts.error) blocks.push(sectionBlock(`⚠️ ${mrkdwnText(opts.error, 500)}`));
  const lines = SUBCOMMANDS.map((c) => {
    const examples = c.examples.map((e) => `\n    e.g. \`${mrkdwnText(e, 300)}\``).join('');
    return `• \`${mrkdwnText(c.usage, 100)}\` — ${c.what}${examples}`;
  });
  blocks.push(sectionBlock(`*Vigil — \`/sre\` commands*\n${lines.join('\n')}`));
  blocks.push(contextBlock(['Alerts posted in watched channels are investigated automatically; reply in an incident thread to steer it.']));
  const text = opts.error ? `${opts.error} — try /sre help` : 'Vigil /sre commands: investigate, status, postmortem, stop, resume, help';
  return { text: fallbackText(text, 300), blocks };
}

const PHASE_WORDS: Record<InvestigationPhase, string> = {
  investigating: 'investigating',
  triaged: 'triaged',
  mitigating: 'mitigating',
  mitigated: 'mitigated',
  needs_human: 'needs a human',
  failed: 'investigation failed',
  resolved: 'resolved',
};

/** Incidents listed before the rest are summarised; keeps the answer one readable screen. */
const MAX_LISTED = 15;

export function renderStatus(m: StatusModel): RenderedMessage {
  const recent = `${m.resolvedRecently} resolved recently`;
  if (m.open.length === 0) {
    return { text: fallbackText(`No open incidents · ${recent}`, 200), blocks: [sectionBlock(`✅ *No open incidents.*\n${recent}`)] };
  }
  const listed = m.open.slice(0, MAX_LISTED).map((i) => {
    const title = i.permalink ? mrkdwnLink(i.permalink, i.title, 150) : `*${mrkdwnText(i.title, 150)}*`;
    const parts = [title];
    if (i.target) parts.push(`\`${mrkdwnText(i.target, 100)}\``);
    parts.push(PHASE_WORDS[i.phase], `since ${slackTime(i.openedAt, false)}`);
    const leading = i.leading ? `\n_leading:_ ${mrkdwnText(i.leading, 200)}` : '';
    return `${parts.join(' · ')}${leading}`;
  });
  const more = m.open.length - listed.length;
  const blocks: KnownBlock[] = [sectionBlock(`*Open incidents (${m.open.length})*`), ...listed.map((l) => sectionBlock(l))];
  if (more > 0) blocks.push(contextBlock([`… ${more} more open`]));
  blocks.push(contextBlock([recent]));
  return {
    text: fallbackText(`${m.open.length} open incident${m.open.length === 1 ? '' : 's'} · ${recent}`, 200),
    blocks: fitBlocks(blocks, SLACK_LIMITS.blocksPerMessage, { keepTail: 1, noun: 'incidents' }),
  };
}
