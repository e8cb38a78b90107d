import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration, parsePolicy, PolicyError } from '../../src/policy/index.js';

function problemsOf(text: string, source = 'policy.yaml'): string[] {
  try {
    parsePolicy(text, source);
  } catch (err) {
    expect(err).toBeInstanceOf(PolicyError);
    return (err as PolicyError).problems;
  }
  throw new Error('expected the policy to be rejected');
}

describe('policy schema', () => {
  it('reports every problem with file, line and path, in line order', () => {
    const problems = problemsOf(
      [
        'version: 1', //                                            1
        'environments:', //                                         2
        '  production: { namespaces: [shop] }', //                  3
        'rules:', //                                                4
        '  - match: { actions: [scale] }', //                       5
        '    allowed: true', //                                     6
        '    approverGroups: [S0SREONCALL]', //                     7
        '  - match: { actions: [scale, nuke] }', //                 8
        '    allowed: true', //                                     9
        '    approverGroups: [S0SREONCALL]', //                    10
        '    approvals: 0', //                                     11
        '    approval: 2', //                                      12
        '    limits: { perTarget: { max: 3, window: 1x } }', //    13
        'incident: { mutationBudget: -1 }', //                     14
        'admins: [bob]', //                                        15
      ].join('\n'),
    );
    expect(problems).toEqual([
      'policy.yaml:8: rules[1].match.actions[1]: unknown action "nuke"; expected one of scale, rollout_restart, rollout_undo, set_image, set_resources, suspend_cronjob, delete_pod, restore_config, restore_object, cordon_node, pause_chaos, delete_network_policy, flip_flag, revert_pr',
      'policy.yaml:11: rules[1].approvals: expected a whole number ≥ 1',
      'policy.yaml:12: rules[1].approval: unknown key approval',
      'policy.yaml:13: rules[1].limits.perTarget.window: expected a duration such as 30m, 1h or 1h30m, got "1x"',
      'policy.yaml:14: incident.mutationBudget: expected a whole number ≥ 1',
      'policy.yaml:15: admins[0]: expected a Slack user id such as U0123ABCD',
    ]);
  });

  it('says which required fields are missing, at the line of the entry that lacks them', () => {
    expect(problemsOf('rules:\n  - allowed: false\n')).toEqual([
      'policy.yaml:1: version: is required; expected 1 (the only policy format version)',
      'policy.yaml:2: rules[0].match: is required; expected a mapping with actions, environments, namespaces and/or services ({} matches everything)',
    ]);
  });

  it('refuses to make writes the default', () => {
    expect(problemsOf('version: 1\ndefaults: { allowed: true }\n')).toEqual([
      'policy.yaml:2: defaults.allowed: must be false: writes are allowed only by explicit rules (read-only by default)',
    ]);
  });

  it('requires approver groups for every allowed rule, here or in defaults', () => {
    expect(problemsOf('version: 1\nrules:\n  - match: {}\n    allowed: true\n')).toEqual([
      'policy.yaml:3: rules[0].approverGroups: is required when allowed is true (here or in defaults): which Slack user groups may approve?',
    ]);
    const p = parsePolicy('version: 1\ndefaults: { approverGroups: [S0SRE] }\nrules:\n  - match: {}\n    allowed: true\n', 'p.yaml');
    expect(p.rules[0]?.approverGroups).toEqual(['S0SRE']);
  });

  it('checks environments: declared before use, each namespace in one environment', () => {
    const problems = problemsOf(
      [
        'version: 1',
        'environments:',
        '  production: { namespaces: [shop] }',
        '  staging: { namespaces: [shop] }',
      ].join('\n'),
    );
    expect(problems).toEqual(['policy.yaml:4: environments.staging.namespaces[0]: namespace shop is already in environment production']);
    expect(
      problemsOf('version: 1\nenvironments: { production: { namespaces: [shop] } }\nrules:\n  - match: { environments: [prod] }\n    allowed: false\n'),
    ).toEqual(['policy.yaml:4: rules[0].match.environments[0]: unknown environment prod; declared: production']);
  });

  it('reports YAML syntax errors and duplicate keys with their line', () => {
    expect(problemsOf('version: 1\nversion: 1\n')).toEqual(['policy.yaml:2: Map keys must be unique']);
    const [syntax] = problemsOf('version: 1\nrules: [\n');
    expect(syntax).toMatch(/^policy\.yaml:\d+: Flow sequence/);
  });

  it('rejects a file that is not a mapping', () => {
    expect(problemsOf('- scale\n')).toEqual([
      'policy.yaml:1: (top level): expected a mapping with version, environments, neverWrite, defaults, rules, incident, admins',
    ]);
  });

  it('applies defaults to rules and keeps rule ids and lines', () => {
    const p = parsePolicy(
      [
        'version: 1',
        'defaults: { approverGroups: [S0SRE], selfApproveMaxRisk: 40, limits: { maxWorkloads: 1, maxPods: 5 } }',
        'rules:',
        '  - name: restart',
        '    match: { actions: [rollout_restart] }',
        '    allowed: true',
        '    limits: { maxPods: 10, perTarget: { max: 2, window: 1h30m } }',
        '  - match: { actions: [scale] }',
        '    allowed: true',
        '    approvals: 2',
        '    selfApprove: true',
      ].join('\n'),
      'p.yaml',
    );
    expect(p.rules[0]).toMatchObject({
      id: 'restart',
      line: 4,
      approvals: 1,
      approverGroups: ['S0SRE'],
      selfApprove: false,
      selfApproveMaxRisk: 40,
      limits: { maxWorkloads: 1, maxPods: 10, perTarget: { max: 2, windowMs: 90 * 60_000 } },
    });
    expect(p.rules[1]).toMatchObject({ id: 'rules[1]', line: 8, approvals: 2, selfApprove: true, limits: { maxWorkloads: 1, maxPods: 5 } });
    expect(p.incident).toEqual({ mutationBudget: 5, loop: { sameActionSameTarget: 2, windowMs: 30 * 60_000 } });
  });
});

describe('durations', () => {
  it('parses the written forms and rejects others', () => {
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('2d')).toBe(172_800_000);
    expect(parseDuration('45s')).toBe(45_000);
    for (const bad of ['', '30', 'm', '30 minutes', '1m1h', '-5m']) expect(parseDuration(bad), bad).toBeUndefined();
  });

  it('formats for sentences', () => {
    expect(formatDuration(1_800_000)).toBe('30 min');
    expect(formatDuration(3_600_000)).toBe('1 h');
    expect(formatDuration(5_400_000)).toBe('1 h 30 min');
    expect(formatDuration(45_000)).toBe('45 s');
  });

  it('rejects a zero window', () => {
    expect(problemsOf('version: 1\nincident: { loop: { window: 0m } }\n')).toEqual([
      'policy.yaml:2: incident.loop.window: expected a duration such as 30m, 1h or 1h30m, got "0m"',
    ]);
  });
});
