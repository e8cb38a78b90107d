/** Renders docs/fault-families.md from the family list (pure; `scripts/families-doc.ts` writes it). */
import { FAMILY_CLAIMS, FAULT_FAMILIES, type FaultFamily } from './families.js';

const GROUPS: Record<FaultFamily['group'], string> = {
  workload: 'Workloads and rollouts',
  scheduling: 'Scheduling, capacity and nodes',
  network: 'Networking and routing',
  config: 'Configuration and changes',
  dependencies: 'Dependencies',
  resources: 'Resources',
  other: 'Other',
};

function claimLine(f: FaultFamily): string {
  const c = FAMILY_CLAIMS[f.id];
  if (!c) return '- **Claimed by:** nobody yet';
  return 'analyzers' in c ? `- **Claimed by:** ${c.analyzers.map((a) => `\`${a}\``).join(', ')}` : `- **Goes to the model:** ${c.model}`;
}

export function renderFamiliesDoc(): string {
  const claimed = FAULT_FAMILIES.filter((f) => { const c = FAMILY_CLAIMS[f.id]; return !!c && 'analyzers' in c; });
  const out: string[] = [
    '# Fault families',
    '',
    '<!-- Generated from src/triage/families.ts by `npm run docs:families`; edit the list, not this file. -->',
    '',
    'Every diagnosis is classified into one fault family: one vocabulary shared by the analyzers, the model,',
    'the grader and scenario authors. A scenario names its family in `expected.family` and its characterising',
    'details with the fact keys listed here (`expected.facts`). Localisation follows the faulty object, which',
    'is often not the workload that hurts: a ConfigMap edit is localised to the ConfigMap, with the workloads',
    'that read it in scope.',
    '',
    `${FAULT_FAMILIES.length} families: ${FAULT_FAMILIES.map((f) => `\`${f.id}\``).join(', ')}.`,
    '',
    `Deterministic triage claims ${claimed.length} of ${FAULT_FAMILIES.length} (${Math.round((claimed.length / FAULT_FAMILIES.length) * 100)}%): each family below names the analyzer that`,
    `recognises it (\`src/triage/analyzers\`, \`src/triage/cluster\`). The others go to the model loop, with the reason:`,
    `${FAULT_FAMILIES.filter((f) => !claimed.includes(f)).map((f) => `\`${f.id}\``).join(', ')}.`,
    '',
  ];
  for (const [group, title] of Object.entries(GROUPS) as [FaultFamily['group'], string][]) {
    const families = FAULT_FAMILIES.filter((f) => f.group === group);
    if (families.length === 0) continue;
    out.push(`## ${title}`, '');
    for (const f of families) {
      out.push(`### \`${f.id}\`: ${f.title}`, '', f.description, '', `- **Localise to:** ${f.component}`, claimLine(f), `- **Fix:** ${f.fix}`, `- **Covers:** ${f.sources.join('; ')}`, '- **Facts:**');
      for (const [key, meaning] of Object.entries(f.facts)) out.push(`  - \`${key}\`: ${meaning}`);
      out.push('');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}
