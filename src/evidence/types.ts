/** A Kubernetes (or other) object the diagnosis is about. */
export interface ComponentRef {
  kind: string;
  namespace?: string;
  name: string;
}

export function formatComponent(c: ComponentRef): string {
  const kind = c.kind.toLowerCase();
  return c.namespace ? `${c.namespace}/${kind}/${c.name}` : `${kind}/${c.name}`;
}

/** Where a claim comes from, so a card can cite it and a reviewer can re-run it. */
export interface Citation {
  /** e.g. `kubernetes`, `prometheus`, `loki`, `github`, `flags`, `slack`. */
  source: string;
  /** The object path (`apis/apps/v1/namespaces/shop/deployments/checkout#metadata.managedFields[1]`) or the exact query. */
  ref: string;
  /** Time range the query covered, when it has one. */
  range?: { from: Date; to: Date };
  url?: string;
  /** A command a person can run to see it (`kubectl get deployments.apps checkout -n shop -o yaml`), when there is no URL. */
  command?: string;
}

export type EvidenceKind =
  | 'object'
  | 'managed_fields'
  | 'event'
  | 'log'
  | 'metric'
  | 'change'
  | 'endpoints'
  | 'helm_release'
  | 'note';

/**
 * One fact, already redacted and size-bounded, with its citation. `summary` is what a card shows;
 * `detail` holds the bounded structured facts (never raw secret data).
 */
export interface Evidence {
  kind: EvidenceKind;
  summary: string;
  citation: Citation;
  observedAt?: Date;
  detail?: Record<string, unknown>;
}
