import { describe, expect, it } from 'vitest';
import { toSlackError, validateBlocks, validateMessagePayload, validateView } from './blockkit.js';

const plain = (text: string) => ({ type: 'plain_text', text });
const mrkdwn = (text: string) => ({ type: 'mrkdwn', text });
const button = (action_id: string, extra: Record<string, unknown> = {}) => ({ type: 'button', action_id, text: plain('Go'), ...extra });
const pointers = (blocks: unknown, surface?: 'message' | 'modal' | 'home') => validateBlocks(blocks, surface).map((i) => i.pointer);

describe('validateBlocks', () => {
  it('accepts a realistic incident card', () => {
    const blocks = [
      { type: 'header', text: plain('🔥 checkout-api: 5xx above 5%') },
      { type: 'section', block_id: 'summary', text: mrkdwn('*Hypothesis:* bad deploy'), fields: [mrkdwn('*Service*\ncheckout'), mrkdwn('*Since*\n10:02')] },
      { type: 'context', elements: [mrkdwn('evidence: 3 sources'), { type: 'image', image_url: 'https://x.test/i.png', alt_text: 'icon' }] },
      { type: 'divider' },
      { type: 'actions', block_id: 'act', elements: [
        button('approve', { style: 'primary', value: 'plan-1', confirm: { title: plain('Roll back?'), text: mrkdwn('Really?'), confirm: plain('Yes'), deny: plain('No') } }),
        button('reject', { style: 'danger' }),
        { type: 'static_select', action_id: 'pick', placeholder: plain('Pick'), options: [{ text: plain('A'), value: 'a' }] },
        { type: 'overflow', action_id: 'more', options: [{ text: plain('Runbook'), value: 'rb', url: 'https://x.test' }] },
      ] },
      { type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'hi' }] }] },
      { type: 'markdown', text: '**bold**' },
    ];
    expect(validateBlocks(blocks)).toEqual([]);
  });

  it('counts blocks per surface: 50 in a message, 100 in a modal or home tab', () => {
    const many = (n: number) => Array.from({ length: n }, () => ({ type: 'divider' }));
    expect(pointers(many(51))).toEqual(['/blocks']);
    expect(validateBlocks(many(50))).toEqual([]);
    expect(validateBlocks(many(100), 'modal')).toEqual([]);
    expect(validateBlocks(many(101), 'home')[0]).toEqual({ pointer: '/blocks', message: 'no more than 100 items allowed' });
  });

  it('enforces section text, fields and header limits', () => {
    const issues = validateBlocks([
      { type: 'section', text: mrkdwn('x'.repeat(3001)) },
      { type: 'section', fields: Array.from({ length: 11 }, () => mrkdwn('f')) },
      { type: 'section', fields: [mrkdwn('y'.repeat(2001))] },
      { type: 'header', text: plain('h'.repeat(151)) },
      { type: 'header', text: mrkdwn('not plain') },
      { type: 'section' },
    ]);
    expect(issues).toEqual([
      { pointer: '/blocks/0/text/text', message: 'must be less than 3001 characters' },
      { pointer: '/blocks/1/fields', message: 'no more than 10 items allowed' },
      { pointer: '/blocks/2/fields/0/text', message: 'must be less than 2001 characters' },
      { pointer: '/blocks/3/text/text', message: 'must be less than 151 characters' },
      { pointer: '/blocks/4/text/type', message: 'must be plain_text' },
      { pointer: '/blocks/5', message: 'must provide either text or fields' },
    ]);
  });

  it('rejects bad text objects: empty text, unknown type, non-object', () => {
    expect(pointers([{ type: 'section', text: mrkdwn('') }])).toEqual(['/blocks/0/text/text']);
    expect(pointers([{ type: 'section', text: { type: 'markdown', text: 'x' } }])).toEqual(['/blocks/0/text/type']);
    expect(pointers([{ type: 'section', text: 'just a string' }])).toEqual(['/blocks/0/text']);
  });

  it('enforces context and actions element counts and allowed element types', () => {
    expect(pointers([{ type: 'context', elements: Array.from({ length: 11 }, () => mrkdwn('c')) }])).toEqual(['/blocks/0/elements']);
    expect(pointers([{ type: 'actions', elements: Array.from({ length: 26 }, (_, i) => button(`b${i}`)) }])).toEqual(['/blocks/0/elements']);
    expect(pointers([{ type: 'actions', elements: [{ type: 'plain_text_input', action_id: 'x' }] }])).toEqual(['/blocks/0/elements/0/type']);
    expect(pointers([{ type: 'context', elements: [button('b')] }])).toEqual(['/blocks/0/elements/0/type']);
  });

  it('enforces button limits: text 75, value 2000, action_id 255, url 3000', () => {
    const issues = validateBlocks([{ type: 'actions', elements: [
      { type: 'button', text: plain('t'.repeat(76)), action_id: 'a'.repeat(256), value: 'v'.repeat(2001), url: `https://x.test/${'u'.repeat(3000)}` },
    ] }]);
    expect(issues.map((i) => i.pointer)).toEqual([
      '/blocks/0/elements/0/action_id',
      '/blocks/0/elements/0/text/text',
      '/blocks/0/elements/0/value',
      '/blocks/0/elements/0/url',
    ]);
  });

  it('enforces confirm dialog limits', () => {
    const confirm = { title: plain('t'.repeat(101)), text: mrkdwn('x'.repeat(301)), confirm: plain('c'.repeat(31)), deny: plain('d'.repeat(31)) };
    expect(pointers([{ type: 'actions', elements: [button('go', { confirm })] }])).toEqual([
      '/blocks/0/elements/0/confirm/title/text',
      '/blocks/0/elements/0/confirm/text/text',
      '/blocks/0/elements/0/confirm/confirm/text',
      '/blocks/0/elements/0/confirm/deny/text',
    ]);
  });

  it('requires unique block_id per message and unique action_id per block, block_id ≤ 255', () => {
    const issues = validateBlocks([
      { type: 'divider', block_id: 'same' },
      { type: 'actions', block_id: 'same', elements: [button('dup'), button('dup')] },
      { type: 'actions', elements: [button('dup')] },
      { type: 'divider', block_id: 'b'.repeat(256) },
    ]);
    expect(issues).toEqual([
      { pointer: '/blocks/1/block_id', message: 'duplicate block_id: same' },
      { pointer: '/blocks/1/elements/1/action_id', message: 'duplicate action_id: dup' },
      { pointer: '/blocks/3/block_id', message: 'must be less than 256 characters' },
    ]);
  });

  it('rejects unknown block types and checks select, datepicker and input elements', () => {
    expect(validateBlocks([{ type: 'carousel' }])).toEqual([{ pointer: '/blocks/0/type', message: 'unsupported block type: carousel' }]);
    expect(pointers([{ type: 'section', text: mrkdwn('x'), accessory: { type: 'static_select', action_id: 's', options: [] } }])).toEqual(['/blocks/0/accessory/options']);
    expect(pointers([{ type: 'section', text: mrkdwn('x'), accessory: { type: 'datepicker', action_id: 'd', initial_date: '10/02/2025' } }])).toEqual(['/blocks/0/accessory/initial_date']);
    expect(pointers([{ type: 'input', label: plain('Why'), element: { type: 'plain_text_input', action_id: 'why', max_length: 5000 } }], 'modal')).toEqual(['/blocks/0/element/max_length']);
    expect(pointers([{ type: 'input', label: plain('Pick'), element: { type: 'checkboxes', action_id: 'c', options: [{ text: mrkdwn('*a*'), value: 'a' }] } }], 'modal')).toEqual([]);
    expect(pointers([{ type: 'image', image_url: 'https://x.test/a.png' }])).toEqual(['/blocks/0/alt_text']);
    expect(pointers('not an array')).toEqual(['/blocks']);
  });
});

