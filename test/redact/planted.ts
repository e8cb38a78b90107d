/**
 * Planted secrets and personal data for the redaction tests, generated from a seeded PRNG so every
 * run is reproducible and no secret-shaped literal sits in the source (provider prefixes are split
 * so repository secret scanners do not flag the fixtures).
 */

/** mulberry32: a tiny seeded PRNG, enough for test data. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rng = () => number;

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;

export function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)] as T;
}

export function chars(rng: Rng, alphabet: string, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(rng() * alphabet.length)];
  return s;
}

/** Random alphanumerics that always mix upper, lower and digits (like real tokens). */
function token(rng: Rng, n: number, extra = ''): string {
  return chars(rng, UPPER, 1) + chars(rng, LOWER, 1) + chars(rng, DIGITS, 1) + chars(rng, ALNUM + extra, n - 3);
}

function luhnComplete(body: string): string {
  for (let check = 0; check <= 9; check++) {
    const digits = body + check;
    let sum = 0;
    for (let i = 0; i < digits.length; i++) {
      let d = Number(digits[digits.length - 1 - i]);
      if (i % 2 === 1) {
        d *= 2;
        if (d > 9) d -= 9;
      }
      sum += d;
    }
    if (sum % 10 === 0) return digits;
  }
  throw new Error('unreachable');
}

function group(digits: string, sizes: number[], sep: string): string {
  const out: string[] = [];
  let at = 0;
  for (const n of sizes) {
    out.push(digits.slice(at, at + n));
    at += n;
  }
  return out.join(sep);
}

function b64url(v: unknown): string {
  return Buffer.from(JSON.stringify(v)).toString('base64url');
}

export interface Planted {
  /** Expected placeholder kind. */
  kind: string;
  /** The raw value that must not survive redaction. */
  secret: string;
  /** A natural text line carrying it. */
  line: string;
  /** The value runs to the end of its line (cookie headers, YAML scalars, PEM blocks). */
  endOfLine?: boolean;
  /** A URL carrying it, for kinds that travel in URLs. */
  url?: string;
  /** Extra fragments that must not survive either (a PEM body line). */
  probes?: string[];
}

