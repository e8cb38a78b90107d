/**
 * The canary corpus: one secret or personal datum of every shape Vigil must scrub, each written into the
 * places it turns up in real text (a log line, an env var, JSON, YAML, a URL, prose, Slack markup), and
 * the look-alikes that must survive. Values come from a seeded PRNG and provider prefixes are split, so
 * no secret-shaped literal sits in the source. Shared by the redactor corpus test and the end-to-end
 * secrets test, which plants them through Vigil's real input channels.
 */
import { chars, pick, seededRandom, type Rng } from './planted.js';

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const HEX = '0123456789abcdef';

export interface Canary {
  /** Shape name, unique. */
  shape: string;
  /** What must not survive. */
  secret: string;
  /** Texts carrying it as real text does. */
  lines: string[];
  /** Parts of it that must not survive either (a PEM key's body lines). */
  probes?: string[];
}

function token(rng: Rng, n: number, extra = ''): string {
  return chars(rng, UPPER, 1) + chars(rng, LOWER, 1) + chars(rng, DIGITS, 1) + chars(rng, ALNUM + extra, n - 3);
}

function luhn(body: string): string {
  for (let check = 0; check <= 9; check++) {
    const d = body + check;
    let sum = 0;
    for (let i = 0; i < d.length; i++) {
      let v = Number(d[d.length - 1 - i]);
      if (i % 2 === 1) v = v * 2 > 9 ? v * 2 - 9 : v * 2;
      sum += v;
    }
    if (sum % 10 === 0) return d;
  }
  throw new Error('unreachable');
}

/** A valid IBAN for `country` with a random BBAN of `length - 4` characters. */
function iban(rng: Rng, country: string, bban: string): string {
  const digits = (bban + country + '00').replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let rest = 0;
  for (const c of digits) rest = (rest * 10 + Number(c)) % 97;
  const check = String(98 - rest).padStart(2, '0');
  void rng;
  return `${country}${check}${bban}`;
}

