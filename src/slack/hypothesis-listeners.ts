import type { App } from '@slack/bolt';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { IncidentDesk } from '../incidents/desk.js';
import { HYPOTHESIS_ACTIONS, HYPOTHESIS_MENU, parseMenuValue, type HypothesisControl } from './blocks/hypothesis.js';
import { BOARD_SHOW_ALL, renderAllHypothesesView } from './blocks/board.js';
import { SLACK_LIMITS } from './blocks/limits.js';
import { mrkdwnText } from './blocks/mrkdwn.js';
import { truncateMrkdwn, truncatePlain } from './blocks/truncate.js';

const REFUTE_VIEW = 'hyp_refute_reason';
const EVIDENCE_VIEW = 'hyp_add_evidence';

interface ButtonBody {
  user: { id: string };
  trigger_id?: string;
  /** A button carries `value`; the overflow menu its `selected_option.value` (`<control>:<hypothesis id>`). */
  actions?: { value?: string; selected_option?: { value?: string } }[];
  channel?: { id?: string };
  container?: { type?: string; thread_ts?: string };
  message?: { thread_ts?: string };
  /** Set when the click came from a dialog (the "Show all" one). */
  view?: { id?: string; private_metadata?: string };
}

/** Which hypothesis a click or dialog is about, and where its board is (for an answer when it no longer exists). */
const Target = z.object({ hypothesisId: z.string(), channelId: z.string().optional(), threadTs: z.string().optional() });
type Target = z.infer<typeof Target>;

function targetOf(b: ButtonBody, hypothesisId = b.actions?.[0]?.value ?? ''): Target {
  const channelId = b.channel?.id;
  const threadTs = b.container?.thread_ts ?? b.message?.thread_ts;
  return { hypothesisId, ...(channelId ? { channelId } : {}), ...(threadTs ? { threadTs } : {}) };
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
  const DIALOGS = {
    refute: {
      callbackId: REFUTE_VIEW,
      title: 'Refute hypothesis',
      submit: 'Refute',
      blocks: [textInput('reason', 'Why is it wrong?', { multiline: true, placeholder: 'e.g. the DB was healthy: p99 3 ms, 41/200 connections' })],
    },
    evidence: {
      callbackId: EVIDENCE_VIEW,
      title: 'Add evidence',
      submit: 'Add',
      blocks: [textInput('link', 'Link (dashboard, log query, trace)', { optional: true, placeholder: 'https://…' }), textInput('note', 'Note', { multiline: true, optional: true })],
    },
  } as const;

  /**
   * One control on one hypothesis, from its button (boards posted before the ⋯ menu) or its menu option:
   * Confirm and Pin go to the desk; Refute… and Add evidence… open their dialog right after the ack
   * (trigger_id lives 3 s) — pushed on top when the click came from the "Show all" dialog.
   */
  const control = async (control: HypothesisControl, b: ButtonBody, target: Target, client: { views: { open: (a: never) => Promise<unknown>; push: (a: never) => Promise<unknown>; update: (a: never) => Promise<unknown> } }) => {
    if (control === 'confirm' || control === 'pin') {
      await desk.onHypothesisControl({ ...target, userId: b.user.id, action: control });
      if (b.view?.id) await refreshAll(b, client);
      return;
    }
    const d = DIALOGS[control];
    // The dialog names its hypothesis (a lookup by id, well inside trigger_id's 3 s); if it is gone, the generic dialog.
    const h = await desk.hypothesis(target.hypothesisId).catch(() => undefined);
    const view = {
      type: 'modal',
      callback_id: d.callbackId,
      private_metadata: JSON.stringify(target),
      title: { type: 'plain_text', text: truncatePlain(h ? (control === 'refute' ? `Refute ${h.label}` : `Add evidence to ${h.label}`) : d.title, SLACK_LIMITS.modalTitle) },
      submit: { type: 'plain_text', text: d.submit },
      close: { type: 'plain_text', text: 'Cancel' },
      blocks: [...(h ? [hypothesisBlock(h)] : []), ...d.blocks],
    };
    const args = { trigger_id: b.trigger_id!, view } as never;
    await (b.view?.id ? client.views.push(args) : client.views.open(args));
  };

  /** After a click in the "Show all" dialog, show it as it now stands. */
  const refreshAll = async (b: ButtonBody, client: { views: { update: (a: never) => Promise<unknown> } }) => {
    const incidentId = incidentOf(b.view?.private_metadata);
    const board = incidentId ? await desk.boardFor(incidentId).catch(() => undefined) : undefined;
    if (board) await client.views.update({ view_id: b.view!.id!, view: renderAllHypothesesView(board) } as never).catch((err: unknown) => log.warn({ err: String(err) }, 'could not refresh the hypotheses dialog'));
  };

  for (const c of Object.keys(HYPOTHESIS_ACTIONS) as HypothesisControl[]) {
    app.action(HYPOTHESIS_ACTIONS[c], async ({ ack, body, client }) => {
      await ack();
      const b = body as ButtonBody;
      await control(c, b, targetOf(b), client as never);
    });
  }

  // The ⋯ menu of a hypothesis: the same controls as the buttons, by the option's value.
  app.action(HYPOTHESIS_MENU, async ({ ack, body, client }) => {
    await ack();
    const b = body as ButtonBody;
    const chosen = parseMenuValue(b.actions?.[0]?.selected_option?.value);
    if (!chosen) return void log.warn({ value: b.actions?.[0]?.selected_option?.value }, 'a hypothesis menu option Vigil does not know');
    await control(chosen.control, b, targetOf(b, chosen.hypothesisId), client as never);
  });

  // "Show all N": every hypothesis in full, in a dialog (the board lists settled ones one line each).
  app.action(BOARD_SHOW_ALL, async ({ ack, body, client }) => {
    await ack();
    const b = body as ButtonBody;
    const board = await desk.boardFor(b.actions?.[0]?.value ?? '').catch((err: unknown) => void log.warn({ err: String(err) }, 'no board to show for "Show all"'));
    if (!board) return;
    await client.views.open({ trigger_id: b.trigger_id!, view: renderAllHypothesesView(board) as never });
  });

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

/** The hypothesis a dialog acts on, as its first block: label, title, status and confidence. */
function hypothesisBlock(h: { label: string; title: string; status: string; confidence: number }) {
  const status = `${h.status.replace(/_/g, ' ')}, ${Math.round(h.confidence * 100)}%`;
  return { type: 'section', block_id: 'hypothesis', text: { type: 'mrkdwn', text: truncateMrkdwn(`*${mrkdwnText(h.label, 10)} · ${mrkdwnText(h.title, 300)}*\n_${mrkdwnText(status, 60)}_`, SLACK_LIMITS.sectionText) } };
}

/** The incident a "Show all" dialog is about, from its private_metadata. */
function incidentOf(meta: string | undefined): string | undefined {
  try {
    const v = JSON.parse(meta ?? '') as { incidentId?: unknown };
    return typeof v.incidentId === 'string' ? v.incidentId : undefined;
  } catch {
    return undefined;
  }
}
