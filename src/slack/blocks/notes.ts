import { contextBlock, sectionBlock, type RenderedMessage } from './elements.js';
import { ordinal, slackTime, utcClock } from './format.js';
import { fallbackText, mention, mrkdwnLink, mrkdwnText } from './mrkdwn.js';

/** Small thread notes: one short section each, with a plain notification fallback. */

export function renderRepeatNote(n: { count: number; at: Date; link?: string | undefined }): RenderedMessage {
  const times = n.count >= 2 ? ` (${ordinal(n.count)} time)` : '';
  const link = n.link ? ` · ${mrkdwnLink(n.link, 'View alert')}` : '';
  return {
    text: fallbackText(`Alert fired again${times} at ${utcClock(n.at)} UTC`, 200),
    blocks: [sectionBlock(`🔁 Alert fired again${times} at ${slackTime(n.at)}${link}`)],
  };
}

export function renderResolvedNote(n: { at: Date; by: 'alert' | string }): RenderedMessage {
  const by = n.by === 'alert' ? 'the alert cleared' : `resolved by ${mention(n.by)}`;
  const plainBy = n.by === 'alert' ? 'the alert cleared' : 'resolved by a responder';
  return {
    text: fallbackText(`Resolved at ${utcClock(n.at)} UTC: ${plainBy}`, 200),
    blocks: [sectionBlock(`✅ *Resolved* at ${slackTime(n.at)} — ${by}`)],
  };
}

/** Reply under a duplicate alert post, pointing to the thread where the incident is investigated. */
export function renderAlreadyTrackedNote(n: { permalink: string }): RenderedMessage {
  const where = n.permalink ? mrkdwnLink(n.permalink, 'the incident thread') : 'the incident thread in this channel';
  return {
    text: 'Already tracked: this alert belongs to an open incident',
    blocks: [sectionBlock(`👀 Already tracked — this alert belongs to an open incident. Follow and steer the investigation in ${where}.`)],
  };
}

/** Reply under a `[RESOLVED]` alert post: the incident it closes, and where its story is. */
export function renderResolvedPointer(n: { permalink: string }): RenderedMessage {
  const where = n.permalink ? mrkdwnLink(n.permalink, 'see the thread') : 'see the incident thread in this channel';
  return {
    text: 'Resolved: see the incident thread',
    blocks: [sectionBlock(`✅ Resolved — ${where}.`)],
  };
}

const VERB = { rule_out: 'ruled out', confirm: 'confirmed', pin: 'pinned' } as const;

/** After a steering reply changed the board (it is edited in place, which notifies nobody): who did what. */
export function renderSteeringNote(n: { userId: string; cmd: { kind: 'rule_out' | 'confirm' | 'pin'; label: string; reason?: string } }): RenderedMessage {
  const verb = VERB[n.cmd.kind];
  const reason = 'reason' in n.cmd && n.cmd.reason ? ` — “${mrkdwnText(n.cmd.reason.replace(/\s*\n\s*/g, ' '), 200)}”` : '';
  return {
    text: fallbackText(`Board updated: ${n.cmd.label} ${verb}`, 200),
    blocks: [contextBlock([`✅ ${mention(n.userId)} ${verb} *${mrkdwnText(n.cmd.label, 10)}*${reason} · the board above is updated`])],
  };
}

/** The root post Vigil makes in the channel for `/sre investigate …`; the investigation thread hangs off it. */
export function renderManualRoot(n: { requestedBy?: string; source?: string; title?: string; text: string }): RenderedMessage {
  const asked = n.text.trim() || '(no description)';
  // An alert that arrived by webhook (Alertmanager) has no Slack post to hang from and nobody who asked.
  if (!n.requestedBy) {
    const title = (n.title ?? asked).trim();
    return {
      text: fallbackText(`Alert from ${n.source ?? 'a webhook'}: ${title}`, 300),
      blocks: [
        sectionBlock(`🚨 *${mrkdwnText(title, 250)}*${asked !== title ? `\n>${mrkdwnText(asked, 2500).replace(/\n/g, '\n>')}` : ''}`),
        contextBlock([`Received from ${mrkdwnText(n.source ?? 'a webhook', 60)} by webhook; Vigil investigates in this thread; reply here to steer it.`]),
      ],
    };
  }
  return {
    text: fallbackText(`Investigation requested: ${asked}`, 300),
    blocks: [
      sectionBlock(`🔍 *Investigation requested* by ${mention(n.requestedBy)}\n>${mrkdwnText(asked, 2500).replace(/\n/g, '\n>')}`),
      contextBlock(['Vigil investigates in this thread; reply here to steer it.']),
    ],
  };
}

/** An error a user must see: what happened, the detail, and what to do next. */
export function renderErrorNote(n: { what: string; detail?: string; next?: string }): RenderedMessage {
  const lines = [`⚠️ *${mrkdwnText(n.what, 300)}*`];
  if (n.detail) lines.push(mrkdwnText(n.detail, 1500));
  if (n.next) lines.push(`*What to do:* ${mrkdwnText(n.next, 800)}`);
  return { text: fallbackText(`Error: ${n.what}`, 300), blocks: [sectionBlock(lines.join('\n'))] };
}

/**
 * The handover card: no hypothesis reached the confidence threshold within budget, or a needed read was
 * forbidden. Mentions the owning team and says what was checked, what was ruled out and what Vigil could
 * not access, so a human picks up with the full picture instead of starting over.
 */
export function renderEscalation(e: {
  owner?: string;
  reason: string;
  checked: string[];
  ruledOut: string[];
  couldNotAccess: string[];
  /** Who was paged about it (src/paging), when a pager is configured. */
  pages?: { label: string; dedupKey: string; state: 'paged' | 'resolved' | 'failed'; error?: string }[];
}): RenderedMessage {
  const list = (items: string[], max: number) =>
    items.length ? items.slice(0, max).map((i) => `• ${mrkdwnText(i.replace(/\s*\n\s*/g, ' '), 200)}`).join('\n') + (items.length > max ? `\n_+${items.length - max} more_` : '') : '_nothing_';
  const who = e.owner ? `${mention(e.owner)} ` : '';
  return {
    text: fallbackText(`Vigil needs a human: ${e.reason}`, 300),
    blocks: [
      sectionBlock(`🙋 ${who}*Vigil needs a human on this one* — ${mrkdwnText(e.reason, 400)}`),
      sectionBlock(`*Checked*\n${list(e.checked, 8)}`),
      sectionBlock(`*Ruled out*\n${list(e.ruledOut, 6)}`),
      sectionBlock(`*Could not access*\n${list(e.couldNotAccess, 6)}`),
      ...(e.pages?.length ? [contextBlock(e.pages.map((p) => pageLine(p)))] : []),
      contextBlock(['The hypothesis board above keeps every finding and its evidence; reply in this thread to steer.']),
    ],
  };
}

function pageLine(p: { label: string; dedupKey: string; state: 'paged' | 'resolved' | 'failed'; error?: string }): string {
  if (p.state === 'failed') return `⚠️ Could not page via ${mrkdwnText(p.label, 40)}: ${mrkdwnText(p.error ?? 'unknown error', 200)} (tried again at the next update)`;
  return `📟 ${p.state === 'resolved' ? 'Page resolved' : 'Paged'} via ${mrkdwnText(p.label, 40)} (dedup key \`${mrkdwnText(p.dedupKey, 80)}\`)`;
}
