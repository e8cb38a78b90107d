/**
 * `vigil doctor`, the writers outside Kubernetes. flip_flag (LaunchDarkly) and revert_pr (GitHub) each
 * read with a reader token and write with a separate writer token; doctor asks the providers themselves
 * that the reader token cannot write, and reports what the writer token may do:
 *   - LaunchDarkly: both tokens' caller identities (one token in both settings is a safety failure).
 *     Per catalog flag, a PATCH with `?dryRun=true` whose JSON patch tests the current targeting state
 *     and replaces it with the same state, so nothing would change even if a server ignored the dry
 *     run. As the reader it must be refused (401/403); as the writer it shows whether flips would pass.
 *   - GitHub: per catalog repository, the reader's `permissions.push` must be false; the writer's
 *     should be true. Both logins are named (`GET /user`; an App installation token has none).
 * Nothing is written.
 */
import { Octokit } from '@octokit/rest';
import { z } from 'zod';
import { GitHubReverts, type GitHubRevertSettings } from '../actions/external/github-revert.js';
import { FlagProviderError, LaunchDarklyFlags, type LaunchDarklySettings } from '../actions/external/launchdarkly.js';
import type { FlagState } from '../actions/external/types.js';
import { envSchema } from '../config/schema.js';
import { parseRepo } from '../evidence/github/client.js';
import { ServiceCatalog } from '../knowledge/catalog.js';

export interface WriterSetup {
  launchDarkly?: LaunchDarklySettings;
  github?: GitHubRevertSettings;
  catalog: ServiceCatalog;
  /** VIGIL_CATALOG_FILE; unset, there are no flags or repositories to check. */
  catalogFile?: string;
}

/** What the section adds to doctor's report. */
export interface WriterOutput {
  lines: string[];
  /**
   * Each way a reader token can write, or one token that is both reader and writer (exit 1). Recorded
   * as it is found, so that a provider error later in the section cannot hide it.
   */
  tokenLeaks: string[];
  /**
   * Per configured provider that never refused the reader, why (no flags, nothing readable, ...).
   * Empty: every configured provider refused the reader at least once, or it has no reader token.
   */
  tokenUnproven: string[];
}

/** The provider could not be asked (unreachable, a rejected token): exit 2 with this message. */
export class WriterCheckError extends Error {
  override readonly name = 'WriterCheckError';
}

const writerEnv = envSchema.pick({
  LAUNCHDARKLY_API_URL: true,
  LAUNCHDARKLY_PROJECT: true,
  LAUNCHDARKLY_ENVIRONMENT: true,
  LAUNCHDARKLY_READ_TOKEN: true,
  LAUNCHDARKLY_WRITE_TOKEN: true,
  GITHUB_TOKEN: true,
  GITHUB_API_URL: true,
  GITHUB_WRITE_TOKEN: true,
  VIGIL_CATALOG_FILE: true,
});
const LD_REQUIRED = ['LAUNCHDARKLY_PROJECT', 'LAUNCHDARKLY_READ_TOKEN', 'LAUNCHDARKLY_WRITE_TOKEN'] as const;

/**
 * The writer settings, parsed like the bot parses them (empty means unset). Throws on bad settings;
 * one token in both settings is not a settings error here: the check reports it as a safety failure.
 */
