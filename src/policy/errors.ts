/**
 * An unusable policy file. Start-up stops on it: running with a policy other than the one written
 * would be worse than not running. `problems` are `<file>:<line>: <path>: <what is expected>`.
 */
export class PolicyError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`invalid policy ${source}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'PolicyError';
  }
}
