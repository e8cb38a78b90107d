// Start-up says what is wrong with Slack in one message naming the setting and the fix: a refused bot
// token, a bot token missing scopes, a refused app token, Slack unreachable — each against the fake
// Slack Web API over loopback with the real WebClient, no retries.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preflightSlack, SlackPreflightError } from '../../src/slack/preflight.js';
import { BOT_SCOPES, EXECUTOR_SCOPES } from '../../src/slack/scopes.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/server.js';

let full: FakeSlack;
let narrow: FakeSlack;
beforeAll(async () => {
  full = await startFakeSlack({ scopes: [...BOT_SCOPES], extraTokens: ['xapp-1-fake'] });
  narrow = await startFakeSlack({ scopes: BOT_SCOPES.filter((s) => s !== 'usergroups:read' && s !== 'users:read') });
  full.store.socketModeUrl = 'ws://127.0.0.1:9/socket';
});
afterAll(async () => Promise.all([full.close(), narrow.close()]));

const failure = async (p: Promise<unknown>) => {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(SlackPreflightError);
  return (err as Error).message;
};

describe('preflightSlack', () => {
  it('accepts good tokens and names the bot', async () => {
    await expect(preflightSlack({ botToken: full.botToken, appToken: 'xapp-1-fake', mode: 'socket' }, { slackApiUrl: full.apiUrl })).resolves.toMatchObject({ userId: 'U0VIGIL' });
  });

  it('a refused bot token: which setting, what Slack said, where to copy the right one', async () => {
    const msg = await failure(preflightSlack({ botToken: 'xoxb-wrong', mode: 'http' }, { slackApiUrl: full.apiUrl }));
    expect(msg).toMatch(/^SLACK_BOT_TOKEN was refused by Slack \(invalid_auth: Slack does not know this token\): copy the Bot User OAuth Token/);
  });

  it('a bot token missing scopes names them and says to reinstall', async () => {
    const msg = await failure(preflightSlack({ botToken: narrow.botToken, mode: 'http' }, { slackApiUrl: narrow.apiUrl }));
    expect(msg).toMatch(/SLACK_BOT_TOKEN lacks the scopes usergroups:read, users:read: .*reinstall the app/);
  });

  it("the executor app's token is checked against its own scopes (manifest.executor.yml), not Vigil's", async () => {
    const executor = await startFakeSlack({ scopes: [...EXECUTOR_SCOPES] });
    const narrowExecutor = await startFakeSlack({ scopes: EXECUTOR_SCOPES.filter((s) => s !== 'usergroups:read') });
    try {
      const settings = { mode: 'http' as const, scopes: EXECUTOR_SCOPES, manifest: 'manifest.executor.yml' };
      await expect(preflightSlack({ ...settings, botToken: executor.botToken }, { slackApiUrl: executor.apiUrl })).resolves.toBeDefined();
      // The same token fails Vigil's own check: it lacks what only the investigator uses.
      expect(await failure(preflightSlack({ botToken: executor.botToken, mode: 'http' }, { slackApiUrl: executor.apiUrl }))).toMatch(/lacks the scopes .*commands/);
      expect(await failure(preflightSlack({ ...settings, botToken: narrowExecutor.botToken }, { slackApiUrl: narrowExecutor.apiUrl }))).toMatch(/lacks the scopes usergroups:read: add them \(manifest\.executor\.yml lists every scope this app uses\)/);
    } finally {
      await Promise.all([executor.close(), narrowExecutor.close()]);
    }
  });

  it('Socket Mode without an app token, or with a refused one', async () => {
    expect(await failure(preflightSlack({ botToken: full.botToken, mode: 'socket' }, { slackApiUrl: full.apiUrl }))).toMatch(/Socket Mode needs SLACK_APP_TOKEN: create an app-level token/);
    expect(await failure(preflightSlack({ botToken: full.botToken, appToken: 'xapp-wrong', mode: 'socket' }, { slackApiUrl: full.apiUrl }))).toMatch(/^SLACK_APP_TOKEN was refused by Slack \(invalid_auth/);
  });

  it('Slack unreachable: the URL and the network fix, once, without retrying', async () => {
    // A port nothing listens on.
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const url = `http://127.0.0.1:${port}/api/`;
    const msg = await failure(preflightSlack({ botToken: 'xoxb-any', mode: 'http' }, { slackApiUrl: url }, 2_000));
    expect(msg).toContain(`Slack is unreachable at ${url}`);
    expect(msg).toMatch(/HTTPS_PROXY/);
  });
});
