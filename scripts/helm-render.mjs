#!/usr/bin/env node
/**
 * An offline stand-in for `helm template`: the `helm` binary cannot be installed on these machines and
 * no npm package implements Go text/template with Sprig faithfully (go-text-template 0.2.2, the closest,
 * has no define/include/range/Sprig). This renders the SUBSET the Vigil chart uses, with Go's semantics
 * where they differ from JavaScript's, and refuses everything else loudly so that a template which only
 * this renderer accepts cannot slip in.
 *
 * Covered: text and `{{ }}` actions with `{{-`/`-}}` trimming and comments; pipelines with `|`;
 * parenthesised sub-pipelines; `.Field` chains on dot, `$` and `$var`; string (interpreted and raw),
 * number, bool and nil literals; `$x := …` / `$x = …`; if / else if / else, with / else, range over
 * lists and maps (keys sorted, `$i, $v :=`) with else; define, template, include; Go truthiness; a
 * field of a missing value is an error ("nil pointer evaluating"), as in Go; printed missing keys are
 * "" (Helm's missingkey=zero + "<no value>" removal); numbers from values are float64, printed as Go's
 * %v does (1e+06). Built-ins: and, or (short-circuit, return an operand), not, eq, ne, len, index,
 * print, printf (%s %d %v %q only), fail, required, include, and the Sprig functions in FUNCS below.
 * Built-in objects: .Values (chart values ⊕ overrides, deep-merged; null deletes a key), .Release
 * (Name, Namespace, Service, IsInstall, IsUpgrade, Revision), .Chart (Chart.yaml fields, capitalised),
 * .Template.Name. Values are validated against values.schema.json (the keywords in schema.mjs).
 *
 * NOT covered (an error or not implemented): `block`, `break`/`continue`, method calls, `.Files`,
 * `.Capabilities`, `lookup`, `tpl`, subcharts and dependencies, hooks ordering, `--set` parsing,
 * comparison of numbers with eq/lt/… (Go's int vs float64 rules; refused here), printf verbs beyond
 * %s %d %v %q, and exact byte-for-byte output of toYaml (sigs.k8s.io/yaml's quoting and line folding
 * differ; the YAML parses to the same value) and of quote/%q for non-ASCII or control characters.
 *
 * Usage: node scripts/helm-render.mjs <chart-dir> [-f values.yaml]… [--name vigil] [--namespace vigil]
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { validateSchema } from './helm-render/schema.mjs';
import { parseTemplate } from './helm-render/parse.mjs';

export { parseTemplate };

export class RenderError extends Error {
  name = 'RenderError';
}

// A Go float64 from values, kept apart from Go ints (literals, len) only where it shows: printing.
const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Go's truth: false, 0, nil, and empty strings, slices and maps are false. */
export function truthy(v) {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isMap(v)) return Object.keys(v).length > 0;
  return true;
}

/** fmt's %v for a float64 (values' numbers): strconv 'g', shortest digits, exponent form when exp < -4 or ≥ 6. */
export function goNumber(n) {
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  if (n === 0) return '0';
  const [mantissa, e] = n.toExponential().split('e');
  const exp = Number(e);
  if (exp < -4 || exp >= 6) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(n);
}

/** How {{ value }} prints: Go's fmt %v for the types values hold. */
export function goPrint(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(goPrint).join(' ')}]`;
  if (isMap(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${goPrint(v[k])}`).join(' ')}]`;
  return String(v);
}

/** Sprig's empty. */
const empty = (v) => !truthy(v);

/** Helm's toYaml: sigs.k8s.io/yaml (sorted keys, sequences not indented under their key), trailing newline cut. */
export function toYaml(v) {
  if (v === null || v === undefined) return 'null';
  return stringifyYaml(v, { sortMapEntries: true, indentSeq: false, lineWidth: 0 }).replace(/\n$/, '');
}

const indent = (n, s) => {
  const pad = ' '.repeat(n);
  return pad + String(s).replace(/\n/g, `\n${pad}`);
};
const goQuote = (s) => JSON.stringify(s);

function printf(format, ...args) {
  let i = 0;
  return format.replace(/%([sdvq%])/g, (_m, verb) => {
    if (verb === '%') return '%';
    if (i >= args.length) return `%!${verb}(MISSING)`;
    const a = args[i++];
    if (verb === 'q') return goQuote(goPrint(a));
    if (verb === 'd') {
      if (typeof a !== 'number') return `%!d(${typeof a}=${goPrint(a)})`;
      return String(Math.trunc(a));
    }
    return goPrint(a);
  }).replace(/%[^sdvq%]/, (m) => {
    throw new RenderError(`printf verb ${m} is not supported by this renderer`);
  });
}

const noNumbers = (name, ...xs) => {
  for (const x of xs) if (typeof x === 'number') throw new RenderError(`${name} on numbers is not supported (Go's int/float64 comparison rules); compare strings or use if`);
};
const goEq = (a, b) => {
  noNumbers('eq', a, b);
  if ((isMap(a) || Array.isArray(a)) || (isMap(b) || Array.isArray(b))) throw new RenderError('eq: non-comparable type (map or slice)');
  return (a ?? null) === (b ?? null);
};

