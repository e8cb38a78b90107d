/** Types for scripts/helm-render.mjs (the offline `helm template` subset; see its header). */
export interface RenderOptions {
  values?: object;
  name?: string;
  namespace?: string;
  isUpgrade?: boolean;
}
export class RenderError extends Error {}
export function renderChart(chartDir: string, opts?: RenderOptions): Map<string, string>;
export function renderManifests(chartDir: string, opts?: RenderOptions): string;
export function mergeValues(base: object, over: object): object;
export function goNumber(n: number): string;
export function goPrint(v: unknown): string;
export function toYaml(v: unknown): string;
export function truthy(v: unknown): boolean;
export const FUNCS: Record<string, (...args: any[]) => unknown>;
export function parseTemplate(src: string, file?: string): { body: unknown[]; defines: Map<string, unknown[]> };
