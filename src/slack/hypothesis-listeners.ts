import type { App } from '@slack/bolt';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { IncidentDesk } from '../incidents/desk.js';
import { HYPOTHESIS_ACTIONS } from './blocks/hypothesis.js';

const REFUTE_VIEW = 'hyp_refute_reason';
const EVIDENCE_VIEW = 'hyp_add_evidence';

interface ButtonBody {
  user: { id: string };
  trigger_id?: string;
  actions?: { value?: string }[];
  channel?: { id?: string };
  container?: { thread_ts?: string };
  message?: { thread_ts?: string };
}

/** Which hypothesis a click or dialog is about, and where its board is (for an answer when it no longer exists). */
const Target = z.object({ hypothesisId: z.string(), channelId: z.string().optional(), threadTs: z.string().optional() });
type Target = z.infer<typeof Target>;

function targetOf(b: ButtonBody): Target {
  const channelId = b.channel?.id;
  const threadTs = b.container?.thread_ts ?? b.message?.thread_ts;
  return { hypothesisId: b.actions?.[0]?.value ?? '', ...(channelId ? { channelId } : {}), ...(threadTs ? { threadTs } : {}) };
}

/** A dialog carries its target in private_metadata; a bare id is what dialogs opened by earlier versions hold. */
function targetFromMetadata(meta: string): Target {
  let parsed: unknown;
  try {
    parsed = JSON.parse(meta);
  } catch {
    return { hypothesisId: meta };
  }
  const t = Target.safeParse(parsed);
  return t.success ? t.data : { hypothesisId: meta };
}

const textInput = (block: string, label: string, opts: { multiline?: boolean; optional?: boolean; placeholder?: string }) => ({
  type: 'input',
  block_id: block,
  optional: opts.optional ?? false,
  label: { type: 'plain_text', text: label },
  element: { type: 'plain_text_input', action_id: block, multiline: opts.multiline ?? false, ...(opts.placeholder ? { placeholder: { type: 'plain_text', text: opts.placeholder } } : {}) },
});

/**
 * The per-hypothesis controls on the board. Bolt wiring only: ack, open the dialog where one is needed
 * (trigger_id lives 3 s, so right after the ack), translate to a desk call. Any responder may steer.
 */
export function registerHypothesisListeners(app: App, desk: IncidentDesk, log: Logger): void {
  app.action(HYPOTHESIS_ACTIONS.confirm, async ({ ack, body }) => {
    await ack();
    await desk.onHypothesisControl({ ...targetOf(body as ButtonBody), userId: (body as ButtonBody).user.id, action: 'confirm' });
  });
  app.action(HYPOTHESIS_ACTIONS.pin, async ({ ack, body }) => {
    await ack();
    await desk.onHypothesisControl({ ...targetOf(body as ButtonBody), userId: (body as ButtonBody).user.id, action: 'pin' });
  });
  /** Open a dialog for a button: ack first, then views.open at once (trigger_id lives 3 s). */
  const dialog = (actionId: string, callbackId: string, title: string, submit: string, blocks: unknown[]) =>
    app.action(actionId, async ({ ack, body, client }) => {
      await ack();
      const b = body as ButtonBody;
      await client.views.open({
        trigger_id: b.trigger_id!,
        view: {
          type: 'modal',
          callback_id: callbackId,
          private_metadata: JSON.stringify(targetOf(b)),
          title: { type: 'plain_text', text: title },
          submit: { type: 'plain_text', text: submit },
          close: { type: 'plain_text', text: 'Cancel' },
          blocks: blocks as never,
        },
      });
    });
  dialog(HYPOTHESIS_ACTIONS.refute, REFUTE_VIEW, 'Refute hypothesis', 'Refute', [
    textInput('reason', 'Why is it wrong?', { multiline: true, placeholder: 'e.g. the DB was healthy: p99 3 ms, 41/200 connections' }),
  ]);
  dialog(HYPOTHESIS_ACTIONS.evidence, EVIDENCE_VIEW, 'Add evidence', 'Add', [
    textInput('link', 'Link (dashboard, log query, trace)', { optional: true, placeholder: 'https://…' }),
    textInput('note', 'Note', { multiline: true, optional: true }),
  ]);

  app.view(REFUTE_VIEW, async ({ ack, view, body }) => {
    const reason = view.state.values['reason']?.['reason']?.value?.trim();
    if (!reason) return void (await ack({ response_action: 'errors', errors: { reason: 'Say why, so the team sees it on the board.' } }));
    await ack();
    await desk.onHypothesisControl({ ...targetFromMetadata(view.private_metadata), userId: body.user.id, action: 'refute', reason });
  });
  app.view(EVIDENCE_VIEW, async ({ ack, view, body }) => {
    const link = view.state.values['link']?.['link']?.value?.trim() || undefined;
    const note = view.state.values['note']?.['note']?.value?.trim() || undefined;
    if (!link && !note) return void (await ack({ response_action: 'errors', errors: { note: 'Add a link or a note.' } }));
    if (link && !/^https?:\/\/\S+$/.test(link)) return void (await ack({ response_action: 'errors', errors: { link: 'Links start with http:// or https://' } }));
    await ack();
    await desk.onResponderEvidence({ hypothesisId: targetFromMetadata(view.private_metadata).hypothesisId, userId: body.user.id, ...(link ? { link } : {}), ...(note ? { note } : {}) });
  });
  log.debug('hypothesis controls registered');
}