export function prepareWriters(env: Record<string, string | undefined>): WriterSetup {
  const parsed = writerEnv.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')));
  if (!parsed.success) throw new Error(`invalid settings: ${parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`).join('; ')}`);
  const s = parsed.data;
  const missing = LD_REQUIRED.filter((k) => !s[k]);
  if (missing.length && missing.length < LD_REQUIRED.length) throw new Error(`${missing.join(', ')}: required with the other LAUNCHDARKLY_* settings (project, a reader token and a separate writer token)`);
  let catalog: ServiceCatalog;
  try {
    catalog = ServiceCatalog.load(s.VIGIL_CATALOG_FILE);
  } catch (err) {
    throw new Error(`VIGIL_CATALOG_FILE: ${err instanceof Error ? err.message : String(err)}`);
  }
  return {
    ...(s.LAUNCHDARKLY_PROJECT && s.LAUNCHDARKLY_READ_TOKEN && s.LAUNCHDARKLY_WRITE_TOKEN
      ? { launchDarkly: { ...(s.LAUNCHDARKLY_API_URL ? { apiUrl: s.LAUNCHDARKLY_API_URL } : {}), project: s.LAUNCHDARKLY_PROJECT, environment: s.LAUNCHDARKLY_ENVIRONMENT, readToken: s.LAUNCHDARKLY_READ_TOKEN, writeToken: s.LAUNCHDARKLY_WRITE_TOKEN } }
      : {}),
    ...(s.GITHUB_WRITE_TOKEN ? { github: { ...(s.GITHUB_API_URL ? { baseUrl: s.GITHUB_API_URL } : {}), ...(s.GITHUB_TOKEN ? { readToken: s.GITHUB_TOKEN } : {}), writeToken: s.GITHUB_WRITE_TOKEN } } : {}),
    catalog,
    ...(s.VIGIL_CATALOG_FILE ? { catalogFile: s.VIGIL_CATALOG_FILE } : {}),
  };
}

/** Whether there is anything to check; when not, doctor prints one line instead of the section. */
export const hasWriters = (s: WriterSetup): boolean => s.launchDarkly !== undefined || s.github !== undefined;

/**
 * Appends the section to `out`. Throws WriterCheckError when a provider cannot be asked; the leaks and
 * the SAFETY FAILURE block found until then are in `out` all the same.
 */
export async function checkWriters(s: WriterSetup, timeoutMs: number, out: WriterOutput): Promise<void> {
  out.lines.push('', `Writers outside Kubernetes (${s.catalogFile ? `catalog ${s.catalogFile}` : 'no catalog (VIGIL_CATALOG_FILE is unset)'}):`);
  const none = (what: string): string => (s.catalogFile ? `the catalog names no ${what}` : `no catalog (VIGIL_CATALOG_FILE is unset), so no ${what}`);
  const unproven = (provider: string, why: string | undefined): void => {
    if (why) out.tokenUnproven.push(`${provider}: ${why}`);
  };
  try {
    if (s.launchDarkly) unproven('LaunchDarkly', await checkLaunchDarkly(s.launchDarkly, [...new Set(s.catalog.services.flatMap((x) => x.flags))], none('flags'), timeoutMs, out));
    else out.lines.push('  LaunchDarkly: skipped (LAUNCHDARKLY_PROJECT / _READ_TOKEN / _WRITE_TOKEN are unset: Vigil flips no flags)');
    if (s.github) unproven('GitHub', await checkGitHub(s.github, [...new Set(s.catalog.services.flatMap((x) => (x.repo ? [x.repo] : [])))], none('repositories'), timeoutMs, out));
    else out.lines.push('  GitHub: skipped (GITHUB_WRITE_TOKEN is unset: Vigil opens no revert pull requests)');
  } finally {
    if (out.tokenLeaks.length) {
      out.lines.push(
        '',
        '  ✗✗✗ SAFETY FAILURE: a reader token can WRITE outside Kubernetes. ✗✗✗',
        '  Vigil investigates with these tokens; every write must go through the writer token after a human',
        '  approval. Give the reader a read-only token (LaunchDarkly role reader; GitHub read-only contents):',
        ...out.tokenLeaks.map((l) => `    - ${l}`),
      );
    }
  }
}

const callerSchema = z.object({ tokenId: z.string().optional(), tokenName: z.string().optional(), memberId: z.string().optional(), serviceToken: z.boolean().optional() });
type Caller = z.infer<typeof callerSchema>;
const describeCaller = (c: Caller): string => `${c.tokenName ?? 'unnamed token'} (${[c.tokenId ?? c.memberId ?? 'no token id', ...(c.serviceToken ? ['service token'] : [])].join(', ')})`;

/** `GET /api/v2/caller-identity`: which token `setting` holds (LaunchDarklyFlags only asks for the writer's name). */
async function callerIdentity(api: string, token: string, setting: string, timeoutMs: number): Promise<Caller> {
  let res: Response;
  try {
    res = await fetch(`${api}/api/v2/caller-identity`, { headers: { authorization: token, accept: 'application/json', 'user-agent': 'vigil-sre-agent' }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new WriterCheckError(`cannot reach LaunchDarkly at ${api}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const text = await res.text();
  if (res.status === 401) throw new WriterCheckError(`LaunchDarkly rejected ${setting} (HTTP 401): ${text.slice(0, 200)}`);
  if (!res.ok) throw new WriterCheckError(`LaunchDarkly GET /api/v2/caller-identity with ${setting}: HTTP ${res.status} ${text.slice(0, 200)}`);
  const parsed = callerSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new WriterCheckError(`LaunchDarkly GET /api/v2/caller-identity with ${setting}: unexpected answer`);
  return parsed.data;
}

/** A provider failure without an answer (network, 5xx after retries) means doctor could not check. */
async function answered<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw new WriterCheckError(err instanceof Error ? err.message : String(err));
  }
}

