/**
 * The parser of scripts/helm-render.mjs: Go text/template source to a small tree. Follows
 * text/template/parse where the chart can tell (trim markers need the space: `{{-3}}` is the number
 * -3; `else if` chains; `define` only at top level; a comment is the whole action) and rejects what the
 * renderer does not execute (`block`, `break`, `continue`, method-style calls) instead of guessing.
 */
export class ParseError extends Error {
  name = 'ParseError';
}

const TRIM_LEFT = /[ \t\r\n]+$/;
const TRIM_RIGHT = /^[ \t\r\n]+/;

/** Text and raw action sources, with Go's trim markers applied. */
function split(src, file) {
  const parts = [];
  let i = 0;
  let trimNext = false;
  while (i < src.length) {
    const open = src.indexOf('{{', i);
    let text = src.slice(i, open < 0 ? src.length : open);
    if (trimNext) text = text.replace(TRIM_RIGHT, '');
    trimNext = false;
    if (open < 0) {
      if (text) parts.push({ text });
      break;
    }
    let start = open + 2;
    if (src.startsWith('- ', start) || src.startsWith('-\t', start) || src.startsWith('-\n', start)) {
      text = text.replace(TRIM_LEFT, '');
      start += 2;
    }
    if (text) parts.push({ text });
    const close = findClose(src, start, file);
    let end = close;
    if (src[close - 1] === '-' && /[ \t\n]/.test(src[close - 2] ?? '')) {
      trimNext = true;
      end = close - 1;
    }
    const line = src.slice(0, open).split('\n').length;
    parts.push({ action: src.slice(start, end).trim(), line });
    i = close + 2;
  }
  return parts;
}

