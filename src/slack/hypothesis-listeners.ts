import type { App } from '@slack/bolt';
import type { Logger } from 'pino';
import type { IncidentDesk } from '../incidents/desk.js';
import { HYPOTHESIS_ACTIONS } from './blocks/hypothesis.js';

const REFUTE_VIEW = 'hyp_refute_reason';
const EVIDENCE_VIEW = 'hyp_add_evidence';

interface ButtonBody {
  user: { id: string };
  trigger_id?: string;
  actions?: { value?: string }[];
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
  const idOf = (body: ButtonBody) => body.actions?.[0]?.value ?? '';

  app.action(HYPOTHESIS_ACTIONS.confirm, async ({ ack, body }) => {
    await ack();
    await desk.onHypothesisControl({ hypothesisId: idOf(body as ButtonBody), userId: (body as ButtonBody).user.id, action: 'confirm' });
  });
  app.action(HYPOTHESIS_ACTIONS.pin, async ({ ack, body }) => {
    await ack();
    await desk.onHypothesisControl({ hypothesisId: idOf(body as ButtonBody), userId: (body as ButtonBody).user.id, action: 'pin' });
  });
  app.action(HYPOTHESIS_ACTIONS.refute, async ({ ack, body, client }) => {
    await ack();
    const b = body as ButtonBody;
    await client.views.open({
      trigger_id: b.trigger_id!,
      view: {
        type: 'modal',
        callback_id: REFUTE_VIEW,
        private_metadata: idOf(b),
        title: { type: 'plain_text', text: 'Refute hypothesis' },
        submit: { type: 'plain_text', text: 'Refute' },
        close: { type: 'plain_text', text: 'Cancel' },
        blocks: [textInput('reason', 'Why is it wrong?', { multiline: true, placeholder: 'e.g. the DB was healthy: p99 3 ms, 41/200 connections' })] as never,
      },
    });
  });
  app.action(HYPOTHESIS_ACTIONS.evidence, async ({ ack, body, client }) => {
    await ack();
    const b = body as ButtonBody;
    await client.views.open({
      trigger_id: b.trigger_id!,
      view: {
        type: 'modal',
        callback_id: EVIDENCE_VIEW,
        private_metadata: idOf(b),
        title: { type: 'plain_text', text: 'Add evidence' },
        submit: { type: 'plain_text', text: 'Add' },
        close: { type: 'plain_text', text: 'Cancel' },
        blocks: [
          textInput('link', 'Link (dashboard, log query, trace)', { optional: true, placeholder: 'https://…' }),
          textInput('note', 'Note', { multiline: true, optional: true }),
        ] as never,
      },
    });
  });

  app.view(REFUTE_VIEW, async ({ ack, view, body }) => {
    const reason = view.state.values['reason']?.['reason']?.value?.trim();
    if (!reason) return void (await ack({ response_action: 'errors', errors: { reason: 'Say why, so the team sees it on the board.' } }));
    await ack();
    await desk.onHypothesisControl({ hypothesisId: view.private_metadata, userId: body.user.id, action: 'refute', reason });
  });
  app.view(EVIDENCE_VIEW, async ({ ack, view, body }) => {
    const link = view.state.values['link']?.['link']?.value?.trim() || undefined;
    const note = view.state.values['note']?.['note']?.value?.trim() || undefined;
    if (!link && !note) return void (await ack({ response_action: 'errors', errors: { note: 'Add a link or a note.' } }));
    if (link && !/^https?:\/\/\S+$/.test(link)) return void (await ack({ response_action: 'errors', errors: { link: 'Links start with http:// or https://' } }));
    await ack();
    await desk.onResponderEvidence({ hypothesisId: view.private_metadata, userId: body.user.id, ...(link ? { link } : {}), ...(note ? { note } : {}) });
  });
  log.debug('hypothesis controls registered');
}
