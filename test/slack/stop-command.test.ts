/**
 * `/sre stop|resume` answers with incident titles and what the user typed: both are shown as text, never
 * as Slack markup (a title with `<!channel>` must not notify a channel from an ephemeral answer).
 */
import { describe, expect, it } from 'vitest';
import { runStopCommand } from '../../src/approvals/commands.js';
import type { ApprovalService } from '../../src/approvals/service.js';

/** The two look-ups the scope resolution makes, answered from memory. */
function service(open: { id: string; title: string }[]): ApprovalService {
  return {
    incidentChannel: async (id: string) => (open.some((i) => i.id === id) ? 'C1' : undefined),
    openIncidentsIn: async () => open,
  } as unknown as ApprovalService;
}

describe('/sre stop answers', () => {
  it('escapes incident titles when asking which incident', async () => {
    const reply = await runStopCommand(service([
      { id: 'inc-1', title: 'checkout <!channel> 5xx & p99 > 2s' },
      { id: 'inc-2', title: 'payments <https://evil.example|click me>' },
    ]), { verb: 'stop', args: '', userId: 'U0BOB', channelId: 'C0ALERTS' });
    expect(reply.text).toContain('checkout &lt;!channel&gt; 5xx &amp; p99 &gt; 2s');
    expect(reply.text).toContain('payments &lt;https://evil.example|click me&gt;');
    expect(reply.text).not.toMatch(/<!channel>|<https:/);
  });

  it('escapes an unknown incident id the user typed', async () => {
    const reply = await runStopCommand(service([]), { verb: 'stop', args: '<!here>&x', userId: 'U0BOB', channelId: 'C0ALERTS' });
    expect(reply.text).toBe('There is no incident `&lt;!here&gt;&amp;x`.');
  });

  it('shows the usage with its placeholder as text', async () => {
    const reply = await runStopCommand(service([]), { verb: 'resume', args: '', userId: 'U0BOB', channelId: 'C0ALERTS' });
    expect(reply.text).toContain('`/sre resume &lt;incident id&gt;`');
  });
});
