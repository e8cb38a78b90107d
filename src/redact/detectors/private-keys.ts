import type { Detector } from '../types.js';

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
