import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, isAbsolute } from 'node:path';
import { parse, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { FAMILY_CLAIMS, FAMILY_IDS } from '../triage/families.js';
import type { HypothesisStatus } from '../triage/types.js';

/**
 * Skills: the team's debugging procedures, one Markdown file each in the skills directory
 * (VIGIL_SKILLS_DIR, default `skills/`). YAML front matter says when a procedure applies and which tools
 * it reads with; the body is the procedure a senior SRE would follow:
 *
 * ```markdown
 * ---
 * name: crash-loop                  # = the file name without .md
 * title: Containers crash on start or soon after
 * applies_to:
 *   alerts: [KubePodCrashLooping]   # alert names (case-insensitive; a trailing * is a prefix)
 *   kinds: [Deployment]             # resource kinds of the target
 *   families: [crash-loop]          # fault families (docs/fault-families.md)
 *   analyzers: [crash-loop]         # triage analyzers
 *   symptoms: [CrashLoopBackOff]    # words or phrases in the alert text
 *   services: []                    # only for these services (empty: any)
 * tools: [k8s_describe, k8s_pod_logs]
 * ---
 * ## Signals … ## Checks … ## Find who did it … ## Mitigate … ## Follow-ups …
 * ```
 *
 * Vigil selects the skills that apply to an investigation (`selectSkills`), gives them to the model loop
 * (`skillsBrief`), cites the one it followed on the board, and offers a skill's "Find who did it" and
 * "Follow-ups" steps on the board when the skill applies to the leading hypothesis (`Skill.followUps`).
 *
 * A bad file is a load error naming the file and the field, never a crash: skills are advice, and a typo
 * in one runbook must not keep the incident responder from starting (or take the good skills with it).
 * The errors are logged at start-up and shown on App Home; `test/knowledge` validates the shipped ones.
 */

/** Every tool name the model may be given (src/evidence/tools.ts); a test keeps the two in step. */
export const KNOWN_TOOLS = [
  'topology',
  'k8s_get',
  'k8s_list',
  'k8s_describe',
  'k8s_events',
  'k8s_pod_logs',
  'k8s_workload_logs',
  'k8s_rollout_history',
  'k8s_endpoints',
  'k8s_hpa',
  'k8s_storage',
  'k8s_nodes',
  'k8s_network_policies',
  'k8s_helm_history',
  'k8s_tls_certificates',
  'prometheus_discover',
  'prometheus_query',
  'prometheus_query_range',
  'loki_query_range',
  'github_recent_changes',
  'github_pull_request',
] as const;

const KNOWN_ANALYZERS: ReadonlySet<string> = new Set(Object.values(FAMILY_CLAIMS).flatMap((c) => ('analyzers' in c ? c.analyzers : [])));

const words = z.array(z.string().trim().min(1, 'expects a non-empty string')).default([]);

const appliesToSchema = z
  .object({
    alerts: words,
    kinds: z.array(z.string().regex(/^[A-Z][A-Za-z0-9]*$/, 'expects a Kubernetes kind such as Deployment')).default([]),
    families: z.array(z.string().refine((f) => FAMILY_IDS.has(f), { error: (i) => `unknown fault family ${JSON.stringify(i.input)} (see docs/fault-families.md)` })).default([]),
    analyzers: z.array(z.string().refine((a) => KNOWN_ANALYZERS.has(a), { error: (i) => `unknown triage analyzer ${JSON.stringify(i.input)} (see docs/fault-families.md)` })).default([]),
    symptoms: words,
    services: words,
  })
  .strict()
  .refine((a) => a.alerts.length + a.families.length + a.analyzers.length + a.symptoms.length > 0, {
    error: 'expects at least one of alerts, families, analyzers or symptoms (kinds and services alone would match almost anything)',
  });

const toolSet: ReadonlySet<string> = new Set(KNOWN_TOOLS);

export const skillFrontMatterSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expects a lowercase id such as crash-loop (the file name without .md)'),
    title: z.string().trim().min(1, 'expects a one-line title').max(150, 'expects a title of at most 150 characters'),
    applies_to: appliesToSchema,
    tools: z.array(z.string().refine((t) => toolSet.has(t), { error: (i) => `unknown tool ${JSON.stringify(i.input)}; one of ${KNOWN_TOOLS.join(', ')}` })).default([]),
  })
  .strict();

