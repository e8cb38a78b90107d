/**
 * Who is in a Slack user group, for approval gating. `usergroups.users.list` is Tier 2 (20+/min), so
 * members are cached for a few minutes (PLATFORM-FACTS A3/A4); a removed member may approve until the
 * entry expires, which is the accepted trade-off.
 */
import type { WebClient } from '@slack/web-api';
import type { Clock } from '../incidents/clock.js';
import { systemClock } from '../incidents/clock.js';

export interface UserGroups {
  /** Active members' user ids. Throws when Slack cannot answer (callers fail closed). */
  membersOf(groupId: string): Promise<string[]>;
}

export const USERGROUP_CACHE_MS = 5 * 60_000;

export class SlackUserGroups implements UserGroups {
  private readonly cache = new Map<string, { members: string[]; until: number }>();

  constructor(
    private readonly client: WebClient,
    private readonly ttlMs = USERGROUP_CACHE_MS,
    private readonly clock: Clock = systemClock,
  ) {}

  async membersOf(groupId: string): Promise<string[]> {
    const now = this.clock.now().getTime();
    const hit = this.cache.get(groupId);
    if (hit && hit.until > now) return hit.members;
    const res = await this.client.usergroups.users.list({ usergroup: groupId, include_disabled: false });
    const members = res.users ?? [];
    this.cache.set(groupId, { members, until: now + this.ttlMs });
    return members;
  }
}

/** The groups among `groupIds` that `userId` belongs to. */
export async function groupsOf(port: UserGroups, userId: string, groupIds: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const g of groupIds) if ((await port.membersOf(g)).includes(userId)) out.push(g);
  return out;
}
