/** A failed Loki call, as data: the HTTP status (absent for network failures) and what Loki said. */
export class LokiError extends Error {
  constructor(
    readonly status: number | undefined,
    readonly lokiMessage: string,
    readonly path: string,
  ) {
    super(`loki ${path}: ${status ? `HTTP ${status} ` : ''}${lokiMessage}`);
    this.name = 'LokiError';
  }
}
