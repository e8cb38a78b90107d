/**
 * Writes docs/fault-families.md from src/triage/families.ts (`npm run docs:families`). The doc is what
 * scenario authors read; a test fails when it is out of step with the list.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderFamiliesDoc } from '../src/triage/families-doc.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
writeFileSync(join(root, 'docs', 'fault-families.md'), renderFamiliesDoc());
console.log('wrote docs/fault-families.md');
