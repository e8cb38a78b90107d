/**
 * A real parser for the subset of LogQL the fake Loki answers: a stream selector (`=`, `!=`, `=~`, `!~`,
 * regexes fully anchored as in Prometheus/Loki), chained line filters (`|=`, `!=`, `|~`, `!~`), the
 * `| json` and `| logfmt` parsers, and label filters (`| level="error"`, `=`, `!=`, `=~`, `!~`, `==`).
 * Anything else raises `LogQLParseError` with Loki's wording:
 * `parse error at line 1, col N: syntax error: unexpected <token>`.
 */

export class LogQLParseError extends Error {
  constructor(
    readonly col: number,
    detail: string,
  ) {
    super(`parse error at line 1, col ${col}: ${detail}`);
    this.name = 'LogQLParseError';
  }
}

type MatchOp = '=' | '!=' | '=~' | '!~';
export interface LabelMatcher {
  name: string;
  op: MatchOp;
  value: string;
  test(v: string | undefined): boolean;
}

export type Stage =
  | { kind: 'line'; op: '|=' | '!=' | '|~' | '!~'; value: string; test(line: string): boolean }
  | { kind: 'parser'; parser: 'json' | 'logfmt' }
  | { kind: 'label'; matcher: LabelMatcher };

export interface LogQuery {
  selector: LabelMatcher[];
  stages: Stage[];
}

type TokKind = 'IDENTIFIER' | 'STRING' | 'NUMBER' | 'OP' | 'EOF';
interface Token {
  kind: TokKind;
  text: string;
  col: number;
}

const OPS = ['|=', '|~', '!=', '!~', '=~', '==', '=', '|', '{', '}', ',', '(', ')', '[', ']'];

function unquote(raw: string, col: number): string {
  if (raw.startsWith('`')) return raw.slice(1, -1);
  try {
    return JSON.parse(raw) as string;
  } catch {
    throw new LogQLParseError(col, `invalid char escape`);
  }
}

function tokenize(q: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i] ?? '';
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const col = i + 1;
    if (c === '"' || c === '`') {
      let j = i + 1;
      while (j < q.length && q[j] !== c) j += c === '"' && q[j] === '\\' ? 2 : 1;
      if (j >= q.length) throw new LogQLParseError(col, 'literal not terminated');
      out.push({ kind: 'STRING', text: unquote(q.slice(i, j + 1), col), col });
      i = j + 1;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_]*/.exec(q.slice(i));
    if (ident) {
      out.push({ kind: 'IDENTIFIER', text: ident[0], col });
      i += ident[0].length;
      continue;
    }
    const num = /^\d+(?:\.\d+)?[a-z]*/.exec(q.slice(i));
    if (num) {
      out.push({ kind: 'NUMBER', text: num[0], col });
      i += num[0].length;
      continue;
    }
    const op = OPS.find((o) => q.startsWith(o, i));
    if (!op) throw new LogQLParseError(col, `syntax error: unexpected character ${JSON.stringify(c)}`);
    out.push({ kind: 'OP', text: op, col });
    i += op.length;
  }
  out.push({ kind: 'EOF', text: '', col: q.length + 1 });
  return out;
}

/** Go's RE2 `(?i)` prefix is common in LogQL; JavaScript takes it as a flag. */
function compileRegex(source: string, anchored: boolean, col: number): RegExp {
  let flags = '';
  let s = source;
  if (s.startsWith('(?i)')) {
    flags = 'i';
    s = s.slice(4);
  }
  try {
    return new RegExp(anchored ? `^(?:${s})$` : s, flags);
  } catch (err) {
    throw new LogQLParseError(col, `invalid regex: ${(err as Error).message}`);
  }
}

function matcher(name: string, op: MatchOp, value: string, col: number): LabelMatcher {
  const re = op === '=~' || op === '!~' ? compileRegex(value, true, col) : undefined;
  const test = (v: string | undefined): boolean => {
    const x = v ?? '';
    switch (op) {
      case '=':
        return x === value;
      case '!=':
        return x !== value;
      case '=~':
        return (re as RegExp).test(x);
      case '!~':
        return !(re as RegExp).test(x);
    }
  };
  return { name, op, value, test };
}

class Parser {
  private i = 0;
  constructor(private readonly toks: Token[]) {}

  private peek(): Token {
    return this.toks[this.i] as Token;
  }

  private next(): Token {
    return this.toks[this.i++] as Token;
  }

  private unexpected(t: Token, expecting?: string): never {
    const what = t.kind === 'EOF' ? '$end' : t.kind === 'OP' ? t.text : t.kind;
    throw new LogQLParseError(t.col, `syntax error: unexpected ${what}${expecting ? `, expecting ${expecting}` : ''}`);
  }

  private expectOp(text: string): Token {
    const t = this.next();
    if (t.kind !== 'OP' || t.text !== text) this.unexpected(t, text);
    return t;
  }

  private expectString(): Token {
    const t = this.next();
    if (t.kind !== 'STRING') this.unexpected(t, 'STRING');
    return t;
  }