/** One planted value of every kind; fresh random bodies for each call. */
export function plantAll(rng: Rng): Planted[] {
  const awsKey = 'AK' + 'IA' + chars(rng, UPPER + DIGITS, 16);
  const awsSecret = token(rng, 40, '/+');
  const gcp = 'AI' + 'za' + token(rng, 35, '_-');
  const ghp = 'gh' + 'p_' + token(rng, 36);
  const pat = 'github' + '_pat_' + token(rng, 82, '_');
  const xoxb = 'xo' + 'xb-' + chars(rng, DIGITS, 12) + '-' + chars(rng, DIGITS, 13) + '-' + token(rng, 24);
  const xapp = 'xa' + 'pp-1-A' + chars(rng, UPPER + DIGITS, 10) + '-' + chars(rng, DIGITS, 13) + '-' + chars(rng, '0123456789abcdef', 64);
  const webhook = `T${chars(rng, UPPER + DIGITS, 8)}/B${chars(rng, UPPER + DIGITS, 10)}/${token(rng, 24)}`;
  const stripe = 'sk' + '_live_' + token(rng, 24);
  const vendor = 'sf' + '_live_' + chars(rng, '0123456789abcdef', 32);
  const razorpay = 'rzp' + '_live_' + 'ILgsfZCZoF1KMb';
  const twoPart = 'acme_svc' + '_live_' + token(rng, 20) + '7';
  const openai = 'sk-' + 'proj-' + token(rng, 48, '_-');
  const openaiLegacy = 'sk-' + token(rng, 48);
  const anthropic = 'sk-' + 'ant-api03-' + token(rng, 93, '_-');
  const oauth = 'ya' + '29.' + token(rng, 60, '_-');
  const npm = 'np' + 'm_' + token(rng, 36);
  const jwt = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: chars(rng, DIGITS, 10), name: 'svc' })}.${token(rng, 43, '_-')}`;
  const pemBody = Array.from({ length: 5 }, () => token(rng, 64, '+/'));
  const pem = ['-----BEGIN RSA PRIVATE KEY-----', ...pemBody, '-----END RSA PRIVATE KEY-----'].join('\n');
  const apiKey = token(rng, 32);
  const clientSecret = token(rng, 40, '_-');
  const yamlPassword = `hunter2-${chars(rng, LOWER, 6)}`;
  const urlPassword = token(rng, 16, '!*');
  const connPassword = `${token(rng, 8)} ${token(rng, 6)}`;
  const bearer = token(rng, 40, '._-');
  const basic = Buffer.from(`deploy:${token(rng, 12)}`).toString('base64');
  const cookie = token(rng, 32);
  const setCookie = token(rng, 32);
  const email = `${chars(rng, LOWER, 6)}.${chars(rng, LOWER, 8)}@${chars(rng, LOWER, 7)}.com`;
  const phoneE164 = `+1${pick(rng, ['415', '212', '646', '303'])}${chars(rng, '23456789', 1)}${chars(rng, DIGITS, 6)}`;
  const phoneUs = `(${pick(rng, ['415', '212', '646'])}) ${chars(rng, '23456789', 1)}${chars(rng, DIGITS, 2)}-${chars(rng, DIGITS, 4)}`;
  const phoneUk = `+44 20 ${chars(rng, '23456789', 1)}${chars(rng, DIGITS, 3)} ${chars(rng, DIGITS, 4)}`;
  const visa = group(luhnComplete('4' + chars(rng, DIGITS, 14)), [4, 4, 4, 4], ' ');
  const amex = group(luhnComplete('37' + chars(rng, DIGITS, 12)), [4, 6, 5], '-');
  const mastercard = luhnComplete('5' + pick(rng, ['1', '2', '3', '4', '5']) + chars(rng, DIGITS, 13));
  // Secret names whose last word is short (`_PASS`, `Pw`, `_KEY`), and argv flags with the value as the next word.
  const dbPass = `${chars(rng, LOWER, 5)}${chars(rng, DIGITS, 3)}`;
  const redisPass = token(rng, 20);
  const dbPw = `${chars(rng, LOWER, 6)}!${chars(rng, DIGITS, 2)}`;
  const sessionKey = token(rng, 48, '+/');
  const masterKey = token(rng, 32, '_-');
  const flagPassword = `${chars(rng, LOWER, 7)}${chars(rng, DIGITS, 2)}`;
  const flagApiKey = token(rng, 40);

  return [
    { kind: 'aws_access_key', secret: awsKey, line: `assuming role with access key ${awsKey}`, url: `https://s3.example.com/b/o?X-Amz-Credential=${awsKey}%2F20240115` },
    { kind: 'aws_secret_key', secret: awsSecret, line: `aws_secret_access_key = ${awsSecret}`, url: `https://cfg.example.com/env?aws_secret_access_key=${awsSecret}` },
    { kind: 'gcp_api_key', secret: gcp, line: `geocoding with key=${gcp} failed`, url: `https://maps.googleapis.com/maps/api/geocode/json?key=${gcp}` },
    { kind: 'github_token', secret: ghp, line: `pushing with ${ghp} to origin`, url: `https://x-access-token:${ghp}@github.com/org/repo.git` },
    { kind: 'github_token', secret: pat, line: `GH_PAT=${pat}` },
    { kind: 'slack_token', secret: xoxb, line: `slack client init token ${xoxb}` },
    { kind: 'slack_token', secret: xapp, line: `socket mode app token ${xapp}` },
    { kind: 'slack_webhook', secret: webhook, line: `POST https://hooks.slack.com/services/${webhook} 200`, url: `https://hooks.slack.com/services/${webhook}` },
    { kind: 'stripe_key', secret: stripe, line: `stripe.api_key set to ${stripe}` },
    { kind: 'api_key', secret: vendor, line: `forwarding upstream=checkout headers=X-Upstream-Token ${vendor}` },
    { kind: 'api_key', secret: razorpay, line: `payment gateway client init ${razorpay}` },
    { kind: 'api_key', secret: twoPart, line: `calling partner with ${twoPart}` },
    { kind: 'openai_key', secret: openai, line: `OPENAI_API_KEY=${openai}` },
    { kind: 'openai_key', secret: openaiLegacy, line: `using model key ${openaiLegacy}` },
    { kind: 'anthropic_key', secret: anthropic, line: `x-api-key: ${anthropic}` },
    { kind: 'google_oauth_token', secret: oauth, line: `refreshed access token ${oauth}`, url: `https://www.googleapis.com/drive/v3/files?access_token=${oauth}` },
    { kind: 'npm_token', secret: npm, line: `//registry.npmjs.org/:_authToken=${npm}` },
    { kind: 'jwt', secret: jwt, line: `Authorization: Bearer ${jwt}`, url: `https://app.example.com/callback#id_token=${jwt}` },
    { kind: 'private_key', secret: pem, line: pem, endOfLine: true, probes: pemBody },
    { kind: 'api_key', secret: apiKey, line: `request api_key=${apiKey} rejected`, url: `https://api.example.com/v1/items?page=2&api_key=${apiKey}` },
    { kind: 'secret', secret: clientSecret, line: `{"client_id": "vigil", "client_secret": "${clientSecret}"}` },
    { kind: 'password', secret: yamlPassword, line: `password: ${yamlPassword}`, endOfLine: true },
    { kind: 'password', secret: urlPassword, line: `connecting to postgres://app:${urlPassword}@db.shop.svc:5432/orders`, url: `redis://:${urlPassword}@cache.shop.svc:6379/0` },
    { kind: 'password', secret: connPassword, line: `Server=tcp:db.example.com,1433;User ID=app;Password=${connPassword};Encrypt=true` },
    { kind: 'authorization', secret: bearer, line: `Authorization: Bearer ${bearer}` },
    { kind: 'authorization', secret: basic, line: `proxy-authorization: Basic ${basic}` },
    { kind: 'cookie', secret: cookie, line: `Cookie: session=${cookie}; theme=dark`, endOfLine: true },
    { kind: 'cookie', secret: setCookie, line: `Set-Cookie: sid=${setCookie}; Path=/; HttpOnly`, endOfLine: true },
    { kind: 'email', secret: email, line: `password reset sent to ${email}`, url: `https://shop.example.com/account?email=${email}` },
    { kind: 'phone', secret: phoneE164, line: `sms to ${phoneE164} queued`, url: `https://sms.example.com/send?to=${phoneE164}` },
    { kind: 'phone', secret: phoneUs, line: `callback number ${phoneUs} registered` },
    { kind: 'phone', secret: phoneUk, line: `support line ${phoneUk}; open 9-5` },
    { kind: 'card', secret: visa, line: `charge declined for card ${visa} amount=12.50` },
    { kind: 'card', secret: amex, line: `card=${amex} status=declined` },
    { kind: 'card', secret: mastercard, line: `"pan":"${mastercard}"`, url: `https://pay.example.com/charge?pan=${mastercard}` },
    { kind: 'password', secret: dbPass, line: `DB_PASS=${dbPass}` },
    { kind: 'password', secret: redisPass, line: `export REDIS_PASS='${redisPass}'` },
    { kind: 'password', secret: dbPw, line: `connecting with dbPw=${dbPw} to orders` },
    { kind: 'secret', secret: sessionKey, line: `SESSION_KEY=${sessionKey}` },
    { kind: 'secret', secret: masterKey, line: `{"masterKey": "${masterKey}", "region": "eu-west-1"}` },
    { kind: 'password', secret: flagPassword, line: `exec /app/server --db-password ${flagPassword} --port 8080` },
    { kind: 'api_key', secret: flagApiKey, line: `args=["/app/worker","--api-key","${flagApiKey}"]` },
  ];
}
