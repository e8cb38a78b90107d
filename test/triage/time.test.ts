// Times on cards: a bare clock time reads as today, so one more than 20 h from the reference shows its date.
import { describe, expect, it } from 'vitest';
import { humanDuration, timeNear } from '../../src/triage/time.js';

const ONSET = new Date('2026-12-03T06:14:09Z');

describe('timeNear', () => {
  it('is the clock time near the onset and the date and minute days away', () => {
    expect(timeNear(new Date('2026-12-03T05:06:00Z'), ONSET)).toBe('05:06:00');
    expect(timeNear(new Date('2026-11-27T06:14:08Z'), ONSET)).toBe('2026-11-27 06:14');
  });
});

describe('humanDuration', () => {
  it('rounds to what a reader needs', () => {
    expect([humanDuration(13_000), humanDuration(5 * 60_000), humanDuration(3 * 3600_000), humanDuration(6 * 86_400_000)]).toEqual(['13 s', '5 min', '3 h', '6 days']);
  });
});
