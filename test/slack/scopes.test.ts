// Exactly the Slack scopes used: every Web API method the code calls and every event it handles, mapped
// to the scopes Slack's reference lists (src/slack/scopes.ts), must equal what manifest.yml grants —
// a scope nothing uses is a needless permission, a missing one is a failure in production.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BOT_SCOPES, EVENT_SCOPES, METHOD_SCOPES, requiredScopes } from '../../src/slack/scopes.js';

const files = (dir: string): string[] => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : f.endsWith('.ts') ? [join(dir, f)] : []));
const source = files('src').map((f) => ({ f, text: readFileSync(f, 'utf8') }));

/** `client.chat.postMessage(`, `this.client.usergroups.users.list(`: Web API calls through a WebClient. */
const CALL = /\b(?:client|postClient|web)\.(chat|conversations|users|usergroups|views|reactions|auth|team|bots|pins|files)\.([a-zA-Z]+(?:\.[a-zA-Z]+)?)\(/g;
/** Not Slack: the OpenAI SDK's client.chat.completions. */
const NOT_SLACK = new Set(['chat.completions.create']);

function methodsUsed(): Set<string> {
  // Bolt calls auth.test at start (the bot user id); no scope needed.
  const out = new Set(['auth.test']);
  for (const { text } of source) for (const m of text.matchAll(CALL)) if (!NOT_SLACK.has(`${m[1]}.${m[2]}`)) out.add(`${m[1]}.${m[2]}`);
  return out;
}

/** Events the code handles: `app.event('message')` is the manifest's message.channels and message.groups. */
function eventsHandled(): Set<string> {
  const out = new Set<string>();
  for (const { text } of source) for (const m of text.matchAll(/\bapp\.event\('([a-z_]+)'/g)) for (const e of m[1] === 'message' ? ['message.channels', 'message.groups'] : [m[1]!]) out.add(e);
  return out;
}

const manifest = parse(readFileSync('manifest.yml', 'utf8')) as {
  oauth_config: { scopes: { bot: string[] } };
  settings: { event_subscriptions: { bot_events: string[] } };
  features: { slash_commands?: unknown[] };
};

describe('Slack scopes', () => {
  it('every method and event the code uses has its scopes recorded', () => {
    for (const m of methodsUsed()) expect(METHOD_SCOPES[m], m).toBeDefined();
    for (const e of eventsHandled()) expect(EVENT_SCOPES[e], e).toBeDefined();
    // The scan finds the calls it must (a broken regex would find nothing and pass vacuously).
    expect([...methodsUsed()]).toEqual(expect.arrayContaining(['chat.postMessage', 'chat.update', 'conversations.replies', 'users.info', 'usergroups.users.list', 'views.publish']));
  });

  it('the manifest subscribes exactly the events the code handles', () => {
    expect([...manifest.settings.event_subscriptions.bot_events].sort()).toEqual([...eventsHandled()].sort());
  });

  it('the manifest grants exactly the scopes those methods, events and the slash command need', () => {
    const hasCommands = (manifest.features.slash_commands ?? []).length > 0 && source.some(({ text }) => /\bapp\.command\(/.test(text));
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual(requiredScopes(methodsUsed(), eventsHandled(), hasCommands));
    // And start-up checks a token against the same list.
    expect([...BOT_SCOPES].sort()).toEqual([...manifest.oauth_config.scopes.bot].sort());
  });

  it('refuses a method it has no scope for, naming it', () => {
    expect(() => requiredScopes(['chat.scheduleMessage'], [], false)).toThrow(/chat\.scheduleMessage/);
  });
});
