/**
 * Which deployment mode runs, and how the card and `vigil doctor` name it. `single`: one process investigates
 * and executes (the executor reached by impersonation or a minted token; the demo and small teams).
 * `investigator` + `executor`: split mode, a credential boundary — the investigator holds no write
 * credential and no Slack app that can approve; the executor process alone posts approval cards, receives
 * the clicks, re-checks them, and writes with its own Kubernetes identity.
 */
export type VigilRole = 'single' | 'investigator' | 'executor';

export const VIGIL_ROLES: readonly VigilRole[] = ['single', 'investigator', 'executor'];

export const SINGLE_PROCESS_MODE = 'single-process mode (demo / small teams)';

/** "split mode: executor system:serviceaccount:vigil:vigil-executor". */
export function splitModeLabel(executorUser: string): string {
  return `split mode: executor ${executorUser}`;
}

/** What the investigator answers a click delivered to its own Slack app, in split mode. */
export const INVESTIGATOR_REFUSES_CLICKS =
  'this Vigil is the investigator (split mode) and cannot approve anything: approvals are received and checked only by the executor’s own Slack app, on the card it posted. Nothing was recorded and nothing will run';
