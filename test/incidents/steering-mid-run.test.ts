/**
 * A reply posted while the model step runs is not lost: it reaches the model's next request, or, when
 * it came during the model's last request, the investigation runs once more with it. The real
 * Anthropic SDK talks to the scripted fake Messages API; the reply goes through the fake Slack.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicProvider } from '../../src/agent/providers/index.js';
import type { ModelProvider, ModelRequest } from '../../src/agent/types.js';
import { readContext } from '../../src/incidents/context.js';
import { describeCheckout, submitFromDescribe } from '../agent/loop/harness.js';
import { DEMO_SCENARIO, eventually } from '../e2e/helpers.js';
import { startFakeAnthropic, type AnthropicReply, type FakeAnthropic } from '../fakes/models/anthropic.js';
import type { RecordedRequest } from '../fakes/models/script.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';

let world: World | undefined;
let model: FakeAnthropic | undefined;
afterEach(async () => {
  await world?.close();
  await model?.close();
  world = model = undefined;
});

const REPLY = 'check the payments database too';

/**
 * The real provider, with a hook after the n-th model answer and before the loop sees it: the
 * responder's reply is posted and stored while the model step is still running.
 */
function replyDuringAnswer(inner: ModelProvider, answer: number, reply: () => Promise<void>): ModelProvider {
  let answers = 0;
  return {
    name: inner.name,
    model: inner.model,
    cost: (u) => inner.cost(u),
    async complete(req: ModelRequest) {
      const res = await inner.complete(req);
      answers += 1;
      if (answers === answer) await reply();
      return res;
    },
  };
}

async function start(script: unknown[], answer: number) {
  model = await startFakeAnthropic({ script: script as never, name: 'steering mid-run', apiKey: 'sk-ant-test-fake' });
  const anthropic = new AnthropicProvider({ apiKey: 'sk-ant-test-fake', baseURL: model.url, maxRetries: 0, timeoutMs: 5000 });
  let threadTs = '';
  const provider = replyDuringAnswer(anthropic, answer, async () => {
    const w = world!;
    await w.slack.postAsUser(ALERT_CHANNEL, { user: 'U0BOB', text: REPLY, thread_ts: threadTs });
    await w.vigil!.desk.idle();
    await eventually(() => w.vigil!.db.prisma.steeringMessage.findFirst({ where: { text: REPLY } }), 'the reply to be stored');
  });
  world = await startWorld({ scenarioDir: DEMO_SCENARIO, modelProvider: provider });
  const { ts } = await world.postAlert();
  threadTs = ts;
  await world.settle();
  return world;
}

const sent = (r: RecordedRequest) => r.raw.includes(REPLY);

describe('steering that arrives while the model step runs', () => {
  it('reaches the model’s next request in the same run', async () => {
    const w = await start([describeCheckout(), submitFromDescribe], 1);
    expect(model!.requests).toHaveLength(2);
    expect(sent(model!.requests[0]!)).toBe(false);
    expect(sent(model!.requests[1]!)).toBe(true);
    const db = w.vigil!.db.prisma;
    const inv = await db.investigation.findFirstOrThrow();
    expect(inv.state).toBe('waiting');
    const reply = await db.steeringMessage.findFirstOrThrow({ where: { text: REPLY } });
    expect(readContext(inv.context).steeringSeen).toEqual([reply.id]);
    expect(readContext(inv.context).model).toMatchObject({ status: 'completed', steps: 2 });
  });

  it('arriving during the model’s last request, it triggers exactly one re-run that reads it', async () => {
    const w = await start([describeCheckout(), submitFromDescribe, describeCheckout(), submitFromDescribe], 2);
    expect(model!.requests).toHaveLength(4);
    expect(model!.requests.map(sent)).toEqual([false, false, true, true]);
    const db = w.vigil!.db.prisma;
    const inv = await db.investigation.findFirstOrThrow();
    expect(inv).toMatchObject({ state: 'waiting', step: 'reported' });
    const reply = await db.steeringMessage.findFirstOrThrow({ where: { text: REPLY } });
    expect(readContext(inv.context).steeringSeen).toEqual([reply.id]);
    expect((await db.auditEvent.findMany({ where: { kind: 'agent.completed' } })).length).toBe(2);
  });
});
