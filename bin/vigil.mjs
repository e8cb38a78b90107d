#!/usr/bin/env node
// `npx vigil …` / `vigil …` once installed: the same CLI as `npm run vigil -- …`. The CLI is TypeScript
// run through tsx (a runtime dependency until the image builds JavaScript once; issue 16).
import { register } from 'tsx/esm/api';

const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  console.error(`vigil needs Node 22.19 or later (this is ${process.versions.node}); run \`. scripts/node24.sh\` or use the version in .nvmrc.`);
  process.exit(1);
}
register();
await import(new URL('../src/cli/vigil.ts', import.meta.url).href);
