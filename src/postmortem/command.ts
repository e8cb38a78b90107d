import { NOT_IN_CHANNEL, type ChatMessage } from '../incidents/chat.js';
import { renderErrorNote } from '../slack/blocks/notes.js';
import { SLACK_LIMITS } from '../slack/blocks/limits.js';
import { fallbackText, mrkdwnLink, mrkdwnText } from '../slack/blocks/mrkdwn.js';
import { sectionBlock } from '../slack/blocks/elements.js';
import type { Db } from '../store/db.js';
import type { PostmortemService } from './service.js';

export interface PostmortemCommand {
  /** Text after `postmortem`: an incident id, or empty inside an incident thread. */
  args: string;
  channelId: string;
  /** Set when the command was run inside a thread. */
  threadTs?: string;
  userId: string;
  /** Whether the user is a member of this alert channel; an incident of a channel they are not in is refused. */
  canSee?: (channelId: string) => Promise<boolean>;
}

const INCIDENT_ID = /^[a-z0-9]{20,40}$/i;
const USAGE = 'Run `/sre postmortem` in an incident thread, or pass an incident id: `/sre postmortem <incident id>` (`/sre status` lists them).';

/**
 * `/sre postmortem [incident id]`: which incident — the id given, the thread it was run in, or the only
 * open incident of the channel — then the draft is posted in that incident's thread. The answer is the
 * requester's ephemeral reply.
 */
export async function runPostmortemCommand(service: PostmortemService, db: Db, cmd: PostmortemCommand): Promise<ChatMessage> {
  const arg = cmd.args.trim().split(/\s+/)[0] ?? '';
  const canSee = cmd.canSee ?? (async () => true);
  let incidentId: string | undefined;
  if (arg) {
    if (!INCIDENT_ID.test(arg)) return renderErrorNote({ what: `\`${arg.slice(0, 60)}\` is not an incident id`, next: USAGE });
    const found = await db.incident.findUnique({ where: { id: arg }, select: { id: true } });
    if (!found) return renderErrorNote({ what: `No incident with id \`${arg}\``, next: USAGE });
    incidentId = found.id;
  } else if (cmd.threadTs) {
    incidentId = await service.findIncidentForThread(cmd.channelId, cmd.threadTs);
    if (!incidentId) return renderErrorNote({ what: 'This thread is not an incident Vigil investigated', next: USAGE });
  } else {
    // The list below names incidents of this channel: only for its members.
    if (!(await canSee(cmd.channelId))) return { text: NOT_IN_CHANNEL };
    const open = await db.incident.findMany({ where: { channelId: cmd.channelId, status: 'open' }, orderBy: { openedAt: 'desc' }, take: 6, select: { id: true, title: true } });
    if (open.length === 1) incidentId = open[0]!.id;
    else if (open.length === 0) return renderErrorNote({ what: 'No open incident in this channel', next: USAGE });
    else {
      const list = open.slice(0, 5).map((i) => `• \`${i.id}\` ${mrkdwnText(i.title, 150)}`).join('\n');
      return { text: 'Several open incidents here: pass an incident id.', blocks: [sectionBlock(`Several incidents are open in this channel; say which one with \`/sre postmortem <incident id>\`:\n${list}`)] };
    }
  }
  // Checked on the incident's own channel, wherever the command was typed: the draft carries its cause.
  const { channelId } = await db.incident.findUniqueOrThrow({ where: { id: incidentId }, select: { channelId: true } });
  if (!(await canSee(channelId))) return { text: NOT_IN_CHANNEL };
  try {
    const r = await service.postDraft(incidentId, cmd.userId);
    const link = r.issueUrl ? ` · ${mrkdwnLink(r.issueUrl, 'GitHub issue')}` : '';
    const failed = r.issueError ? `\n⚠️ The GitHub issue could not be opened: ${mrkdwnText(r.issueError, 300)}` : '';
    // The text carries the cause as drafted: escaped, so a `<!channel>` or `<url|label>` in it stays inert.
    return { text: fallbackText(r.text, SLACK_LIMITS.messageTextRecommended), blocks: [sectionBlock(`📝 Postmortem draft posted in the incident thread${link}.\n*Cause:* ${mrkdwnText(r.postmortem.summary.cause, 500)}${failed}`)] };
  } catch (err) {
    return renderErrorNote({ what: 'The postmortem draft could not be posted', detail: err instanceof Error ? err.message : String(err), next: 'Try again in a minute; if it keeps failing, check Vigil’s logs.' });
  }
}
