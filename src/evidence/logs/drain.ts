/**
 * Drain-style log template mining (He, Zhu, Zheng, Lyu, "Drain: An Online Log Parsing Approach with
 * Fixed Depth Tree", ICWS 2017). Each line is masked, split into tokens, and routed down a tree of fixed
 * depth: level + token count, then the first `depth - 2` tokens (variable-looking tokens go to `<*>`).
 * In the leaf, the line joins the most similar template when the share of equal tokens reaches the
 * threshold; positions that differ become `<*>`. Pure and synchronous: O(lines × leaf size).
 */
import { isVariableToken, maskVariables } from './mask.js';
import { prepareLine } from './preprocess.js';
import { OTHER_TEMPLATE, type LogLevel, type LogLine, type LogPattern, type MineOptions } from './types.js';

export const WILDCARD = '<*>';

/** A template with its members' statistics; `times` (ms) lets callers compare periods, e.g. before/after an onset. */
export interface MinedCluster {
  tokens: string[];
  level?: LogLevel;
  count: number;
  first?: number;
  last?: number;
  example: string;
  times: number[];
  /** Order of first appearance, a stable tie-breaker. */
  seq: number;
}

interface TreeNode {
  children: Map<string, TreeNode>;
  clusters: MinedCluster[];
}

/** `key=<*>`: a logfmt field whose value varies keeps its key, which is what a reader needs. */
const KEYED_WILDCARD = `=${WILDCARD}`;
const KEY_PREFIX = /^[A-Za-z_][\w.-]*=/;

/** Merge a template token with a line's token: equal stays, a shared `key=` prefix keeps the key, else `<*>`. */
function mergeToken(template: string, token: string): string {
  if (template === token || template === WILDCARD) return template;
  const key = KEY_PREFIX.exec(template)?.[0];
  return key !== undefined && token.startsWith(key) ? `${key}${WILDCARD}` : WILDCARD;
}

const newNode = (): TreeNode => ({ children: new Map(), clusters: [] });

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** The online miner: feed lines one by one, read clusters at any time. */
export class DrainMiner {
  private readonly root = newNode();
  private readonly all: MinedCluster[] = [];
  private readonly depth: number;
  private readonly similarity: number;
  private readonly maxChildren: number;
  private readonly exampleLength: number;
  private readonly maskQuoted: boolean;

  constructor(opts: MineOptions = {}) {
    this.depth = Math.max(3, opts.depth ?? 4);
    this.similarity = opts.similarity ?? 0.4;
    this.maxChildren = opts.maxChildren ?? 100;
    this.exampleLength = opts.exampleLength ?? 300;
    this.maskQuoted = opts.maskQuoted ?? false;
  }

  /** Add one line; returns its cluster, or undefined for a blank line. */
  add(entry: LogLine): MinedCluster | undefined {
    const prepared = prepareLine(entry.line);
    const tokens = maskVariables(prepared.text, { maskQuoted: this.maskQuoted }).split(/\s+/).filter((t) => t !== '');
    if (tokens.length === 0) return undefined;
    const leaf = this.leafFor(tokens, prepared.level);
    const ts = entry.ts?.getTime();
    let cluster = this.bestMatch(leaf.clusters, tokens);
    if (cluster) {
      for (let i = 0; i < tokens.length; i++) cluster.tokens[i] = mergeToken(cluster.tokens[i] ?? WILDCARD, tokens[i] ?? '');
      cluster.count++;
    } else {
      cluster = { tokens, level: prepared.level, count: 1, example: clip(entry.line.trim(), this.exampleLength), times: [], seq: this.all.length };
      leaf.clusters.push(cluster);
      this.all.push(cluster);
    }
    if (ts !== undefined && !Number.isNaN(ts)) {
      cluster.times.push(ts);
      if (cluster.first === undefined || ts < cluster.first) cluster.first = ts;
      if (cluster.last === undefined || ts > cluster.last) cluster.last = ts;
    }
    return cluster;
  }

  private leafFor(tokens: string[], level: LogLevel | undefined): TreeNode {
    let node = this.child(this.root, `${level ?? '-'}|${tokens.length}`, true);
    const layers = Math.min(this.depth - 2, tokens.length);
    for (let i = 0; i < layers; i++) {
      const token = tokens[i] ?? '';
      node = this.child(node, isVariableToken(token) ? WILDCARD : token, false);
    }
    return node;
  }

  /** Descend to `key`, creating it; a full node sends new keys to the wildcard branch (Drain's maxChild). */
  private child(node: TreeNode, key: string, unbounded: boolean): TreeNode {
    let next = node.children.get(key);
    if (next) return next;
    if (!unbounded && key !== WILDCARD && node.children.size >= this.maxChildren) return this.child(node, WILDCARD, true);
    next = newNode();
    node.children.set(key, next);
    return next;
  }

