/**
 * `/sre stop` and `/sre resume`: the kill switch from Slack.
 *   /sre stop                  the only open incident in this channel (asks for an id when there are several)
 *   /sre stop <incident id>    that incident
 *   /sre stop all              every incident (policy admins only)
 */
import { NOT_IN_CHANNEL, type ChatMessage } from '../incidents/chat.js';
import { codeSpan, fallbackText } from '../slack/blocks/mrkdwn.js';
import type { ApprovalService } from './service.js';
import type { StopScope } from './types.js';

export interface StopCommand {
  verb: 'stop' | 'resume';
  /** What followed the verb: empty, `all`/`global`, or an incident id. */
  args: string;
  userId: string;
  channelId: string;
  /** Whether the user is a member of this alert channel: incidents of a channel they are not in are refused. */
  canSee?: (channelId: string) => Promise<boolean>;
  /** After a stop took effect: end the investigation runs in scope (model calls and evidence reads in flight). */
  onStopped?: (scope: StopScope) => void;
}

async function scopeOf(service: ApprovalService, cmd: StopCommand): Promise<StopScope | { error: string }> {
  const arg = cmd.args.trim().split(/\s+/)[0] ?? '';
  if (arg === 'all' || arg === 'global') return 'global';
  const canSee = cmd.canSee ?? (async () => true);
  if (arg) {
    const channel = await service.incidentChannel(arg);
    if (channel === undefined) return { error: `There is no incident ${codeSpan(arg, 62)}.` };
    return (await canSee(channel)) ? { incidentId: arg } : { error: NOT_IN_CHANNEL };
  }
  // The list below names this channel's incidents: only for its members.
  if (!(await canSee(cmd.channelId))) return { error: NOT_IN_CHANNEL };
  const open = await service.openIncidentsIn(cmd.channelId);
  if (open.length === 1) return { incidentId: open[0]!.id };
  if (open.length === 0) return { error: `No open incident in this channel: use ${codeSpan(`/sre ${cmd.verb} <incident id>`)}, or \`/sre ${cmd.verb} all\` (admins).` };
  return { error: `Several open incidents here; name one: ${open.map((i) => `\`${i.id}\` (${fallbackText(i.title, 60)})`).join(', ')}` };
}

export async function runStopCommand(service: ApprovalService, cmd: StopCommand): Promise<ChatMessage> {
  const scope = await scopeOf(service, cmd);
  if (typeof scope === 'object' && 'error' in scope) return { text: scope.error };
  const result = cmd.verb === 'stop' ? await service.stop(scope, cmd.userId) : await service.resume(scope, cmd.userId);
  const where = scope === 'global' ? 'for all incidents' : `for incident \`${scope.incidentId}\``;
  switch (result.kind) {
    case 'refused':
      return { text: `Not done: ${result.reason}.` };
    case 'stopped':
      cmd.onStopped?.(scope);
      return { text: `⏹ Vigil is stopped ${where}: ${result.cancelled} pending approval${result.cancelled === 1 ? '' : 's'} cancelled. Nothing will be proposed or executed until \`/sre resume\`.` };
    case 'resumed':
      return { text: `▶️ Vigil resumed ${where}.${result.reproposed ? ` ${result.reproposed} proposal${result.reproposed === 1 ? '' : 's'} the stop had cancelled ${result.reproposed === 1 ? 'is on a new card' : 'are on new cards'} and need${result.reproposed === 1 ? 's' : ''} fresh approval.` : ''}` };
  }
}