/** The `}}` closing an action, skipping quoted strings and comments. */
function findClose(src, from, file) {
  let i = from;
  while (i < src.length) {
    const c = src[i];
    if (src.startsWith('/*', i)) {
      const e = src.indexOf('*/', i + 2);
      if (e < 0) throw new ParseError(`${file}: unclosed comment`);
      i = e + 2;
    } else if (c === '"') {
      i++;
      while (i < src.length && src[i] !== '"') i += src[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '`') {
      const e = src.indexOf('`', i + 1);
      if (e < 0) throw new ParseError(`${file}: unterminated raw string`);
      i = e + 1;
    } else if (src.startsWith('}}', i)) return i;
    else i++;
  }
  throw new ParseError(`${file}: unclosed action`);
}

const TOKEN = /\s*(?:(\()|(\))|(\|)|(:=)|(=)|(,)|("(?:[^"\\]|\\.)*")|(`[^`]*`)|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|(\$[A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)|(\.(?:[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)?)|([A-Za-z_][A-Za-z0-9_]*))/y;

function tokenize(s, where) {
  const out = [];
  TOKEN.lastIndex = 0;
  let pos = 0;
  while (pos < s.length) {
    if (/^\s*$/.test(s.slice(pos))) break;
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(s);
    if (!m) throw new ParseError(`${where}: unexpected "${s.slice(pos).trim().slice(0, 20)}" in action`);
    pos = TOKEN.lastIndex;
    const [, lp, rp, bar, decl, assign, comma, str, raw, num, vari, field, ident] = m;
    if (lp) out.push({ t: '(' });
    else if (rp) out.push({ t: ')' });
    else if (bar) out.push({ t: '|' });
    else if (decl) out.push({ t: ':=' });
    else if (assign) out.push({ t: '=' });
    else if (comma) out.push({ t: ',' });
    else if (str) out.push({ t: 'arg', a: { type: 'string', value: JSON.parse(str.replace(/\\'/g, "'")) } });
    else if (raw) out.push({ t: 'arg', a: { type: 'string', value: raw.slice(1, -1) } });
    else if (num) out.push({ t: 'arg', a: { type: 'number', value: Number(num) } });
    else if (vari) {
      const [name, ...path] = vari.split('.');
      out.push({ t: 'arg', a: { type: 'var', name, path } });
    } else if (field) out.push({ t: 'arg', a: field === '.' ? { type: 'dot' } : { type: 'field', path: field.slice(1).split('.') } });
    else if (ident === 'true' || ident === 'false') out.push({ t: 'arg', a: { type: 'bool', value: ident === 'true' } });
    else if (ident === 'nil') out.push({ t: 'arg', a: { type: 'nil' } });
    else out.push({ t: 'arg', a: { type: 'ident', name: ident } });
  }
  return out;
}

/** A pipeline from tokens: `[$a[, $b] :=|=] cmd [| cmd]…`, sub-pipelines in parentheses. */
function parsePipe(tokens, where, allowTwoVars = false) {
  let i = 0;
  const pipe = { cmds: [] };
  // Declarations: `$x :=`, `$x =`, and in range `$i, $v :=`.
  const names = [];
  let j = 0;
  while (tokens[j]?.t === 'arg' && tokens[j].a.type === 'var' && !tokens[j].a.path.length) {
    names.push(tokens[j].a.name);
    if (tokens[j + 1]?.t === ',' && allowTwoVars && names.length === 1) j += 2;
    else break;
  }
  if (names.length && (tokens[j + 1]?.t === ':=' || tokens[j + 1]?.t === '=')) {
    pipe.decl = names;
    pipe.assign = tokens[j + 1].t === '=';
    i = j + 2;
  }
  const parseArgs = (stop) => {
    const cmds = [];
    let args = [];
    while (i < tokens.length && tokens[i].t !== stop) {
      const tok = tokens[i++];
      if (tok.t === '|') {
        if (!args.length) throw new ParseError(`${where}: missing command before |`);
        cmds.push({ args });
        args = [];
      } else if (tok.t === '(') {
        const inner = parseArgs(')');
        if (tokens[i++]?.t !== ')') throw new ParseError(`${where}: unclosed left paren`);
        // `(…).Field` is not supported: a field after `)` becomes an argument, which is refused below.
        const sub = { type: 'pipe', pipe: { cmds: inner } };
        args.push(sub);
      } else if (tok.t === 'arg') args.push(tok.a);
      else throw new ParseError(`${where}: unexpected ${tok.t}`);
    }
    if (args.length) cmds.push({ args });
    else if (cmds.length) throw new ParseError(`${where}: missing command after |`);
    return cmds;
  };
  pipe.cmds = parseArgs(null);
  if (i < tokens.length) throw new ParseError(`${where}: unexpected ${tokens[i].t}`);
  if (!pipe.cmds.length) throw new ParseError(`${where}: missing value`);
  for (const c of pipe.cmds)
    if (c.args[0].type !== 'ident' && c.args.length > 1) throw new ParseError(`${where}: can't give argument to non-function`);
  return pipe;
}

const KEYWORD = /^(if|else|end|range|with|define|template|block|break|continue)\b\s*(.*)$/s;

/**
 * Parse one template file: its body (nodes) and the templates it defines. Nodes: text, action, if,
 * with, range, template.
 */
export function parseTemplate(src, file = 'template') {
  const parts = split(src, file);
  const defines = new Map();
  let pos = 0;

  const block = (depth, inDefine) => {
    const nodes = [];
    while (pos < parts.length) {
      const p = parts[pos++];
      if (p.text !== undefined) {
        nodes.push({ type: 'text', text: p.text });
        continue;
      }
      const where = `${file}:${p.line}`;
      const a = p.action;
      if (a.startsWith('/*')) {
        if (!a.endsWith('*/')) throw new ParseError(`${where}: comment ends before closing delimiter`);
        continue;
      }
      const kw = KEYWORD.exec(a);
      if (!kw) {
        nodes.push({ type: 'action', pipe: parsePipe(tokenize(a, where), where) });
        continue;
      }
      const [, word, rest] = kw;
      switch (word) {
        case 'end':
        case 'else':
          if (!depth) throw new ParseError(`${where}: unexpected {{${word}}}`);
          return { nodes, closer: word, rest, where };
        case 'if':
        case 'with':
        case 'range':
          nodes.push(control(word, rest, where, depth, inDefine));
          break;
        case 'define': {
          if (depth || inDefine) throw new ParseError(`${where}: define only at top level`);
          const name = JSON.parse(rest.trim());
          const r = block(depth + 1, true);
          if (r.closer !== 'end') throw new ParseError(`${where}: define ends with ${r.closer}`);
          defines.set(name, r.nodes);
          break;
        }
        case 'template': {
          const toks = tokenize(rest, where);
          const first = toks.shift();
          if (first?.t !== 'arg' || first.a.type !== 'string') throw new ParseError(`${where}: template needs a quoted name`);
          nodes.push({ type: 'template', name: first.a.value, pipe: toks.length ? parsePipe(toks, where) : null });
          break;
        }
        default:
          throw new ParseError(`${where}: {{${word}}} is not supported by this renderer`);
      }
    }
    if (depth) throw new ParseError(`${file}: unexpected EOF (missing {{end}})`);
    return { nodes, closer: null };
  };

  const control = (word, rest, where, depth, inDefine) => {
    const node = { type: word, pipe: parsePipe(tokenize(rest, where), where, word === 'range') };
    let r = block(depth + 1, inDefine);
    node.body = r.nodes;
    if (r.closer === 'else') {
      const elseIf = /^(if|with)\b\s*(.*)$/s.exec(r.rest);
      if (elseIf) {
        if (elseIf[1] !== word) throw new ParseError(`${r.where}: else ${elseIf[1]} inside ${word}`);
        node.else = [control(word, elseIf[2], r.where, depth, inDefine)];
        return node;
      }
      if (r.rest.trim()) throw new ParseError(`${r.where}: unexpected "${r.rest}" after else`);
      r = block(depth + 1, inDefine);
      node.else = r.nodes;
      if (r.closer !== 'end') throw new ParseError(`${r.where}: expected end; found ${r.closer}`);
    }
    return node;
  };

  const { nodes } = block(0, false);
  return { body: nodes, defines };
}
