/**
 * Before Vigil listens: are the Slack tokens good, and is Slack reachable? One call each, with a
 * deadline and no retries, so a wrong token or a blocked network is one clear message naming the
 * setting and the fix — not "Vigil is listening" followed by a stack trace or twenty "fetch failed"
 * lines from Bolt's retries.
 */
import { ErrorCode, LogLevel, WebClient, type WebAPICallResult, type WebClientOptions } from '@slack/web-api';
import { BOT_SCOPES, OPTIONAL_SCOPES } from './scopes.js';

export class SlackPreflightError extends Error {
  override readonly name = 'SlackPreflightError';
}

export interface PreflightSettings {
  botToken: string;
  appToken?: string;
  mode: 'socket' | 'http';
  /** The scopes the bot token must hold, and the manifest that lists them: Vigil's (default) or the executor app's. */
  scopes?: readonly string[];
  manifest?: string;
}

/** Web API errors that mean "this token is not one Slack accepts", and what to do about each. */
const TOKEN_ERRORS: Record<string, string> = {
  invalid_auth: 'Slack does not know this token',
  not_authed: 'no token reached Slack',
  account_inactive: 'the app or its workspace was deactivated',
  token_revoked: 'the token was revoked (the app was uninstalled or the token rotated)',
  token_expired: 'the token expired (token rotation is on; Vigil expects a non-rotating bot token)',
  not_allowed_token_type: 'this is the wrong kind of token',
};

const BOT_FIX = 'copy the Bot User OAuth Token (xoxb-…) from api.slack.com/apps → your app → OAuth & Permissions (install or reinstall the app to the workspace first)';
const APP_FIX = 'create an app-level token (xapp-…) with the connections:write scope under api.slack.com/apps → your app → Basic Information → App-Level Tokens';

function describe(err: unknown, setting: string, fix: string, url: string): SlackPreflightError {
  const e = err as { code?: string; data?: { error?: string }; original?: { message?: string }; message?: string };
  const code = e.data?.error;
  if (e.code === ErrorCode.PlatformError && code) {
    const why = TOKEN_ERRORS[code];
    return new SlackPreflightError(why ? `${setting} was refused by Slack (${code}: ${why}): ${fix}.` : `Slack refused ${setting} (${code}): ${fix}.`);
  }
  if (e.code === ErrorCode.HTTPError) return new SlackPreflightError(`Slack answered ${setting}'s check with an HTTP error (${e.message ?? 'unknown'}) at ${url}: retry later, or check a proxy in between.`);
  const cause = e.original?.message ?? e.message ?? String(err);
  return new SlackPreflightError(`Slack is unreachable at ${url} (${cause}): allow outbound HTTPS to slack.com from here, or set HTTPS_PROXY if traffic must go through a proxy.`);
}

/** Checks the bot token (and, in Socket Mode, the app token); resolves with the bot's identity, throws SlackPreflightError. */
export async function preflightSlack(s: PreflightSettings, clientOptions: WebClientOptions = {}, timeoutMs = 10_000): Promise<{ userId?: string; team?: string; missingOptional?: string[] }> {
  // Its own warnings would repeat what the one message below says.
  const options: WebClientOptions = { ...clientOptions, timeout: timeoutMs, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true, logLevel: LogLevel.ERROR };
  const url = clientOptions.slackApiUrl ?? 'https://slack.com/api/';
  let auth: WebAPICallResult & { user_id?: string; team?: string };
  try {
    auth = await new WebClient(s.botToken, options).auth.test();
  } catch (err) {
    throw describe(err, 'SLACK_BOT_TOKEN', BOT_FIX, url);
  }
  const granted = auth.response_metadata?.scopes;
  // Slack lists the token's scopes on every answer; a missing one fails later, call by call.
  const missing = granted ? (s.scopes ?? BOT_SCOPES).filter((x) => !granted.includes(x)) : [];
  const missingOptional = missing.filter((x) => OPTIONAL_SCOPES.includes(x));
  const missingScopes = missing.filter((x) => !OPTIONAL_SCOPES.includes(x));
  if (missingScopes.length) {
    throw new SlackPreflightError(`SLACK_BOT_TOKEN lacks the scopes ${missingScopes.join(', ')}: add them (${s.manifest ?? 'manifest.yml'} lists every scope ${s.manifest ? 'this app' : 'Vigil'} uses) under OAuth & Permissions and reinstall the app, then copy the new token.`);
  }
  if (s.mode === 'socket') {
    if (!s.appToken) throw new SlackPreflightError(`Socket Mode needs SLACK_APP_TOKEN: ${APP_FIX}.`);
    try {
      await new WebClient(s.appToken, options).apps.connections.open();
    } catch (err) {
      throw describe(err, 'SLACK_APP_TOKEN', APP_FIX, url);
    }
  }
  return { ...(auth.user_id ? { userId: auth.user_id } : {}), ...(auth.team ? { team: auth.team } : {}), ...(missingOptional.length ? { missingOptional } : {}) };
}
