import type { Analyzer } from '../analyzer.js';
import { endpointsMismatch } from '../analyzers/endpoints-mismatch.js';
import { hpaAtMax } from '../analyzers/hpa-at-max.js';
import { nodePressure } from '../analyzers/node-pressure.js';
import { unschedulable } from '../analyzers/unschedulable.js';

/** Analyzers of the capacity family, in the order they run. */
export const capacityAnalyzers: Analyzer[] = [unschedulable, nodePressure, hpaAtMax, endpointsMismatch];
