// The real app plays the demo incident (alert → triage → steering → approval card → approve → execute →
// verify): every row it wrote matches its seal in the audit chain. Then the approver is changed by SQL,
// as in issue 12: `vigil audit verify` names the row, the field, the new and the recorded approver, and
// the postmortem draft (thread post and Markdown) opens with the warning that its record fails
// verification, quoting what the chain recorded.
import { WebClient } from '@slack/web-api';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAuditCommand, type CliIo } from '../../src/audit/cli.js';
import { verifyAuditTrail } from '../../src/audit/verify.js';
import { renderPostmortemMarkdown } from '../../src/postmortem/draft.js';
import { PostmortemService } from '../../src/postmortem/service.js';
import { createRedactor } from '../../src/redact/index.js';
import { SlackChat } from '../../src/slack/chat.js';
import type { Db } from '../../src/store/db.js';
import { validateBlocks } from '../fakes/slack/blockkit.js';
import { APPROVER, runDemoIncident, type PostmortemWorld } from '../postmortem/fixture.js';
import { ALERT_CHANNEL } from '../support/world.js';

const MALLORY = 'U0MALLORY';

let pw: PostmortemWorld;
let db: Db;
let service: PostmortemService;

beforeAll(async () => {
  pw = await runDemoIncident();
  db = pw.world.vigil!.db.prisma;
  const log = pino({ level: 'silent' });
  const chat = new SlackChat(new WebClient(pw.world.slack.botToken, { slackApiUrl: pw.world.slack.apiUrl, retryConfig: { retries: 0 } }), log);
  service = new PostmortemService({ db, chat, redactor: createRedactor(), log });
}, 60_000);
afterAll(async () => {
  await pw?.world.close();
});

function captureIo(): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l) };
}

describe('the demo incident’s record against the audit chain', () => {
  it('is intact after a full run: every write path Vigil took sealed its rows', async () => {
    const result = await verifyAuditTrail(db);
    expect(result.problems).toEqual([]);
    expect(result.records.problems).toEqual([]);
    expect(result.records).toMatchObject({ ok: true, baseline: true, unsealed: 0 });
    const rows = (await db.approvalRequest.count()) + (await db.approvalDecision.count()) + (await db.steeringMessage.count()) + (await db.hypothesis.count());
    expect(result.records.checked).toBe(rows);
    expect(await db.approvalDecision.count()).toBeGreaterThan(0);
    const pm = await service.draft(pw.incidentId);
    expect(pm.integrity).toBeUndefined();
    expect(renderPostmortemMarkdown(pm)).not.toContain('fails verification');
  });

  it('names an approver changed by SQL, and the postmortem says its record fails verification', async () => {
    const decision = await db.approvalDecision.findFirstOrThrow({ where: { userId: APPROVER } });
    await db.$executeRawUnsafe(`UPDATE "ApprovalDecision" SET "userId" = '${MALLORY}', "userName" = 'Mallory' WHERE "id" = '${decision.id}'`);

    const io = captureIo();
    expect(await runAuditCommand(['audit', 'verify'], { DATABASE_URL: pw.world.vigil!.db.url }, io)).toBe(1);
    const err = io.stderr.join('\n');
    expect(err).toContain(`ApprovalDecision ${decision.id} (approval ${decision.requestId}): approver (userId) is "${MALLORY}" but the chain recorded "${APPROVER}"`);

    const r = await service.postDraft(pw.incidentId, 'U0BOB');
    // The draft still shows the rows as stored, but says first that they fail verification, with the truth.
    expect(r.postmortem.actions[0]!.decisions[0]!.userId).toBe(MALLORY);
    expect(r.postmortem.integrity?.problems).toEqual([expect.stringContaining(`approver (userId) is "${MALLORY}" but the chain recorded "${APPROVER}"`)]);
    const md = renderPostmortemMarkdown(r.postmortem);
    const warning = md.indexOf('This record fails verification against Vigil');
    expect(warning).toBeGreaterThan(0);
    expect(warning).toBeLessThan(md.indexOf('## Summary'));
    expect(md).toContain(`but the chain recorded "${APPROVER}"`);

    const post = pw.world.slack.messages(ALERT_CHANNEL).find((m) => m.ts === r.postTs)!;
    expect(validateBlocks(post.blocks)).toEqual([]);
    const blocks = JSON.stringify(post.blocks);
    expect(blocks).toContain('This record fails verification against the audit chain');
    expect(blocks).toContain(`the chain recorded \\"${APPROVER}\\"`);
    // The warning is the first section after the header.
    expect(JSON.stringify(post.blocks![1])).toContain('fails verification');
  });
});
