/**
 * `npm run cards`: proof by looking. Plays the demo incident and each flow in harness/steps/*.yaml through the
 * real app against the fake Slack (test/support/world.ts, as `npm run demo` does), takes every payload Vigil
 * sent (chat.postMessage / update / postEphemeral, views.*, response_url posts), renders it to HTML close to
 * Slack's look (harness/cards/html.ts) and screenshots one of each distinct card type with headless Chromium at
 * desktop (1280) and phone (390) width. Writes docs/cards/: one page per flow (the whole thread, newest state of
 * every message), one page and two PNGs per card type, and README.md. Not part of `npm test` (Chromium is slow).
 * Needs Debian's `chromium` (and `fonts-noto-color-emoji` for the emoji on the cards).
 *
 *   npm run cards [-- --no-screenshots] [--out docs/cards]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ALERT_CHANNEL, DEMO_USERS, startWorld } from '../test/support/world.js';
import { validateBlocks, validateView } from '../test/fakes/slack/blockkit.js';
import { loadStepsFile, playDeploymentController, playSteps, Recorder } from '../harness/steps.js';
import { pageHtml, type CardMessage } from '../harness/cards/html.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { 'no-screenshots': { type: 'boolean', default: false }, out: { type: 'string', default: join(root, 'docs', 'cards') } } });
const out = resolve(values.out!);
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--hide-scrollbars', '--force-device-scale-factor=1'];
const WIDTHS = { desktop: 1280, phone: 390 } as const;

type Obj = Record<string, unknown>;
const names = new Map<string, string>([...DEMO_USERS.map((u) => [u.id, u.real_name] as [string, string]), ['S0SREONCALL', 'sre-oncall']]);
const nameOf = (id: string) => names.get(id);

/** One payload Vigil sent, with the card type it belongs to. */
interface Payload {
  flow: string;
  kind: string;
  method: string;
  message: CardMessage;
  issues: number;
}

const parse = (v: unknown): unknown => (typeof v === 'string' ? (JSON.parse(v) as unknown) : v);
const hasButtons = (blocks: unknown[] | undefined): boolean => (blocks ?? []).some((b) => (b as Obj).type === 'actions');
const clock = (ts: string | undefined): string | undefined => {
  const s = Number(ts);
  return Number.isFinite(s) && s > 0 ? new Date(s * 1000).toISOString().slice(11, 16) : undefined;
};

/**
 * The card type from the post's tag: `repeat:3` → `repeat`, `approval:<id>:outcome` → `approval outcome`; an
 * approval card is `approval (open)` while it has buttons and `approval (decided)` once they are gone.
 */
function kindOf(purpose: string | undefined, method: string, blocks: unknown[] | undefined): string {
  const parts = (purpose ?? (method === 'chat.postEphemeral' ? 'ephemeral' : 'message')).split(':');
  const base = parts[0]!;
  if (parts.length >= 3) return `${base} ${parts.at(-1)}`;
  if (base === 'approval') return hasButtons(blocks) ? `${base} (open)` : `${base} (decided)`;
  return base;
}

