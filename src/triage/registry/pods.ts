import type { Analyzer } from '../analyzer.js';
import { crashLoop } from '../analyzers/crash-loop.js';
import { failingProbe } from '../analyzers/failing-probe.js';
import { imagePull } from '../analyzers/image-pull.js';
import { initContainerStuck } from '../analyzers/init-container-stuck.js';
import { oomKilled } from '../analyzers/oom-killed.js';
import { rolloutStuck } from '../analyzers/rollout-stuck.js';

/** Analyzers of the pods family, in the order they run: the specific mechanisms before the generic crash loop. */
export const podsAnalyzers: Analyzer[] = [oomKilled, imagePull, failingProbe, initContainerStuck, rolloutStuck, crashLoop];