export type SkillFrontMatter = z.infer<typeof skillFrontMatterSchema>;

export interface Skill {
  name: string;
  title: string;
  /** Where it was read from, as people cite it: `skills/crash-loop.md`. */
  file: string;
  appliesTo: SkillFrontMatter['applies_to'];
  tools: string[];
  /** The Markdown body (without the front matter). */
  body: string;
  /** The steps of its "Find who did it" and "Follow-ups" sections, in order (one line each). */
  followUps: string[];
}

export interface SkillLoadError {
  file: string;
  /** The front-matter field at fault (`applies_to.families.0`), when it is one field. */
  field?: string;
  message: string;
}

/** One bad skill file: names the file and the field. */
export class SkillError extends Error {
  constructor(
    readonly file: string,
    readonly field: string | undefined,
    readonly reason: string,
  ) {
    super(`${file}: ${field ? `${field}: ` : ''}${reason}`);
    this.name = 'SkillError';
  }
}

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;
const FOLLOW_UP_HEADING = /^(find who (did|changed|caused) it|who (did|changed) it|follow[- ]?ups?)\b/i;
const MAX_STEP_CHARS = 400;

/** Parse one skill file's text; throws a SkillError naming `file` and the field. */
export function parseSkill(text: string, file: string): Skill {
  const m = FRONT_MATTER.exec(text);
  if (!m) throw new SkillError(file, undefined, 'expects YAML front matter between --- lines at the top of the file');
  let raw: unknown;
  try {
    raw = parse(m[1]!);
  } catch (err) {
    const where = err instanceof YAMLParseError && err.linePos ? ` at line ${err.linePos[0].line + 1}` : '';
    throw new SkillError(file, undefined, `front matter is not valid YAML${where}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new SkillError(file, undefined, 'front matter must be a YAML mapping (name, title, applies_to, tools)');
  const parsed = skillFrontMatterSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    const path = [...issue.path, ...(keys.length === 1 ? keys : [])].map(String).join('.');
    const rest = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more problem${parsed.error.issues.length > 2 ? 's' : ''})` : '';
    throw new SkillError(file, path || undefined, `${issue.message}${rest}`);
  }
  const fm = parsed.data;
  const stem = basename(file).replace(/\.md$/i, '');
  if (fm.name !== stem) throw new SkillError(file, 'name', `expects ${JSON.stringify(stem)}, the file name without .md (it is how the board cites the skill)`);
  const body = text.slice(m[0].length).trim();
  if (!/^##\s+\S/m.test(body)) throw new SkillError(file, undefined, 'expects a Markdown body with ## sections (Signals, Checks, Find who did it, Mitigate, Follow-ups)');
  return { name: fm.name, title: fm.title, file, appliesTo: fm.applies_to, tools: fm.tools, body, followUps: followUpSteps(body) };
}

/**
 * The list items of the body's "Find who did it" and "Follow-ups" sections (any `##`/`###` heading that
 * starts so), each as one line: a wrapped item's continuation lines are joined, nested items become their own.
 */
export function followUpSteps(body: string): string[] {
  const steps: string[] = [];
  let inSection = false;
  let current: string | undefined;
  let fence = false;
  const flush = () => {
    if (current) steps.push(current.length > MAX_STEP_CHARS ? `${current.slice(0, MAX_STEP_CHARS - 1)}…` : current);
    current = undefined;
  };
  for (const line of body.split(/\r?\n/)) {
    if (/^\s*```/.test(line)) fence = !fence;
    const heading = !fence ? /^#{2,3}\s+(.*)$/.exec(line) : null;
    if (heading) {
      flush();
      inSection = FOLLOW_UP_HEADING.test(heading[1]!.trim());
      continue;
    }
    if (!inSection || fence) continue;
    const item = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (item) {
      flush();
      current = item[1]!.trim();
    } else if (current !== undefined && line.trim() !== '') {
      current = `${current} ${line.trim()}`;
    } else if (line.trim() === '') flush();
  }
  flush();
  return steps.filter(Boolean);
}

/** How a path is shown: relative to the working directory when inside it (`skills/x.md`). */
function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split('\\').join('/') : path;
}

export interface SkillLibraryState {
  skills: Skill[];
  errors: SkillLoadError[];
  loadedAt: Date;
}

/** Read every `*.md` in `dir` (README.md excepted): good files become skills, bad ones load errors. */
export function loadSkillsDir(dir: string, now: Date = new Date()): SkillLibraryState {
  const skills: Skill[] = [];
  const errors: SkillLoadError[] = [];
  const shownDir = displayPath(dir);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.toLowerCase().endsWith('.md') && n.toLowerCase() !== 'readme.md').sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { skills, errors: [{ file: shownDir, message: code === 'ENOENT' ? 'skills directory does not exist' : `cannot read the skills directory: ${String(err)}` }], loadedAt: now };
  }
  for (const n of names) {
    const file = displayPath(join(dir, n));
    try {
      const skill = parseSkill(readFileSync(join(dir, n), 'utf8'), file);
      const first = skills.find((s) => s.name === skill.name);
      if (first) throw new SkillError(file, 'name', `${JSON.stringify(skill.name)} is already the name of ${first.file}; each skill needs its own name`);
      skills.push(skill);
    } catch (err) {
      errors.push(err instanceof SkillError ? { file: err.file, ...(err.field ? { field: err.field } : {}), message: err.reason } : { file, message: String(err) });
    }
  }
  return { skills, errors, loadedAt: now };
}

/** The skills directory as loaded, reloaded when a file in it changes (a ConfigMap update, a redeploy). */
export class SkillLibrary {
  private state: SkillLibraryState;
  private signature: string;
  private checkedAt = 0;
  /** Called after a reload that `refresh` did (start-up logs its own load): log the new errors. */
  onReload?: (state: SkillLibraryState) => void;

  constructor(
    readonly dir: string | undefined,
    state?: SkillLibraryState,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.state = state ?? (dir ? loadSkillsDir(dir, now()) : { skills: [], errors: [], loadedAt: now() });
    this.signature = this.currentSignature();
  }

  static load(dir: string | undefined, now?: () => Date): SkillLibrary {
    return new SkillLibrary(dir, undefined, now);
  }

  /** A library of skills parsed elsewhere (tests, the demo). */
  static of(skills: Skill[], errors: SkillLoadError[] = [], loadedAt = new Date()): SkillLibrary {
    return new SkillLibrary(undefined, { skills, errors, loadedAt });
  }

  get skills(): readonly Skill[] {
    return this.state.skills;
  }
  get errors(): readonly SkillLoadError[] {
    return this.state.errors;
  }
  get loadedAt(): Date {
    return this.state.loadedAt;
  }

  find(name: string): Skill | undefined {
    return this.state.skills.find((s) => s.name === name);
  }

  /**
   * Reload when a file was added, removed or changed since the last load; checked at most every
   * `minIntervalMs`. Returns whether it reloaded.
   */
  refresh(minIntervalMs = 30_000): boolean {
    if (!this.dir) return false;
    const t = this.now().getTime();
    if (t - this.checkedAt < minIntervalMs) return false;
    this.checkedAt = t;
    const sig = this.currentSignature();
    if (sig === this.signature) return false;
    this.state = loadSkillsDir(this.dir, this.now());
    this.signature = sig;
    this.onReload?.(this.state);
    return true;
  }

  /** The skills that apply (after picking up any edit of the directory). */
  select(s: SkillSituation, opts?: SelectOptions): SkillMatch[] {
    this.refresh();
    return selectSkills(this.state.skills, s, opts);
  }

  private currentSignature(): string {
    if (!this.dir) return '';
    try {
      return readdirSync(this.dir)
        .filter((n) => n.toLowerCase().endsWith('.md'))
        .sort()
        .map((n) => {
          const st = statSync(join(this.dir!, n));
          return `${n}:${st.size}:${st.mtimeMs}`;
        })
        .join('|');
    } catch {
      return 'unreadable';
    }
  }
}

/** What an investigation offers to match skills against. */
export interface SkillSituation {
  alertName: string;
  /** The alert's title, text and annotations: where symptoms are looked for. */
  alertText: string;
  /** Kinds of the target and of what the alert names. */
  kinds: string[];
  /** Names of the target, its service labels and its catalog service. */
  services: string[];
  findings: { key?: string; family?: string; analyzer: string; status: HypothesisStatus; confidence: number }[];
}

export interface SkillMatch {
  skill: Skill;
  score: number;
  /** Why it was selected, in words: `leading hypothesis is crash-loop`, `alert KubePodCrashLooping`. */
  why: string[];
  /** The leading supported finding is one this skill is about (its follow-ups go on the board). */
  leading: boolean;
}

export interface SelectOptions {
  /** At most this many (default 3). */
  limit?: number;
  /** Below this score a skill is not selected (default 3). */
  minScore?: number;
}

const STATUS_WEIGHT: Record<HypothesisStatus, number> = { supported: 6, open: 3, inconclusive: 3, ruled_out: 0, unrelated: 0 };

const lower = (xs: readonly string[]) => xs.map((x) => x.toLowerCase());

function alertMatches(pattern: string, name: string): boolean {
  const p = pattern.toLowerCase();
  const n = name.toLowerCase();
  return p.endsWith('*') ? n.startsWith(p.slice(0, -1)) : p === n;
}

function phraseIn(phrase: string, text: string): boolean {
  const escaped = phrase.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+');
  return new RegExp(`(?<![a-z0-9])${escaped}(?![a-z0-9])`, 'i').test(text);
}

/** Whether a skill is about this finding (by its fault family or its analyzer). */
export function skillCovers(skill: Pick<Skill, 'appliesTo'>, f: { family?: string | null; analyzer: string }): boolean {
  return (!!f.family && skill.appliesTo.families.includes(f.family)) || skill.appliesTo.analyzers.includes(f.analyzer);
}

/** The leading finding as the board picks it: the supported one with the highest confidence. */
export function leadingFinding<F extends { status: HypothesisStatus; confidence: number }>(findings: readonly F[]): F | undefined {
  return findings.filter((f) => f.status === 'supported').sort((a, b) => b.confidence - a.confidence)[0];
}

/**
 * Rank skills for an investigation, deterministically: the triage hypotheses they cover (the leading one
 * most, then supported, then open), the alert name, symptoms in the alert text, the target's kind (a
 * tie-breaker only). A skill that lists services applies to those services only. Ties go by name.
 */
export function selectSkills(skills: readonly Skill[], s: SkillSituation, opts: SelectOptions = {}): SkillMatch[] {
  const limit = opts.limit ?? 3;
  const minScore = opts.minScore ?? 3;
  const lead = leadingFinding(s.findings);
  const kinds = new Set(lower(s.kinds));
  const services = new Set(lower(s.services));
  const matches: SkillMatch[] = [];
  for (const skill of skills) {
    const a = skill.appliesTo;
    if (a.services.length > 0 && !lower(a.services).some((x) => services.has(x))) continue;
    const why: string[] = [];
    let relevance = 0;
    const covered = s.findings.filter((f) => skillCovers(skill, f)).sort((x, y) => STATUS_WEIGHT[y.status] - STATUS_WEIGHT[x.status] || y.confidence - x.confidence);
    const best = covered[0];
    const isLeading = !!lead && skillCovers(skill, lead);
    if (isLeading) {
      relevance += 8;
      why.push(`leading hypothesis is ${lead.family ?? lead.analyzer}`);
    } else if (best && STATUS_WEIGHT[best.status] > 0) {
      relevance += STATUS_WEIGHT[best.status];
      why.push(`${best.status} hypothesis ${best.family ?? best.analyzer}`);
    }
    const alert = a.alerts.find((p) => alertMatches(p, s.alertName));
    if (alert) {
      relevance += 4;
      why.push(`alert ${s.alertName}`);
    }
    const symptoms = a.symptoms.filter((p) => phraseIn(p, s.alertText));
    if (symptoms.length > 0) {
      relevance += Math.min(4, 2 * symptoms.length);
      why.push(`symptom${symptoms.length > 1 ? 's' : ''} ${symptoms.slice(0, 3).map((x) => JSON.stringify(x)).join(', ')}`);
    }
    if (relevance === 0) continue;
    let score = relevance;
    const kind = a.kinds.find((k) => kinds.has(k.toLowerCase()));
    if (kind) {
      score += 1;
      why.push(`kind ${kind}`);
    }
    if (a.services.length > 0) {
      score += 2;
      why.push('service-specific');
    }
    if (score >= minScore) matches.push({ skill, score, why, leading: isLeading });
  }
  return matches.sort((x, y) => y.score - x.score || x.skill.name.localeCompare(y.skill.name)).slice(0, limit);
}

/** Characters of skills text the model brief takes (the brief clips its skills section at 4000). */
export const SKILLS_BRIEF_CHARS = 3800;

/**
 * The sections of a procedure the model reasons with. The brief is resent on every model call (about six
 * in an investigation), so what it does not use costs six times over: signals are how the alert fired,
 * mitigations go through the action catalog and its policy, follow-ups are on the card.
 */
const MODEL_SECTIONS = ['checks', 'find who did it', 'rules it out'];

/** A skill's body cut to MODEL_SECTIONS, in its own order; the whole body when it has none of them. */
export function modelBody(body: string): string {
  const sections = body.split(/^(?=## )/m);
  const kept = sections.filter((sec) => MODEL_SECTIONS.includes((/^## (.+)$/m.exec(sec)?.[1] ?? '').trim().toLowerCase()));
  return kept.length ? kept.map((x) => x.trimEnd()).join('\n\n') : body;
}

/**
 * The selected skills as the model reads them, within `maxChars`: the best match's procedure in full (cut
 * if it must be), then the others' while they fit (with `bestOnly`, none: the model loop resends the brief
 * on every call), then only their titles and files.
 */
export function skillsBrief(matches: readonly SkillMatch[], maxChars = SKILLS_BRIEF_CHARS, opts: { bestOnly?: boolean } = {}): string {
  if (matches.length === 0) return '';
  const titleLine = (m: SkillMatch) => `- ${m.skill.file}: ${m.skill.title}`;
  const TAIL_HEAD = '\n\nAlso relevant (not shown for length):';
  const parts: string[] = [];
  const titlesOnly: string[] = [];
  let used = 0;
  for (const [i, m] of matches.entries()) {
    // The model has the tools already and the selection reasons are the brief's own findings: file and title suffice.
    const head = `### ${m.skill.file}: ${m.skill.title}`;
    const body = modelBody(m.skill.body);
    const whole = `${head}\n${body}`;
    const sep = parts.length ? 2 : 0;
    // Room kept for the title lines of the skills after this one, should they not fit whole.
    const later = matches.slice(i + 1);
    const reserve = later.length ? TAIL_HEAD.length + later.map((x) => titleLine(x).length + 1).reduce((x, y) => x + y, 0) : 0;
    if ((i === 0 || !opts.bestOnly) && used + sep + whole.length + reserve <= maxChars) {
      parts.push(whole);
      used += sep + whole.length;
    } else if (i === 0) {
      const marker = `\n… (cut; the rest is in ${m.skill.file})`;
      const room = Math.max(0, maxChars - reserve - head.length - 1 - marker.length);
      parts.push(`${head}\n${body.slice(0, room).trimEnd()}${marker}`);
      used = maxChars - reserve;
    } else titlesOnly.push(titleLine(m));
  }
  const tail = titlesOnly.length ? `${TAIL_HEAD}\n${titlesOnly.join('\n')}` : '';
  return `${parts.join('\n\n')}${tail}`.slice(0, maxChars);
}

/**
 * Fill a step's placeholders from the hypothesis's component (or the target): `{namespace}` / `{ns}`,
 * `{name}` and `{kind}` (lowercase, as kubectl takes it), also written `<namespace>`, `<ns>`, `<name>`,
 * `<kind>`, and `{<kind>}` (`{node}` for a Node) with its name. Others (`{release}`, `<n>`) stay for the reader.
 */
export function fillPlaceholders(step: string, c: { kind?: string; namespace?: string; name?: string } | undefined): string {
  if (!c) return step;
  let out = step;
  if (c.namespace) out = out.replace(/\{(?:ns|namespace)\}|<(?:ns|namespace)>/g, c.namespace);
  if (c.name) out = out.replace(/\{name\}|<name>/g, c.name);
  if (c.kind) out = out.replace(/\{kind\}|<kind>/g, c.kind.toLowerCase());
  // `{node}` for a Node, `{persistentvolumeclaim}` for a PVC: the component's own name.
  if (c.kind && c.name) out = out.split(`{${c.kind.toLowerCase()}}`).join(c.name);
  return out;
}

/** Kubernetes kinds an alert's label keys name (kube-state-metrics and Alertmanager conventions). */
const LABEL_KINDS: Record<string, string> = {
  deployment: 'Deployment',
  statefulset: 'StatefulSet',
  daemonset: 'DaemonSet',
  job_name: 'Job',
  cronjob: 'CronJob',
  pod: 'Pod',
  node: 'Node',
  persistentvolumeclaim: 'PersistentVolumeClaim',
  horizontalpodautoscaler: 'HorizontalPodAutoscaler',
  ingress: 'Ingress',
  certificate: 'Certificate',
  networkpolicy: 'NetworkPolicy',
};

/** Label keys whose value names the service an alert is about. */
const SERVICE_LABELS = ['service', 'app', 'app_kubernetes_io_name', 'job', 'container', 'deployment', 'statefulset'];

type AlertLike = { alertName: string; title?: string; text?: string; labels?: Record<string, string>; annotations?: Record<string, string> };

/**
 * The situation skills are matched against, from what an investigation stores: the alert, the resolved
 * target, the findings (the stored hypotheses carry analyzer, family, status and confidence) and the
 * service names known for it. The model step and the board build it the same way, so the board cites the
 * skill the model was given.
 */
export function skillSituation(o: {
  alert: AlertLike;
  target?: { kind: string; namespace?: string; name: string } | undefined;
  findings: readonly { key?: string; family?: string | null; analyzer: string; status: string; confidence: number; component?: { kind: string } | undefined }[];
  services?: readonly (string | undefined | null)[];
}): SkillSituation {
  const labels = o.alert.labels ?? {};
  const kinds = new Set<string>();
  if (o.target) kinds.add(o.target.kind);
  for (const k of Object.keys(labels)) if (LABEL_KINDS[k]) kinds.add(LABEL_KINDS[k]);
  for (const f of o.findings) if (f.component?.kind) kinds.add(f.component.kind);
  const services = new Set<string>();
  for (const s of [o.target?.name, ...(o.services ?? []), ...SERVICE_LABELS.map((k) => labels[k])]) if (s) services.add(s);
  const text = [o.alert.alertName, o.alert.title, o.alert.text, ...Object.values(o.alert.annotations ?? {}), ...Object.values(labels)].filter(Boolean).join('\n');
  return {
    alertName: o.alert.alertName,
    alertText: text,
    kinds: [...kinds],
    services: [...services],
    findings: o.findings.map((f) => ({
      ...(f.key ? { key: f.key } : {}),
      ...(f.family ? { family: f.family } : {}),
      analyzer: f.analyzer,
      status: (f.status in STATUS_WEIGHT ? f.status : 'open') as HypothesisStatus,
      confidence: f.confidence,
    })),
  };
}

/** The procedure the board cites: the selected skill about the leading hypothesis, else (nothing supported yet) the best match. */
export function citedSkill(matches: readonly SkillMatch[], s: SkillSituation): SkillMatch | undefined {
  const lead = matches.find((m) => m.leading);
  if (lead) return lead;
  return leadingFinding(s.findings) ? undefined : matches[0];
}
