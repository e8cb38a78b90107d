import type { Analyzer } from '../analyzer.js';
import { configChange } from '../analyzers/config-change.js';
import { dependencyDegraded } from '../analyzers/dependency-degraded.js';
import { deployRegression } from '../analyzers/deploy-regression.js';
import { shutdownRegression } from '../analyzers/shutdown-regression.js';
import { dnsSearchPath } from '../analyzers/dns-search-path.js';
import { flagFlip } from '../analyzers/flag-flip.js';
import { networkPolicy } from '../analyzers/network-policy.js';
import { tlsCertificate } from '../analyzers/tls-certificate.js';

/** Analyzers of the changes family, in the order they run. */
export const changesAnalyzers: Analyzer[] = [configChange, deployRegression, shutdownRegression, dnsSearchPath, flagFlip, dependencyDegraded, tlsCertificate, networkPolicy];
