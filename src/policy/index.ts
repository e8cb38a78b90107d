export { ACTION_TYPES, isActionType } from './types.js';
export type {
  ActionProposal,
  ActionTarget,
  ActionType,
  ApprovalRejection,
  ApprovalVerdict,
  DenyCode,
  Environment,
  ExecutionOutcome,
  ExecutionRecord,
  IncidentScope,
  Policy,
  PolicyContext,
  PolicyDecision,
  PolicyLimits,
  PolicyMatch,
  PolicyRule,
  Requester,
} from './types.js';
export { PolicyError } from './errors.js';
export { parsePolicy } from './parse.js';
export { loadPolicy, READ_ONLY_POLICY } from './load.js';
export { evaluateProposal, isPolicyAdmin } from './evaluate.js';
export { evaluateApproval, type ApprovalClick } from './approve.js';
export { targetKey, limitKey, podsOfKey, environmentOf } from './match.js';
export { formatDuration, parseDuration } from './duration.js';
