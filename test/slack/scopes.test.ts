// Exactly the Slack scopes used: every Web API method the code calls and every event it handles, mapped
// to the scopes Slack's reference lists (src/slack/scopes.ts), must equal what manifest.yml grants —
// a scope nothing uses is a needless permission, a missing one is a failure in production.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BOT_SCOPES, EVENT_SCOPES, EXECUTOR_METHODS, EXECUTOR_SCOPES, METHOD_SCOPES, requiredScopes } from '../../src/slack/scopes.js';

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

// Split mode's executor app (manifest.executor.yml): the methods its process calls, derived from what
// src/executor.ts wires to Slack — Bolt's start (auth.test), the approval listeners, and the ApprovalService
// with its SlackChat port and SlackUserGroups — must be EXECUTOR_METHODS, and the manifest must grant exactly
// their scopes, with no events and no slash command (it handles none).
const read = (f: string) => readFileSync(f, 'utf8');
/** Web API calls through a WebClient, a line break allowed between the parts (`client.chat\n  .postEphemeral(`). */
const CALL_WS = new RegExp(CALL.source.replace(/\\\./g, '\\s*\\.\\s*').replace('\\(', '\\s*\\('), 'g');
const webCalls = (text: string) => [...text.matchAll(CALL_WS)].map((m) => `${m[1]}.${m[2]}`).filter((m) => !NOT_SLACK.has(m));

/** SlackChat's methods (src/slack/chat.ts), each with the Web API methods it calls itself or through another of its methods. */
function slackChatMethods(): Map<string, Set<string>> {
  const text = read('src/slack/chat.ts');
  const heads = [...text.matchAll(/^ {2}(?:private |public )?(?:async )?([a-zA-Z]+)\s*\(/gm)];
  const own = new Map(heads.map((h, i) => [h[1]!, text.slice(h.index, heads[i + 1]?.index ?? text.length)]));
  const expand = (name: string, seen = new Set<string>()): Set<string> => {
    const out = new Set<string>();
    if (seen.has(name) || !own.has(name)) return out;
    seen.add(name);
    const body = own.get(name)!;
    for (const m of webCalls(body)) out.add(m);
    for (const m of body.matchAll(/\bthis\.([a-zA-Z]+)\(/g)) for (const x of expand(m[1]!, seen)) out.add(x);
    return out;
  };
  return new Map([...own.keys()].filter((k) => k !== 'constructor').map((k) => [k, expand(k)]));
}

/** The executor's Slack-facing code: the approval listeners and everything under src/approvals (ApprovalService, its execution, SlackUserGroups). */
const executorSources = () => ['src/slack/approval-listeners.ts', ...files('src/approvals')].map((f) => ({ f, text: read(f) }));

function executorMethodsUsed(): Set<string> {
  // Bolt and the executor's preflight call auth.test at start.
  const out = new Set(['auth.test']);
  const chat = slackChatMethods();
  for (const { text } of executorSources()) {
    for (const m of webCalls(text)) out.add(m);
    // The ChatPort the service posts with is a SlackChat (src/executor.ts): `this.deps.chat.post(`, `chat\n .ephemeral(`.
    for (const m of text.matchAll(/\bchat\s*\.\s*([a-zA-Z]+)\s*\(/g)) for (const x of chat.get(m[1]!) ?? []) out.add(x);
  }
  return out;
}

const executorManifest = parse(readFileSync('manifest.executor.yml', 'utf8')) as {
  oauth_config: { scopes: { bot: string[] } };
  settings: { event_subscriptions?: unknown; interactivity?: { is_enabled?: boolean } };
  features: { slash_commands?: unknown[]; app_home?: unknown };
};

describe("the executor app's Slack scopes (split mode)", () => {
  const executor = read('src/executor.ts');

  it('wires to Slack only what the derivation reads: the app, the approval listeners, SlackChat, SlackUserGroups', () => {
    // A Slack module the executor starts using must be added to executorSources (and its calls to EXECUTOR_METHODS).
    const slackImports = [...executor.matchAll(/from '\.\/slack\/([a-z-]+)\.js'/g)].map((m) => m[1]).sort();
    expect(slackImports).toEqual(['api-metrics', 'app', 'approval-listeners', 'chat', 'preflight', 'scopes']);
    expect(executor).toMatch(/new SlackChat\(app\.client/);
    expect(executor).toMatch(/new SlackUserGroups\(app\.client\)/);
    expect(executor).toMatch(/registerApprovalListeners\(app,/);
    // No events, commands, views or the bot's listeners: it serves interactivity only.
    for (const text of [executor, read('src/slack/approval-listeners.ts')]) expect(text).not.toMatch(/\bapp\.(event|command|view|message|shortcut|options)\(|registerListeners\(/);
  });

  it('EXECUTOR_METHODS are exactly the methods its code path calls', () => {
    const used = executorMethodsUsed();
    expect([...used].sort()).toEqual([...EXECUTOR_METHODS].sort());
    for (const m of used) expect(METHOD_SCOPES[m], m).toBeDefined();
    // The scan finds what it must (a broken pattern would find nothing): the card, its update, the approver groups, the multi-line ephemeral.
    expect([...used]).toEqual(expect.arrayContaining(['chat.postMessage', 'chat.update', 'usergroups.users.list', 'chat.postEphemeral', 'users.info']));
    // And none of what only the investigator does.
    for (const m of ['views.publish', 'reactions.add', 'conversations.members', 'conversations.join']) expect(used.has(m), m).toBe(false);
  });

  it('manifest.executor.yml grants exactly their scopes, subscribes no events and has no slash command or home tab', () => {
    expect([...executorManifest.oauth_config.scopes.bot].sort()).toEqual(requiredScopes(EXECUTOR_METHODS, [], false));
    expect([...EXECUTOR_SCOPES].sort()).toEqual([...executorManifest.oauth_config.scopes.bot].sort());
    expect(executorManifest.settings.event_subscriptions).toBeUndefined();
    expect(executorManifest.features.slash_commands).toBeUndefined();
    expect(executorManifest.features.app_home).toBeUndefined();
    expect(executorManifest.settings.interactivity?.is_enabled).toBe(true);
    // Start-up checks the executor's token against its own list.
    expect(executor).toMatch(/preflightSlack\(\{ \.\.\.config\.slack, scopes: EXECUTOR_SCOPES, manifest: 'manifest\.executor\.yml' \}/);
  });
});