async function play(flow: string, stepsFile?: string): Promise<{ payloads: Payload[]; thread: CardMessage[]; rejected: number }> {
  const world = await startWorld({
    scenarioDir: join(root, 'test', 'scenarios', 'demo-checkout-scaled-to-zero'),
    noise: true,
    policyFile: join(root, 'deploy', 'policy.example.yaml'),
    // Links on cards, as a team would configure them (src/slack/blocks/links.ts).
    env: { PROMETHEUS_PUBLIC_URL: 'https://prometheus.example.com', SLACK_WORKSPACE_URL: 'https://acme.slack.com', GITHUB_WEB_URL: 'https://github.com' },
  });
  try {
    const { slack } = world;
    const recorder = new Recorder(world);
    playDeploymentController(world);
    const { ts } = await world.postAlert();
    await world.settle();
    if (stepsFile) await playSteps(world, loadStepsFile(stepsFile), { threadTs: ts, recorder, print: () => undefined });
    await world.settle();

    const purposeByTs = new Map<string, string>();
    const payloads: Payload[] = [];
    for (const call of slack.calls) {
      if (!call.response?.body.ok) continue;
      const body = call.body as Obj;
      if (call.method === 'chat.postMessage' || call.method === 'chat.update' || call.method === 'chat.postEphemeral') {
        const blocks = parse(body.blocks) as unknown[] | undefined;
        const meta = parse(body.metadata) as { event_payload?: { purpose?: string } } | undefined;
        const answerTs = (call.response.body as { ts?: string }).ts ?? (body.ts as string | undefined);
        if (meta?.event_payload?.purpose && answerTs) purposeByTs.set(answerTs, meta.event_payload.purpose);
        const purpose = meta?.event_payload?.purpose ?? (typeof body.ts === 'string' ? purposeByTs.get(body.ts) : undefined);
        const kind = kindOf(purpose, call.method, blocks);
        const tag = call.method === 'chat.update' ? 'edited' : call.method === 'chat.postEphemeral' ? 'only visible to you' : undefined;
        payloads.push({
          flow, kind, method: call.method, issues: blocks ? validateBlocks(blocks).length : 0,
          message: { author: 'Vigil', app: true, time: clock(answerTs), text: body.text as string | undefined, blocks, ...(tag ? { tag } : {}), note: `${kind} · ${call.method}` },
        });
      } else if (call.method.startsWith('views.')) {
        const view = parse(body.view) as Obj | undefined;
        if (!view) continue;
        const blocks = view.blocks as unknown[] | undefined;
        const title = (view.title as Obj | undefined)?.text as string | undefined;
        const kind = view.type === 'home' ? 'home' : `modal ${String(view.callback_id ?? title ?? '')}`.trim();
        payloads.push({
          flow, kind, method: call.method, issues: validateView(view).length,
          message: { author: 'Vigil', blocks, note: `${kind} · ${call.method}`, view: { type: String(view.type), title, submit: (view.submit as Obj | undefined)?.text as string | undefined, close: (view.close as Obj | undefined)?.text as string | undefined } },
        });
      }
    }
    for (const r of slack.responses) {
      const blocks = r.body.blocks as unknown[] | undefined;
      payloads.push({
        flow, kind: 'command reply', method: 'response_url', issues: blocks ? validateBlocks(blocks).length : 0,
        message: { author: 'Vigil', app: true, text: r.body.text as string | undefined, blocks, tag: r.body.response_type === 'in_channel' ? undefined : 'only visible to you', note: 'command reply · response_url' } as CardMessage,
      });
    }
    // The thread as a person sees it at the end: the alert post, then the newest state of every reply.
    const thread = slack.threadOf(ALERT_CHANNEL, ts).map((m, i): CardMessage => {
      const msg = m as unknown as Obj;
      const isVigil = i > 0 && (msg.user === undefined || msg.bot_id !== undefined) && msg.username === undefined;
      const purpose = purposeByTs.get(String(msg.ts));
      return {
        author: i === 0 ? String(msg.username ?? 'Alertmanager') : isVigil ? 'Vigil' : String(nameOf(String(msg.user)) ?? msg.username ?? msg.user ?? 'someone'),
        app: i === 0 || isVigil,
        time: clock(String(msg.ts)),
        text: msg.text as string | undefined,
        blocks: msg.blocks as unknown[] | undefined,
        attachments: msg.attachments as unknown[] | undefined,
        ...(msg.edited ? { tag: 'edited' } : {}),
        ...(purpose ? { note: purpose.split(':')[0] } : i === 0 ? { note: 'alert post (#alerts)' } : {}),
      };
    });
    return { payloads, thread, rejected: slack.rejections.length };
  } finally {
    await world.close();
  }
}

