/**
 * Kubernetes target hints in free text, as SREs type them: `deployment/checkout`, `svc/checkout`, `-n shop`,
 * `--namespace=shop`, `namespace=shop`, `in namespace shop`, `shop/checkout` (namespace/name). Shared by manual
 * `/sre investigate` text and generic bot posts. What is not a hint and not filler becomes `words`.
 */
export interface TargetHints {
  labels: Record<string, string>;
  /** Names seen without a kind (the `checkout` of `shop/checkout`), first. */
  names: string[];
  /** Remaining significant words, in order. */
  words: string[];
}

const KINDS: Record<string, string> = {
  deployment: 'deployment', deployments: 'deployment', deploy: 'deployment',
  statefulset: 'statefulset', statefulsets: 'statefulset', sts: 'statefulset',
  daemonset: 'daemonset', daemonsets: 'daemonset', ds: 'daemonset',
  pod: 'pod', pods: 'pod', po: 'pod',
  service: 'service', services: 'service', svc: 'service',
  job: 'job_name', jobs: 'job_name', cronjob: 'cronjob', cronjobs: 'cronjob', cj: 'cronjob',
  node: 'node', nodes: 'node', no: 'node',
  pvc: 'persistentvolumeclaim', persistentvolumeclaim: 'persistentvolumeclaim',
  ingress: 'ingress', ing: 'ingress', hpa: 'horizontalpodautoscaler', horizontalpodautoscaler: 'horizontalpodautoscaler',
  replicaset: 'replicaset', rs: 'replicaset', namespace: 'namespace', ns: 'namespace',
};
const DNS_NAME = '[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?';
const FILLER = new Set([
  'the', 'a', 'an', 'is', 'are', 'was', 'be', 'in', 'on', 'at', 'of', 'for', 'to', 'and', 'or', 'with', 'from', 'by',
  'why', 'what', 'how', 'when', 'who', 'it', 'its', 'this', 'that', 'please', 'pls', 'investigate', 'check', 'look',
  'into', 'me', 'my', 'our', 'we', 'us', 'can', 'you', 'has', 'have', 'been', 'since', 'again', 'there', 'some',
  'any', 'not', 'but', 'just', 'about', 'after', 'before', 'up', 'down', 'alert', 'alerts', 'firing', 'returned',
]);

export function extractTargetHints(input: string): TargetHints {
  const labels: Record<string, string> = {};
  const names: string[] = [];
  let text = ` ${input
    // Text is redacted before it is parsed: a placeholder names no target (and its `:kind:` is no emoji).
    .replace(/\[REDACTED:[a-z0-9_]{1,40}:[0-9a-f]{8}\]/g, ' ')
    .replace(/<?https?:\/\/\S+/g, ' ')
    .replace(/:[a-z0-9_+-]+:/g, ' ')
    .replace(/[()[\]{}]/g, ' ')} `;
  const take = (pattern: RegExp, onMatch: (...groups: string[]) => void): void => {
    text = text.replace(pattern, (...args: unknown[]) => {
      onMatch(...(args.slice(1, -2) as string[]));
      return ' ';
    });
  };
  const set = (key: string, value: string): void => {
    labels[key] ??= value;
  };

  take(new RegExp(`\\s(?:-n|--namespace)(?:\\s+|=)(${DNS_NAME})(?=\\s|[,.;:!?)]|$)`, 'gi'), (ns) => set('namespace', ns!.toLowerCase()));
  take(new RegExp(`\\s(?:in\\s+)?(?:the\\s+)?(?:namespace|ns)\\s+(?!(?:is|are|was|has|and|or|the|a|an|of|in)\\b)(${DNS_NAME})(?=\\s|[,.;:!?)]|$)`, 'gi'), (ns) => set('namespace', ns!.toLowerCase()));
  take(new RegExp(`\\s(?:in\\s+)(?:the\\s+)?(${DNS_NAME})\\s+namespace(?=\\s|[,.;:!?)]|$)`, 'gi'), (ns) => set('namespace', ns!.toLowerCase()));
  take(/\s([a-zA-Z_][a-zA-Z0-9_]*)\s?=\s?"?([^\s",}]+)"?(?=[\s,}]|$)/g, (key, value) => {
    const lower = key!.toLowerCase();
    set(lower === 'ns' ? 'namespace' : lower, value!.replace(/[.,;:!?)]+$/, ''));
  });
  take(new RegExp(`\\s([a-zA-Z]+)/(${DNS_NAME})(?:/(${DNS_NAME}))?(?=\\s|[,.;:!?)]|$)`, 'g'), (first, second, third) => {
    const kind = KINDS[first!.toLowerCase()];
    if (kind && !third) set(kind, second!.toLowerCase());
    else if (third) {
      // namespace/kind/name or namespace/name/… : keep the namespace and the last name
      set('namespace', first!.toLowerCase());
      const innerKind = KINDS[second!.toLowerCase()];
      if (innerKind) set(innerKind, third.toLowerCase());
      else names.push(third.toLowerCase());
    } else {
      set('namespace', first!.toLowerCase());
      names.push(second!.toLowerCase());
    }
  });
  take(new RegExp(`\\s(${DNS_NAME})/(${DNS_NAME})(?=\\s|[,.;:!?)]|$)`, 'g'), (ns, name) => {
    set('namespace', ns!.toLowerCase());
    names.push(name!.toLowerCase());
  });
  // `deployment checkout`, `pod checkout-7d9f8b6c5-x2x9z`
  take(new RegExp(`\\s(deployment|statefulset|daemonset|pod|service|svc|cronjob|node|pvc)\\s+(${DNS_NAME})(?=\\s|[,.;:!?)]|$)`, 'gi'), (kind, name) =>
    set(KINDS[kind!.toLowerCase()]!, name!.toLowerCase()),
  );

  const words = text
    .split(/[\s,;:!?()[\]{}"'`*]+/)
    .map((word) => word.replace(/^[.#@]+|[.]+$/g, ''))
    .filter((word) => word.length >= 2 && !FILLER.has(word.toLowerCase()) && !/^:[a-z0-9_+-]+:$/.test(word));
  return { labels, names, words };
}
