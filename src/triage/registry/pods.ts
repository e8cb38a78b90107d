import type { Analyzer } from '../analyzer.js';

/** Analyzers of the pods family, in the order they run. */
export const podsAnalyzers: Analyzer[] = [];
