import { Octokit } from '@octokit/rest';
import type { Logger } from 'pino';
import type { BudgetLimits } from '../agent/budget.js';
import type { ModelProvider } from '../agent/types.js';
import { parseRepo } from '../evidence/github/client.js';
import { recordAudit } from '../incidents/audit.js';
import type { ChatPort } from '../incidents/chat.js';
import type { Redactor } from '../redact/index.js';
import { renderPostmortem } from '../slack/blocks/postmortem.js';
import type { Db } from '../store/db.js';
import { draftPostmortem } from './draft.js';
import { renderPostmortemMarkdown } from './markdown.js';
import { writeProse, type NarratedPostmortem } from './prose.js';
import { loadPostmortemRecord } from './record.js';
import type { Postmortem } from './types.js';
import type { Tracer } from '@opentelemetry/api';
import { inSpan, recordAgentEvent, rootContext } from '../audit/tracing.js';

export interface PostmortemGitHubSettings {
  /** A ready client (tests, shared app client); otherwise one is made from `token` and `baseUrl`. */
  octokit?: Octokit;
  /** Needs `issues: write` on `repo`. */
  token?: string;
  /** API base; default `https://api.github.com`. */
  baseUrl?: string;
  /** `owner/name` where postmortem issues are opened. */
  repo: string;
  labels?: string[];
}

export interface PostmortemServiceDeps {
  db: Db;
  chat: ChatPort;
  github?: PostmortemGitHubSettings;
  redactor: Redactor;
  log: Logger;
  now?: () => Date;
  /** When set, the model rewrites the draft's narrative from its facts (src/postmortem/prose.ts); else rules only. */
  model?: ModelProvider;
  /** Limits of that rewrite (default `PROSE_BUDGET`). */
  modelBudget?: Partial<Omit<BudgetLimits, 'maxSteps'>>;
}

export interface PostmortemResult {
  incidentId: string;
  /** For the requester's ephemeral reply. */
  text: string;
  postTs?: string;
  issueUrl?: string;
  /** Set when the issue could not be opened (the thread post still went out). */
  issueError?: string;
  postmortem: NarratedPostmortem;
}

export class PostmortemNotFoundError extends Error {}

/** Longest issue body GitHub accepts is 65,536 characters; keep a margin for the truncation note. */
const MAX_ISSUE_BODY = 65_000;

/**
 * Builds the postmortem draft from the store, posts it in the incident thread and, when GitHub issues are
 * configured, opens an issue with the Markdown. Everything leaving Vigil is redacted once more here: the
 * rows are stored redacted, but a detector added since must still apply to what is published.
 */
export class PostmortemService {
  /** Set by the composition root when traces are on. */
  tracer: Tracer | undefined;

  private readonly octokit: Octokit | undefined;
  private readonly now: () => Date;

