import type { Detector } from '../types.js';
import { matchSpan } from './spans.js';

/**
 * Tokens with a recognisable provider prefix. Formats are the providers' documented ones
 * (AWS key-id prefixes, GitHub `gh?_`/`github_pat_`, Slack `xox?-`/`xapp-`, Stripe `sk_live_`, …).
 * Each pattern is anchored by its prefix and bounded, so it is cheap on large blobs. Shapes added for
 * Vault, Slack session tokens, Azure SAS and AWS secret keys follow the public rule definitions of gitleaks
 * (`config/gitleaks.toml`) and secretlint's presets (`@secretlint/secretlint-rule-*`), adapted to JS
 * regexes with the boundary lookarounds the scanner's linear-time contract needs (see types.ts).
 */

/** Random secrets mix character classes; a 40-char all-lowercase-hex run next to a key id is a git SHA. */
function mixedCase(s: string): boolean {
  return /[a-z]/.test(s) && /[A-Z]/.test(s);
}

/** The `secret` group when it looks random: upper, lower and a digit (AWS secret keys always have all three in practice). */
function awsSecretSpan(m: RegExpExecArray): { start: number; end: number } | null {
  const idx = m.indices?.groups?.['secret'];
  const secret = m.groups?.['secret'] ?? '';
  return idx && mixedCase(secret) && /[0-9]/.test(secret) ? { start: idx[0], end: idx[1] } : null;
}

/*
 * Boundaries: a distinctive prefix (`sk-ant-`, `xoxb-`, `glpat-`, `hf_`, …) needs no word boundary on its
 * left — a token glued to an identifier (`TOKEN_xoxb-…`, a tool named `lookup_hf_…`) is still the token.
 * Only letters and digits before it keep it out (`desk-` is not `sk-`); the right side stays bounded.
 */
