import type { Detector } from '../types.js';
import {
  authorizationDetector,
  bearerDetector,
  configDirectiveDetector,
  connectionStringPasswordDetector,
  cookieDetector,
  curlUserDetector,
  envPairTextDetector,
  flagValueDetector,
  labelledSecretDetector,
  mysqlPasswordFlagDetector,
  proseSecretDetector,
  redisCliPasswordDetector,
  urlPasswordDetector,
} from './credentials.js';
import { jwtDetector } from './jwt.js';
import { cardDetector, emailDetector, ibanDetector, phoneDetector, ssnDetector, urlEncodedEmailDetector } from './personal-data.js';
import { googleCredentialsBase64Detector, privateKeyDetector } from './private-keys.js';
import { providerTokenDetectors } from './provider-tokens.js';

/**
 * The built-in detectors, most specific first: a span claimed by an earlier detector cannot be
 * claimed by a later one (a JWT inside `Authorization: Bearer …` is reported as `jwt`; the
 * password in `postgres://app:pw@db.example.com` is not read as an email).
 */
export const DETECTORS: readonly Detector[] = [
  privateKeyDetector,
  jwtDetector,
  googleCredentialsBase64Detector,
  ...providerTokenDetectors,
  urlPasswordDetector,
  authorizationDetector,
  bearerDetector,
  cookieDetector,
  connectionStringPasswordDetector,
  mysqlPasswordFlagDetector,
  redisCliPasswordDetector,
  curlUserDetector,
  envPairTextDetector,
  labelledSecretDetector,
  configDirectiveDetector,
  flagValueDetector,
  proseSecretDetector,
  ibanDetector,
  cardDetector,
  emailDetector,
  urlEncodedEmailDetector,
  ssnDetector,
  phoneDetector,
];