/** Template functions: Go's built-ins, Helm's and the Sprig ones the chart uses. */
export const FUNCS = {
  not: (a) => !truthy(a),
  eq: (a, ...bs) => bs.some((b) => goEq(a, b)),
  ne: (a, b) => !goEq(a, b),
  len: (v) => {
    if (typeof v === 'string') return Buffer.byteLength(v);
    if (Array.isArray(v)) return v.length;
    if (isMap(v)) return Object.keys(v).length;
    throw new RenderError(`len of ${v === null || v === undefined ? 'nil' : typeof v}`);
  },
  index: (v, ...keys) => keys.reduce((acc, k) => {
    if (acc === null || acc === undefined) throw new RenderError('index of untyped nil');
    return Array.isArray(acc) ? acc[k] : acc[k];
  }, v),
  print: (...a) => a.map(goPrint).join(''),
  printf,
  fail: (msg) => {
    throw new RenderError(`execution error: ${msg}`);
  },
  required: (msg, v) => {
    if (v === null || v === undefined || v === '') throw new RenderError(`execution error: ${msg}`);
    return v;
  },
  default: (d, ...given) => (given.length === 0 || empty(given[0]) ? d : given[0]),
  empty,
  ternary: (a, b, cond) => (truthy(cond) ? a : b),
  quote: (...xs) => xs.filter((x) => x !== null && x !== undefined).map((x) => goQuote(goPrint(x))).join(' '),
  squote: (...xs) => xs.filter((x) => x !== null && x !== undefined).map((x) => `'${goPrint(x)}'`).join(' '),
  toString: (v) => goPrint(v),
  lower: (s) => goPrint(s).toLowerCase(),
  upper: (s) => goPrint(s).toUpperCase(),
  trim: (s) => goPrint(s).trim(),
  trunc: (n, s) => (n < 0 ? s.slice(Math.max(0, s.length + n)) : s.slice(0, n)),
  trimSuffix: (suffix, s) => (s.endsWith(suffix) ? s.slice(0, s.length - suffix.length) : s),
  trimPrefix: (prefix, s) => (s.startsWith(prefix) ? s.slice(prefix.length) : s),
  replace: (old, nu, s) => s.split(old).join(nu),
  contains: (sub, s) => goPrint(s).includes(sub),
  hasPrefix: (p, s) => goPrint(s).startsWith(p),
  join: (sep, list) => (list ?? []).map(goPrint).join(sep),
  indent,
  nindent: (n, s) => `\n${indent(n, s)}`,
  toYaml,
  toJson: (v) => JSON.stringify(v ?? null),
  sha256sum: (s) => createHash('sha256').update(goPrint(s)).digest('hex'),
  b64enc: (s) => Buffer.from(goPrint(s)).toString('base64'),
  list: (...xs) => xs,
  dict: (...kv) => {
    const out = {};
    for (let i = 0; i < kv.length; i += 2) out[goPrint(kv[i])] = kv[i + 1] ?? null;
    return out;
  },
  hasKey: (m, k) => isMap(m) && Object.hasOwn(m, k),
  set: (m, k, v) => {
    m[k] = v;
    return m;
  },
  has: (needle, list) => (list ?? []).some((x) => x === needle),
  keys: (...ms) => ms.flatMap((m) => Object.keys(m ?? {})),
  concat: (...ls) => ls.flat(1),
  uniq: (l) => [...new Set(l)],
  kindIs: (kind, v) => kindOf(v) === kind,
};

function kindOf(v) {
  if (v === null || v === undefined) return 'invalid';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'float64';
  if (Array.isArray(v)) return 'slice';
  return 'map';
}

/** Executes parsed templates with Go's scoping: variables are visible to the end of their block. */
class Executor {
  constructor(defines, root, templateName) {
    this.defines = defines;
    this.root = root;
    this.templateName = templateName;
    this.depth = 0;
  }

  run(nodes, dot) {
    return this.nodes(nodes, dot, [{ $: dot }]);
  }

  nodes(nodes, dot, scopes) {
    let out = '';
    for (const n of nodes) out += this.node(n, dot, scopes);
    return out;
  }

  lookupVar(name, scopes) {
    for (let i = scopes.length - 1; i >= 0; i--) if (Object.hasOwn(scopes[i], name)) return scopes[i][name];
    throw new RenderError(`${this.templateName}: undefined variable "${name}"`);
  }

