/**
 * values.schema.json checking for scripts/helm-render.mjs (Helm validates values against it before
 * rendering). A JSON Schema subset: type (one or a list; "integer" is a whole number), enum, const,
 * properties, required, additionalProperties (boolean or schema), items, pattern, minLength, minimum,
 * maximum, minItems, uniqueItems, anyOf, $ref to "#/$defs/…". Any other keyword is an error rather than
 * silently unchecked; annotations (description, title, default, examples, $schema, $comment) are ignored.
 */
const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'title', 'description', 'default', 'examples', '$defs']);
const KEYWORDS = new Set(['type', 'enum', 'const', 'properties', 'required', 'additionalProperties', 'items', 'pattern', 'minLength', 'minimum', 'maximum', 'minItems', 'uniqueItems', 'anyOf', '$ref']);

const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : typeof v);
const matchesType = (t, v) => (t === 'integer' ? Number.isInteger(v) : t === typeOf(v));

/** Problems with `value` against `schema`, as "path: message" (empty: valid). */
export function validateSchema(schema, value, root = schema, path = '') {
  const at = path || '(root)';
  const out = [];
  for (const k of Object.keys(schema)) if (!KEYWORDS.has(k) && !ANNOTATIONS.has(k)) throw new Error(`values.schema.json ${at}: keyword "${k}" is not supported by this checker`);
  if (schema.$ref) {
    const m = /^#\/\$defs\/(.+)$/.exec(schema.$ref);
    if (!m || !root.$defs?.[m[1]]) throw new Error(`values.schema.json ${at}: unresolvable $ref ${schema.$ref}`);
    out.push(...validateSchema(root.$defs[m[1]], value, root, path));
  }
  if (schema.type) {
    const types = [].concat(schema.type);
    if (!types.some((t) => matchesType(t, value))) return [...out, `${at}: Invalid type. Expected: ${types.join(' or ')}, given: ${typeOf(value)}`];
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) out.push(`${at}: must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) out.push(`${at}: must be ${JSON.stringify(schema.const)}`);
  if (typeof value === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) out.push(`${at}: Does not match pattern '${schema.pattern}'`);
    if (schema.minLength !== undefined && [...value].length < schema.minLength) out.push(`${at}: String length must be greater than or equal to ${schema.minLength}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) out.push(`${at}: Must be greater than or equal to ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) out.push(`${at}: Must be less than or equal to ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) out.push(`${at}: Array must have at least ${schema.minItems} items`);
    if (schema.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) out.push(`${at}: array items must be unique`);
    if (schema.items) value.forEach((v, i) => out.push(...validateSchema(schema.items, v, root, `${path}.${i}`)));
  }
  if (typeOf(value) === 'object') {
    for (const r of schema.required ?? []) if (!(r in value)) out.push(`${at}: ${r} is required`);
    for (const [k, v] of Object.entries(value)) {
      const sub = schema.properties?.[k];
      const p = path ? `${path}.${k}` : k;
      if (sub) out.push(...validateSchema(sub, v, root, p));
      else if (schema.additionalProperties === false) out.push(`${at}: Additional property ${k} is not allowed`);
      else if (typeof schema.additionalProperties === 'object') out.push(...validateSchema(schema.additionalProperties, v, root, p));
    }
  }
  if (schema.anyOf && !schema.anyOf.some((s) => validateSchema(s, value, root, path).length === 0)) out.push(`${at}: must match at least one schema in anyOf`);
  return out;
}
