import { WebClient } from '@slack/web-api';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPostmortemCommand } from '../../src/postmortem/command.js';
import { PostmortemService } from '../../src/postmortem/service.js';
import { createRedactor } from '../../src/redact/index.js';
import { SlackChat } from '../../src/slack/chat.js';
import type { Db } from '../../src/store/db.js';
import { repoScenario } from '../fakes/github/builders.js';
import { startFakeGitHub, type FakeGitHub } from '../fakes/github/server.js';
import { validateBlocks } from '../fakes/slack/blockkit.js';
import { ALERT_CHANNEL } from '../support/world.js';
import { runDemoIncident, type PostmortemWorld } from './fixture.js';

const GH_TOKEN = 'ghp-fake-issues-writer';
let pw: PostmortemWorld;
let db: Db;
let github: FakeGitHub;
let service: PostmortemService;

beforeAll(async () => {
  pw = await runDemoIncident();
  db = pw.world.vigil!.db.prisma;
  github = await startFakeGitHub({ repos: { 'acme/incidents': repoScenario().repo }, token: GH_TOKEN });
  const log = pino({ level: 'silent' });
  const chat = new SlackChat(new WebClient(pw.world.slack.botToken, { slackApiUrl: pw.world.slack.apiUrl, retryConfig: { retries: 0 } }), log);
  service = new PostmortemService({ db, chat, github: { token: GH_TOKEN, baseUrl: github.url, repo: 'acme/incidents', labels: ['postmortem', 'sev2'] }, redactor: createRedactor(), log });
}, 60_000);
afterAll(async () => {
  await github?.close();
  await pw?.world.close();
});

const threadPosts = () => pw.world.slack.messages(ALERT_CHANNEL).filter((m) => (m as { thread_ts?: string }).thread_ts === pw.threadTs);

describe('PostmortemService.postDraft', () => {
  it('posts the draft in the incident thread and opens a GitHub issue with the Markdown body', async () => {
    const r = await service.postDraft(pw.incidentId, 'U0BOB');
    expect(r.issueUrl).toBe('https://github.com/acme/incidents/issues/1');
    expect(r.text).toContain('posted in the incident thread and opened https://github.com/acme/incidents/issues/1');
    expect(r.text).toContain('kubectl scale');

    const [issue] = github.issues;
    expect(issue).toMatchObject({ repo: 'acme/incidents', number: 1, title: 'Postmortem: [FIRING:1] KubeDeploymentReplicasMismatch (checkout shop critical)', labels: ['postmortem', 'sev2'] });
    expect(issue!.body).toContain('## Root cause');
    expect(issue!.body).toContain('## Ruled out and why');
    expect(issue!.body).toContain('Find out who ran `kubectl scale`');
    expect(github.requests.find((q) => q.method === 'POST')).toMatchObject({ path: '/repos/acme/incidents/issues', status: 201, authorized: true });

    const post = threadPosts().find((m) => m.ts === r.postTs)!;
    expect(post).toBeDefined();
    expect(validateBlocks(post.blocks)).toEqual([]);
    expect(JSON.stringify(post.blocks)).toContain('https://github.com/acme/incidents/issues/1');
    const audit = await db.auditEvent.findFirst({ where: { incidentId: pw.incidentId, kind: 'postmortem.posted' } });
    expect(audit?.actor).toBe('U0BOB');

    for (const secret of pw.world.scenario.plantedSecrets) {
      expect(issue!.body).not.toContain(secret);
      expect(JSON.stringify(post)).not.toContain(secret);
      expect(r.text).not.toContain(secret);
    }
  });

  it('redacts again on the way out: a secret that reached a stored row does not reach Slack or GitHub', async () => {
    // Each planted secret as a responder might paste it: as a setting, and bare in prose when the redactor
    // recognises it bare (a vendor token without a known prefix is only recognisable next to its key).
    const redactor = createRedactor();
    const planted = pw.world.scenario.plantedSecrets;
    const bare = planted.filter((s) => !redactor.redactText(`see ${s} here`).includes(s));
    expect(bare.length).toBeGreaterThanOrEqual(3);
    const raw = [...planted.map((s) => `DB_PASSWORD=${s}`), ...bare.map((s) => `also ${s}`)].join(' · ');
    const row = await db.steeringMessage.create({ data: { incidentId: pw.incidentId, channelId: ALERT_CHANNEL, messageTs: '1.000001', userId: 'U0BOB', userName: 'Bob Responder', text: raw } });
    try {
      const r = await service.postDraft(pw.incidentId, 'U0BOB');
      expect(r.postmortem.timeline.some((e) => e.sources.some((s) => s.id === row.id))).toBe(true);
      const issue = github.issues.at(-1)!;
      const post = threadPosts().find((m) => m.ts === r.postTs)!;
      for (const secret of planted) {
        expect(issue.body).not.toContain(secret);
        expect(JSON.stringify(post)).not.toContain(secret);
      }
    } finally {
      await db.steeringMessage.delete({ where: { id: row.id } });
    }
  });

  it('still posts in the thread when GitHub refuses, and says why', async () => {
    github.failNext(/\/issues$/, 403, 'Resource not accessible by integration');
    const r = await service.postDraft(pw.incidentId, 'U0BOB');
    expect(r.issueUrl).toBeUndefined();
    expect(r.issueError).toContain('Resource not accessible by integration');
    expect(r.text).toContain('could not be opened');
    expect(threadPosts().some((m) => m.ts === r.postTs)).toBe(true);
  });
});

