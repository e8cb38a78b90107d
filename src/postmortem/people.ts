import type { PostmortemRecord } from './record.js';

/** Display names the record knows (steering authors, approvers), by Slack user id. */
export function knownPeople(r: PostmortemRecord): Record<string, string> {
  const people: Record<string, string> = {};
  const add = (id: string, name: string | null | undefined): void => {
    if (name && name !== id && !people[id]) people[id] = name;
  };
  for (const s of r.incident.steering) add(s.userId, s.userName);
  for (const a of r.incident.approvals) for (const d of a.decisions) add(d.userId, d.userName);
  return people;
}

/** `Bob Responder (U0BOB)`, or the id alone when no name is known. */
export function personLabel(id: string, people: Record<string, string>): string {
  const name = people[id];
  return name ? `${name} (${id})` : id;
}
