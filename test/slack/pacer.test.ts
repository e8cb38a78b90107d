import { describe, expect, it } from 'vitest';
import { ChannelPacer } from '../../src/slack/pacer.js';

describe('ChannelPacer', () => {
  it('lets a burst through, then one post per interval, per channel', async () => {
    const pacer = new ChannelPacer(3, 100);
    const t0 = Date.now();
    const times: number[] = [];
    await Promise.all(Array.from({ length: 6 }, () => pacer.take('C1').then(() => times.push(Date.now() - t0))));
    expect(times.slice(0, 3).every((t) => t < 50)).toBe(true);
    // The 4th to 6th wait for refills: roughly 100, 200, 300 ms.
    expect(times[3]!).toBeGreaterThanOrEqual(80);
    expect(times[5]!).toBeGreaterThanOrEqual(260);
    // Another channel has its own bucket.
    const other = Date.now();
    await pacer.take('C2');
    expect(Date.now() - other).toBeLessThan(50);
  });
});
