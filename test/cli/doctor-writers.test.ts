/**
 * `vigil doctor`'s writers outside Kubernetes, against the fake LaunchDarkly (token roles; a reader's
 * PATCH answers 403) and the fake GitHub (per-token write; `permissions.push`), with the catalog's flags
 * and repositories. The Kubernetes part runs against the fake API server with deploy/'s identities, so
 * the exit code is the whole doctor's.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { repoScenario } from '../fakes/github/builders.js';
import { startFakeGitHub, type FakeGitHub } from '../fakes/github/server.js';
import { startFakeKube, type FakeKube } from '../fakes/kubernetes/server.js';
import { startFakeLaunchDarkly, type FakeLaunchDarkly, type FakeToken } from '../fakes/launchdarkly/server.js';
import { doctor, executor, kubeconfig, POLICY, reader, readerRules, removeTempFiles, tempFile } from './doctor-harness.js';

const CATALOG = `services:
  - { name: checkout, namespace: shop, repo: acme/checkout, flags: [new-checkout-flow, dark-mode] }
  - { name: cart, namespace: shop, repo: acme/cart, flags: [new-checkout-flow] }
`;
const LD_READ = 'api-reader-0123456789';
const LD_WRITE = 'api-writer-0123456789';

let kube: FakeKube;
let ld: FakeLaunchDarkly;
let gh: FakeGitHub;
let base: Record<string, string>;
const running: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  kube = await startFakeKube({ objects: [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'vigil-executor', namespace: 'vigil' } }], identities: {
      reader,
      executor,
      'leaky-reader': { ...reader, user: 'leaky', rules: [...readerRules, { verbs: ['patch'], apiGroups: ['apps'], resources: ['deployments'], namespaces: ['shop'] }] },
    },
  });
});
afterAll(async () => {
  await kube.close();
  removeTempFiles();
});

/** Both fakes with the given tokens; `env` points doctor at them with the usual reader/writer pair. */
async function start(ldTokens: Record<string, FakeToken>, ghTokens: Record<string, { login: string; write: boolean; app?: boolean }>): Promise<void> {
  ld = await startFakeLaunchDarkly({
    project: 'shop',
    flags: [
      { key: 'new-checkout-flow', environments: { production: { on: true, version: 7 } } },
      { key: 'dark-mode', environments: { production: { on: false } } },
    ],
    tokens: ldTokens,
  });
  gh = await startFakeGitHub({ repos: { 'acme/checkout': repoScenario().repo, 'acme/cart': repoScenario({ defaultBranch: 'trunk' }).repo }, tokens: ghTokens });
  running.push(ld, gh);
  base = {
    KUBECONFIG: kubeconfig(kube.url, 'reader'),
    VIGIL_POLICY_FILE: POLICY,
    VIGIL_CATALOG_FILE: tempFile('catalog.yaml', CATALOG),
    LAUNCHDARKLY_API_URL: ld.url,
    LAUNCHDARKLY_PROJECT: 'shop',
    LAUNCHDARKLY_READ_TOKEN: LD_READ,
    LAUNCHDARKLY_WRITE_TOKEN: LD_WRITE,
    GITHUB_API_URL: gh.url,
    GITHUB_TOKEN: 'ghp-reader',
    GITHUB_WRITE_TOKEN: 'ghp-writer',
  };
}
const goodLd = { [LD_READ]: { name: 'vigil-reader', role: 'reader' }, [LD_WRITE]: { name: 'vigil-flag-writer', role: 'writer' } } satisfies Record<string, FakeToken>;
const goodGh = { 'ghp-reader': { login: 'vigil-reader', write: false }, 'ghp-writer': { login: 'vigil-bot', write: true } };

afterEach(async () => {
  await Promise.all(running.splice(0).map((f) => f.close()));
});