  /** Most similar template in the leaf (equal non-wildcard tokens / length; more wildcards break ties), if similar enough. */
  private bestMatch(clusters: MinedCluster[], tokens: string[]): MinedCluster | undefined {
    let best: MinedCluster | undefined;
    let bestSim = -1;
    let bestParams = -1;
    for (const c of clusters) {
      let same = 0;
      let params = 0;
      for (let i = 0; i < tokens.length; i++) {
        const t = c.tokens[i] ?? WILDCARD;
        const token = tokens[i] ?? '';
        if (t === WILDCARD) params++;
        else if (t === token) same++;
        else if (t.endsWith(KEYED_WILDCARD) && token.startsWith(t.slice(0, -WILDCARD.length))) params++;
      }
      const sim = same / tokens.length;
      if (sim > bestSim || (sim === bestSim && params > bestParams)) {
        best = c;
        bestSim = sim;
        bestParams = params;
      }
    }
    return best && bestSim >= this.similarity ? best : undefined;
  }

  /** Clusters with identical final templates (reached through different tree paths) merged. */
  clusters(): MinedCluster[] {
    const byKey = new Map<string, MinedCluster>();
    for (const c of this.all) {
      const key = `${c.level ?? '-'}|${c.tokens.join(' ')}`;
      const seen = byKey.get(key);
      if (!seen) {
        byKey.set(key, { ...c, tokens: [...c.tokens], times: [...c.times] });
        continue;
      }
      seen.count += c.count;
      seen.times.push(...c.times);
      if (c.first !== undefined && (seen.first === undefined || c.first < seen.first)) seen.first = c.first;
      if (c.last !== undefined && (seen.last === undefined || c.last > seen.last)) seen.last = c.last;
    }
    return [...byKey.values()];
  }

  toPattern(c: MinedCluster): LogPattern {
    const p: LogPattern = { template: clip(c.tokens.join(' '), this.exampleLength), count: c.count, example: c.example };
    if (c.first !== undefined) p.first = new Date(c.first);
    if (c.last !== undefined) p.last = new Date(c.last);
    if (c.level) p.level = c.level;
    return p;
  }
}

/** The head line of an exception or crash that carries no level of its own (`KeyError: 'X'`, `panic: …`). */
const CAUSE_LINE = /(^|[\s\]>|])(panic:|fatal error:|FATAL\b|[A-Z]\w*(Error|Exception)\b:|Caused by:)/;
/** Stack frames and traceback furniture: many lines, little meaning. */
const FRAME_LINE = /^(\s*File "|\s*at [\w$.<>]+\(|goroutine \d+|\s*[\w./-]+\.go:\d+|Traceback \(most recent call last\)|\.\.\. \d+ more|[\^~]+$)/;

const tiers = new WeakMap<LogPattern, number>();
function tier(p: LogPattern): number {
  const known = tiers.get(p);
  if (known !== undefined) return known;
  const text = p.example || p.template;
  const t = p.level === 'error' ? 0 : !p.level && CAUSE_LINE.test(text) ? 1 : !p.level && FRAME_LINE.test(text) ? 3 : 2;
  tiers.set(p, t);
  return t;
}

/**
 * Error patterns first, then the level-less head lines of exceptions (a Python traceback ends with
 * `KeyError: 'X'` and no level: it must not be folded away under its own stack frames), then the rest
 * by count (descending) and first appearance, stack frames last.
 */
export function comparePatterns(a: LogPattern & { seq?: number }, b: LogPattern & { seq?: number }): number {
  return tier(a) - tier(b) || b.count - a.count || (a.seq ?? 0) - (b.seq ?? 0);
}

/** Keep the first `max - 1` patterns of a sorted list and fold the rest into one "other" entry. */
export function foldPatterns(sorted: LogPattern[], max: number): LogPattern[] {
  if (sorted.length <= max) return sorted;
  const keep = sorted.slice(0, Math.max(0, max - 1));
  const rest = sorted.slice(keep.length);
  const other: LogPattern = { template: OTHER_TEMPLATE, count: 0, example: rest[0]?.example ?? '' };
  for (const p of rest) {
    other.count += p.count;
    if (p.first && (!other.first || p.first < other.first)) other.first = p.first;
    if (p.last && (!other.last || p.last > other.last)) other.last = p.last;
  }
  return [...keep, other];
}

/** Sort mined clusters into patterns (error first, then count). */
export function rankClusters(miner: DrainMiner, clusters: MinedCluster[]): LogPattern[] {
  return clusters
    .map((c) => ({ ...miner.toPattern(c), seq: c.seq }))
    .sort(comparePatterns)
    .map(({ seq: _seq, ...p }) => p);
}

/** Mine templates from log lines: a few dozen patterns with counts, time span, level and one example each. */
export function mineTemplates(lines: readonly LogLine[], opts: MineOptions = {}): LogPattern[] {
  const miner = new DrainMiner(opts);
  for (const l of lines) miner.add(l);
  return foldPatterns(rankClusters(miner, miner.clusters()), opts.maxPatterns ?? 40);
}
