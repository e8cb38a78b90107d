// The SQLite and PostgreSQL schemas must declare the same models, so one `Db` type serves both
// clients (src/store/db.ts). Only the datasource, the generator output and native `@db.*` types may differ.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const sqlite = readFileSync(`${root}prisma/schema.prisma`, 'utf8');
const postgres = readFileSync(`${root}prisma/postgres/schema.prisma`, 'utf8');

type Block = { kind: string; name: string; lines: string[] };

/** Top-level blocks (`model X { … }`, `generator client { … }`), comments dropped, whitespace normalised. */
function blocks(schema: string): Block[] {
  const found: Block[] = [];
  let current: Block | undefined;
  for (const raw of schema.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim().replace(/\s+/g, ' ');
    if (!line) continue;
    const open = /^(\w+) (\w+) \{$/.exec(line);
    if (!current && open) current = { kind: open[1]!, name: open[2]!, lines: [] };
    else if (current && line === '}') {
      found.push(current);
      current = undefined;
    } else if (current) current.lines.push(line);
  }
  return found;
}

/** Field and `@@` lines of every model, without provider-specific native types. */
function models(schema: string): Record<string, string[]> {
  return Object.fromEntries(
    blocks(schema)
      .filter((b) => b.kind === 'model' || b.kind === 'enum')
      .map((b) => [`${b.kind} ${b.name}`, b.lines.map((l) => l.replace(/ @db\.\w+(\([^)]*\))?/g, ''))]),
  );
}

function settings(schema: string, kind: string): Record<string, string> {
  const block = blocks(schema).find((b) => b.kind === kind);
  return Object.fromEntries((block?.lines ?? []).map((l) => l.split(' = ') as [string, string]));
}

describe('schema parity', () => {
  it('declares the same models, fields, attributes and indexes for SQLite and PostgreSQL', () => {
    const sqliteModels = models(sqlite);
    expect(Object.keys(sqliteModels)).toContain('model Incident');
    expect(Object.keys(sqliteModels).length).toBeGreaterThanOrEqual(9);
    expect(models(postgres)).toEqual(sqliteModels);
  });

  it('differs only where the provider requires', () => {
    expect(settings(sqlite, 'datasource')).toEqual({ provider: '"sqlite"', url: 'env("DATABASE_URL")' });
    expect(settings(postgres, 'datasource')).toEqual({ provider: '"postgresql"', url: 'env("DATABASE_URL")' });
    const generator = { provider: '"prisma-client-js"', engineType: '"client"' };
    expect(settings(sqlite, 'generator')).toEqual({ ...generator, output: '"../node_modules/.prisma/vigil-sqlite"' });
    expect(settings(postgres, 'generator')).toEqual({ ...generator, output: '"../../node_modules/.prisma/vigil-postgres"' });
  });

  it('notices a field that exists in one schema only', () => {
    const drifted = postgres.replace(/^(\s*alertCount\s+Int.*)$/m, '$1\n  escalatedAt DateTime?');
    expect(models(drifted)).not.toEqual(models(sqlite));
  });
});
