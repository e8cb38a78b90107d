/**
 * Bolt wiring of the approval card's buttons: acknowledge first (3 s rule), translate the
 * block_actions payload into one `ApprovalService.click`, return. No decisions here: who may approve
 * is decided by the service on the server, whatever the card showed.
 */
import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { Logger } from 'pino';
import type { ApprovalService } from '../approvals/service.js';
import { runStopCommand, type StopCommand } from '../approvals/commands.js';
import type { ChatMessage } from '../incidents/chat.js';
import { APPROVE_ACTION_ID, REJECT_ACTION_ID } from './blocks/approval.js';

const BUTTONS = [
  [APPROVE_ACTION_ID, 'approve'],
  [REJECT_ACTION_ID, 'reject'],
] as const;

/**
 * Identity of one click delivery: `action_ts` is unique per click and repeated by Slack's retries of
 * it (PLATFORM-FACTS A1); without it, message ts + action id + user.
 */
export function clickDeliveryKey(body: BlockAction<ButtonAction>, action: ButtonAction): string {
  if (action.action_ts) return `${action.action_id}:${action.action_ts}:${body.user.id}`;
  return `${body.container?.message_ts ?? body.message?.ts ?? '?'}:${action.action_id}:${body.user.id}`;
}

export function registerApprovalListeners(app: App, service: Pick<ApprovalService, 'click'>, log: Logger): void {
  for (const [actionId, decision] of BUTTONS) {
    app.action<BlockAction<ButtonAction>>(actionId, async ({ ack, body, action, client }) => {
      await ack();
      const requestId = action.value;
      if (!requestId) return;
      try {
        const result = await service.click({
          requestId,
          // Slack asserts the clicking user; the request signature covers it.
          userId: body.user.id,
          ...(body.user.name ? { userName: body.user.name } : {}),
          decision,
          deliveryKey: clickDeliveryKey(body, action),
          ...(body.channel?.id ? { channelId: body.channel.id } : {}),
          ...(body.container?.thread_ts ? { threadTs: body.container.thread_ts as string } : {}),
        });
        log.info({ requestId, user: body.user.id, decision, result: result.kind }, 'approval click');
      } catch (err) {
        log.error({ err: String(err), requestId, user: body.user.id }, 'approval click failed');
        // The clicker must not be left guessing. The service may fail after storing the decision (e.g.
        // when Slack refuses the card update), so the note does not claim that nothing changed.
        const channel = body.channel?.id ?? body.container?.channel_id;
        if (!channel) return;
        // Only the error's class: its message may carry what must not reach Slack unmasked.
        const reason = err instanceof Error ? err.name : 'unknown error';
        await client.chat
          .postEphemeral({
            channel,
            user: body.user.id,
            ...(body.container?.thread_ts ? { thread_ts: body.container.thread_ts as string } : {}),
            text: `⚠️ Vigil could not process this ${decision === 'approve' ? 'approval' : 'rejection'} because of an internal error (${reason}). It may not have been recorded: click again to retry (Vigil answers if it already has your decision), and check Vigil's logs if it keeps failing.`,
          })
          .catch((e: unknown) => log.warn({ err: String(e), requestId }, 'could not tell the clicker that the click failed'));
      }
    });
  }
}

/** For the `/sre` handler: `/sre stop [all|<incident id>]` and `/sre resume …`. */
export function handleStopCommand(service: ApprovalService, cmd: StopCommand): Promise<ChatMessage> {
  return runStopCommand(service, cmd);
}
