import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signSlackRequest } from '../fakes/slack/index.js';
import { ALERT_CHANNEL, startWorld, type World } from '../support/world.js';
import { DEMO_SCENARIO } from './helpers.js';

describe('probe', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ scenarioDir: DEMO_SCENARIO });
  });
  afterAll(async () => world?.close());
  const url = () => `http://127.0.0.1:${world.vigil!.port}/slack/events`;
  const post = async (raw: string, type = 'application/x-www-form-urlencoded', ts = Math.floor(Date.now() / 1000)) => {
    const t0 = Date.now();
    const res = await fetch(url(), { method: 'POST', headers: { 'content-type': type, ...signSlackRequest(world.env['SLACK_SIGNING_SECRET']!, raw, ts) }, body: raw });
    return { status: res.status, body: await res.text(), ms: Date.now() - t0 };
  };
  const click = (p: Record<string, unknown>) => post(new URLSearchParams({ payload: JSON.stringify(p) }).toString());
  const base = { type: 'block_actions', team: { id: 'T0FAKE' }, api_app_id: 'A0VIGIL', token: 'x', trigger_id: 't', channel: { id: ALERT_CHANNEL }, container: { type: 'message', message_ts: '1.1', channel_id: ALERT_CHANNEL }, actions: [{ type: 'button', action_id: 'hyp_pin', block_id: 'b', value: 'nope', action_ts: '1.2' }] };
  it('probes', async () => {
    console.log('no user', await click(base));
    console.log('unknown action', await click({ ...base, user: { id: 'U0BOB' }, actions: [{ ...base.actions[0], action_id: 'what' }] }));
    console.log('bad json', await post('payload=%7Bnot-json'));
    console.log('future', await post(JSON.stringify({ type: 'event_callback', event: { type: 'app_mention' } }), 'application/json', Math.floor(Date.now() / 1000) + 600));
    const wh = (body: string) => fetch(`http://127.0.0.1:${world.vigil!.port}/webhooks/flags`, { method: 'POST', headers: { authorization: `Bearer ${world.env['VIGIL_FLAGS_WEBHOOK_TOKEN']}`, 'content-type': 'application/json' }, body }).then(async (r) => ({ status: r.status, body: await r.text() }));
    console.log('wh notjson', await wh('{oops'));
    console.log('wh surrogate', await wh('{"flag":"new-checkout","after":"on","actor":"al\\ud800ice","id":"x1"}'));
    console.log('wh nul', await wh('{"flag":"new-checkout","after":"on","actor":"al\\u0000ice","id":"x2"}'));
  }, 30000);
});
