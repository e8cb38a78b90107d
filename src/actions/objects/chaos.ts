/**
 * How a chaos experiment is paused, per tool (their documentation): a Chaos Mesh experiment is paused
 * by the annotation `experiment.chaos-mesh.org/pause: "true"` (the controller recovers the injected fault
 * and stops injecting; removing the annotation resumes it); a Litmus ChaosEngine by `spec.engineState:
 * stop` (the operator aborts the run; `active` starts it again).
 */
import type { KubeObject } from '../types.js';

export const CHAOS_MESH_PAUSE = 'experiment.chaos-mesh.org/pause';

export function chaosPaused(obj: KubeObject): boolean {
  if (obj.kind === 'ChaosEngine') return obj.spec?.['engineState'] === 'stop';
  return obj.metadata?.annotations?.[CHAOS_MESH_PAUSE] === 'true';
}
