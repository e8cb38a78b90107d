import { cutRedacted } from '../redact/index.js';
import type { ChangeEvent } from './types.js';

/** A message posted in a change-announcement channel (deploy bots, CI, flag tools, people). */
export interface AnnouncementMessage {
  channel: string;
  ts: string;
  text: string;
  /** Bot username or user id. */
  author: string;
  at: Date;
  permalink?: string;
}

const MENTION = /<@([UW][A-Z0-9]+)(?:\|[^>]+)?>/g;
/** Markup characters, except inside a redaction placeholder (`[REDACTED:github_token:1a2b3c4d]` keeps its `_`). */
const MARKUP = /\[REDACTED:[a-z0-9_]{1,40}:[0-9a-f]{8}\]|[*_`~]/g;

/**
 * Slack mrkdwn to matchable plain text. Lossy (markup characters go), so the text must be redacted before
 * it gets here: `_ghp_…_` would come out as `ghp…`, which no detector knows.
 */
const clean = (s: string) =>
  s
    .replace(MENTION, '@$1')
    .replace(/<(https?:[^|>]+)\|([^>]+)>/g, '$2')
    .replace(/<(https?:[^>]+)>/g, '$1')
    .replace(MARKUP, (m) => (m.length > 1 ? m : ''))
    .replace(/\s+/g, ' ')
    .trim();

interface Rule {
  name: string;
  re: RegExp;
  build(m: RegExpExecArray, a: AnnouncementMessage): Omit<ChangeEvent, 'at' | 'source' | 'citation'>;
}

const BY = String.raw`(?:\s+by\s+(?<by>@?[\w.\-]+))?`;

/**
 * Shapes of change announcements common deploy bots, CD tools and flag tools post (and people imitate).
 * Each names what changed; anything else in a change channel is ignored, not guessed at.
 */
const RULES: Rule[] = [
  {
    name: 'flag',
    re: new RegExp(String.raw`(?<actor>@?[\w.\-]+)\s+(?:turned|switched|toggled|set)\s+(?<state>on|off)\s+(?:the\s+)?(?:feature\s+)?(?:flag\s+)?(?<flag>[\w.\-:]+)(?:\s+(?:in|for)\s+(?<env>[\w\-]+))?`, 'i'),
    build: (m) => ({
      actor: m.groups!['actor']!,
      kind: 'flag',
      target: { kind: 'FeatureFlag', name: m.groups!['flag']! },
      before: m.groups!['state']!.toLowerCase() === 'on' ? 'off' : 'on',
      after: m.groups!['state']!.toLowerCase(),
      summary: `flag ${m.groups!['flag']} turned ${m.groups!['state']!.toLowerCase()}${m.groups!['env'] ? ` in ${m.groups!['env']}` : ''} by ${m.groups!['actor']}`,
    }),
  },
  {
    name: 'flag-changed',
    re: new RegExp(String.raw`(?<actor>@?[\w.\-]+)\s+changed\s+(?:the\s+)?flag\s+(?<flag>[\w.\-:]+)(?:\s+in\s+(?<env>[\w\-]+))?(?:[:,]\s*(?<what>.+))?`, 'i'),
    build: (m) => ({
      actor: m.groups!['actor']!,
      kind: 'flag',
      target: { kind: 'FeatureFlag', name: m.groups!['flag']! },
      after: m.groups!['what'] !== undefined ? cutRedacted(m.groups!['what'], 120) : undefined,
      summary: `flag ${m.groups!['flag']} changed${m.groups!['env'] ? ` in ${m.groups!['env']}` : ''} by ${m.groups!['actor']}${m.groups!['what'] ? `: ${cutRedacted(m.groups!['what'], 80)}` : ''}`,
    }),
  },
  {
    name: 'deploy',
    re: new RegExp(String.raw`\b(?:deployed|deploying|rolled out|rolling out|released|shipped)\s+(?<service>[\w.\-\/]+)(?:[@: ]\s*(?<version>v?\d[\w.\-+]*|[0-9a-f]{7,40}))?\s+(?:to|in|on)\s+(?<env>[\w\-]+)${BY}`, 'i'),
    build: (m, a) => ({
      actor: m.groups!['by'] ?? a.author,
      kind: 'deploy',
      target: { kind: 'Service', name: m.groups!['service']!.split('/').pop()! },
      after: m.groups!['version'],
      summary: `deploy of ${m.groups!['service']}${m.groups!['version'] ? ` ${m.groups!['version']}` : ''} to ${m.groups!['env']} by ${m.groups!['by'] ?? a.author}`,
    }),
  },
  {
    name: 'argocd',
    // argocd-notifications' on-sync-succeeded, often with the revision's commit subject and the resources it
    // applied: `… sync succeeded to revision c41d7e9 (orders: fix ports (#611)) - httproute.gateway.networking.k8s.io/api configured`.
    re: /Application\s+(?<app>[\w.\-]+)\s+(?:has been successfully synced|sync (?:succeeded|operation succeeded))(?:\s+to\s+(?:revision\s+)?(?<rev>[0-9a-f]{7,40}))?(?<rest>.*)$/i,
    build: (m, a) => {
      const rest = m.groups!['rest'] ?? '';
      const pr = /\(#(\d{1,7})\)/.exec(rest)?.[1];
      const applied = [...rest.matchAll(/\b([a-z][a-z0-9]*(?:\.[a-z0-9-]+)*\/[a-z0-9][a-z0-9.-]*)\s+(?:configured|created|pruned|synced)\b/gi)].map((x) => x[1]!).slice(0, 10);
      return {
        actor: a.author,
        kind: 'deploy',
        target: { kind: 'Service', name: m.groups!['app']! },
        after: m.groups!['rev'],
        summary: `Argo CD synced ${m.groups!['app']}${m.groups!['rev'] ? ` to ${m.groups!['rev']}` : ''}${pr ? ` (PR #${pr})` : ''}${applied.length ? `: ${applied.join(', ')} configured` : ''}`,
      };
    },
  },
  {
    name: 'flux',
    // Flux notification-controller (Slack provider): the Kustomization as title, what it applied, and the
    // source revision as a field: `kustomization/mesh-config.flux-system`, `DestinationRule/booking/fares
    // configured`, `revision: main@sha1:9e4b2d1…`.
    re: /\bkustomization\/(?<app>[\w.\-]+?)(?:\.[\w\-]+)?\s(?<rest>[\s\S]*)$/i,
    build: (m, a) => {
      const rest = m.groups!['rest'] ?? '';
      const rev = /sha1:([0-9a-f]{7,40})/i.exec(rest)?.[1];
      const applied = [...rest.matchAll(/\b([A-Za-z]+(?:\/[a-z0-9][a-z0-9.-]*){1,2})\s+(?:configured|created)\b/g)].map((x) => x[1]!).slice(0, 10);
      if (!rev && !applied.length) throw new Error('not a reconciliation');
      return {
        actor: a.author,
        kind: 'deploy',
        target: { kind: 'Service', name: m.groups!['app']! },
        ...(rev ? { after: rev.slice(0, 7) } : {}),
        summary: `Flux applied ${m.groups!['app']}${rev ? ` at ${rev.slice(0, 7)}` : ''}${applied.length ? `: ${applied.join(', ')} configured` : ''}`,
      };
    },
  },
  {
    name: 'flux-helm',
    // Flux's HelmRelease events: `helmrelease/booking-web.booking` with `Helm upgrade succeeded for release
    // booking/booking-web.v58 with chart booking-web@2.31.0`.
    re: /\bhelmrelease\/(?<release>[\w\-]+)\.(?<ns>[\w\-]+)[\s\S]*?\bHelm (?<verb>upgrade|install|rollback) succeeded(?:[\s\S]*?\bchart (?<chart>[\w.\-]+@[\w.\-+]+))?/i,
    build: (m, a) => ({
      actor: a.author,
      kind: m.groups!['verb']!.toLowerCase() === 'rollback' ? 'helm_rollback' : m.groups!['verb']!.toLowerCase() === 'install' ? 'helm_install' : 'helm_upgrade',
      target: { kind: 'HelmRelease', namespace: m.groups!['ns']!, name: m.groups!['release']! },
      ...(m.groups!['chart'] ? { after: m.groups!['chart'] } : {}),
      summary: `Flux helm ${m.groups!['verb']!.toLowerCase()} of ${m.groups!['ns']}/${m.groups!['release']}${m.groups!['chart'] ? ` (chart ${m.groups!['chart']})` : ''}`,
    }),
  },
  {
    name: 'helm',
    re: /helm\s+(?<verb>upgrade|rollback|install)\s+(?<release>[\w.\-]+)/i,
    build: (m, a) => ({
      actor: a.author,
      kind: m.groups!['verb']!.toLowerCase() === 'rollback' ? 'helm_rollback' : m.groups!['verb']!.toLowerCase() === 'install' ? 'helm_install' : 'helm_upgrade',
      target: { kind: 'HelmRelease', name: m.groups!['release']! },
      summary: `helm ${m.groups!['verb']!.toLowerCase()} ${m.groups!['release']} announced by ${a.author}`,
    }),
  },
];

/**
 * A change announcement as a ChangeEvent, or undefined when the message announces nothing Vigil recognises.
 * `a.text` must already be redacted (see `clean`); the event is redacted again before it is stored.
 */
export function parseAnnouncement(a: AnnouncementMessage): ChangeEvent | undefined {
  const text = cutRedacted(clean(a.text), 2000);
  for (const rule of RULES) {
    const m = rule.re.exec(text);
    if (!m) continue;
    let built: ReturnType<Rule['build']>;
    try {
      built = rule.build(m, a);
    } catch {
      continue; // the shape matched but the message announces nothing (a Flux health alert, say)
    }
    return {
      ...built,
      at: a.at,
      source: 'slack',
      citation: { source: 'slack', ref: `${a.channel}/${a.ts}`, ...(a.permalink ? { url: a.permalink } : {}) },
    };
  }
  return undefined;
}
