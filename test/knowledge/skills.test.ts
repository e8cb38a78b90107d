import { mkdtempSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { skillsReport } from '../../src/cli/doctor.js';
import { GitHubReader } from '../../src/evidence/github/client.js';
import { KubeReader } from '../../src/evidence/kubernetes/client.js';
import { LokiClient } from '../../src/evidence/loki/client.js';
import { PrometheusClient } from '../../src/evidence/prometheus/client.js';
import { evidenceTools } from '../../src/evidence/tools.js';
import {
  citedSkill,
  fillPlaceholders,
  KNOWN_TOOLS,
  loadSkillsDir,
  parseSkill,
  selectSkills,
  SkillError,
  SkillLibrary,
  skillsBrief,
  SKILLS_BRIEF_CHARS,
  modelBody,
  skillSituation,
  type Skill,
  type SkillSituation,
} from '../../src/knowledge/skills.js';
import { FAMILY_IDS } from '../../src/triage/families.js';

const BODY = `## Signals
- pods restart

## Checks
1. \`kubectl describe pod -n {namespace} -l app={name}\`

## Find who did it
1. \`kubectl rollout history {kind}/{name} -n {namespace}\`: the revision
   that crashes (its change-cause).
2. \`helm history {release} -n {namespace}\`

## Mitigate
- \`kubectl rollout undo {kind}/{name} -n {namespace}\`

## Follow-ups
- Validate config in CI.
`;

function skillText(fm: string, body = BODY): string {
  return `---\n${fm.trim()}\n---\n${body}`;
}

const GOOD = skillText(`
name: crash-loop
title: Containers crash on start
applies_to:
  alerts: [KubePodCrashLooping]
  kinds: [Deployment]
  families: [crash-loop]
  symptoms: [CrashLoopBackOff]
tools: [k8s_describe, k8s_pod_logs]
`);

/** The SkillError parseSkill throws for `text` read from `file`. */
function errorOf(text: string, file = 'skills/crash-loop.md'): SkillError {
  try {
    parseSkill(text, file);
  } catch (err) {
    if (err instanceof SkillError) return err;
    throw err;
  }
  throw new Error('parsed without error');
}

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
function tempDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-skills-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('parseSkill', () => {
  it('reads a good file: front matter, body and its follow-up steps in order, one line each', () => {
    const s = parseSkill(GOOD, 'skills/crash-loop.md');
    expect(s).toMatchObject({ name: 'crash-loop', title: 'Containers crash on start', file: 'skills/crash-loop.md', tools: ['k8s_describe', 'k8s_pod_logs'] });
    expect(s.appliesTo).toEqual({ alerts: ['KubePodCrashLooping'], kinds: ['Deployment'], families: ['crash-loop'], analyzers: [], symptoms: ['CrashLoopBackOff'], services: [] });
    expect(s.body.startsWith('## Signals')).toBe(true);
    expect(s.followUps).toEqual([
      '`kubectl rollout history {kind}/{name} -n {namespace}`: the revision that crashes (its change-cause).',
      '`helm history {release} -n {namespace}`',
      'Validate config in CI.',
    ]);
  });

  it('names the file and the field of a bad front matter', () => {
    const unknownFamily = errorOf(GOOD.replace('families: [crash-loop]', 'families: [crash-looping]'));
    expect(unknownFamily).toMatchObject({ file: 'skills/crash-loop.md', field: 'applies_to.families.0' });
    expect(unknownFamily.message).toBe('skills/crash-loop.md: applies_to.families.0: unknown fault family "crash-looping" (see docs/fault-families.md)');

    expect(errorOf(GOOD.replace('tools: [k8s_describe, k8s_pod_logs]', 'tools: [kubectl]'))).toMatchObject({ field: 'tools.0' });
    expect(errorOf(GOOD.replace('title: Containers crash on start\n', ''))).toMatchObject({ field: 'title' });
    expect(errorOf(GOOD.replace('name: crash-loop', 'id: crash-loop\nname: crash-loop'))).toMatchObject({ field: 'id' });
    expect(errorOf(GOOD.replace('kinds: [Deployment]', 'kinds: [deployment]'))).toMatchObject({ field: 'applies_to.kinds.0' });
    expect(errorOf(GOOD.replace('analyzer', 'analyzer').replace('  kinds: [Deployment]\n', '  kinds: [Deployment]\n  analyzers: [no-such-analyzer]\n'))).toMatchObject({
      field: 'applies_to.analyzers.0',
    });
    const onlyKinds = skillText('name: crash-loop\ntitle: t\napplies_to:\n  kinds: [Deployment]\n');
    expect(errorOf(onlyKinds)).toMatchObject({ field: 'applies_to' });
  });

  it('names the file when there is no front matter, invalid YAML, or no sections', () => {
    expect(errorOf('# just a heading\n')).toMatchObject({ file: 'skills/crash-loop.md', field: undefined });
    expect(errorOf(skillText('name: [unclosed')).reason).toMatch(/not valid YAML/);
    expect(errorOf(skillText('- a\n- b')).reason).toMatch(/must be a YAML mapping/);
    expect(errorOf(GOOD.replace(BODY, 'just text, no sections\n')).reason).toMatch(/## sections/);
  });

  it('requires the name to be the file name', () => {
    const e = errorOf(GOOD, 'skills/crashloop.md');
    expect(e).toMatchObject({ file: 'skills/crashloop.md', field: 'name' });
    expect(e.reason).toMatch(/"crashloop"/);
  });
});

describe('loadSkillsDir', () => {
  it('keeps the good files and records each bad one with its file and field; README.md is not a skill', () => {
    const dir = tempDir({
      'crash-loop.md': GOOD,
      'oom.md': GOOD.replace('name: crash-loop', 'name: oom').replace('families: [crash-loop]', 'families: [oom]'),
      'README.md': '# How to write a skill',
      'notes.txt': 'not markdown',
    });
    const state = loadSkillsDir(dir, new Date('2026-01-01T00:00:00Z'));
    expect(state.skills.map((s) => s.name)).toEqual(['crash-loop']);
    expect(state.errors).toEqual([{ file: join(dir, 'oom.md'), field: 'applies_to.families.0', message: 'unknown fault family "oom" (see docs/fault-families.md)' }]);
    expect(state.loadedAt.toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });

  it('refuses a second file with the same name', () => {
    const dir = tempDir({ 'crash-loop.md': GOOD, 'crash-loop.MD': GOOD });
    const state = loadSkillsDir(dir);
    expect(state.skills).toHaveLength(1);
    expect(state.errors).toHaveLength(1);
    expect(state.errors[0]).toMatchObject({ field: 'name' });
    expect(state.errors[0]!.message).toMatch(/already the name of/);
  });

  it('reports a missing directory as a load error, not a crash', () => {
    const state = loadSkillsDir(join(tmpdir(), 'vigil-no-such-skills-dir'));
    expect(state.skills).toEqual([]);
    expect(state.errors[0]!.message).toBe('skills directory does not exist');
  });

  it('SkillLibrary reloads when a file changes, at most every 30 s', () => {
    const dir = tempDir({ 'crash-loop.md': GOOD });
    let now = new Date('2026-01-01T00:00:00Z');
    const lib = SkillLibrary.load(dir, () => now);
    const reloads: number[] = [];
    lib.onReload = (s) => reloads.push(s.skills.length);
    expect(lib.skills).toHaveLength(1);
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'bad.md'), 'no front matter');
    utimesSync(join(dir, 'bad.md'), now, now);
    expect(lib.refresh()).toBe(true); // first check
    expect(lib.errors.map((e) => e.file)).toEqual([join(dir, 'bad.md')]);
    writeFileSync(join(dir, 'bad.md'), GOOD.replace('name: crash-loop', 'name: bad'));
    now = new Date(now.getTime() + 10_000);
    expect(lib.refresh()).toBe(false); // checked 10 s ago
    now = new Date(now.getTime() + 30_000);
    expect(lib.refresh()).toBe(true);
    expect(lib.skills.map((s) => s.name)).toEqual(['bad', 'crash-loop']);
    expect(lib.errors).toEqual([]);
    expect(lib.loadedAt).toEqual(now);
    expect(reloads).toEqual([1, 2]);
  });
});

const skill = (name: string, appliesTo: Partial<Skill['appliesTo']>, body = BODY): Skill => ({
  name,
  title: `${name} title`,
  file: `skills/${name}.md`,
  appliesTo: { alerts: [], kinds: [], families: [], analyzers: [], symptoms: [], services: [], ...appliesTo },
  tools: [],
  body,
  followUps: [],
});

const situation = (over: Partial<SkillSituation> = {}): SkillSituation => ({ alertName: 'KubeDeploymentReplicasMismatch', alertText: '', kinds: ['Deployment'], services: ['checkout'], findings: [], ...over });

describe('selectSkills', () => {
  const library = [
    skill('scaled', { families: ['scaled-to-zero'], kinds: ['Deployment'] }),
    skill('crash', { families: ['crash-loop'], alerts: ['KubePodCrash*'], symptoms: ['CrashLoopBackOff'] }),
    skill('replicas-alert', { alerts: ['KubeDeploymentReplicasMismatch'] }),
    skill('payments-only', { alerts: ['KubeDeploymentReplicasMismatch'], services: ['payments'] }),
    skill('oom', { analyzers: ['oom-killed'] }),
  ];

  it('ranks the skill about the leading hypothesis first, then alert and symptom matches; says why', () => {
    const s = situation({
      alertText: 'pods in CrashLoopBackOff',
      findings: [
        { family: 'scaled-to-zero', analyzer: 'scaled-to-zero', status: 'supported', confidence: 0.9 },
        { family: 'crash-loop', analyzer: 'crash-loop', status: 'unrelated', confidence: 0.8 },
        { analyzer: 'oom-killed', status: 'ruled_out', confidence: 0.7 },
      ],
    });
    const m = selectSkills(library, s);
    expect(m.map((x) => [x.skill.name, x.score, x.leading])).toEqual([
      ['scaled', 9, true],
      ['replicas-alert', 4, false],
    ]);
    expect(m[0]!.why).toEqual(['leading hypothesis is scaled-to-zero', 'kind Deployment']);
    // crash: an unrelated hypothesis and one symptom (2) stay under the minimum; oom: ruled out counts nothing.
    expect(selectSkills(library, s, { minScore: 2 }).map((x) => x.skill.name)).toContain('crash');
    expect(citedSkill(m, s)?.skill.name).toBe('scaled');
  });

  it('matches alert prefixes case-insensitively and symptoms as whole words', () => {
    const m = selectSkills(library, situation({ alertName: 'kubepodcrashlooping', alertText: 'Back-off: CrashLoopBackOff' }));
    expect(m[0]).toMatchObject({ skill: { name: 'crash' }, score: 6 });
    expect(selectSkills(library, situation({ alertName: 'Other', alertText: 'NotCrashLoopBackOffs' }))).toEqual([]);
  });

  it('applies a service-specific skill only to its services, and ranks it above the generic one', () => {
    expect(selectSkills(library, situation()).map((x) => x.skill.name)).toEqual(['replicas-alert']);
    const m = selectSkills(library, situation({ services: ['Payments'] }));
    expect(m.map((x) => x.skill.name)).toEqual(['payments-only', 'replicas-alert']);
  });

  it('is deterministic: ties go by name, and the limit holds', () => {
    const many = ['b', 'a', 'c', 'd'].map((n) => skill(n, { alerts: ['X'] }));
    expect(selectSkills(many, situation({ alertName: 'X' })).map((x) => x.skill.name)).toEqual(['a', 'b', 'c']);
    expect(selectSkills(many, situation({ alertName: 'X' }), { limit: 1 }).map((x) => x.skill.name)).toEqual(['a']);
  });

  it('cites no skill when the leading hypothesis is one no skill covers; the best match when nothing is supported', () => {
    const supported = situation({ findings: [{ analyzer: 'image-pull', family: 'image-pull', status: 'supported', confidence: 0.9 }] });
    expect(citedSkill(selectSkills(library, supported), supported)).toBeUndefined();
    const open = situation({ findings: [{ analyzer: 'image-pull', status: 'open', confidence: 0.3 }] });
    expect(citedSkill(selectSkills(library, open), open)?.skill.name).toBe('replicas-alert');
  });
});

describe('skillSituation', () => {
  it('takes kinds from the target, the alert labels and the findings; services from the target, labels and catalog', () => {
    const s = skillSituation({
      alert: { alertName: 'KubePodCrashLooping', title: '[FIRING:1] KubePodCrashLooping', text: 'container is in CrashLoopBackOff', labels: { namespace: 'shop', pod: 'checkout-1', service: 'checkout-svc' }, annotations: { summary: 'Pod is crash looping.' } },
      target: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
      findings: [{ key: 'k', family: null, analyzer: 'crash-loop', status: 'weird', confidence: 0.5, component: { kind: 'ConfigMap' } }],
      services: ['checkout-catalog', undefined],
    });
    expect(s.kinds).toEqual(['Deployment', 'Pod', 'ConfigMap']);
    expect(s.services).toEqual(['checkout', 'checkout-catalog', 'checkout-svc']);
    expect(s.alertText).toContain('CrashLoopBackOff');
    expect(s.alertText).toContain('Pod is crash looping.');
    expect(s.findings).toEqual([{ key: 'k', analyzer: 'crash-loop', status: 'open', confidence: 0.5 }]);
  });
});

describe('fillPlaceholders', () => {
  it('fills namespace, name and kind (lowercase) in both spellings; leaves the others', () => {
    const c = { kind: 'Deployment', namespace: 'shop', name: 'checkout' };
    expect(fillPlaceholders('`kubectl rollout history {kind}/{name} -n {namespace}` then `helm history {release} -n {ns}`', c)).toBe(
      '`kubectl rollout history deployment/checkout -n shop` then `helm history {release} -n shop`',
    );
    expect(fillPlaceholders('kubectl get deploy <name> -n <ns> -o jsonpath={.spec.replicas}', c)).toBe('kubectl get deploy checkout -n shop -o jsonpath={.spec.replicas}');
    expect(fillPlaceholders('kubectl describe node {node}', { kind: 'Node', name: 'ip-10-0-1-2' })).toBe('kubectl describe node ip-10-0-1-2');
    expect(fillPlaceholders('-n {namespace}', undefined)).toBe('-n {namespace}');
  });
});

describe('skillsBrief', () => {
  const long = (name: string, n: number) => skill(name, { alerts: ['X'] }, `## Checks\n${'- check the thing carefully\n'.repeat(n)}`);
  const match = (s: Skill, score = 4) => ({ skill: s, score, why: ['alert X'], leading: false });

  it('gives the best match whole, the others while they fit, then their titles, within the bound', () => {
    const brief = skillsBrief([match(long('a', 60)), match(long('b', 90)), match(long('c', 10))]);
    expect(brief.length).toBeLessThanOrEqual(SKILLS_BRIEF_CHARS);
    expect(brief.startsWith('### skills/a.md: a title\n')).toBe(true);
    expect(brief).toContain('### skills/c.md: c title');
    expect(brief).toContain('Also relevant (not shown for length):\n- skills/b.md: b title');
  });

  it('with bestOnly gives the best match and only the titles of the rest', () => {
    const brief = skillsBrief([match(long('a', 10)), match(long('c', 10))], SKILLS_BRIEF_CHARS, { bestOnly: true });
    expect(brief).toContain('### skills/a.md: a title');
    expect(brief).not.toContain('### skills/c.md');
    expect(brief.endsWith('- skills/c.md: c title')).toBe(true);
  });

  it('cuts an oversized first match and still lists the rest', () => {
    const brief = skillsBrief([match(long('a', 400)), match(long('b', 400))]);
    expect(brief.length).toBeLessThanOrEqual(SKILLS_BRIEF_CHARS);
    expect(brief).toContain('… (cut; the rest is in skills/a.md)');
    expect(brief.endsWith('- skills/b.md: b title')).toBe(true);
    expect(skillsBrief([])).toBe('');
    expect(skillsBrief([match(long('a', 400))], 500).length).toBeLessThanOrEqual(500);
  });
});

describe('modelBody', () => {
  it('keeps what the model reasons with (checks, who did it, what rules it out), in order', () => {
    const body = '# T\n\n## Signals\n- s\n\n## Checks\n1. c\n\n## Find who did it\n1. w\n\n## Mitigate\n- m\n\n## Rules it out\n- r\n\n## Follow-ups\n- f\n';
    expect(modelBody(body)).toBe('## Checks\n1. c\n\n## Find who did it\n1. w\n\n## Rules it out\n- r');
    expect(modelBody('free text, no sections')).toBe('free text, no sections');
  });
});

describe('the shipped skills (skills/)', () => {
  const state = loadSkillsDir('skills');

  it('all load, with no errors', () => {
    expect(state.errors).toEqual([]);
    expect(state.skills.length).toBeGreaterThanOrEqual(12);
  });

  it('cover the procedures issue 13 asks for', () => {
    const families = new Set(state.skills.flatMap((s) => s.appliesTo.families));
    for (const f of ['crash-loop', 'oom-killed', 'image-pull', 'dns-failure', 'network-policy', 'connection-pool-exhaustion', 'tls-certificate', 'deploy-regression', 'node-pressure', 'hpa-at-max', 'unschedulable', 'storage-unavailable', 'external-dependency', 'scaled-to-zero']) {
      expect(FAMILY_IDS.has(f)).toBe(true);
      expect(families.has(f), `no skill for ${f}`).toBe(true);
    }
  });

  it('each reads as a procedure: checks, who did it, mitigation with risk, what rules it out; fits the brief whole', () => {
    for (const s of state.skills) {
      for (const h of ['## Checks', '## Find who did it', '## Mitigate', '## Rules it out']) expect(s.body, `${s.file} lacks ${h}`).toContain(h);
      expect(s.followUps.length, s.file).toBeGreaterThanOrEqual(3);
      expect(s.tools.length, s.file).toBeGreaterThan(0);
      expect(s.body, s.file).toMatch(/kubectl .*(--show-managed-fields|rollout history|helm history)|helm history/);
      const brief = skillsBrief([{ skill: s, score: 9, why: ['leading hypothesis is x'], leading: true }]);
      expect(brief, `${s.file} is cut in the brief`).not.toContain('(cut;');
    }
  });

  it('the leading hypothesis picks its procedure, cited first', () => {
    const expected: [string, string, string][] = [
      ['scaled-to-zero', 'scaled-to-zero', 'workload-scaled-to-zero'],
      ['crash-loop', 'crash-loop', 'crash-loop'],
      ['oom-killed', 'oom-killed', 'oom-killed'],
      ['image-pull', 'image-pull', 'image-pull'],
      ['dns-failure', 'dns-failure', 'dns-failure'],
      ['network-policy', 'network-policy', 'network-policy'],
      ['connection-pool-exhaustion', 'dependency-degraded', 'database-connection-pool'],
      ['tls-certificate', 'tls-certificate', 'certificate-expiry'],
      ['deploy-regression', 'deploy-regression', 'bad-deploy-rollback'],
      ['node-pressure', 'node-pressure', 'node-pressure'],
      ['hpa-at-max', 'hpa-at-max', 'hpa-saturation'],
      ['storage-unavailable', 'volume-attach', 'pending-pods-and-storage'],
      ['external-dependency', 'external-dependency', 'external-dependency-latency'],
    ];
    for (const [family, analyzer, name] of expected) {
      const s = situation({ alertName: 'SomethingIsWrong', findings: [{ family, analyzer, status: 'supported', confidence: 0.9 }] });
      const m = selectSkills(state.skills, s);
      expect(citedSkill(m, s)?.skill.name, family).toBe(name);
      expect(m[0]!.skill.name, family).toBe(name);
    }
    // Without a supported hypothesis the alert still finds its procedure.
    const crash = situation({ alertName: 'KubePodCrashLooping', alertText: 'Pod shop/checkout-1 (app) is in waiting state (reason: "CrashLoopBackOff").' });
    expect(selectSkills(state.skills, crash)[0]!.skill.name).toBe('crash-loop');
  });

  it('doctor reports them', () => {
    const lines = skillsReport('skills');
    expect(lines[0]).toMatch(/^Skills \(VIGIL_SKILLS_DIR=skills\): \d+ load$/);
    expect(lines[1]).toContain('crash-loop');
    const dir = tempDir({ 'x.md': 'no front matter' });
    expect(skillsReport(dir)).toEqual([`Skills (VIGIL_SKILLS_DIR=${dir}): 0 load, 1 do not`, `  ⚠ ${join(dir, 'x.md')}: expects YAML front matter between --- lines at the top of the file`]);
  });
});

describe('KNOWN_TOOLS', () => {
  it('is exactly the model’s tool list', () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const tools = evidenceTools({
      kube: new KubeReader(kc),
      prometheus: new PrometheusClient({ baseUrl: 'http://127.0.0.1:1' }),
      loki: new LokiClient({ baseUrl: 'http://127.0.0.1:1' }),
      github: new GitHubReader({ token: 'ghp-none', baseUrl: 'http://127.0.0.1:1', logger: pino({ level: 'silent' }) }),
    });
    expect(tools.map((t) => t.name).sort()).toEqual([...KNOWN_TOOLS].sort());
  });
});
