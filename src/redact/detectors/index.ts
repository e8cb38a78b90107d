import type { Detector } from '../types.js';
import {
  authorizationDetector,
  bearerDetector,
  configDirectiveDetector,
  connectionStringPasswordDetector,
  cookieDetector,
  flagValueDetector,
  labelledSecretDetector,
  urlPasswordDetector,
} from './credentials.js';
import { jwtDetector } from './jwt.js';
import { cardDetector, emailDetector, phoneDetector } from './personal-data.js';
import { privateKeyDetector } from './private-keys.js';
import { providerTokenDetectors } from './provider-tokens.js';

/**
 * The built-in detectors, most specific first: a span claimed by an earlier detector cannot be
 * claimed by a later one (a JWT inside `Authorization: Bearer …` is reported as `jwt`; the
 * password in `postgres://app:pw@db.example.com` is not read as an email).
 */
export const DETECTORS: readonly Detector[] = [
  privateKeyDetector,
  jwtDetector,
  ...providerTokenDetectors,
  urlPasswordDetector,
  authorizationDetector,
  bearerDetector,
  cookieDetector,
  connectionStringPasswordDetector,
  labelledSecretDetector,
  configDirectiveDetector,
  flagValueDetector,
  cardDetector,
  emailDetector,
  phoneDetector,
];