describe('runPostmortemCommand', () => {
  it('works in the incident thread and with an incident id', async () => {
    const inThread = await runPostmortemCommand(service, db, { args: '', channelId: ALERT_CHANNEL, threadTs: pw.threadTs, userId: 'U0BOB' });
    expect(inThread.text).toContain('Postmortem draft for');
    const byId = await runPostmortemCommand(service, db, { args: pw.incidentId, channelId: 'C0OTHER', userId: 'U0BOB' });
    expect(byId.text).toContain('Postmortem draft for');
    expect(validateBlocks(byId.blocks)).toEqual([]);
    // Without thread or id: the channel's only open incident.
    const alone = await runPostmortemCommand(service, db, { args: '', channelId: ALERT_CHANNEL, userId: 'U0BOB' });
    expect(alone.text).toContain('Postmortem draft for');
  });

  it('escapes the record text in the reply, so Slack markup in it stays inert', async () => {
    const incident = await db.incident.findUniqueOrThrow({ where: { id: pw.incidentId }, select: { title: true } });
    await db.incident.update({ where: { id: pw.incidentId }, data: { title: 'checkout <!channel> <https://evil.example.com/x|click here> & co' } });
    try {
      const reply = await runPostmortemCommand(service, db, { args: pw.incidentId, channelId: 'C0OTHER', userId: 'U0BOB' });
      expect(reply.text).toContain('checkout &lt;!channel&gt; &lt;https://evil.example.com/x|click here&gt; &amp; co');
      expect(reply.text).not.toMatch(/<[!@#h]/);
    } finally {
      await db.incident.update({ where: { id: pw.incidentId }, data: { title: incident.title } });
    }
  });

  it('answers clearly when no incident is found', async () => {
    const unknownId = await runPostmortemCommand(service, db, { args: 'cmx00000000000000000000000', channelId: ALERT_CHANNEL, userId: 'U0BOB' });
    expect(unknownId.text).toContain('No incident with id');
    const notAnId = await runPostmortemCommand(service, db, { args: 'checkout!', channelId: ALERT_CHANNEL, userId: 'U0BOB' });
    expect(notAnId.text).toContain('is not an incident id');
    const otherThread = await runPostmortemCommand(service, db, { args: '', channelId: ALERT_CHANNEL, threadTs: '1.999999', userId: 'U0BOB' });
    expect(otherThread.text).toContain('not an incident');
    const emptyChannel = await runPostmortemCommand(service, db, { args: '', channelId: 'C0QUIET', userId: 'U0BOB' });
    expect(emptyChannel.text).toContain('No open incident in this channel');
    for (const m of [unknownId, notAnId, otherThread, emptyChannel]) expect(validateBlocks(m.blocks)).toEqual([]);
  });
});