/** Checks one provider's tokens; returns why it never refused the reader, if it did not. */
async function checkLaunchDarkly(s: LaunchDarklySettings, flags: string[], noFlags: string, timeoutMs: number, out: WriterOutput): Promise<string | undefined> {
  const { lines, tokenLeaks: leaks } = out;
  const api = (s.apiUrl ?? 'https://app.launchdarkly.com').replace(/\/+$/, '');
  lines.push(`  LaunchDarkly (project ${s.project}, environment ${s.environment}, ${api}):`);
  if (s.readToken === s.writeToken) {
    lines.push('    ✗ LAUNCHDARKLY_READ_TOKEN and LAUNCHDARKLY_WRITE_TOKEN hold the same token: the reader is the writer');
    leaks.push('LAUNCHDARKLY_READ_TOKEN is LAUNCHDARKLY_WRITE_TOKEN (one token in both settings)');
    return undefined;
  }
  const reader = await callerIdentity(api, s.readToken, 'LAUNCHDARKLY_READ_TOKEN', timeoutMs);
  const writer = await callerIdentity(api, s.writeToken, 'LAUNCHDARKLY_WRITE_TOKEN', timeoutMs);
  lines.push(`    reader token (LAUNCHDARKLY_READ_TOKEN): ${describeCaller(reader)}`, `    writer token (LAUNCHDARKLY_WRITE_TOKEN): ${describeCaller(writer)}`);
  if (reader.tokenId && reader.tokenId === writer.tokenId) {
    lines.push(`    ✗ both settings resolve to the same token (${reader.tokenId}): the reader is the writer`);
    leaks.push(`LAUNCHDARKLY_READ_TOKEN is the writer's token ${describeCaller(reader)}`);
  } else if (reader.tokenId && writer.tokenId) lines.push('    ✓ two different tokens');
  else lines.push('    ⚠ LaunchDarkly named no token id for one of them: cannot tell whether they are different tokens');

  if (!flags.length) {
    lines.push('    · no flags named in the catalog (services[].flags): no dry runs');
    return `${noFlags} (services[].flags) to dry-run`;
  }
  const settings = { ...s, timeoutMs };
  const asWriter = new LaunchDarklyFlags(settings);
  // The adapter writes with its writeToken: handed the reader's token there, its write request is the
  // reader's, exactly as a flip would send it.
  const asReader = new LaunchDarklyFlags({ ...settings, readToken: s.writeToken, writeToken: s.readToken });
  const comment = 'vigil doctor: dry run that sets the flag to the state it already has (nothing changes)';
  const states: FlagState[] = [];
  let refused = 0;

  lines.push('    Reader token must not change flags (dry-run PATCH, test + replace with the current state):');
  for (const flag of flags) {
    let state: FlagState | undefined;
    try {
      state = await asWriter.read(flag, s.environment); // with the reader token, as planning reads it
    } catch (err) {
      if (!(err instanceof FlagProviderError) || ![401, 403, 404].includes(err.status ?? 0)) throw new WriterCheckError(err instanceof Error ? err.message : String(err));
      lines.push(`      ⚠ ${flag}: cannot read it (${err.message}): nothing to dry-run, and flips of it cannot be planned`);
      continue;
    }
    if (!state) {
      lines.push(`      ⚠ ${flag}: no such flag in project ${s.project} (the catalog names it)`);
      continue;
    }
    states.push(state);
    const w = await answered(asReader.setTargeting(flag, s.environment, { on: state.on, expectOn: state.on, comment, dryRun: true }));
    if (w.status === 'ok') {
      lines.push(`      ✗ CAN change ${flag} — LaunchDarkly accepted the reader's dry run`);
      leaks.push(`LAUNCHDARKLY_READ_TOKEN ${describeCaller(reader)}: may change ${flag} in ${s.environment}`);
    } else if (w.code === 401 || w.code === 403) {
      refused++;
      lines.push(`      ✓ cannot change ${flag} (HTTP ${w.code})`);
    } else lines.push(`      ⚠ ${flag}: not proven, the dry run was refused for another reason: ${w.message ?? `HTTP ${w.code}`}`);
  }

  const why = refused ? undefined : states.length ? 'no dry run of the reader was refused for lack of rights (see ⚠ above)' : 'the reader could read none of the catalog flags (see ⚠ above)';
  if (!states.length) return why;
  lines.push(`    Writer token may flip (the same dry run as ${writer.tokenName ?? 'the writer'}):`);
  for (const state of states) {
    const w = await answered(asWriter.setTargeting(state.key, s.environment, { on: state.on, expectOn: state.on, comment, dryRun: true }));
    if (w.status === 'ok') lines.push(`      ✓ may flip ${state.key} (dry run accepted)`);
    else if (w.code === 401 || w.code === 403) lines.push(`      ⚠ may not flip ${state.key} (HTTP ${w.code}): flips would be refused`);
    else lines.push(`      ⚠ ${state.key}: the dry run was refused: ${w.message ?? `HTTP ${w.code}`}`);
  }
  return why;
}