describe('validateView', () => {
  const modal = (extra: Record<string, unknown> = {}) => ({ type: 'modal', title: plain('Approve'), blocks: [{ type: 'divider' }], ...extra });

  it('accepts a valid modal and home view', () => {
    expect(validateView(modal({ submit: plain('Approve'), close: plain('Cancel'), callback_id: 'approve', private_metadata: 'p' }))).toEqual([]);
    expect(validateView({ type: 'home', blocks: [{ type: 'section', text: mrkdwn('Incidents') }] })).toEqual([]);
  });

  it('enforces modal title/submit/close 24, private_metadata 3000, callback_id 255', () => {
    const issues = validateView(modal({ title: plain('t'.repeat(25)), submit: plain('s'.repeat(25)), close: plain('c'.repeat(25)), private_metadata: 'p'.repeat(3001), callback_id: 'c'.repeat(256) }));
    expect(issues.map((i) => i.pointer)).toEqual([
      '/view/title/text', '/view/submit/text', '/view/close/text', '/view/private_metadata', '/view/callback_id',
    ]);
  });

  it('requires submit when the modal has an input block, and a known view type', () => {
    const input = { type: 'input', label: plain('Reason'), element: { type: 'plain_text_input', action_id: 'r' } };
    expect(validateView(modal({ blocks: [input] }))).toEqual([{ pointer: '/view/submit', message: 'submit is required when an input block is present' }]);
    expect(validateView({ type: 'workflow', blocks: [] })).toEqual([{ pointer: '/view/type', message: 'must be a valid enum value' }]);
  });
});