export const providerTokenDetectors: readonly Detector[] = [
  {
    name: 'anthropic_key',
    kind: 'anthropic_key',
    pattern: /(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{20,300}(?![A-Za-z0-9_-])/dg,
    hints: ['sk-ant-'],
  },
  {
    name: 'openai_key',
    kind: 'openai_key',
    // Project/service-account keys carry a tag; legacy keys are `sk-` + alphanumerics, no dashes
    // (which keeps a pod named `sk-payments-worker-…` out).
    pattern: /(?<![A-Za-z0-9])sk-(?:(?<tagged>(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,300})|[A-Za-z0-9]{32,200})(?![A-Za-z0-9_-])/dg,
    hints: ['sk-'],
    select: (m) => (m.groups?.['tagged'] !== undefined || (mixedCase(m[0]) && /[0-9]/.test(m[0])) ? matchSpan(m) : null),
  },
  {
    name: 'aws_access_key',
    kind: 'aws_access_key',
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/dg,
    hints: ['AKIA', 'ASIA', 'ABIA', 'ACCA'],
  },
  {
    name: 'aws_secret_key_labelled',
    kind: 'aws_secret_key',
    pattern: /(?<![A-Za-z0-9])(?:aws_?)?secret_?access_?key\\?["']?[ \t]{0,3}[:=][ \t]{0,3}\\?["']?(?<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/dgi,
  },
  {
    // A credentials CSV or `AKIA… wJalr…` pair: a 40-char base64 run right after a key id.
    name: 'aws_secret_key_paired',
    kind: 'aws_secret_key',
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}["']?[\s,;:|=]{1,5}["']?(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dg,
    hints: ['AKIA', 'ASIA'],
    select: (m) => {
      const idx = m.indices?.groups?.['secret'];
      const secret = m.groups?.['secret'];
      return idx && secret !== undefined && mixedCase(secret) ? { start: idx[0], end: idx[1] } : null;
    },
  },
  {
    // Nearby wording rather than a strict `key=value`: `AWS_SECRET_ACCESS_KEY is …`, `--aws-secret-access-key …`,
    // `aws_secret: "…"`, `aws secret key …`. The secret is AWS's 40-character base64 (secretlint's
    // `@secretlint/secretlint-rule-aws` matches the same 40 characters after such a name).
    name: 'aws_secret_key_near',
    kind: 'aws_secret_key',
    pattern:
      /(?<![A-Za-z0-9])(?:aws[ _.-]?secret(?:[ _.-]?access)?(?:[ _.-]?key)?|secret[ _.-]?access[ _.-]?key)[^\r\n]{0,40}?(?<![A-Za-z0-9/+])(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dgi,
    hints: ['aws', 'AWS', 'ccess', 'CCESS'],
    select: (m) => awsSecretSpan(m),
  },
  {
    // A bare `KEY=<40 base64>` with no telling name (`S3_SECRET=…`, `creds=…`): AWS's secret key shape
    // alone. Upper, lower and digits all required, so git SHAs, hex digests and trace ids survive.
    name: 'aws_secret_key_shape',
    kind: 'aws_secret_key',
    pattern: /(?<=[A-Za-z0-9_])[ \t]{0,2}=[ \t]{0,2}["']?(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dg,
    hints: ['='],
    select: (m) => awsSecretSpan(m),
  },
  {
    name: 'gcp_api_key',
    kind: 'gcp_api_key',
    pattern: /(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/dg,
    hints: ['AIza'],
  },
  {
    name: 'github_token',
    kind: 'github_token',
    // The prefix is distinctive enough that a `_` around the token does not make it part of a word
    // (`_ghp_…_` italics, `TOKEN_ghp_…`); gitleaks' `github-pat` rule has no boundary at all.
    pattern: /(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9])/dg,
    hints: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
  },
  {
    name: 'gitlab_token',
    kind: 'gitlab_token',
    pattern: /(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,255}(?![A-Za-z0-9_-])/dg,
    hints: ['glpat-'],
  },
  {
    name: 'slack_token',
    kind: 'slack_token',
    pattern: /(?<![A-Za-z0-9])(?:xox[abposre]-[A-Za-z0-9-]{10,250}|xoxe\.xox[bp]-[A-Za-z0-9-]{10,250}|xapp-[0-9]-[A-Za-z0-9-]{10,250})(?![A-Za-z0-9-])/dg,
    hints: ['xox', 'xapp-'],
  },
  {
    // Browser-session credentials: `xoxc-` client tokens and the `d` cookie `xoxd-…`, which is URL-encoded
    // base64 (`%2F`, `%2B`, `%3D`), so it needs a wider alphabet than the bot/user tokens above.
    name: 'slack_session_token',
    kind: 'slack_token',
    pattern: /(?<![A-Za-z0-9])xox[cd]-[A-Za-z0-9%+/=_.-]{20,1000}(?![A-Za-z0-9%+/=_.-])/dg,
    hints: ['xoxc-', 'xoxd-'],
  },
  {
    // HashiCorp Vault service/batch/recovery tokens (Vault ≥ 1.10, `hvs.`/`hvb.`/`hvr.`). gitleaks'
    // `vault-service-token` / `vault-batch-token` rules want 90+ characters; 24+ here, so a token a log
    // line or a chat client shortened still goes: the `hv?.` prefix carries the weight.
    name: 'vault_token',
    kind: 'vault_token',
    pattern: /(?<![A-Za-z0-9.])hv[sbr]\.[A-Za-z0-9_-]{24,300}(?![A-Za-z0-9_-])/dg,
    hints: ['hvs.', 'hvb.', 'hvr.'],
  },
  {
    // An Azure Storage shared access signature: the `sig=` parameter of a SAS URL or connection string is
    // the HMAC that grants access (base64, usually URL-encoded). Other SAS parameters (sv, se, sp) stay.
    name: 'azure_sas_signature',
    kind: 'azure_sas',
    pattern: /(?<![A-Za-z0-9_-])sig=(?<secret>(?:[A-Za-z0-9+/]|%2[BbFf]){20,200}(?:=|%3[Dd]){0,2})(?![A-Za-z0-9+/%=])/dg,
    hints: ['sig='],
    // A signature is random: it mixes cases and digits (keeps `sig=SIGTERM` and `sig=verified` out).
    select: (m) => {
      const idx = m.indices?.groups?.['secret'];
      const secret = m.groups?.['secret'] ?? '';
      return idx && mixedCase(secret) && /[0-9]/.test(secret) ? { start: idx[0], end: idx[1] } : null;
    },
  },
  {
    // Keep the host so evidence still says "a Slack webhook"; the path is the credential.
    name: 'slack_webhook',
    kind: 'slack_webhook',
    pattern: /hooks\.slack\.com\/(?:services|workflows|triggers)\/(?<secret>[A-Za-z0-9_/-]{10,300})/dg,
    hints: ['hooks.slack.com'],
  },
  {
    name: 'stripe_key',
    kind: 'stripe_key',
    pattern: /(?<![A-Za-z0-9])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,250}|whsec_[A-Za-z0-9]{20,250})(?![A-Za-z0-9_])/dg,
    hints: ['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_', 'whsec_'],
  },
  {
    // Many vendors copy Stripe's shape: `<vendor>_live_…` / `_test_` (Razorpay `rzp_live_`, Paystack,
    // internal `sf_live_` service tokens). A bare one in a header or URL has no key name to give it away,
    // so the shape is the signal; letters and digits both required keeps `feature_test_suite…` names out.
    name: 'vendor_live_token',
    kind: 'api_key',
    pattern: /(?<![A-Za-z0-9_])[a-z][a-z0-9]{1,11}(?:_[a-z][a-z0-9]{1,11})?_(?<infix>live|test|prod|secret)_(?<tail>[A-Za-z0-9]{14,250})(?![A-Za-z0-9_])/dg,
    hints: ['_live_', '_test_', '_prod_', '_secret_'],
    // `_live_`/`_test_` are the vendors' convention: 14+ random characters (Razorpay key ids are 14).
    // `_prod_`/`_secret_` also name ordinary things (`app_prod_nodepool2024blue`): 24+. Digits and letters
    // both required: an all-letter tail is a camelCase name far more often than a token (the few
    // all-letter tokens this misses are still caught under a sensitive key or an auth header).
    select: (m) => {
      const tail = m.groups?.['tail'] ?? '';
      const strongInfix = m.groups?.['infix'] === 'live' || m.groups?.['infix'] === 'test';
      const mixed = /[0-9]/.test(tail) && /[A-Za-z]/.test(tail);
      return mixed && (strongInfix || tail.length >= 24) ? matchSpan(m) : null;
    },
  },
  {
    name: 'google_oauth_token',
    kind: 'google_oauth_token',
    pattern: /(?<![A-Za-z0-9])ya29\.[A-Za-z0-9_-]{20,2000}(?![A-Za-z0-9_-])/dg,
    hints: ['ya29.'],
  },
  {
    name: 'npm_token',
    kind: 'npm_token',
    pattern: /(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/dg,
    hints: ['npm_'],
  },
  {
    name: 'sendgrid_key',
    kind: 'sendgrid_key',
    pattern: /(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/dg,
    hints: ['SG.'],
  },
  {
    name: 'huggingface_token',
    kind: 'huggingface_token',
    pattern: /(?<![A-Za-z0-9])hf_[A-Za-z0-9]{34}(?![A-Za-z0-9_])/dg,
    hints: ['hf_'],
  },
];
