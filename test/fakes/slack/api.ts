/**
 * Answering one Web API call, in Slack's order of checks: unknown method, authentication, injected faults and
 * scopes, rate limits, malformed JSON fields, then the method itself.
 */
import type { Faults } from './faults.js';
import { METHODS } from './methods/index.js';
import { missingScope } from './scopes.js';
import type { SlackStore } from './store.js';
import type { ApiReply, Params } from './types.js';

export interface ApiCallInput {
  method: string;
  params: Params;
  token: string | undefined;
  malformed?: { field: string; error: string };
}

export interface ApiDeps {
  store: SlackStore;
  faults: Faults;
  acceptedTokens: ReadonlySet<string>;
  /** The bot token's granted scopes; set: a bot call without its method's scope answers missing_scope. */
  scopes?: readonly string[];
}

export function answerApiCall(input: ApiCallInput, deps: ApiDeps): ApiReply {
  const handler = METHODS[input.method];
  if (!handler) return { body: { ok: false, error: 'unknown_method' } };
  if (!input.token) return { body: { ok: false, error: 'not_authed' } };
  if (!deps.acceptedTokens.has(input.token)) return { body: { ok: false, error: 'invalid_auth' } };
  const scopeless = deps.scopes && input.token === deps.store.bot.token ? missingScope(input.method, input.params, deps.scopes, deps.store) : undefined;
  if (scopeless) return scopeless;
  const injected = deps.faults.take(input.method, input.params, Date.now());
  if (injected) return injected;
  if (input.malformed) {
    return { body: { ok: false, error: input.malformed.error, response_metadata: { messages: [`[ERROR] could not parse JSON [json-pointer:/${input.malformed.field}]`] } }, rejection: true };
  }
  return handler({ params: input.params, store: deps.store, bot: deps.store.appFor(input.token) ?? deps.store.bot });
}
