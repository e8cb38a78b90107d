/**
 * The bot-token scopes Slack's method reference pages list, for the methods the fake implements: with
 * `scopes` set on the fake, a call without its scope answers `missing_scope` with `needed` and `provided`,
 * as Slack does. Kept apart from src/slack/scopes.ts on purpose: the fake states Slack's rules, so a wrong
 * entry in Vigil's own table shows up as a failed call in a test instead of agreeing with itself.
 */
import { strParam } from './request.js';
import type { SlackStore } from './store.js';
import type { ApiReply, Params } from './types.js';

/** Method → the scope it needs; `conversation` methods need the public or private variant by channel kind. */
const NEEDS: Readonly<Record<string, string | { publicScope: string; privateScope: string }>> = {
  'chat.postMessage': 'chat:write',
  'chat.update': 'chat:write',
  'chat.postEphemeral': 'chat:write',
  'reactions.add': 'reactions:write',
  'users.info': 'users:read',
  'usergroups.users.list': 'usergroups:read',
  'usergroups.list': 'usergroups:read',
  'conversations.join': 'channels:join',
  'conversations.history': { publicScope: 'channels:history', privateScope: 'groups:history' },
  'conversations.replies': { publicScope: 'channels:history', privateScope: 'groups:history' },
  'conversations.info': { publicScope: 'channels:read', privateScope: 'groups:read' },
  'conversations.members': { publicScope: 'channels:read', privateScope: 'groups:read' },
};

/** `missing_scope` for a bot-token call without its scope, else undefined. */
export function missingScope(method: string, params: Params, granted: readonly string[], store: SlackStore): ApiReply | undefined {
  const need = NEEDS[method];
  if (!need) return undefined;
  let scope: string;
  if (typeof need === 'string') scope = need;
  else {
    const id = strParam(params.channel);
    const channel = id ? store.channels.get(id) : undefined;
    scope = channel?.is_private || id?.startsWith('G') ? need.privateScope : need.publicScope;
  }
  if (granted.includes(scope)) return undefined;
  return { body: { ok: false, error: 'missing_scope', needed: scope, provided: granted.join(',') } };
}
