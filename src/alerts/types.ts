/** Where an alert came from. `manual` is `/sre investigate <text>`. */
export type AlertSource = 'alertmanager' | 'grafana' | 'pagerduty' | 'opsgenie' | 'datadog' | 'generic' | 'manual';

export type AlertStatus = 'firing' | 'resolved';

/**
 * One alert notification, whatever tool posted it, normalised. Parsers fill what the post carries;
 * Alertmanager's default Slack title carries label *values* only (no keys), so `labelValues` keeps
 * them in order for the target resolver, which matches them against the cluster.
 */
export interface Alert {
  source: AlertSource;
  status: AlertStatus;
  /** The post's headline as shown in Slack, e.g. `[FIRING:1] KubeDeploymentReplicasMismatch (checkout shop critical)`. */
  title: string;
  /** Alert rule name (`alertname` label, Grafana rule title, PagerDuty summary…). */
  alertName: string;
  /** Labels whose keys are known (`namespace`, `deployment`, `service`, `severity`, …). */
  labels: Record<string, string>;
  /** Values seen without keys, in the order posted (Alertmanager's default title). */
  labelValues: string[];
  /** `summary`, `description`, `runbook_url`, … when the post carries them. */
  annotations: Record<string, string>;
  severity?: string;
  /** Number of alerts in the group (`[FIRING:3]` → 3). */
  count: number;
  /**
   * The alerts of a grouped post, each with all its labels, when the post lists more than one
   * (`labels` then holds only what they share). One incident carries them all: Alertmanager grouped
   * them because they fire together, and the walk from several victims finds their common origin.
   */
  members?: AlertMember[];
  /** When the alert started, if the post says; otherwise the post time. */
  startsAt?: Date;
  /** Link back to the alerting tool (Alertmanager `title_link`, Grafana rule URL, …). */
  link?: string;
  /** Human-readable body text (attachments, blocks and text flattened). */
  text: string;
  /**
   * The source's own identity of this alert across its lifecycle, when its deliveries do not all carry the same
   * labels (Opsgenie's `alias`: a Close carries no details). The fingerprint is then this identity alone.
   */
  sourceKey?: string;
}

export interface AlertMember {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** The raw Slack message shape the parsers read: text, legacy attachments and blocks. */
export interface AlertMessage {
  text?: string;
  username?: string;
  bot_id?: string;
  bot_profile?: { name?: string };
  attachments?: SlackAttachment[];
  blocks?: unknown[];
  ts?: string;
}

export interface SlackAttachment {
  title?: string;
  title_link?: string;
  pretext?: string;
  text?: string;
  fallback?: string;
  color?: string;
  footer?: string;
  fields?: { title?: string; value?: string; short?: boolean }[];
  ts?: number | string;
}
