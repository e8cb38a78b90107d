/**
 * The Dockerfile read as the builder reads it (dockerfile-ast, the parser of the Docker language server),
 * for the lint (dockerfile.test.ts) and for laying out a copy of the image's /app (dist-build.test.ts).
 */
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DockerfileParser, type Dockerfile, type From, type Instruction } from 'dockerfile-ast';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const dockerfileText = readFileSync(`${root}Dockerfile`, 'utf8');
export const dockerfile: Dockerfile = DockerfileParser.parse(dockerfileText);

export interface Stage {
  from: From;
  name: string | null;
  instructions: Instruction[];
}

/** Each FROM and the instructions up to the next one. */
export function stages(df: Dockerfile = dockerfile): Stage[] {
  const out: Stage[] = [];
  for (const i of df.getInstructions()) {
    if (i.getKeyword() === 'FROM') out.push({ from: i as From, name: (i as From).getBuildStage(), instructions: [] });
    else out.at(-1)?.instructions.push(i);
  }
  return out;
}

export const args = (i: Instruction) => i.getArguments().map((a) => a.getValue());

/** The last WORKDIR of a stage (COPY destinations are relative to it). */
export function workdir(stage: Stage): string {
  const w = stage.instructions.filter((i) => i.getKeyword() === 'WORKDIR').at(-1);
  return w ? args(w)[0]! : '/';
}

export interface ImageCopy {
  /** The stage copied from (`--from=`), or undefined for the build context. */
  from: string | undefined;
  /** Paths in the build context, or in the `from` stage relative to its WORKDIR. */
  sources: string[];
  /** Absolute path in the image. */
  dest: string;
  /** The destination as written (`./` means "into this directory"). */
  rawDest: string;
}

/** The COPY instructions of a stage, with sources relative to the context / that stage's WORKDIR. */
export function copies(stage: Stage, all: Stage[] = stages()): ImageCopy[] {
  const wd = workdir(stage);
  return stage.instructions
    .filter((i) => i.getKeyword() === 'COPY')
    .map((i) => {
      const from = (i as unknown as { getFromFlag(): { getValue(): string | null } | null }).getFromFlag()?.getValue() ?? undefined;
      const a = args(i);
      const fromStage = from ? all.find((s) => s.name === from) : undefined;
      const fromWd = fromStage ? workdir(fromStage) : '/';
      const sources = a.slice(0, -1).map((s) => (from ? posix.relative(fromWd, posix.resolve(fromWd, s)) : posix.normalize(s).replace(/^\.\//, '')));
      return { from, sources, dest: posix.resolve(wd, a.at(-1)!), rawDest: a.at(-1)! };
    });
}

/** Where a copied source lands in the image: into a destination written with a trailing `/` (or with several sources), else at the destination itself. */
export function landing(c: ImageCopy, source: string): string {
  return c.rawDest.endsWith('/') || c.sources.length > 1 ? posix.join(c.dest, posix.basename(source)) : c.dest;
}