const httpStatus = (err: unknown): number | undefined => (err as { status?: number }).status;
const firstLine = (err: unknown): string => (err instanceof Error ? err.message.split('\n')[0]! : String(err));

/** The token's login; an App installation token has no user (`GET /user` answers 403). */
async function githubLogin(octokit: Octokit, setting: string, timeoutMs: number): Promise<string> {
  try {
    return (await octokit.rest.users.getAuthenticated({ request: { signal: AbortSignal.timeout(timeoutMs) } })).data.login;
  } catch (err) {
    if (httpStatus(err) === 403) return 'a GitHub App installation token (GET /user answers 403)';
    if (httpStatus(err) === 401) throw new WriterCheckError(`GitHub rejected ${setting} (HTTP 401): ${firstLine(err)}`);
    throw new WriterCheckError(`GitHub GET /user with ${setting}: ${firstLine(err)}`);
  }
}

/** Checks one provider's tokens; returns why it never refused the reader, if it did not (no reader token: nothing to refuse). */
async function checkGitHub(s: GitHubRevertSettings, repos: string[], noRepos: string, timeoutMs: number, out: WriterOutput): Promise<string | undefined> {
  const { lines, tokenLeaks: leaks } = out;
  lines.push(`  GitHub (${s.baseUrl ?? 'https://api.github.com'}):`);
  if (s.readToken === s.writeToken) {
    lines.push('    ✗ GITHUB_TOKEN and GITHUB_WRITE_TOKEN hold the same token: the reader is the writer');
    leaks.push('GITHUB_TOKEN is GITHUB_WRITE_TOKEN (one token in both settings)');
    return undefined;
  }
  const client = (auth: string): Octokit => new Octokit({ ...(s.baseUrl ? { baseUrl: s.baseUrl.replace(/\/+$/, '') } : {}), auth, userAgent: 'vigil-sre-agent', log: { debug() {}, info() {}, warn() {}, error() {} } });
  const reader = s.readToken ? client(s.readToken) : undefined;
  const readerLogin = reader ? await githubLogin(reader, 'GITHUB_TOKEN', timeoutMs) : undefined;
  const writerLogin = await githubLogin(client(s.writeToken), 'GITHUB_WRITE_TOKEN', timeoutMs);
  lines.push(`    reader token (GITHUB_TOKEN): ${readerLogin ?? 'unset (anonymous reads cannot write)'}`, `    writer token (GITHUB_WRITE_TOKEN): ${writerLogin}`);
  if (!repos.length) {
    lines.push('    · no repositories named in the catalog (services[].repo): nothing to check');
    return reader ? `${noRepos} (services[].repo) to check` : undefined;
  }

  let refused = 0;
  if (reader) {
    lines.push('    Reader token must not push (permissions.push):');
    for (const repo of repos) {
      let push: boolean | undefined;
      try {
        push = (await reader.rest.repos.get({ ...parseRepo(repo), request: { signal: AbortSignal.timeout(timeoutMs) } })).data.permissions?.push;
      } catch (err) {
        const code = httpStatus(err);
        if (code !== 403 && code !== 404) throw new WriterCheckError(`GitHub GET /repos/${repo} with GITHUB_TOKEN: ${firstLine(err)}`);
        lines.push(`      ⚠ ${repo}: the reader cannot read it (HTTP ${code}): investigations will miss its changes`);
        continue;
      }
      if (push === true) {
        lines.push(`      ✗ CAN push to ${repo}`);
        leaks.push(`GITHUB_TOKEN (${readerLogin}): may push to ${repo}`);
      } else if (push === false) {
        refused++;
        lines.push(`      ✓ cannot push to ${repo}`);
      } else lines.push(`      ⚠ ${repo}: GitHub reported no permissions for the reader`);
    }
  }

  const reverts = new GitHubReverts(s);
  lines.push('    Writer token may open reverts (permissions.push):');
  for (const repo of repos) {
    try {
      const access = await reverts.writerAccess(repo);
      lines.push(access.push ? `      ✓ may push to ${repo} (default branch ${access.defaultBranch})` : `      ⚠ may not push to ${repo}: reverts would be refused`);
    } catch (err) {
      lines.push(`      ⚠ ${repo}: ${firstLine(err)}: reverts would be refused`);
    }
  }
  return !reader || refused ? undefined : 'GitHub denied the reader push on none of the catalog repositories (see ⚠ above)';
}
