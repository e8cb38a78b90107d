import type { KnownBlock } from '@slack/types';
import { contextBlock, dividerBlock, headerBlock, sectionBlock } from './elements.js';
import { slackTime } from './format.js';
import { fitBlocks, SLACK_LIMITS } from './limits.js';
import { mrkdwnLink, mrkdwnText } from './mrkdwn.js';
import type { InvestigationPhase, SetupModel, StatusModel } from './models.js';
import { truncateMrkdwn } from './truncate.js';

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
  // What waits on the viewer comes first: it is the one thing on this page only they can do.
  const blocks: KnownBlock[] = m.awaitingYou?.length ? [...awaitingBlocks(m.awaitingYou), dividerBlock()] : [];
  blocks.push(headerBlock(`Open incidents (${m.open.length})`));
  if (m.open.length === 0) blocks.push(sectionBlock('✅ *No open incidents.* Vigil is watching the alert channels.'));
  for (const i of m.open) {
    const title = i.permalink ? mrkdwnLink(i.permalink, i.title, 150) : `*${mrkdwnText(i.title, 150)}*`;
    const lines = [`${title}${i.target ? ` · \`${mrkdwnText(i.target, 100)}\`` : ''}`, `${PHASE[i.phase]} · since ${slackTime(i.openedAt, false)}`];
    if (i.leading) lines.push(`_Leading:_ ${mrkdwnText(i.leading, 300)}`);
    if (i.pendingApprovals) lines.push(`⏳ *${i.pendingApprovals} fix${i.pendingApprovals === 1 ? '' : 'es'} awaiting approval* — in the thread`);
    blocks.push(sectionBlock(lines.join('\n')), dividerBlock());
  }
  blocks.push(contextBlock([`${m.resolvedRecently} resolved in the last 24 h`, `updated ${slackTime(updatedAt)}`]));
  const tail = [...(m.setup ? setupBlocks(m.setup) : []), ...(m.skills ? [skillsBlock(m.skills)] : [])];
  blocks.push(...tail);
  // Each incident is a section and a divider: the omission counts incidents, not blocks.
  return { type: 'home', blocks: fitBlocks(blocks, SLACK_LIMITS.blocksPerView, { keepTail: 1 + tail.length, noun: 'incidents', isItem: (b) => b.type === 'section' }) };
}

const AWAITING_SHOWN = 8;

/** Pending fixes the viewer's groups may approve, each linking to its card. */
function awaitingBlocks(items: NonNullable<StatusModel['awaitingYou']>): KnownBlock[] {
  const lines = items.slice(0, AWAITING_SHOWN).map((a) => {
    const change = a.permalink ? mrkdwnLink(a.permalink, a.change, 150) : `*${mrkdwnText(a.change, 150)}*`;
    return `• ${change}${a.risk !== undefined ? ` · risk ${a.risk}/100` : ''}\n   _${mrkdwnText(a.incidentTitle, 150)}_ · proposed ${slackTime(a.since, false)}`;
  });
  if (items.length > AWAITING_SHOWN) lines.push(`_+${items.length - AWAITING_SHOWN} more in their threads_`);
  return [headerBlock(`Waiting for your approval (${items.length})`), sectionBlock(truncateMrkdwn(lines.join('\n'), SLACK_LIMITS.sectionText))];
}

const CHANNEL_ID = /^[CG][A-Z0-9]{2,}$/;
const channelRef = (id: string, name?: string) => (CHANNEL_ID.test(id) ? `<#${id}>` : `#${mrkdwnText(name ?? id, 80)}`);

const DOCTOR_FAILED_SHOWN = 5;

/** The newest `vigil doctor` run (RBAC: the reader cannot write) recorded on this database, if any. */
function doctorLine(d: SetupModel['doctor']): string {
  if (d === undefined) return '`vigil doctor` (RBAC: the reader cannot write) runs from the command line';
  if (d === null) return '▫️ Last `vigil doctor` (RBAC: the reader cannot write): never run against this database';
  const by = d.ranBy ? ` by ${mrkdwnText(d.ranBy, 40)}` : '';
  if (d.ok) return `✅ Last \`vigil doctor\`: passed (${d.passed} check${d.passed === 1 ? '' : 's'}) ${slackTime(d.at, false)}${by}`;
  const names = d.failedChecks.slice(0, DOCTOR_FAILED_SHOWN).map((n) => mrkdwnText(n, 160));
  const more = d.failed - names.length;
  return `⚠️ Last \`vigil doctor\`: failed: ${names.join('; ') || 'see its output'}${more > 0 ? ` (+${more} more)` : ''} — ${slackTime(d.at, false)}${by}`;
}

/** The setup panel: channels, evidence sources, policy, model and the start-up check, one line each. */
function setupBlocks(s: SetupModel): KnownBlock[] {
  const channels = s.channels.map((c) =>
    c.state === 'member' ? `✅ ${channelRef(c.id, c.name)}` : c.state === 'not_member' ? `⚠️ ${channelRef(c.id, c.name)} — Vigil is not in it: \`/invite @vigil\` there` : `❔ ${channelRef(c.id, c.name)} — could not check${c.error ? ` (${mrkdwnText(c.error, 80)})` : ''}`,
  );
  const sources = s.sources.map((x) =>
    x.state === 'connected' ? `✅ ${mrkdwnText(x.name, 40)}` : x.state === 'failing' ? `⚠️ ${mrkdwnText(x.name, 40)} failing${x.at ? ` (${slackTime(x.at, false)})` : ''}: ${mrkdwnText(x.detail ?? '', 200)}` : `▫️ ${mrkdwnText(x.name, 40)} not configured`,
  );
  const policy = s.policy.file
    ? `🛡️ *Policy:* \`${mrkdwnText(s.policy.file, 120)}\`, ${s.policy.rules} rule${s.policy.rules === 1 ? '' : 's'} — every fix needs approval on its card`
    : '🛡️ *Policy:* read-only — no write policy, so Vigil suggests fixes and runs nothing';
  const model = s.model ? `🤖 *Model:* on — ${mrkdwnText([s.model.provider, s.model.name].filter(Boolean).join(' '), 100)}` : '🤖 *Model:* off — deterministic triage only';
  const lines = [`*Watched channels*\n${channels.join('\n') || '_none_'}`, `*Evidence sources*\n${sources.join('\n') || '_none_'}`, policy, model];
  const checks = [
    s.preflight ? `${s.preflight.ok ? '✅' : '⚠️'} Slack tokens checked at start ${slackTime(s.preflight.at, false)}${s.preflight.detail ? `: ${mrkdwnText(s.preflight.detail, 300)}` : ''}` : 'Slack tokens: not checked at start',
    doctorLine(s.doctor),
  ];
  return [dividerBlock(), headerBlock('Setup'), sectionBlock(truncateMrkdwn(lines.join('\n'), SLACK_LIMITS.sectionText)), contextBlock(checks)];
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
