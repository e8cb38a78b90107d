/**
 * The analyzers of the families the catalog grew for propose the new actions on scenario worlds, through
 * the real app (fake Slack and Kubernetes), and only when the action's precondition holds:
 * - endpoints-mismatch: `restore_object` on a Service `kubectl edit`-ed after its last apply (ours and blind);
 * - node-not-ready / node-pressure: `cordon_node` on the bad node, carrying the hurt workload's namespace;
 * - none where the previous spec is not known or the harm is not there: an HPA synced by Argo CD (no
 *   lowered maxReplicas to restore), a nightly CronJob that fails one run at a time (suspend_cronjob is
 *   listed as wrong for it).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const OURS = join(here, '..', 'scenarios');
const BLIND = join(here, '..', 'scenarios-blind');

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** The hypotheses of the incident the scenario's alert opened, with their parsed mitigations. */
async function triage(dir: string) {
  world = await startWorld({ scenarioDir: dir, noise: true });
  await world.postAlert();
  await world.settle();
  const db = world.vigil!.db.prisma;
  const inv = await db.investigation.findFirstOrThrow({ orderBy: { startedAt: 'desc' } });
  const rows = await db.hypothesis.findMany({ where: { investigationId: inv.id }, orderBy: { ordinal: 'asc' } });
  return rows.map((h) => ({ analyzer: h.analyzer, status: h.status, mitigation: h.mitigation ? (JSON.parse(h.mitigation) as { action: string; target: { kind: string; namespace?: string; name: string }; params: Record<string, unknown> }) : undefined }));
}

describe('catalog mitigations on scenario worlds', () => {
  it('service-selector-mismatch: restore_object on service/checkout (kubectl edit after kubectl apply)', async () => {
    const hs = await triage(join(OURS, 'service-selector-mismatch'));
    const h = hs.find((x) => x.analyzer === 'endpoints-mismatch' && x.status === 'supported');
    expect(h?.mitigation).toMatchObject({ action: 'restore_object', target: { kind: 'Service', namespace: 'shop', name: 'checkout' }, params: { kind: 'Service', name: 'checkout' } });
  }, 120_000);

  it('hotel-user-service-targetport (blind): restore_object on service/user (targetPort edited)', async () => {
    const hs = await triage(join(BLIND, 'hotel-user-service-targetport'));
    const h = hs.find((x) => x.analyzer === 'endpoints-mismatch' && x.status === 'supported');
    expect(h?.mitigation).toMatchObject({ action: 'restore_object', target: { kind: 'Service', name: 'user' }, params: { kind: 'Service', name: 'user' } });
  }, 120_000);

  it('platform-kubelet-down-node (blind): cordon_node on the node that stopped reporting', async () => {
    const hs = await triage(join(BLIND, 'platform-kubelet-down-node'));
    const h = hs.find((x) => x.mitigation?.action === 'cordon_node');
    expect(h?.status).toBe('supported');
    expect(h?.mitigation).toMatchObject({ target: { kind: 'Node', name: 'worker-b-3' }, params: {} });
    expect(h?.mitigation?.target.namespace).toBeTruthy();
  }, 120_000);

  it('no proposal without the precondition: an Argo-synced HPA at max, a CronJob failing one run at a time', async () => {
    const hpa = await triage(join(OURS, 'hpa-at-max-under-load'));
    expect(hpa.filter((x) => x.mitigation?.action === 'restore_object')).toEqual([]);
    await world!.close();
    world = undefined;
    const cron = await triage(join(BLIND, 'platform-cronjob-backoff-nightly-export'));
    expect(cron.filter((x) => x.mitigation?.action === 'suspend_cronjob')).toEqual([]);
  }, 240_000);
});
