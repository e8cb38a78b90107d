import type { Detector } from '../types.js';
import { matchSpan } from './spans.js';

/** A JWS's first segment is base64url JSON with an `alg` member (RFC 7515 §4.1.1). */
function isJoseHeader(segment: string): boolean {
  try {
    const header: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && typeof (header as { alg?: unknown }).alg === 'string';
  } catch {
    return false;
  }
}

export const jwtDetector: Detector = {
  name: 'jwt',
  kind: 'jwt',
  pattern: /(?<![A-Za-z0-9])(?<header>eyJ[A-Za-z0-9_-]{2,4000})\.[A-Za-z0-9_-]{2,16000}\.[A-Za-z0-9_-]{0,4000}(?![A-Za-z0-9_-])/dg,
  hints: ['eyJ'],
  select: (m) => (isJoseHeader(m.groups?.['header'] ?? '') ? matchSpan(m) : null),
};
