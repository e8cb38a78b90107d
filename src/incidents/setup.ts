/**
 * App Home's setup panel: what a new team needs to see to trust Vigil is wired up — the channels it watches
 * and whether it is in each, which evidence sources are connected or failing, the write policy, the model,
 * the Slack token check made at start and the last `vigil doctor` run recorded in the audit trail. Facts known at start come from the composition root; the rest
 * is asked when Home is published (channel membership from Slack, failures from the last investigation).
 */
import type { Db } from '../store/db.js';
import type { SetupModel } from '../slack/blocks/models.js';
import type { ChatPort } from './chat.js';
import type { Clock } from './clock.js';
import { readContext } from './context.js';
import { lastDoctorResult } from './doctor-result.js';

/** An evidence source as configured; `keyword` finds its failures among an investigation's gaps. */
export interface SourceSetting {
  name: string;
  configured: boolean;
  keyword: string;
}

export interface SetupFacts {
  alertChannels: string[];
  sources: SourceSetting[];
  policy: { file?: string; rules: number };
  model?: { provider: string; name?: string };
  preflight?: { at: Date; ok: boolean; detail?: string };
}

/** A failure older than this says nothing about the source now. */
const RECENT_MS = 24 * 3600_000;

export class SetupPanel {
  constructor(
    private readonly db: Db,
    private readonly chat: ChatPort,
    private readonly facts: SetupFacts,
    private readonly clock: Clock,
  ) {}

  async model(): Promise<SetupModel> {
    const { facts } = this;
    const channels = await Promise.all(
      facts.alertChannels.map(async (id): Promise<SetupModel['channels'][number]> => {
        if (!this.chat.channelInfo) return { id, state: 'unknown' };
        const c = await this.chat.channelInfo(id);
        if (!c.ok) return { id, state: 'unknown', error: c.error };
        return { id, ...(c.name ? { name: c.name } : {}), state: c.isMember ? 'member' : 'not_member' };
      }),
    );
    return {
      channels,
      sources: await this.sources(),
      policy: facts.policy,
      ...(facts.model ? { model: facts.model } : {}),
      ...(facts.preflight ? { preflight: facts.preflight } : {}),
      doctor: await lastDoctorResult(this.db),
    };
  }

  /**
   * Connected, unless the newest finished investigation of the last day could not read it: then failing,
   * with what it said. Vigil reads sources only while investigating, so that is the freshest word on them.
   */
  private async sources(): Promise<SetupModel['sources']> {
    const since = new Date(this.clock.now().getTime() - RECENT_MS);
    const last = await this.db.investigation.findFirst({ where: { state: { notIn: ['queued', 'running'] }, updatedAt: { gte: since } }, orderBy: { updatedAt: 'desc' }, select: { context: true, updatedAt: true } });
    const gaps = last ? (readContext(last.context).gaps ?? []) : [];
    return this.facts.sources.map((s) => {
      if (!s.configured) return { name: s.name, state: 'not_configured' as const };
      const gap = gaps.find((g) => g.toLowerCase().includes(s.keyword) && !/not configured/i.test(g));
      return gap && last ? { name: s.name, state: 'failing' as const, detail: gap, at: last.updatedAt } : { name: s.name, state: 'connected' as const };
    });
  }
}