  private matchOp(allowDoubleEq: boolean): MatchOp {
    const t = this.next();
    if (t.kind === 'OP' && (t.text === '=' || t.text === '!=' || t.text === '=~' || t.text === '!~')) return t.text;
    if (allowDoubleEq && t.kind === 'OP' && t.text === '==') return '=';
    return this.unexpected(t, '= or != or =~ or !~');
  }

  parse(): LogQuery {
    const first = this.peek();
    if (first.kind !== 'OP' || first.text !== '{') this.unexpected(first, '{');
    const selector = this.selector();
    const stages: Stage[] = [];
    for (;;) {
      const t = this.next();
      if (t.kind === 'EOF') break;
      if (t.kind !== 'OP') this.unexpected(t);
      if (t.text === '|=' || t.text === '!=' || t.text === '|~' || t.text === '!~') {
        const s = this.expectString();
        const op = t.text;
        const re = op === '|~' || op === '!~' ? compileRegex(s.text, false, s.col) : undefined;
        const value = s.text;
        const test = op === '|=' ? (l: string) => l.includes(value)
          : op === '!=' ? (l: string) => !l.includes(value)
          : op === '|~' ? (l: string) => (re as RegExp).test(l)
          : (l: string) => !(re as RegExp).test(l);
        stages.push({ kind: 'line', op, value, test });
        continue;
      }
      if (t.text !== '|') this.unexpected(t);
      const id = this.next();
      if (id.kind !== 'IDENTIFIER') this.unexpected(id, 'IDENTIFIER');
      if ((id.text === 'json' || id.text === 'logfmt') && !this.isMatchOpNext()) {
        stages.push({ kind: 'parser', parser: id.text });
        continue;
      }
      const op = this.matchOp(true);
      const v = this.expectString();
      stages.push({ kind: 'label', matcher: matcher(id.text, op, v.text, v.col) });
    }
    return { selector, stages };
  }

  private isMatchOpNext(): boolean {
    const t = this.peek();
    return t.kind === 'OP' && ['=', '!=', '=~', '!~', '=='].includes(t.text);
  }

  private selector(): LabelMatcher[] {
    const open = this.expectOp('{');
    const out: LabelMatcher[] = [];
    if (this.peek().kind === 'OP' && this.peek().text === '}') this.unexpected(this.peek(), 'IDENTIFIER');
    for (;;) {
      const name = this.next();
      if (name.kind !== 'IDENTIFIER') this.unexpected(name, 'IDENTIFIER');
      const op = this.matchOp(false);
      const v = this.expectString();
      out.push(matcher(name.text, op, v.text, v.col));
      const sep = this.next();
      if (sep.kind === 'OP' && sep.text === '}') break;
      if (sep.kind !== 'OP' || sep.text !== ',') this.unexpected(sep, ', or }');
    }
    // Loki refuses selectors that match everything, e.g. `{app=~".*"}`.
    if (out.every((m) => m.test(''))) {
      throw new LogQLParseError(open.col, 'queries require at least one regexp or equality matcher that does not have an empty-compatible value. For instance, app=~".*" does not meet this requirement, but app=~".+" will');
    }
    return out;
  }
}

export function parseLogQL(q: string): LogQuery {
  return new Parser(tokenize(q)).parse();
}

/** Only the stream selector (for `/label/<name>/values?query=`). */
export function parseSelector(q: string): LabelMatcher[] {
  return parseLogQL(q).selector;
}

function parseLogfmt(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /([A-Za-z_][\w.-]*)=(?:"((?:[^"\\]|\\.)*)"|(\S*))/g;
  for (const m of line.matchAll(re)) {
    const key = (m[1] ?? '').replace(/[.-]/g, '_');
    out[key] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '');
  }
  return out;
}

function flattenJson(v: unknown, prefix: string, out: Record<string, string>): void {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v)) flattenJson(x, prefix ? `${prefix}_${k}` : k, out);
  } else if (prefix && v !== null && v !== undefined && !Array.isArray(v)) {
    out[prefix.replace(/[^A-Za-z0-9_]/g, '_')] = String(v);
  }
}

/**
 * Run the pipeline over one line: undefined when filtered out, else the labels the result stream carries
 * (the stream's plus anything a parser extracted; Loki names a clash `<name>_extracted`, and a line a
 * parser cannot read gets `__error__`).
 */
export function evaluate(q: LogQuery, labels: Record<string, string>, line: string): Record<string, string> | undefined {
  let current: Record<string, string> = labels;
  for (const s of q.stages) {
    if (s.kind === 'line') {
      if (!s.test(line)) return undefined;
    } else if (s.kind === 'parser') {
      let extracted: Record<string, string> = {};
      if (s.parser === 'logfmt') extracted = parseLogfmt(line);
      else {
        try {
          flattenJson(JSON.parse(line), '', extracted);
        } catch {
          extracted = { __error__: 'JSONParserErr' };
        }
      }
      current = { ...current };
      for (const [k, v] of Object.entries(extracted)) current[k in labels ? `${k}_extracted` : k] = v;
    } else if (!s.matcher.test(current[s.matcher.name])) {
      return undefined;
    }
  }
  return current;
}
