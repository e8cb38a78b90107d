import type { Analyzer } from '../analyzer.js';

/** Analyzers of the capacity family, in the order they run. */
export const capacityAnalyzers: Analyzer[] = [];
