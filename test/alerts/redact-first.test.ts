/**
 * Redact first, then clean and cut: the order IncidentDesk uses for alert posts and `/sre investigate`
 * text. A token cut in half by a title limit, or wrapped in chat markup, no longer matches its detector,
 * so redacting the parsed alert afterwards is too late. Each case plants a token where the parser cuts.
 */
import { describe, expect, it } from 'vitest';
import { parseInvestigateText } from '../../src/alerts/manual.js';
import { parseAlertMessage } from '../../src/alerts/parse/index.js';
import type { Alert } from '../../src/alerts/types.js';
import { createRedactor, isPlaceholder } from '../../src/redact/index.js';
import { chars, seededRandom } from '../redact/planted.js';

const rng = seededRandom(12);
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
// Assembled at run time so the repository holds no literal token.
const GHP = 'gh' + 'p_' + 'A1b' + chars(rng, ALNUM, 33);
const GLPAT = 'gl' + 'pat-' + 'Z9y' + chars(rng, ALNUM, 17);
const NOW = new Date('2026-12-02T01:00:00Z');

/** Ordinary words up to `at - before` characters, then ` secret`: the secret starts `before` short of `at`. */
function straddle(prefix: string, at: number, before: number, secret: string): string {
  return `${prefix}${' checkout'.repeat(40).slice(0, at - before - prefix.length - 1)} ${secret}`;
}

/** Every 12-character window of `secret`: a prefix left by a cut is a leak too. */
function leaks(v: unknown, secret: string): boolean {
  const s = JSON.stringify(v);
  for (let i = 0; i + 12 <= secret.length; i += 4) if (s.includes(secret.slice(i, i + 12))) return true;
  return false;
}

/** No placeholder was cut or cleaned into something else: every `[REDACTED…` is a whole placeholder. */
function placeholdersWhole(v: unknown): boolean {
  const s = JSON.stringify(v);
  return (s.match(/\[REDACTED[^\]]*\]?/g) ?? []).every((p) => isPlaceholder(p));
}

function alertOf(result: ReturnType<typeof parseAlertMessage> | ReturnType<typeof parseInvestigateText>): Alert {
  if (!('alert' in result)) throw new Error(`expected an alert, got ${JSON.stringify(result)}`);
  return result.alert;
}

describe('alert posts: redacted before they are parsed', () => {
  const redactor = createRedactor({ salt: 'order' });
  // The generic parser's alert name is the headline, cleaned and cut to 200; the token straddles the cut,
  // in Slack italics.
  const headline = straddle(':rotating_light: ALERT: storefront errors firing', 200, 10, `_${GHP}_`);
  const post = { username: 'uptime-bot', text: `${headline}\nstatus: 503 from storefront`, ts: '1795960000.000100' };

  it('the other order leaks: parsing cuts the token short, and the detector no longer knows it', () => {
    const late = redactor.redactValue(alertOf(parseAlertMessage(post, { receivedAt: NOW })));
    expect(leaks(late, GHP)).toBe(true);
  });

  it('redacted first, no part of the token survives in title, name, text or labels', () => {
    const alert = alertOf(parseAlertMessage(redactor.redactValue(post), { receivedAt: NOW }));
    expect(leaks(alert, GHP)).toBe(false);
    expect(alert.title).toContain('[REDACTED:github_token:');
    expect(alert.alertName.length).toBeLessThanOrEqual(200);
    expect(placeholdersWhole(alert)).toBe(true);
    // A placeholder names no target: it is not taken for a label value.
    expect(alert.labelValues.join(' ')).not.toMatch(/REDACTED|github_token/);
  });

  it('an attachment title and fields, as Grafana-style posts carry them', () => {
    const msg = {
      username: 'Grafana',
      attachments: [{ title: straddle('[FIRING:1] HighErrorRate storefront', 1024, 6, GLPAT), color: 'danger', text: `password: hunter2-${chars(rng, ALNUM, 6)}`, fields: [{ title: 'Token', value: `_${GHP}_` }] }],
    };
    const alert = alertOf(parseAlertMessage(redactor.redactValue(msg), { receivedAt: NOW }));
    expect(leaks(alert, GLPAT)).toBe(false);
    expect(leaks(alert, GHP)).toBe(false);
    expect(alert.text).not.toContain('hunter2-');
    expect(placeholdersWhole(alert)).toBe(true);
  });
});

describe('/sre investigate text: redacted before it is cut into a title', () => {
  const redactor = createRedactor({ salt: 'order' });
  const typed = straddle(straddle('storefront 5xx in namespace shop, key', 200, 20, `_${GHP}_`), 1024, 16, GLPAT);

  it('the other order leaks the part before the cut', () => {
    const late = redactor.redactValue(alertOf(parseInvestigateText(typed, NOW)));
    expect(leaks(late.alertName, GHP)).toBe(true);
  });

  it('redacted first: no part of either token survives, and the cuts keep placeholders whole', () => {
    const alert = alertOf(parseInvestigateText(redactor.redactText(typed), NOW));
    expect(leaks(alert, GHP)).toBe(false);
    expect(leaks(alert, GLPAT)).toBe(false);
    expect(alert.alertName.length).toBeLessThanOrEqual(200);
    expect(alert.title.length).toBeLessThanOrEqual(1024);
    expect(placeholdersWhole(alert)).toBe(true);
    expect(alert.labels).toMatchObject({ namespace: 'shop' });
  });
});
