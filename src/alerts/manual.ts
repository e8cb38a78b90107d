/**
 * `/sre investigate <free text or alert link>`: a Slack message link points at an alert post to parse; free text
 * becomes a `manual` Alert whose labels come from the Kubernetes target hints in it (see parse/targets.ts).
 */
import { cutRedacted } from '../redact/index.js';
import { extractTargetHints } from './parse/targets.js';
import type { Alert } from './types.js';

export type InvestigateInput =
  | { alert: Alert }
  | { slackLink: { channel: string; ts: string; threadTs?: string } }
  | { error: string };

export const INVESTIGATE_USAGE =
  'Usage: `/sre investigate <what is wrong>` (e.g. `checkout 5xx in namespace shop`, `deployment/checkout -n shop`) or `/sre investigate <link to the alert message>`';

/** Slack message permalinks: `https://<workspace>.slack.com/archives/<channel>/p<ts without dot>[?thread_ts=…&cid=…]`. */
const PERMALINK = /^<?(https:\/\/[a-z0-9-]+(?:\.enterprise)?\.slack\.com\/archives\/([A-Z0-9]+)\/p(\d{10})(\d{6})(?:\?([^\s>|]*))?)(?:\|[^>]*)?>?$/i;

/** `text` must already be redacted: the title is cut from it, and a secret cut in half matches no detector. */
export function parseInvestigateText(text: string, now: Date = new Date()): InvestigateInput {
  const trimmed = text.trim();
  if (!trimmed) return { error: `Tell me what to investigate. ${INVESTIGATE_USAGE}` };

  const link = PERMALINK.exec(trimmed);
  if (link) {
    const slackLink: { channel: string; ts: string; threadTs?: string } = { channel: link[2]!.toUpperCase(), ts: `${link[3]}.${link[4]}` };
    const threadTs = new URLSearchParams(link[5] ?? '').get('thread_ts');
    if (threadTs && /^\d{10}\.\d{6}$/.test(threadTs)) slackLink.threadTs = threadTs;
    return { slackLink };
  }
  if (/^<?https?:\/\/[^\s]*slack\.com\/archives\//i.test(trimmed)) {
    return { error: `That Slack link does not point at a message. ${INVESTIGATE_USAGE}` };
  }

  const hints = extractTargetHints(trimmed);
  const labelValues = [...new Set([...hints.names, ...hints.words])].slice(0, 20);
  if (Object.keys(hints.labels).length === 0 && labelValues.length === 0) {
    return { error: `I could not find a service, workload or symptom in that. ${INVESTIGATE_USAGE}` };
  }
  const title = cutRedacted(trimmed, 1024);
  return {
    alert: {
      source: 'manual',
      status: 'firing',
      title,
      alertName: cutRedacted(title, 200),
      labels: hints.labels,
      labelValues,
      annotations: {},
      count: 1,
      startsAt: now,
      text: trimmed,
    },
  };
}
