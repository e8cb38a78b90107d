import type { Detector } from '../types.js';
import { matchSpan } from './spans.js';

/**
 * PEM private keys, including ones embedded in JSON with escaped newlines (a GCP service-account
 * key's `"private_key": "-----BEGIN PRIVATE KEY-----\nMII…"`). Without an END marker (a truncated
 * log line) the base64 lines after BEGIN are taken.
 */
export const privateKeyDetector: Detector = {
  name: 'pem_private_key',
  kind: 'private_key',
  pattern:
    /-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|(?:(?:\s|\\[nr])+[A-Za-z0-9+/=]{16,})*)/dg,
  hints: ['PRIVATE KEY'],
};

/** What a base64 blob must decode to (in its first few hundred bytes) to be a Google credentials file. */
const GOOGLE_CREDENTIAL_JSON = /"type"\s*:\s*"(?:service_account|authorized_user|external_account)"|"private_key(?:_id)?"\s*:/;

/**
 * A Google service-account (or user) credentials JSON file, base64-encoded whole: what `GOOGLE_CREDENTIALS`
 * env vars, CI variables and Helm values carry (`ewogICJ0eXBlIjogInNlcnZpY2VfYWNjb3VudCIs…` is
 * `{\n  "type": "service_account",`). The private key inside is base64 twice over, so the PEM detector
 * never sees it. Any base64 run that starts like a JSON object (`{` encodes to `e` + `w`/`y`) is decoded
 * at its head and taken only when that head is a credentials file.
 */
export const googleCredentialsBase64Detector: Detector = {
  name: 'gcp_credentials_base64',
  kind: 'gcp_credentials',
  pattern: /(?<![A-Za-z0-9+/_-])e[wy][A-Za-z0-9+/]{60,60000}={0,2}(?![A-Za-z0-9+/=_-])/dg,
  hints: ['ew', 'ey'],
  select: (m) => {
    // Node's decoder ignores a trailing partial quantum, so any 512-character head decodes.
    const head = m[0].slice(0, 512);
    return GOOGLE_CREDENTIAL_JSON.test(Buffer.from(head, 'base64').toString('utf8')) ? matchSpan(m) : null;
  },
};
