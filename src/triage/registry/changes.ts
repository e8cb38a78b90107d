import type { Analyzer } from '../analyzer.js';

/** Analyzers of the changes family, in the order they run. */
export const changesAnalyzers: Analyzer[] = [];