  assignVar(name, value, scopes) {
    for (let i = scopes.length - 1; i >= 0; i--)
      if (Object.hasOwn(scopes[i], name)) {
        scopes[i][name] = value;
        return;
      }
    throw new RenderError(`${this.templateName}: undefined variable "${name}"`);
  }

  node(n, dot, scopes) {
    switch (n.type) {
      case 'text':
        return n.text;
      case 'action': {
        const v = this.pipeline(n.pipe, dot, scopes);
        return n.pipe.decl ? '' : goPrint(v);
      }
      case 'if': {
        const inner = [...scopes, {}];
        return truthy(this.pipeline(n.pipe, dot, inner)) ? this.nodes(n.body, dot, inner) : this.nodes(n.else ?? [], dot, [...scopes, {}]);
      }
      case 'with': {
        const inner = [...scopes, {}];
        const v = this.pipeline(n.pipe, dot, inner);
        return truthy(v) ? this.nodes(n.body, v, inner) : this.nodes(n.else ?? [], dot, [...scopes, {}]);
      }
      case 'range': {
        const inner = [...scopes, {}];
        const { decl, ...pipe } = n.pipe;
        const v = this.pipeline(pipe, dot, inner);
        const entries = v === null || v === undefined ? [] : Array.isArray(v) ? v.map((x, i) => [i, x]) : isMap(v) ? Object.keys(v).sort().map((k) => [k, v[k]]) : null;
        if (entries === null) throw new RenderError(`${this.templateName}: range can't iterate over ${goPrint(v)}`);
        if (!entries.length) return this.nodes(n.else ?? [], dot, [...scopes, {}]);
        let out = '';
        for (const [k, x] of entries) {
          const scope = {};
          if (decl?.length === 1) scope[decl[0]] = x;
          if (decl?.length === 2) Object.assign(scope, { [decl[0]]: k, [decl[1]]: x });
          out += this.nodes(n.body, x, [...scopes, scope]);
        }
        return out;
      }
      case 'template':
        return this.include(n.name, n.pipe ? this.pipeline(n.pipe, dot, scopes) : null);
      default:
        throw new RenderError(`unknown node ${n.type}`);
    }
  }

  include(name, data) {
    const body = this.defines.get(name);
    if (!body) throw new RenderError(`${this.templateName}: no template "${name}" associated with template`);
    if (++this.depth > 100) throw new RenderError(`${this.templateName}: include recursion too deep (${name})`);
    try {
      return this.run(body, data);
    } finally {
      this.depth--;
    }
  }

  pipeline(pipe, dot, scopes) {
    let value;
    let first = true;
    for (const cmd of pipe.cmds) {
      value = this.command(cmd, dot, scopes, first ? [] : [value]);
      first = false;
    }
    if (pipe.decl) {
      const [name] = pipe.decl;
      if (pipe.assign) this.assignVar(name, value, scopes);
      else scopes[scopes.length - 1][name] = value;
    }
    return value;
  }

  command(cmd, dot, scopes, piped) {
    const [head, ...rest] = cmd.args;
    if (head.type === 'ident') {
      const name = head.name;
      if (name === 'and' || name === 'or') {
        const args = rest.map((a) => () => this.arg(a, dot, scopes));
        if (piped.length) args.push(() => piped[0]);
        let v;
        for (const get of args) {
          v = get();
          if (name === 'and' ? !truthy(v) : truthy(v)) return v;
        }
        return v;
      }
      const args = [...rest.map((a) => this.arg(a, dot, scopes)), ...piped];
      if (name === 'include') return this.include(goPrint(args[0]), args[1] ?? null);
      const fn = FUNCS[name];
      if (!fn) throw new RenderError(`${this.templateName}: function "${name}" not defined (not supported by this renderer)`);
      return fn(...args);
    }
    if (rest.length || piped.length) throw new RenderError(`${this.templateName}: can't give argument to non-function ${describe(head)}`);
    return this.arg(head, dot, scopes);
  }

  arg(a, dot, scopes) {
    switch (a.type) {
      case 'string':
      case 'number':
      case 'bool':
        return a.value;
      case 'nil':
        return null;
      case 'dot':
        return dot;
      case 'field':
        return this.fields(dot, a.path, a);
      case 'var':
        return this.fields(this.lookupVar(a.name, scopes), a.path, a);
      case 'pipe':
        return this.fields(this.pipeline(a.pipe, dot, scopes), a.path ?? [], a);
      case 'ident':
        return this.command({ args: [a] }, dot, scopes, []);
      default:
        throw new RenderError(`unknown argument ${a.type}`);
    }
  }