/** Nothing persisted: every PATCH was a dry run and the flags kept their state. */
function expectNoFlagChanged(): void {
  expect(ld.changes).toEqual([]);
  expect(ld.requests.filter((r) => r.method === 'PATCH').every((r) => r.dryRun)).toBe(true);
  expect(ld.flags.map((f) => [f.key, f.environments['production']!.on])).toEqual([
    ['new-checkout-flow', true],
    ['dark-mode', false],
  ]);
}

describe('vigil doctor: writers outside Kubernetes', () => {
  describe('with a read-only reader and a writer that may write', () => {
    beforeEach(() => start(goodLd, goodGh));

    it('proves the readers cannot write, reports what the writers may do, and exits 0', async () => {
      const { code, text } = await doctor([], base);
      expect(code, text).toBe(0);
      expect(text).toContain('Writers outside Kubernetes (catalog ');
      expect(text).toContain('reader token (LAUNCHDARKLY_READ_TOKEN): vigil-reader (tok-vigil-reader, service token)');
      expect(text).toContain('writer token (LAUNCHDARKLY_WRITE_TOKEN): vigil-flag-writer (tok-vigil-flag-writer, service token)');
      expect(text).toContain('✓ two different tokens');
      expect(text).toContain('✓ cannot change new-checkout-flow (HTTP 403)');
      expect(text).toContain('✓ cannot change dark-mode (HTTP 403)');
      expect(text).toContain('✓ may flip new-checkout-flow (dry run accepted)');
      expect(text).toContain('✓ may flip dark-mode (dry run accepted)');
      expect(text).toContain('reader token (GITHUB_TOKEN): vigil-reader');
      expect(text).toContain('writer token (GITHUB_WRITE_TOKEN): vigil-bot');
      expect(text).toContain('✓ cannot push to acme/checkout');
      expect(text).toContain('✓ cannot push to acme/cart');
      expect(text).toContain('✓ may push to acme/cart (default branch trunk)');
      expect(text).not.toMatch(/✗|⚠/);
      expect(text).toContain('✓ OK: the reader cannot write (nor can its tokens outside Kubernetes)');

      // Each flag is probed once per token, as a dry run, and the reader's probe was refused.
      const patches = ld.requests.filter((r) => r.method === 'PATCH');
      expect(patches.map((r) => [r.path, r.token, r.status])).toEqual([
        ['/api/v2/flags/shop/new-checkout-flow', LD_READ, 403],
        ['/api/v2/flags/shop/dark-mode', LD_READ, 403],
        ['/api/v2/flags/shop/new-checkout-flow', LD_WRITE, 200],
        ['/api/v2/flags/shop/dark-mode', LD_WRITE, 200],
      ]);
      expectNoFlagChanged();
      // GitHub was only read.
      expect(gh.requests.every((r) => r.method === 'GET')).toBe(true);
      expect(gh.requests.some((r) => r.path === '/repos/acme/cart' && r.login === 'vigil-reader')).toBe(true);
    });

    it('says when the catalog names no flags or repositories, and does not claim the tokens were proven', async () => {
      const { code, text } = await doctor([], { ...base, VIGIL_CATALOG_FILE: tempFile('catalog.yaml', 'services:\n  - { name: api, namespace: shop }\n') });
      expect(code, text).toBe(0);
      expect(text).toContain('· no flags named in the catalog (services[].flags): no dry runs');
      expect(text).toContain('· no repositories named in the catalog (services[].repo): nothing to check');
      expect(ld.requests.some((r) => r.method === 'PATCH')).toBe(false);
      expect(text).toContain('✓ OK: the reader cannot write and can read what investigations need.');
      expect(text).not.toContain('nor can its tokens');
      expect(text).toContain(
        "⚠ Not proven that the reader's tokens outside Kubernetes cannot write: LaunchDarkly: the catalog names no flags (services[].flags) to dry-run; GitHub: the catalog names no repositories (services[].repo) to check.",
      );
    });

    it('without a catalog, names VIGIL_CATALOG_FILE as why nothing was proven', async () => {
      const { VIGIL_CATALOG_FILE, ...noCatalog } = base;
      const { code, text } = await doctor([], noCatalog);
      expect(code, text).toBe(0);
      expect(text).toContain('Writers outside Kubernetes (no catalog (VIGIL_CATALOG_FILE is unset)):');
      expect(text).not.toContain('nor can its tokens');
      expect(text).toContain('LaunchDarkly: no catalog (VIGIL_CATALOG_FILE is unset), so no flags (services[].flags) to dry-run');
      expect(text).toContain('GitHub: no catalog (VIGIL_CATALOG_FILE is unset), so no repositories (services[].repo) to check');
    });

    it('a provider that never refused the reader (it could read nothing) is named as not proven; the other is', async () => {
      const catalog = tempFile('catalog.yaml', 'services:\n  - { name: checkout, namespace: shop, repo: acme/checkout, flags: [dark-mode] }\n');
      gh.failNext(/^\/repos\/acme\/checkout$/, 404); // the reader's read; the writer's goes through
      const githubBlind = await doctor([], { ...base, VIGIL_CATALOG_FILE: catalog });
      expect(githubBlind.code, githubBlind.text).toBe(0);
      expect(githubBlind.text).toContain('✓ cannot change dark-mode (HTTP 403)');
      expect(githubBlind.text).toContain('⚠ acme/checkout: the reader cannot read it (HTTP 404)');
      expect(githubBlind.text).not.toContain('nor can its tokens');
      expect(githubBlind.text).toContain(
        "⚠ Not proven that the reader's tokens outside Kubernetes cannot write: GitHub: GitHub denied the reader push on none of the catalog repositories (see ⚠ above).",
      );

      ld.failNext(/\/dark-mode$/, 403); // the reader's read of the only flag
      const launchDarklyBlind = await doctor([], { ...base, VIGIL_CATALOG_FILE: catalog });
      expect(launchDarklyBlind.code, launchDarklyBlind.text).toBe(0);
      expect(launchDarklyBlind.text).toContain('⚠ dark-mode: cannot read it');
      expect(launchDarklyBlind.text).toContain('✓ cannot push to acme/checkout');
      expect(launchDarklyBlind.text).not.toContain('nor can its tokens');
      expect(launchDarklyBlind.text).toContain(
        "⚠ Not proven that the reader's tokens outside Kubernetes cannot write: LaunchDarkly: the reader could read none of the catalog flags (see ⚠ above).",
      );
    });

    it('a flag the catalog names but LaunchDarkly does not have is a warning', async () => {
      const { code, text } = await doctor([], { ...base, VIGIL_CATALOG_FILE: tempFile('catalog.yaml', 'services:\n  - { name: api, namespace: shop, flags: [ghost] }\n') });
      expect(code, text).toBe(0);
      expect(text).toContain('⚠ ghost: no such flag in project shop');
    });

    it('with only one provider configured, the other is skipped', async () => {
      const { LAUNCHDARKLY_PROJECT, LAUNCHDARKLY_READ_TOKEN, LAUNCHDARKLY_WRITE_TOKEN, ...githubOnly } = base;
      const { code, text } = await doctor([], githubOnly);
      expect(code, text).toBe(0);
      expect(text).toContain('LaunchDarkly: skipped');
      expect(text).toContain('✓ cannot push to acme/checkout');
      expect(ld.requests).toEqual([]);
    });

    it('a token the provider rejects, or half the LaunchDarkly settings, exit 2', async () => {
      const rejected = await doctor([], { ...base, LAUNCHDARKLY_READ_TOKEN: 'api-unknown' });
      expect(rejected.code, rejected.text).toBe(2);
      expect(rejected.text).toContain('LaunchDarkly rejected LAUNCHDARKLY_READ_TOKEN (HTTP 401)');
      const half = await doctor([], { ...base, LAUNCHDARKLY_WRITE_TOKEN: '' });
      expect(half).toMatchObject({ code: 2, text: expect.stringContaining('LAUNCHDARKLY_WRITE_TOKEN: required with the other LAUNCHDARKLY_* settings') });
      const ghRejected = await doctor([], { ...base, GITHUB_WRITE_TOKEN: 'ghp-unknown' });
      expect(ghRejected.code, ghRejected.text).toBe(2);
      expect(ghRejected.text).toContain('GitHub rejected GITHUB_WRITE_TOKEN (HTTP 401)');
    });
  });

  it('a LaunchDarkly reader token with the writer role fails with exit 1, naming it, and changes nothing', async () => {
    await start({ ...goodLd, [LD_READ]: { name: 'vigil-reader', role: 'writer' } }, goodGh);
    const { code, text } = await doctor([], base);
    expect(code, text).toBe(1);
    expect(text).toContain('✗ CAN change new-checkout-flow');
    expect(text).toContain('SAFETY FAILURE: a reader token can WRITE outside Kubernetes');
    expect(text).toContain('- LAUNCHDARKLY_READ_TOKEN vigil-reader (tok-vigil-reader, service token): may change new-checkout-flow in production');
    expect(text).toContain('✗ FAILED: a reader token can write outside Kubernetes');
    expect(text).not.toContain('✗ FAILED: the reader identity can write'); // the RBAC is fine
    expect(text).not.toContain('✓ OK');
    expectNoFlagChanged();
  });

  describe('a write found before a provider error still fails with exit 1', () => {
    it('a LaunchDarkly reader leak on the first flag, then LaunchDarkly errors on the next', async () => {
      await start({ ...goodLd, [LD_READ]: { name: 'vigil-reader', role: 'writer' } }, goodGh);
      for (let i = 0; i < 3; i++) ld.failNext(/\/flags\/shop\/dark-mode$/, 503); // every attempt of the read after the leak
      const { code, text } = await doctor([], base);
      expect(code, text).toBe(1);
      expect(text).toContain('✗ CAN change new-checkout-flow');
      expect(text).toContain('✗ a permission check failed: LaunchDarkly GET flag dark-mode');
      expect(text).toContain('- LAUNCHDARKLY_READ_TOKEN vigil-reader (tok-vigil-reader, service token): may change new-checkout-flow in production');
      expect(text).toContain(
        '✗ FAILED: a reader token can write outside Kubernetes (LAUNCHDARKLY_READ_TOKEN vigil-reader (tok-vigil-reader, service token): may change new-checkout-flow in production)',
      );
      expect(text).not.toContain('GitHub ('); // the section stopped at the error
      expect(text).not.toContain('✓ OK');
      expectNoFlagChanged();
    });

    it('a LaunchDarkly reader leak, then GitHub cannot be reached', async () => {
      await start({ ...goodLd, [LD_READ]: { name: 'vigil-reader', role: 'writer' } }, goodGh);
      await gh.close();
      running.splice(running.indexOf(gh), 1);
      const { code, text } = await doctor([], base);
      expect(code, text).toBe(1);
      expect(text).toContain('✗ a permission check failed: GitHub GET /user with GITHUB_TOKEN');
      expect(text).toContain('✗ FAILED: a reader token can write outside Kubernetes (LAUNCHDARKLY_READ_TOKEN vigil-reader (tok-vigil-reader, service token): may change new-checkout-flow in production; LAUNCHDARKLY_READ_TOKEN vigil-reader (tok-vigil-reader, service token): may change dark-mode in production)');
    });

    it('a reader RBAC that can write, then a rejected LaunchDarkly token', async () => {
      await start(goodLd, goodGh);
      const { code, text } = await doctor([], { ...base, KUBECONFIG: kubeconfig(kube.url, 'leaky-reader'), LAUNCHDARKLY_READ_TOKEN: 'api-unknown' });
      expect(code, text).toBe(1);
      expect(text).toContain('✗ a permission check failed: LaunchDarkly rejected LAUNCHDARKLY_READ_TOKEN (HTTP 401)');
      expect(text).toContain('✗ FAILED: the reader identity can write. Fix the RBAC above before running Vigil.');
      expect(text).not.toContain('✗ FAILED: a reader token');
    });

    it('with nothing unsafe seen, a provider error is still exit 2', async () => {
      await start(goodLd, goodGh);
      for (let i = 0; i < 3; i++) ld.failNext(/\/flags\/shop\/dark-mode$/, 503);
      const { code, text } = await doctor([], base);
      expect(code, text).toBe(2);
      expect(text).toContain('✓ cannot change new-checkout-flow (HTTP 403)');
      expect(text).toContain('✗ a permission check failed: LaunchDarkly GET flag dark-mode');
      expect(text).not.toContain('FAILED');
    });
  });

  it('a GitHub reader token that may push fails with exit 1, naming it', async () => {
    await start(goodLd, { ...goodGh, 'ghp-reader': { login: 'vigil-reader', write: true } });
    const { code, text } = await doctor([], base);
    expect(code, text).toBe(1);
    expect(text).toContain('✗ CAN push to acme/checkout');
    expect(text).toContain('- GITHUB_TOKEN (vigil-reader): may push to acme/cart');
    expect(text).toContain('✓ cannot change new-checkout-flow (HTTP 403)');
  });

  it('one token as both reader and writer fails with exit 1', async () => {
    // Two LaunchDarkly settings that hold different strings for one token (the fake's token id is by name).
    await start({ [LD_READ]: { name: 'vigil-flags', role: 'reader' }, [LD_WRITE]: { name: 'vigil-flags', role: 'writer' } }, goodGh);
    const sameId = await doctor([], base);
    expect(sameId.code, sameId.text).toBe(1);
    expect(sameId.text).toContain('✗ both settings resolve to the same token (tok-vigil-flags): the reader is the writer');

    const sameString = await doctor([], { ...base, LAUNCHDARKLY_READ_TOKEN: LD_WRITE, GITHUB_TOKEN: 'ghp-writer' });
    expect(sameString.code, sameString.text).toBe(1);
    expect(sameString.text).toContain('✗ LAUNCHDARKLY_READ_TOKEN and LAUNCHDARKLY_WRITE_TOKEN hold the same token');
    expect(sameString.text).toContain('✗ GITHUB_TOKEN and GITHUB_WRITE_TOKEN hold the same token');
    expect(sameString.text).toContain('- GITHUB_TOKEN is GITHUB_WRITE_TOKEN (one token in both settings)');
  });

  it('writers without rights are warnings (their writes would be refused), and an App token is named as one', async () => {
    await start({ ...goodLd, [LD_WRITE]: { name: 'vigil-flag-writer', role: 'reader' } }, { ...goodGh, 'ghp-writer': { login: 'vigil-app[bot]', write: false, app: true } });
    const { code, text } = await doctor([], base);
    expect(code, text).toBe(0);
    expect(text).toContain('⚠ may not flip new-checkout-flow (HTTP 403): flips would be refused');
    expect(text).toContain('writer token (GITHUB_WRITE_TOKEN): a GitHub App installation token (GET /user answers 403)');
    expect(text).toContain('⚠ may not push to acme/checkout: reverts would be refused');
  });

  it('without the settings the section is skipped in one line', async () => {
    const { code, text } = await doctor([], { KUBECONFIG: kubeconfig(kube.url, 'reader'), VIGIL_POLICY_FILE: POLICY, GITHUB_TOKEN: 'ghp-reader' });
    expect(code, text).toBe(0);
    expect(text).toContain('Writers outside Kubernetes: skipped (no LAUNCHDARKLY_* settings and no GITHUB_WRITE_TOKEN');
    expect(text).not.toContain('LaunchDarkly (');
    expect(text).toContain('✓ OK: the reader cannot write and can read');
  });
});
