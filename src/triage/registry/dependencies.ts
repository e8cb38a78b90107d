import type { Analyzer } from '../analyzer.js';
import { cpuThrottling } from '../analyzers/cpu-throttling.js';
import { databaseDegraded } from '../analyzers/database-degraded.js';
import { loadSpike } from '../analyzers/load-spike.js';
import { resourceExhaustion } from '../analyzers/resource-exhaustion.js';

/** Analyzers of resource saturation, load and data stores, in the order they run. */
export const dependencyAnalyzers: Analyzer[] = [cpuThrottling, resourceExhaustion, databaseDegraded, loadSpike];
