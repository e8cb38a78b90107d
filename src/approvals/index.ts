/** Public API of the approval flow (see service.ts for the flow, slack/approval-listeners.ts for the buttons). */
export { ApprovalService, type ApprovalDeps, type ApprovalSettings } from './service.js';
export { runStopCommand, type StopCommand } from './commands.js';
export { SlackUserGroups, USERGROUP_CACHE_MS, groupsOf, type UserGroups } from './usergroups.js';
export { APPROVAL_STATUSES } from './types.js';
export type * from './types.js';