/** Height of the rendered page at a width, read back from Chromium's DOM dump. */
function pageHeight(file: string, width: number): number {
  const probe = `${file}.probe.html`;
  const html = readFileSync(file, 'utf8').replace('</body>', `<script>addEventListener('load', () => document.body.setAttribute('data-h', String(Math.ceil(document.querySelector('.page').getBoundingClientRect().bottom) + 40)))</script></body>`);
  writeFileSync(probe, html);
  try {
    const dom = execFileSync('chromium', [...CHROMIUM_FLAGS, `--window-size=${width},200`, '--dump-dom', `file://${probe}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 60_000 });
    const h = Number(/data-h="(\d+)"/.exec(dom)?.[1]);
    return Number.isFinite(h) && h > 0 ? Math.min(h, 6000) : 1200;
  } finally {
    rmSync(probe, { force: true });
  }
}

function screenshot(file: string, png: string, width: number): void {
  const height = pageHeight(file, width);
  execFileSync('chromium', [...CHROMIUM_FLAGS, `--window-size=${width},${height}`, `--screenshot=${png}`, `file://${file}`], { stdio: 'ignore', timeout: 60_000 });
}

const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

async function main(): Promise<void> {
  const stepsDir = join(root, 'harness', 'steps');
  const flows: [string, string | undefined][] = [['demo', undefined], ...readdirSync(stepsDir).filter((f) => f.endsWith('.yaml')).sort().map((f): [string, string] => [basename(f, '.yaml'), join(stepsDir, f)])];
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });

  const all: Payload[] = [];
  const flowPages: { flow: string; file: string; posts: number; rejected: number }[] = [];
  for (const [flow, file] of flows) {
    console.log(`playing ${flow}…`);
    const r = await play(flow, file);
    all.push(...r.payloads);
    const page = `flow-${slug(flow)}.html`;
    writeFileSync(join(out, page), pageHtml(`Flow: ${flow}`, `${file ? `harness/steps/${basename(file)}` : 'npm run demo'} — the #alerts thread at the end (newest state of every message). Times in UTC here; Slack shows them in the reader's time zone.`, r.thread, nameOf));
    flowPages.push({ flow, file: page, posts: r.payloads.length, rejected: r.rejected });
  }

  // One card per distinct type: its newest payload in the first flow that sends it (the demo's first).
  const byKind = new Map<string, Payload>();
  for (const p of all) if (!byKind.has(p.kind) || byKind.get(p.kind)!.flow === p.flow) byKind.set(p.kind, p);
  const cards: { kind: string; file: string; flow: string; method: string }[] = [];
  for (const [kind, p] of [...byKind.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const file = `card-${slug(kind)}`;
    writeFileSync(join(out, `${file}.html`), pageHtml(`Card: ${kind}`, `as sent by ${p.method} in the "${p.flow}" flow`, [{ ...p.message, note: undefined }], nameOf));
    cards.push({ kind, file, flow: p.flow, method: p.method });
  }

  const shots = !values['no-screenshots'];
  if (shots) {
    for (const c of cards) {
      for (const [name, width] of Object.entries(WIDTHS)) {
        console.log(`screenshot ${c.file}-${name}.png`);
        screenshot(join(out, `${c.file}.html`), join(out, `${c.file}-${name}.png`), width);
      }
    }
  }

  const issues = all.reduce((n, p) => n + p.issues, 0);
  const rejected = flowPages.reduce((n, f) => n + f.rejected, 0);
  const readme = [
    '# The cards Vigil posts',
    '',
    `Generated by \`npm run cards\` (scripts/render-cards.ts): the demo incident and every flow in \`harness/steps/\` played through the real app against the fake Slack; every payload rendered to HTML close to Slack's look (harness/cards/html.ts) and screenshotted with headless Chromium at desktop (${WIDTHS.desktop} px) and phone (${WIDTHS.phone} px) width. Times show in UTC here; Slack renders \`<!date>\` in each reader's time zone. Needs Debian's \`chromium\` and \`fonts-noto-color-emoji\`; \`npm run cards -- --no-screenshots\` writes the HTML only.`,
    '',
    `${all.length} payloads checked against Block Kit's limits: ${issues} issue${issues === 1 ? '' : 's'}, ${rejected} refused by the fake Slack. (The fake refuses invalid payloads in every test too: test/fakes/slack/blockkit.ts.)`,
    '',
    '## Card types',
    '',
    '| card | flow | sent by | desktop | phone |',
    '|---|---|---|---|---|',
    ...cards.map((c) => `| [${c.kind}](${c.file}.html) | ${c.flow} | \`${c.method}\` | ${shots ? `[png](${c.file}-desktop.png)` : '—'} | ${shots ? `[png](${c.file}-phone.png)` : '—'} |`),
    '',
    '## Flows (the whole thread)',
    '',
    ...flowPages.map((f) => `- [${f.flow}](${f.file}) — ${f.posts} payloads`),
    '',
    ...(shots ? ['## Screenshots', '', ...cards.flatMap((c) => [`### ${c.kind}`, '', `![${c.kind}, desktop](${c.file}-desktop.png)`, '', `<img src="${c.file}-phone.png" width="260" alt="${c.kind}, phone">`, ''])] : []),
  ].join('\n');
  writeFileSync(join(out, 'README.md'), `${readme}\n`);
  console.log(`wrote ${relative(process.cwd(), out)}/: ${cards.length} card types, ${flowPages.length} flows, ${all.length} payloads (${issues} Block Kit issues, ${rejected} refused)`);
  if (issues > 0 || rejected > 0) process.exit(1);
}

main().catch((err: unknown) => {
  console.error(`render-cards failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