function grouped(s: string, size = 4): string {
  return s.replace(new RegExp(`(.{${size}})(?=.)`, 'g'), '$1 ');
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/**
 * A shape that identifies itself (a provider prefix, a checksum, a format): it must be caught wherever it
 * sits, under a key that names nothing, so every context is used.
 */
function anywhere(secret: string, opts: { url?: boolean; markup?: boolean } = {}): string[] {
  const urlSafe = opts.url ?? /^[A-Za-z0-9._~-]+$/.test(secret);
  return [
    `2026-12-02T01:02:03.456Z level=error pod=checkout-7d9f8b6c5-x2x9k msg="upstream call failed" detail=${secret} trace_id=4bf92f3577b34da6a3ce929d0e0e4736`,
    `I1202 01:02:03.456789       1 client.go:88] retrying with ${secret} after 503`,
    `NOTE=${secret}`,
    `export VALUE="${secret}"`,
    JSON.stringify({ level: 'warn', msg: `retrying with ${secret}`, attempt: 2 }),
    JSON.stringify({ value: secret, region: 'eu-west-1' }),
    `  value: ${secret}`,
    `  note: "${secret}"`,
    ...(urlSafe ? [`GET https://api.example.com/v1/items?page=2&x=${secret}&limit=50 HTTP/1.1`] : []),
    `hey, can you check why ${secret} stopped working? thanks`,
    `(${secret})`,
    ...(opts.markup === false ? [] : [`_${secret}_ was pasted here`, `see *${secret}*`, `~${secret}~`, `\`${secret}\``, `> ${secret}`]),
  ];
}

/** Every canary shape, fresh values per seed. */
export function canaries(seed = 20261202): Canary[] {
  const rng = seededRandom(seed);
  const awsSecret = token(rng, 40, '/+');
  const sa = Buffer.from(
    JSON.stringify(
      { type: 'service_account', project_id: `shop-${chars(rng, LOWER, 6)}`, private_key_id: chars(rng, HEX, 40), private_key: `-----BEGIN PRIVATE KEY-----\n${token(rng, 64, '+/')}\n-----END PRIVATE KEY-----\n`, client_email: 'ci@shop.iam.gserviceaccount.com' },
      null,
      2,
    ),
  ).toString('base64');
  const pemBody = Array.from({ length: 4 }, () => token(rng, 64, '+/'));
  const pem = ['-----BEGIN RSA PRIVATE KEY-----', ...pemBody, '-----END RSA PRIVATE KEY-----'].join('\n');
  const jwt = `${b64url({ alg: 'RS256', typ: 'JWT' })}.${b64url({ sub: chars(rng, DIGITS, 10), scope: 'cart' })}.${token(rng, 43, '_-')}`;
  const email = `${chars(rng, LOWER, 5)}.${chars(rng, LOWER, 7)}@${chars(rng, LOWER, 6)}.com`;
  const encodedLocal = chars(rng, LOWER, 6);
  const encodedDomain = `${chars(rng, LOWER, 7)}.io`;
  const ssn = `${pick(rng, ['123', '219', '536', '412'])}-${chars(rng, '123456789', 2)}-${chars(rng, '123456789', 4)}`;
  const de = iban(rng, 'DE', chars(rng, DIGITS, 18));
  const gb = iban(rng, 'GB', `WEST${chars(rng, DIGITS, 14)}`);
  const fr = iban(rng, 'FR', chars(rng, DIGITS, 23));
  const pw = () => `${chars(rng, LOWER, 6)}${chars(rng, DIGITS, 2)}!${chars(rng, UPPER, 1)}`;

  const selfIdentifying: Array<[string, string, { url?: boolean; markup?: boolean }?]> = [
    ['aws_access_key_id', 'AK' + 'IA' + chars(rng, UPPER + DIGITS, 16)],
    ['aws_session_key_id', 'AS' + 'IA' + chars(rng, UPPER + DIGITS, 16)],
    ['gcp_api_key', 'AI' + 'za' + token(rng, 35, '_-')],
    ['github_pat_classic', 'gh' + 'p_' + token(rng, 36)],
    ['github_oauth', 'gh' + 'o_' + token(rng, 36)],
    ['github_app_server', 'gh' + 's_' + token(rng, 36)],
    ['github_app_user', 'gh' + 'u_' + token(rng, 36)],
    ['github_refresh', 'gh' + 'r_' + token(rng, 76)],
    ['github_pat_fine_grained', 'github' + '_pat_' + token(rng, 22) + '_' + token(rng, 59)],
    ['gitlab_pat', 'gl' + 'pat-' + token(rng, 20, '_-')],
    ['slack_bot_token', 'xo' + 'xb-' + chars(rng, DIGITS, 12) + '-' + chars(rng, DIGITS, 13) + '-' + token(rng, 24)],
    ['slack_user_token', 'xo' + 'xp-' + chars(rng, DIGITS, 12) + '-' + chars(rng, DIGITS, 12) + '-' + chars(rng, DIGITS, 13) + '-' + chars(rng, HEX, 32)],
    ['slack_app_token', 'xa' + 'pp-1-A' + chars(rng, UPPER + DIGITS, 10) + '-' + chars(rng, DIGITS, 13) + '-' + chars(rng, HEX, 64)],
    ['slack_client_token', 'xo' + 'xc-' + chars(rng, DIGITS, 10) + '-' + chars(rng, DIGITS, 13) + '-' + chars(rng, DIGITS, 13) + '-' + chars(rng, HEX, 64)],
    ['slack_d_cookie', 'xo' + 'xd-' + token(rng, 40) + '%2F' + token(rng, 30) + '%2B' + token(rng, 20) + '%3D%3D', { url: true }],
    ['stripe_secret_live', 'sk' + '_live_' + token(rng, 24)],
    ['stripe_secret_test', 'sk' + '_test_' + token(rng, 24)],
    ['stripe_restricted', 'rk' + '_live_' + token(rng, 24)],
    ['stripe_webhook_secret', 'wh' + 'sec_' + token(rng, 32)],
    ['vendor_live_token', 'sf' + '_live_' + chars(rng, HEX, 31) + '7'],
    ['razorpay_key', 'rzp' + '_live_' + token(rng, 14)],
    ['openai_project_key', 'sk-' + 'proj-' + token(rng, 48, '_-')],
    ['openai_legacy_key', 'sk-' + token(rng, 48)],
    ['anthropic_key', 'sk-' + 'ant-api03-' + token(rng, 93, '_-')],
    ['google_oauth_access', 'ya' + '29.' + token(rng, 60, '_-')],
    ['npm_token', 'np' + 'm_' + token(rng, 36)],
    ['sendgrid_key', 'S' + 'G.' + token(rng, 22, '_-') + '.' + token(rng, 43, '_-')],
    ['huggingface_token', 'h' + 'f_' + token(rng, 34)],
    ['jwt', jwt],
    ['vault_service_token', 'hv' + 's.' + token(rng, 91, '_-')],
    ['vault_batch_token', 'hv' + 'b.' + token(rng, 120, '_-')],
    ['gcp_service_account_base64', sa, { url: false }],
    ['email', email],
    ['email_urlencoded', `${encodedLocal}%40${encodedDomain}`, { url: true }],
    ['phone_e164_us', `+1${pick(rng, ['415', '212', '646'])}${chars(rng, '23456789', 1)}${chars(rng, DIGITS, 6)}`, { url: false }],
    ['phone_us_national', `(${pick(rng, ['415', '212'])}) ${chars(rng, '23456789', 1)}${chars(rng, DIGITS, 2)}-${chars(rng, DIGITS, 4)}`],
    ['phone_uk', `+44 20 ${chars(rng, '23456789', 1)}${chars(rng, DIGITS, 3)} ${chars(rng, DIGITS, 4)}`],
    ['phone_de', `+49 30 ${chars(rng, '23456789', 1)}${chars(rng, DIGITS, 7)}`],
    ['phone_fr', `+33 1 ${chars(rng, '23456789', 1)}${chars(rng, DIGITS, 1)} ${chars(rng, DIGITS, 2)} ${chars(rng, DIGITS, 2)} ${chars(rng, DIGITS, 2)}`],
    ['card_visa', grouped(luhn('4' + chars(rng, DIGITS, 14)))],
    ['card_amex', (() => { const d = luhn('37' + chars(rng, DIGITS, 12)); return `${d.slice(0, 4)}-${d.slice(4, 10)}-${d.slice(10)}`; })()],
    ['card_mastercard', luhn('5' + pick(rng, ['1', '3', '5']) + chars(rng, DIGITS, 13))],
    ['iban_de_grouped', grouped(de)],
    ['iban_gb_compact', gb],
    ['iban_fr_grouped', grouped(fr)],
    ['us_ssn', ssn],
  ];

  const out: Canary[] = selfIdentifying.map(([shape, secret, opts]) => ({ shape, secret, lines: anywhere(secret, opts) }));

  // Shapes that a name or a position gives away: each in the forms it takes.
  const add = (shape: string, secret: string, lines: string[], probes?: string[]) => out.push({ shape, secret, lines, ...(probes ? { probes } : {}) });
  const urlPw = token(rng, 16, '!*');
  add('url_userinfo_password', urlPw, [`connecting to postgres://app:${urlPw}@db.shop.svc:5432/orders`, `REDIS_URL=redis://:${urlPw}@cache.shop.svc:6379/0`, JSON.stringify({ dsn: `mysql://root:${urlPw}@db:3306/shop` }), `  url: amqp://svc:${urlPw}@rabbit:5672/`]);
  const conn = `${token(rng, 8)} ${token(rng, 6)}`;
  add('connection_string_password', conn, [`Server=tcp:db.example.com,1433;User ID=app;Password=${conn};Encrypt=true`, JSON.stringify({ ConnectionStrings: { Default: `Host=db;Username=app;Password=${conn};Database=shop` } })]);
  const bearer = token(rng, 40, '._-');
  add('authorization_bearer', bearer, [`Authorization: Bearer ${bearer}`, `curl -H "Authorization: Bearer ${bearer}" https://api.example.com`, JSON.stringify({ headers: { authorization: `Bearer ${bearer}` } })]);
  const basic = Buffer.from(`deploy:${token(rng, 12)}`).toString('base64');
  add('authorization_basic', basic, [`proxy-authorization: Basic ${basic}`, JSON.stringify({ Authorization: `Basic ${basic}` })]);
  const cookie = token(rng, 32);
  add('cookie_header', cookie, [`Cookie: session=${cookie}; theme=dark`, `Set-Cookie: sid=${cookie}; Path=/; HttpOnly`]);
  const apiKey = token(rng, 32);
  add('labelled_api_key', apiKey, [`request api_key=${apiKey} rejected`, `https://api.example.com/v1/items?api_key=${apiKey}&page=2`, `X_API_KEY=${apiKey}`, JSON.stringify({ apiKey }), `apiKey: ${apiKey}`]);
  const clientSecret = token(rng, 40, '_-');
  add('client_secret', clientSecret, [JSON.stringify({ client_id: 'vigil', client_secret: clientSecret }), `OAUTH_CLIENT_SECRET=${clientSecret}`, `  clientSecret: "${clientSecret}"`]);
  const yamlPw = `hunter2-${chars(rng, LOWER, 6)}`;
  add('yaml_password', yamlPw, [`password: ${yamlPw}`, `  db_password: "${yamlPw}"`, JSON.stringify({ password: yamlPw })]);
  const dbPass = `${chars(rng, LOWER, 5)}${chars(rng, DIGITS, 3)}`;
  add('env_short_pass', dbPass, [`DB_PASS=${dbPass}`, `export MYSQL_PWD='${dbPass}'`, `connecting with dbPw=${dbPass} to orders`]);
  const sessionKey = token(rng, 48, '+/');
  add('session_key', sessionKey, [`SESSION_KEY=${sessionKey}`, JSON.stringify({ masterKey: sessionKey })]);
  const flagPw = pw();
  add('argv_password_flag', flagPw, [`exec /app/server --db-password ${flagPw} --port 8080`, `args=["/app/worker","--password","${flagPw}"]`]);
  const flagKey = token(rng, 40);
  add('argv_api_key_flag', flagKey, [`args=["/app/worker","--api-key","${flagKey}"]`, `/usr/bin/agent --api-key ${flagKey} --site eu`]);
  add('aws_secret_labelled', awsSecret, [`aws_secret_access_key = ${awsSecret}`, `AWS_SECRET_ACCESS_KEY="${awsSecret}"`, JSON.stringify({ SecretAccessKey: awsSecret })]);
  const awsNear = token(rng, 40, '/+');
  add('aws_secret_near_name', awsNear, [`AWS_SECRET_ACCESS_KEY is ${awsNear}`, `aws_secret: "${awsNear}"`, `--aws-secret-access-key ${awsNear}`, `the aws secret key ${awsNear} was rotated`]);
  const awsBare = token(rng, 40, '/+');
  add('aws_secret_bare_key_value', awsBare, [`S3_CREDS=${awsBare}`, `backup target s3://shop-backups creds=${awsBare}`]);
  const sig = `${token(rng, 20)}%2B${token(rng, 14)}%2F${token(rng, 6)}%3D`;
  add('azure_sas_signature', sig, [`https://shop.blob.core.windows.net/backups/db.tgz?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&st=2026-12-01T00:00:00Z&spr=https&sig=${sig}`, `BlobEndpoint=https://shop.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig=${sig}`]);
  const npmAuth = Buffer.from(`ci:${token(rng, 14)}`).toString('base64');
  add('npmrc_auth', npmAuth, [`_auth=${npmAuth}`, `//registry.example.com/:_auth=${npmAuth}`, `  _auth = "${npmAuth}"`]);
  const npmAuthToken = `${chars(rng, HEX, 8)}-${chars(rng, HEX, 4)}-4${chars(rng, HEX, 3)}-a${chars(rng, HEX, 3)}-${chars(rng, HEX, 12)}`;
  add('npmrc_auth_token', npmAuthToken, [`//npm.pkg.example.com/:_authToken=${npmAuthToken}`, `_authToken=${npmAuthToken}`]);
  const dockerAuth = Buffer.from(`robot$ci:${token(rng, 24)}`).toString('base64');
  add('docker_config_auth', dockerAuth, [JSON.stringify({ auths: { 'registry.example.com': { auth: dockerAuth } } }), `{"auths":{"ghcr.io":{"auth":"${dockerAuth}","email":"ci@example.com"}}}`]);
  const mysqlPw = pw();
  add('mysql_dash_p', mysqlPw, [`mysql -h db.shop.svc -u app -p${mysqlPw} orders`, `mysqldump -uroot -p'${mysqlPw}' --single-transaction shop > dump.sql`, `sh -c "mysql -uapp -p${mysqlPw} -e 'select 1'"`]);
  const curlPw = pw();
  add('curl_user_password', curlPw, [`curl -u admin:${curlPw} https://grafana.example.com/api/health`, `curl -sS --user deploy:${curlPw} -X POST https://ci.example.com/job/build`]);
  const skb = chars(rng, HEX, 128);
  add('rails_secret_key_base', skb, [`SECRET_KEY_BASE=${skb}`, `  secret_key_base: ${skb}`]);
  const redisAuth = token(rng, 24);
  add('redis_auth', redisAuth, [`REDIS_AUTH=${redisAuth}`, `  - name: REDIS_AUTH\n    value: ${redisAuth}`, JSON.stringify({ env: [{ name: 'REDIS_AUTH', value: redisAuth }] })]);
  const redisPassword = pw();
  add('redis_password', redisPassword, [`REDIS_PASSWORD=${redisPassword}`, `redis-cli -h cache.shop.svc -p 6379 -a ${redisPassword} ping`, `redis-cli --pass ${redisPassword} info`, `requirepass ${redisPassword}`]);
  const prosePw = `${chars(rng, LOWER, 6)}${chars(rng, DIGITS, 1)}`;
  add('prose_password', prosePw, [`the admin password is ${prosePw}`, `fyi the db password was set to ${prosePw}.`, `Password for grafana is "${prosePw}"`]);
  const pwColon = pw();
  add('pw_colon', pwColon, [`pw: ${pwColon}`, `user: admin pw: ${pwColon}`]);
  const passwd = pw();
  add('passwd_equals', passwd, [`passwd=${passwd}`, `PASSWD=${passwd} ./run.sh`]);
  add('pem_private_key', pem, [pem, JSON.stringify({ private_key: pem }), `2026-12-02T01:02:03Z loaded key:\n${pem}\nstarting`], pemBody);
  const webhook = `T${chars(rng, UPPER + DIGITS, 8)}/B${chars(rng, UPPER + DIGITS, 10)}/${token(rng, 24)}`;
  add('slack_webhook', webhook, [`POST https://hooks.slack.com/services/${webhook} 200`, JSON.stringify({ url: `https://hooks.slack.com/services/${webhook}` })]);
  return out;
}

/** Look-alikes a redactor must leave exactly as they are: evidence, not secrets. */
export const BENIGN: readonly string[] = [
  'checkout-7d9f8b6c5-x2x9k',
  'payments-api-5f6d7c8b9-abcde',
  'kafka-2',
  '9fceb02d0ae598e95dc970b74767f19372d61af8',
  'commit 3f9c2ab1 deployed',
  'image=ghcr.io/acme/api@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  'checksum/config: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  'trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7',
  'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  '2026-12-02T01:02:03.456Z',
  '2026-12-02T01:02:03+01:00',
  '2026-12-02 01:02:03,456',
  'uid=550e8400-e29b-41d4-a716-446655440000',
  'etag=W/"5f3b2a1c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a"',
  'resourceVersion=48291734',
  'v2.3.0-rc.1+build.20240115',
  'order 123-45-6789 shipped',
  'ticket #219-45-6789',
  'docker run -u 1000:1000 busybox',
  'kill -s TERM 1; sig=SIGTERM received',
  'sig=verified',
  'mysql -h db -u app -p orders',
  'mysql -h db -P 3306 -u app',
  'curl -sS https://checkout.shop.svc:8080/healthz',
  'password is incorrect for user "app"',
  'password authentication failed for user "app"',
  'the password was reset by bob',
  'Password is required',
  'the token is expired',
  'token was rejected: signature mismatch',
  'secret is stored in vault',
  'AWS_SECRET_ACCESS_KEY is not set',
  'AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}',
  'password: ${DB_PASSWORD}',
  '--password-file /run/secrets/db',
  'REDIS_AUTH_ENABLED=true',
  'redis auth enabled',
  'jwtAuth: enabled',
  'auth: true',
  'hvs prefix is used by vault',
  'xoxo from the team',
  'DE89370400440532013001',
  'GB82 WEST 1234',
  'sum(rate(http_requests_total{code=~"5.."}[5m])) by (pod) > 0.05',
  'tz offset +01:00, build 1.0.0+20130313144700',
  'latency p99=1.25s over 5m window',
  'secretName: db-credentials',
  'secret=shop/db-credentials',
  // base64 JSON that is not a credentials file
  Buffer.from(JSON.stringify({ kind: 'Deployment', metadata: { name: 'checkout', namespace: 'shop' }, spec: { replicas: 3 } })).toString('base64'),
  'phone home failed: dial tcp 10.0.3.17:443: i/o timeout',
  '+1 replica added',
  'node_exporter_build_info{version="1.8.2"} 1',
  '__init__ failed',
  'feature_test_suiteForCheckoutFlow',
];
