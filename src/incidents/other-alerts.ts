/**
 * Alerts of other incidents, for the look-alike review (triage/concurrent-alerts.ts): what else fired in
 * the window, when it fired (the alert's own start, else its Slack post's time, else its receipt), and
 * the target its own investigation resolved. Alerts of the investigated alert's incident are left out.
 */
import { fingerprintAlert } from '../alerts/fingerprint.js';
import type { Alert } from '../alerts/types.js';
import type { Db } from '../store/db.js';
import type { OtherAlert } from '../triage/concurrent-alerts.js';

const MAX_ROWS = 200;

export async function otherAlerts(db: Db, alert: Alert, from: Date, to: Date, now: Date): Promise<OtherAlert[]> {
  const own = fingerprintAlert(alert);
  // Received at or after it fired: every alert that fired in the window arrived after `from`.
  const rows = await db.alert.findMany({
    where: { status: 'firing', receivedAt: { gte: from, lte: now }, incident: { fingerprint: { not: own } } },
    orderBy: { receivedAt: 'desc' },
    take: MAX_ROWS,
    select: { payload: true, channelId: true, messageTs: true, receivedAt: true, incident: { select: { id: true, namespace: true, service: true } } },
  });
  const out: OtherAlert[] = [];
  for (const r of rows) {
    let parsed: Alert;
    try {
      parsed = JSON.parse(r.payload) as Alert;
    } catch {
      continue;
    }
    const started = parsed.startsAt ? new Date(parsed.startsAt) : undefined;
    const posted = r.messageTs ? new Date(Math.round(Number(r.messageTs) * 1000)) : undefined;
    const firedAt = [started, posted, r.receivedAt].find((d): d is Date => !!d && !Number.isNaN(d.getTime()))!;
    if (firedAt > to || firedAt < from) continue;
    out.push({
      alert: parsed,
      firedAt,
      ...(r.incident.service ? { target: { ...(r.incident.namespace ? { namespace: r.incident.namespace } : {}), name: r.incident.service } } : {}),
      citation: { source: 'slack', ref: r.channelId && r.messageTs ? `slack:${r.channelId}/${r.messageTs}` : `incident:${r.incident.id}` },
    });
  }
  return out;
}