describe('validateMessagePayload and toSlackError', () => {
  it('answers no_text, msg_too_long and invalid_blocks in Slack’s shape', () => {
    expect(validateMessagePayload({})?.error).toBe('no_text');
    expect(validateMessagePayload({ text: '' , blocks: [] })?.error).toBe('no_text');
    expect(validateMessagePayload({ attachments: [{ title: 'alert' }] })).toBeUndefined();
    expect(validateMessagePayload({ text: 'x'.repeat(40_001) })?.error).toBe('msg_too_long');
    expect(validateMessagePayload({ text: 'x'.repeat(40_000) })).toBeUndefined();
    expect(validateMessagePayload({ text: 'fallback', blocks: [{ type: 'header', text: plain('h'.repeat(151)) }] })).toEqual({
      ok: false,
      error: 'invalid_blocks',
      errors: ['must be less than 151 characters [json-pointer:/blocks/0/text/text]'],
      response_metadata: { messages: ['[ERROR] must be less than 151 characters [json-pointer:/blocks/0/text/text]'] },
    });
    expect(validateMessagePayload({ blocks: [{ type: 'divider' }] }, false)).toBeUndefined();
    expect(toSlackError('no_text', [])).toEqual({ ok: false, error: 'no_text', errors: [], response_metadata: { messages: [] } });
  });
});

describe('cumulative block text and response_url payloads', () => {
  it('refuses a message whose blocks carry more text than Slack accepts in total', async () => {
    const { validateMessagePayload, MAX_BLOCKS_TEXT } = await import('./blockkit.js');
    const section = (n: number) => ({ type: 'section', text: { type: 'mrkdwn', text: 'x'.repeat(n) } });
    expect(validateMessagePayload({ blocks: [section(2900), section(2900), section(2900), section(2900)] })).toBeUndefined();
    const refused = validateMessagePayload({ blocks: [section(2900), section(2900), section(2900), section(2900), section(MAX_BLOCKS_TEXT - 4 * 2900 + 1)] });
    expect(refused?.error).toBe('msg_blocks_too_long');
  });

  it('checks what is sent to a response_url like a chat.postMessage', async () => {
    const { ResponseUrls } = await import('./response-urls.js');
    const { SlackStore } = await import('./store.js');
    const urls = new ResponseUrls();
    const store = new SlackStore({ bot: { userId: 'U0BOT', botId: 'B0BOT' }, team: { id: 'T1' }, users: [], usergroups: {}, channels: [] } as unknown as ConstructorParameters<typeof SlackStore>[0]);
    const url = urls.issue('http://fake', { channel_id: 'C1', user_id: 'U1' });
    const id = url.split('/').at(-1)!;
    const bad = urls.receive(id, JSON.stringify({ blocks: [{ type: 'header', text: { type: 'plain_text', text: 'x'.repeat(151) } }] }), store);
    expect(bad).toEqual({ status: 400, text: 'invalid_blocks' });
    expect(urls.receive(id, JSON.stringify({ text: 'fine' }), store)).toEqual({ status: 200, text: 'ok' });
  });
});