  constructor(private readonly deps: PostmortemServiceDeps) {
    const gh = deps.github;
    this.octokit =
      gh?.octokit ??
      (gh
        ? new Octokit({
            ...(gh.token ? { auth: gh.token } : {}),
            ...(gh.baseUrl ? { baseUrl: gh.baseUrl.replace(/\/+$/, '') } : {}),
            userAgent: 'vigil-sre-agent',
            log: { debug() {}, info() {}, warn: (m: string) => deps.log.warn({ source: 'github' }, m), error: (m: string) => deps.log.error({ source: 'github' }, m) },
          })
        : undefined);
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * The draft alone (no posting), for previews and tests. With `prose` and a model configured, the model
   * writes the narrative from the redacted draft's facts; otherwise (and whenever the model fails) rules do.
   */
  async draft(incidentId: string, opts: { prose?: boolean; requestedBy?: string } = {}): Promise<NarratedPostmortem> {
    const record = await loadPostmortemRecord(this.deps.db, incidentId, this.now());
    if (!record) throw new PostmortemNotFoundError(`no incident ${incidentId}`);
    const pm = draftPostmortem(record);
    return opts.prose && this.deps.model ? this.narrate(this.deps.redactor.redactValue(pm), this.deps.model, opts.requestedBy) : { ...pm, prose: { by: 'rules' } };
  }

  /** Every model call is audited like the investigation's (`model_call` events); a failure only costs the nicer prose. */
  private async narrate(pm: Postmortem, provider: ModelProvider, requestedBy = 'vigil'): Promise<NarratedPostmortem> {
    const { db, redactor, log } = this.deps;
    const incidentId = pm.incidentId;
    const audits: Promise<void>[] = [];
    const audit = (kind: string, data: Record<string, unknown>): void => {
      audits.push(recordAudit(db, { incidentId, actor: 'vigil', kind, data: { ...redactor.redactValue(data), requestedBy }, at: this.now() }).catch((err: unknown) => log.warn({ err: String(err) }, 'audit write failed')));
    };
    try {
      // One trace per draft, with a GenAI span per model call, as investigations have.
      const tracer = this.tracer;
      const r = await inSpan(tracer, 'vigil.postmortem.prose', rootContext(), { 'vigil.incident.id': incidentId }, (_span, ctx) =>
        writeProse(pm, {
          provider,
          redactor,
          ...(this.deps.modelBudget ? { budget: this.deps.modelBudget } : {}),
          onEvent: (e) => {
            audit(`postmortem.${e.type}`, { ...e });
            recordAgentEvent(tracer, ctx, e);
          },
        }),
      );
      const credit = r.postmortem.prose;
      // The rejected answers' inventions stay here (redacted), out of the published note.
      audit('postmortem.prose', { ...credit, ...(credit.by === 'rules' ? { provider: provider.name, model: provider.model } : {}), calls: r.calls, usage: r.usage, ...(r.unsupported ? { unsupported: r.unsupported } : {}) });
      return r.postmortem;
    } catch (err) {
      const error = redactor.redactText(err instanceof Error ? err.message : String(err));
      log.warn({ incidentId, err: error }, 'postmortem prose by the model failed');
      return { ...pm, prose: { by: 'rules', note: `The model step failed (${error.slice(0, 160)}). The narrative is rule-based.` } };
    } finally {
      await Promise.all(audits);
    }
  }

  /** The incident whose thread this is (the alert post, or Vigil's root post for `/sre investigate`). */
  async findIncidentForThread(channel: string, threadTs: string): Promise<string | undefined> {
    const { db } = this.deps;
    const byThread = await db.incident.findFirst({ where: { channelId: channel, threadTs }, orderBy: { openedAt: 'desc' }, select: { id: true } });
    if (byThread) return byThread.id;
    const alert = await db.alert.findFirst({ where: { channelId: channel, messageTs: threadTs }, select: { incidentId: true } });
    return alert?.incidentId;
  }

  async postDraft(incidentId: string, requestedBy: string): Promise<PostmortemResult> {
    const { db, chat, redactor, log } = this.deps;
    // Redacted before rendering: escaping (Markdown's `@` breaking, Slack entities) would hide secrets from the detectors.
    const pm = redactor.redactValue(await this.draft(incidentId, { prose: true, requestedBy }));
    const incident = await db.incident.findUniqueOrThrow({ where: { id: incidentId }, select: { channelId: true, threadTs: true } });

    let issueUrl: string | undefined;
    let issueError: string | undefined;
    if (this.octokit && this.deps.github) {
      try {
        issueUrl = await this.openIssue(pm);
      } catch (err) {
        issueError = redactor.redactText(err instanceof Error ? err.message : String(err));
        log.warn({ incidentId, err: issueError }, 'postmortem issue could not be opened');
      }
    }

    const n = (await db.auditEvent.count({ where: { incidentId, kind: 'postmortem.posted' } })) + 1;
    const message = redactor.redactValue(renderPostmortem(pm, issueUrl ? { issueUrl } : {}));
    const { ts } = await chat.post(incident.channelId, incident.threadTs ?? undefined, message, { incidentId, purpose: `postmortem:${n}` });
    await recordAudit(db, { incidentId, actor: requestedBy, kind: 'postmortem.posted', data: { ts, prose: pm.prose.by, ...(issueUrl ? { issueUrl } : {}), ...(issueError ? { issueError } : {}) }, at: this.now() });

    const where = issueUrl ? ` and opened ${issueUrl}` : issueError ? ` (the GitHub issue could not be opened: ${issueError})` : '';
    const text = redactor.redactText(`Postmortem draft for "${pm.title}" posted in the incident thread${where}. Cause: ${pm.summary.cause}`);
    return { incidentId, text, postTs: ts, ...(issueUrl ? { issueUrl } : {}), ...(issueError ? { issueError } : {}), postmortem: pm };
  }

  private async openIssue(pm: NarratedPostmortem): Promise<string> {
    const gh = this.deps.github!;
    const { owner, repo } = parseRepo(gh.repo);
    let body = this.deps.redactor.redactText(renderPostmortemMarkdown(pm));
    if (body.length > MAX_ISSUE_BODY) body = `${body.slice(0, MAX_ISSUE_BODY)}\n\n_… cut to fit GitHub's issue size limit; the full record is in Vigil's store._\n`;
    const title = this.deps.redactor.redactText(`Postmortem: ${pm.title}`).slice(0, 250);
    const res = await this.octokit!.rest.issues.create({ owner, repo, title, body, ...(gh.labels?.length ? { labels: gh.labels } : {}) });
    return res.data.html_url;
  }
}
