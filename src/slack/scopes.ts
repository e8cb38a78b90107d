/**
 * The Slack bot scopes Vigil needs, derived from what it calls: each Web API method and event it uses,
 * with the scope Slack's method and event reference pages list for a bot token
 * (https://api.slack.com/methods/<method>, https://api.slack.com/events/<event>). `manifest.yml` grants
 * exactly these; test/slack/scopes.test.ts scans the code for the methods and events and fails when the
 * manifest grants a scope nothing uses or misses one that is used.
 *
 * A method that reads a conversation needs the scope of its kind: `channels:*` for public channels,
 * `groups:*` for private ones Vigil is invited to (both are granted; DMs and group DMs are not read).
 */

/** Web API method → the bot scopes it needs (empty: none). */
export const METHOD_SCOPES: Readonly<Record<string, readonly string[]>> = {
  'auth.test': [],
  'chat.postMessage': ['chat:write'],
  'chat.update': ['chat:write'],
  'chat.postEphemeral': ['chat:write'],
  'chat.getPermalink': [],
  'conversations.history': ['channels:history', 'groups:history'],
  'conversations.replies': ['channels:history', 'groups:history'],
  'conversations.members': ['channels:read', 'groups:read'],
  'conversations.info': ['channels:read', 'groups:read'],
  'users.info': ['users:read'],
  'usergroups.users.list': ['usergroups:read'],
  'usergroups.list': ['usergroups:read'],
  'views.open': [],
  'views.publish': [],
  'views.update': [],
  'views.push': [],
  'reactions.add': ['reactions:write'],
  'conversations.join': ['channels:join'],
};

/** Event (as subscribed in the manifest) → the bot scopes it needs. */
export const EVENT_SCOPES: Readonly<Record<string, readonly string[]>> = {
  'message.channels': ['channels:history'],
  'message.groups': ['groups:history'],
  app_home_opened: [],
  app_mention: ['app_mentions:read'],
};

/** What manifest.yml grants the bot (the test keeps it equal to what the code needs); start-up checks the token has them. */
export const BOT_SCOPES: readonly string[] = ['channels:history', 'channels:read', 'chat:write', 'commands', 'groups:history', 'groups:read', 'reactions:write', 'usergroups:read', 'users:read'];

/**
 * Split mode's executor app (`vigil executor`, manifest.executor.yml): the Web API methods its process calls —
 * auth.test (start-up), the approval cards and notes (post once, finding a post whose answer was lost by its
 * tag in the thread; update; permalink), the clicker's name, the ephemeral note on a failed click, and the
 * approver groups. No events, no slash command: it takes only interactivity (block actions) on its own
 * Request URL. test/slack/scopes.test.ts derives this list from what src/executor.ts wires up.
 */
export const EXECUTOR_METHODS: readonly string[] = [
  'auth.test',
  'chat.getPermalink',
  'chat.postEphemeral',
  'chat.postMessage',
  'chat.update',
  'conversations.history',
  'conversations.replies',
  'usergroups.users.list',
  'users.info',
];

/** What manifest.executor.yml grants the executor's bot (the test keeps it equal to EXECUTOR_METHODS' scopes); its start-up checks them. */
export const EXECUTOR_SCOPES: readonly string[] = ['channels:history', 'chat:write', 'groups:history', 'usergroups:read', 'users:read'];

/**
 * Granted scopes whose calls are courtesy only (a reaction on a post): a token without them still runs, with a
 * warning at start, so an install made before they were added keeps working until it is reinstalled.
 */
export const OPTIONAL_SCOPES: readonly string[] = ['reactions:write'];

/** A slash command needs `commands`. */
export const COMMAND_SCOPE = 'commands';

/** The scopes for these methods, events and (when any) slash commands, sorted. Throws on a method or event it does not know. */
export function requiredScopes(methods: Iterable<string>, events: Iterable<string>, hasCommands: boolean): string[] {
  const out = new Set<string>();
  for (const m of methods) {
    const s = METHOD_SCOPES[m];
    if (!s) throw new Error(`no scope recorded for Slack method ${m}: add it to METHOD_SCOPES from its reference page`);
    for (const x of s) out.add(x);
  }
  for (const e of events) {
    const s = EVENT_SCOPES[e];
    if (!s) throw new Error(`no scope recorded for Slack event ${e}: add it to EVENT_SCOPES from its reference page`);
    for (const x of s) out.add(x);
  }
  if (hasCommands) out.add(COMMAND_SCOPE);
  return [...out].sort();
}
