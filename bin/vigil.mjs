#!/usr/bin/env node
// `npx vigil …` / `vigil …`: the same CLI as `npm run vigil -- …` (src/cli/vigil.ts).
// - In a checkout (src/ present, dev dependencies installed): the TypeScript source through tsx, so the
//   command always runs the code in front of you, never a stale build.
// - In the image, or anywhere src/ or tsx is absent: the JavaScript compiled once by `npm run build`
//   (dist/cli/vigil.js). No tsx at run time.
import { existsSync } from 'node:fs';

const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  console.error(`vigil needs Node 22.19 or later (this is ${process.versions.node}); run \`. scripts/node24.sh\` or use the version in .nvmrc.`);
  process.exit(1);
}
const source = new URL('../src/cli/vigil.ts', import.meta.url);
const compiled = new URL('../dist/cli/vigil.js', import.meta.url);

let tsx;
if (existsSync(source)) {
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    // production dependencies only: fall back to dist/
  }
}
if (tsx) {
  tsx.register();
  await import(source.href);
} else if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  console.error('vigil: dist/cli/vigil.js is missing; run `npm run build` (or install the dev dependencies to run from src/).');
  process.exit(1);
}
