/** Public API of the mitigation catalog (see registry.ts for the actions, executor.ts for the identity). */
export {
  ACTIONS,
  executeExternalMitigation,
  executeMitigation,
  getAction,
  isExternalAction,
  planMitigation,
  verifyMitigation,
  type ActionName,
} from './registry.js';
export { LaunchDarklyFlags, FlagProviderError, type LaunchDarklySettings } from './external/launchdarkly.js';
export { GitHubReverts, RevertProviderError, type GitHubRevertSettings } from './external/github-revert.js';
export type * from './external/types.js';
export {
  DEFAULT_EXECUTOR_SA,
  ExecutorIdentityError,
  FIELD_MANAGER,
  TOKEN_SECONDS,
  assertExecutorKubeConfig,
  executorFromKubeConfig,
  impersonateExecutor,
  mintExecutorToken,
  openApprovedExecutor,
  openDryRunExecutor,
  ownExecutorKubeConfig,
  whoAmI,
  type ApprovedExecutor,
  type DryRunExecutor,
  type ExecutorCredentials,
  type ExecutorIdentityInfo,
  type ExecutorKubeConfig,
  type ServiceAccountRef,
} from './executor.js';
export { CHANGE_ANNOTATION, changeAnnotation } from './stamp.js';
export { TargetReader } from './reader.js';
export { InvalidProposalError } from './plan.js';
export { diffObjects, renderChanges } from './diff.js';
export { describeRisk, guessEnvironment, scoreRisk, type Environment, type RiskFactor, type RiskInput, type RiskKind, type RiskScore } from './risk.js';
export { prometheusProbe } from './metrics.js';
export type * from './types.js';