  /** `.A.B` on a value: a missing map key is nil; a field of nil is Go's "nil pointer evaluating" error. */
  fields(v, path, a) {
    let cur = v;
    for (let i = 0; i < path.length; i++) {
      if (cur === null || cur === undefined) throw new RenderError(`${this.templateName}: nil pointer evaluating interface {}.${path[i]} (in ${describe(a)})`);
      if (!isMap(cur)) throw new RenderError(`${this.templateName}: can't evaluate field ${path[i]} in type ${kindOf(cur)} (in ${describe(a)})`);
      cur = Object.hasOwn(cur, path[i]) ? cur[path[i]] : null;
    }
    return cur;
  }
}

const describe = (a) => (a.type === 'field' ? `.${a.path.join('.')}` : a.type === 'var' ? `${a.name}${a.path.map((p) => `.${p}`).join('')}` : a.type);

/** Helm's coalescing of user values over the chart's: maps merge, anything else replaces, null deletes. */
export function mergeValues(base, over) {
  const out = structuredClone(base ?? {});
  for (const [k, v] of Object.entries(over ?? {})) {
    if (v === null) delete out[k];
    else if (isMap(v) && isMap(out[k])) out[k] = mergeValues(out[k], v);
    else out[k] = structuredClone(v);
  }
  return out;
}

const capitalise = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k[0].toUpperCase() + k.slice(1), v]));

function listTemplates(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listTemplates(join(dir, e.name)) : [join(dir, e.name)]));
}

/**
 * `helm template` for a chart directory: every file under templates/ rendered (partials, `_*`, only
 * defined), keyed by `<chart>/templates/<file>` as Helm names them. NOTES.txt is rendered separately.
 */
export function renderChart(chartDir, { values = {}, name = 'vigil', namespace = 'default', isUpgrade = false } = {}) {
  const chart = parseYaml(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8'));
  const merged = mergeValues(parseYaml(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) ?? {}, values);
  const schemaFile = join(chartDir, 'values.schema.json');
  let schema;
  try {
    schema = JSON.parse(readFileSync(schemaFile, 'utf8'));
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  if (schema) {
    const problems = validateSchema(schema, merged);
    if (problems.length) throw new RenderError(`values don't meet the specifications of the schema(s) in the following chart(s):\n${chart.name}:\n- ${problems.join('\n- ')}`);
  }
  const files = listTemplates(join(chartDir, 'templates')).sort();
  const defines = new Map();
  const parsed = new Map();
  for (const f of files) {
    const key = `${chart.name}/${relative(chartDir, f)}`;
    const { body, defines: d } = parseTemplate(readFileSync(f, 'utf8'), key);
    for (const [k, v] of d) defines.set(k, v);
    // Helm names each file's template by its path, so `include (print .Template.BasePath "/x.yaml") .` works.
    defines.set(key, body);
    parsed.set(key, body);
  }
  const root = {
    Values: merged,
    Release: { Name: name, Namespace: namespace, Service: 'Helm', IsInstall: !isUpgrade, IsUpgrade: isUpgrade, Revision: 1 },
    Chart: capitalise(chart),
  };
  const out = new Map();
  for (const [key, body] of parsed) {
    const base = key.split('/').pop();
    if (base.startsWith('_')) continue;
    const exec = new Executor(defines, root, key);
    out.set(key, exec.run(body, { ...root, Template: { Name: key, BasePath: `${chart.name}/templates` } }));
  }
  return out;
}

/** The manifests as `helm template` prints them: `# Source:` headers, empty documents dropped. */
export function renderManifests(chartDir, opts) {
  const rendered = renderChart(chartDir, opts);
  const docs = [];
  for (const [key, text] of rendered) {
    if (key.endsWith('NOTES.txt')) continue;
    for (const doc of text.split(/^---\s*$/m)) if (doc.replace(/#.*$/gm, '').trim()) docs.push(`---\n# Source: ${key}\n${doc.replace(/^\n+/, '')}`);
  }
  return docs.join('\n');
}

function cli(argv) {
  const [chartDir, ...rest] = argv;
  if (!chartDir) throw new RenderError('usage: helm-render.mjs <chart-dir> [-f values.yaml]… [--name N] [--namespace NS] [--notes]');
  let values = {};
  const opts = {};
  let notes = false;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === '-f' || a === '--values') values = mergeValues(values, parseYaml(readFileSync(rest[++i], 'utf8')) ?? {});
    else if (a === '--name') opts.name = rest[++i];
    else if (a === '--namespace' || a === '-n') opts.namespace = rest[++i];
    else if (a === '--notes') notes = true;
    else throw new RenderError(`unknown option ${a}`);
  }
  if (notes) {
    const r = renderChart(chartDir, { ...opts, values });
    return [...r].find(([k]) => k.endsWith('NOTES.txt'))?.[1] ?? '';
  }
  return renderManifests(chartDir, { ...opts, values });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.stdout.write(`${cli(process.argv.slice(2))}\n`);
  } catch (err) {
    process.stderr.write(`Error: ${err.message}\n`);
    process.exit(1);
  }
}
