/**
 * Flattens a Slack message's top-level `text`, legacy `attachments[]` and Block Kit `blocks[]` into plain lines,
 * because alert tools put their content in any of the three (PLATFORM-FACTS A2). Slack mrkdwn links
 * `<url|label>` become `label` (the url goes to `links`); `&amp; &lt; &gt;` are unescaped.
 */
import type { AlertMessage } from '../types.js';

export interface FlatField {
  title: string;
  value: string;
}

export interface FlatMessage {
  /** The post's headline: first attachment title, else the first header block, else the first line of text. */
  headline: string;
  /** Every non-empty line of body text, in reading order (headline excluded). */
  lines: string[];
  /** Attachment fields and section fields that have a title. */
  fields: FlatField[];
  links: string[];
  /** First attachment's `title_link`, when present. */
  titleLink?: string;
  footer: string;
  colors: string[];
}

export function flattenMessage(msg: AlertMessage): FlatMessage {
  const links: string[] = [];
  const lines: string[] = [];
  const fields: FlatField[] = [];
  const colors: string[] = [];
  const headlines: string[] = [];
  let footer = '';
  let titleLink: string | undefined;

  const push = (raw: string | undefined): void => {
    if (!raw) return;
    for (const line of plainText(raw, links).split('\n')) {
      const trimmed = line.trimEnd();
      if (trimmed.trim()) lines.push(trimmed);
    }
  };

  for (const attachment of msg.attachments ?? []) {
    if (attachment.title) headlines.push(plainText(attachment.title, links));
    if (attachment.title_link) {
      titleLink ??= attachment.title_link;
      links.push(attachment.title_link);
    }
    push(attachment.pretext);
    push(attachment.text);
    for (const field of attachment.fields ?? []) {
      const title = plainText(field.title ?? '', links).trim();
      const value = plainText(field.value ?? '', links).trim();
      if (title) fields.push({ title, value });
      else push(value);
    }
    // Tools repeat title + text in `fallback`; read it only when the attachment says nothing else.
    if (!attachment.title && !attachment.text && !attachment.fields?.length) push(attachment.fallback);
    if (attachment.color) colors.push(attachment.color);
    if (attachment.footer) footer ||= plainText(attachment.footer, links);
  }

  for (const block of msg.blocks ?? []) readBlock(block, { push, fields, links, headlines });

  const textLines = plainText(msg.text ?? '', links)
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim());
  // Top-level text comes first in Slack's rendering.
  lines.unshift(...textLines);
  const headline = headlines[0] ?? lines[0] ?? '';
  const bodyLines = headlines.length > 0 ? lines : lines.slice(1);
  for (const extra of headlines.slice(1)) bodyLines.push(extra);

  const flat: FlatMessage = { headline: headline.trim(), lines: bodyLines, fields, links: [...new Set(links)], footer, colors };
  if (titleLink) flat.titleLink = titleLink;
  return flat;
}

interface BlockSink {
  push(raw: string | undefined): void;
  fields: FlatField[];
  links: string[];
  headlines: string[];
}

function readBlock(block: unknown, sink: BlockSink): void {
  if (!isRecord(block)) return;
  switch (block.type) {
    case 'header':
      if (isRecord(block.text) && typeof block.text.text === 'string') sink.headlines.push(plainText(block.text.text, sink.links));
      return;
    case 'section':
      if (isRecord(block.text) && typeof block.text.text === 'string') sink.push(block.text.text);
      for (const field of Array.isArray(block.fields) ? block.fields : []) {
        if (!isRecord(field) || typeof field.text !== 'string') continue;
        // `*Service*\ncheckout-api`: a titled field, as attachment fields are (PagerDuty, Opsgenie, Datadog apps).
        const titled = /^\s*\*([^*\n]{1,60})\*:?\s*\n([\s\S]+)$/.exec(field.text);
        if (titled) sink.fields.push({ title: plainText(titled[1]!, sink.links).trim().replace(/:$/, ''), value: plainText(titled[2]!, sink.links).trim() });
        else sink.push(field.text);
      }
      if (isRecord(block.accessory)) readElement(block.accessory, sink);
      return;
    case 'context':
    case 'actions':
      for (const element of Array.isArray(block.elements) ? block.elements : []) readElement(element, sink);
      return;
    case 'rich_text':
      sink.push(richText(block));
      return;
    default:
      return;
  }
}

function readElement(element: unknown, sink: BlockSink): void {
  if (!isRecord(element)) return;
  if (typeof element.url === 'string') sink.links.push(element.url);
  if (typeof element.text === 'string') sink.push(element.text);
}

/** rich_text → plain text: sections, lists, quotes and preformatted blocks hold `text`/`link` leaves. */
function richText(node: unknown): string {
  if (!isRecord(node)) return '';
  if (node.type === 'text' && typeof node.text === 'string') return node.text;
  if (node.type === 'link' && typeof node.url === 'string') return typeof node.text === 'string' ? node.text : node.url;
  if (!Array.isArray(node.elements)) return '';
  const joiner = node.type === 'rich_text' || node.type === 'rich_text_list' ? '\n' : '';
  return node.elements.map(richText).join(joiner);
}

/** Slack mrkdwn to plain text; collects link targets. */
export function plainText(raw: string, links: string[] = []): string {
  return raw
    .replace(/<([^<>|]+)\|([^<>]*)>/g, (_match, target: string, label: string) => {
      if (/^https?:/.test(target)) links.push(target);
      return label;
    })
    .replace(/<([^<>]+)>/g, (_match, target: string) => {
      if (/^https?:/.test(target)) links.push(target);
      return target.replace(/^[@#!]/, '');
    })
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
