/**
 * The mechanical check of the model's prose: every fact-shaped token in it must occur in the facts the
 * model was given, as a whole token. Fact-shaped means numbers, times, durations and number words,
 * hypothesis labels (`H2`), URLs, code in backticks, identifiers (anything with a digit, `-`, `_`, `/`,
 * `.`, `:`, `=` or camelCase inside: `shop/checkout`, `payments-db`, a sha) and every capitalised word but
 * a short list of English function words (names of people and products). Mentions and Slack control
 * sequences (`@here`, `<!channel>`, `<@U…>`, `<https://…|…>`) are never accepted. Plain lower-case
 * English is free. Strict on purpose: a false alarm costs the nicer prose (the rule-based text is used),
 * a missed one would publish a fact the record does not hold.
 */

/**
 * Capitalised words that are not facts: sentence starters and function words. Kept short on purpose,
 * since any other capitalised word may be a name; a word the facts hold is always fine anyway.
 */
const STARTERS = new Set(
  (
    'The A An It Its This That These Those There They Their Them He She His Her We Our I ' +
    'After Before When While Then Because Since With Without No Not Once During Until Within About ' +
    'At On In Into For From To By Of As Each Every All Both Some Someone Nothing Nobody Neither Either ' +
    'And But Or So If Also Only Later Meanwhile Finally Here Vigil UTC'
  ).split(' '),
);

/** Lower-case words with a dot inside that are not identifiers. */
const ABBREVIATIONS = new Set(['e.g', 'i.e']);

/**
 * Quantities in words. Ordinals are left out: "first" and "second" are ordinary narrative words (and
 * "second" a unit), while an invented count reads as a cardinal.
 */
const NUMBER_WORDS = new Set(
  (
    'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen ' +
    'seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand ' +
    'million billion hundreds thousands millions billions dozen dozens half twice thrice'
  ).split(' '),
);

/** Characters a token is made of: letters, digits and `- _ . / :`; anything else separates tokens. */
const T = '\\p{L}\\p{N}_\\-./:';
const TOKEN_SPLIT = new RegExp(`[^${T}]+`, 'u');
const TOKEN_CHAR = new RegExp(`^[${T}]$`, 'u');

/** `<!channel>`, `<@U123>`, `<https://x|label>`, `<#C1>`: Slack markup, never the model's to write. */
const SLACK_CONTROL = /<[^<>\s][^<>]*>/g;
/** Ends on a character that cannot close a sentence, so the sentence's full stop stays in the text. */
const URL = /https?:\/\/[^\s<>()`"'|]*[^\s<>()`"'|.,;:!?]/g;
const MENTION = /(?<![\w.])@([\w.-]*\w)/g;
const BROADCAST = new Set(['here', 'channel', 'everyone']);
const CODE = /`([^`]+)`/g;
const LABEL = /(?<!\w)H\d+(?!\w)/g;
/** Punctuation around a word that is not part of it. */
const EDGE = /^[\s"'“”‘’(\[{*_~,;:!?.…—–-]+|[\s"'“”‘’)\]}*_~,;:!?.…—–-]+$/g;
const NUMBER_SHAPED = /^[\d.:,/%+×x-]+$/;

/** What the prose may draw on: the facts' text (normalised, lower-case), its tokens, labels and URLs. */
export interface FactCorpus {
  text: string;
  tokens: Set<string>;
  labels: Set<string>;
  urls: Set<string>;
}

export function factCorpus(leaves: string[]): FactCorpus {
  const raw = leaves.join('\n');
  const text = normalise(raw).toLowerCase();
  const tokens = new Set<string>();
  for (const t of text.split(TOKEN_SPLIT)) {
    const token = trimToken(t);
    if (!token) continue;
    tokens.add(token);
    // `14:02:11` also allows `14:02`: the same time, less precise.
    if (/^\d{1,2}:\d{2}:\d{2}$/.test(token)) tokens.add(token.slice(0, token.lastIndexOf(':')));
  }
  return { text, tokens, labels: new Set(raw.match(LABEL) ?? []), urls: new Set(raw.match(URL) ?? []) };
}

/**
 * The fact-shaped tokens of `prose` that the corpus does not hold (deduplicated, in order). Empty means
 * the prose states nothing beyond the facts, as far as a mechanical check can tell.
 */
export function unsupportedFacts(prose: string, corpus: FactCorpus): string[] {
  const found: string[] = [];
  const miss = (token: string): void => {
    if (!found.includes(token)) found.push(token);
  };
  const has = (phrase: string): boolean => hasPhrase(corpus, phrase);

  let rest = prose;
  const cut = (re: RegExp, check: (m: RegExpMatchArray) => void): void => {
    for (const m of rest.matchAll(re)) check(m);
    rest = rest.replace(re, ' ');
  };
  cut(SLACK_CONTROL, (m) => miss(m[0]));
  cut(URL, (m) => {
    if (!corpus.urls.has(m[0])) miss(m[0]);
  });
  cut(MENTION, (m) => {
    if (BROADCAST.has(m[1]!.toLowerCase()) || !has(m[1]!)) miss(`@${m[1]}`);
  });
  cut(CODE, (m) => {
    if (!has(normalise(m[1]!.trim()))) miss(`\`${m[1]}\``);
  });

  for (const raw of normalise(rest).split(/\s+/)) {
    const word = raw.replace(EDGE, '').replace(/['’]s$/, '');
    if (!word || ABBREVIATIONS.has(word)) continue;
    if (/^H\d+$/.test(word)) {
      if (!corpus.labels.has(word)) miss(word);
    } else if (NUMBER_SHAPED.test(word) && /\d/.test(word)) {
      const n = word.replace(/^\+/, '').replace(/[%×x]+$/, '');
      if (!hasNumber(corpus, n)) miss(n);
    } else if (isIdentifier(word)) {
      if (!has(word)) miss(word);
    } else if (NUMBER_WORDS.has(word.toLowerCase())) {
      if (!has(word)) miss(word);
    } else if (/^\p{Lu}/u.test(word) && !STARTERS.has(word)) {
      // Names and acronyms (`OOM`, `PRs`), wherever they stand.
      if (!has(word) && !has(word.replace(/s$/, ''))) miss(word);
    }
  }
  return found;
}

/** A whole token of the facts; a range or ratio (`3-5`, `3/100`) when each of its parts is one. */
function hasNumber(corpus: FactCorpus, n: string): boolean {
  if (corpus.tokens.has(n)) return true;
  const parts = n.split(/[-/]/);
  return parts.length > 1 && parts.every((p) => p !== '' && corpus.tokens.has(p));
}

/**
 * `phrase` occurs in the facts with token boundaries on both sides: `checkout-db` is not in
 * `checkout-db-replica`, `here` is not in `where`. An option's leading `--` and a sentence's closing `.`
 * or `:` do not join tokens.
 */
function hasPhrase(corpus: FactCorpus, phrase: string): boolean {
  const p = phrase.toLowerCase();
  if (!p) return false;
  const before = TOKEN_CHAR.test(p[0]!) ? `(?:^|[^${T}])-*` : '';
  const after = TOKEN_CHAR.test(p.at(-1)!) ? `(?=[.:]*(?:$|[^${T}]))` : '';
  return new RegExp(`${before}${escapeRe(p)}${after}`, 'mu').test(corpus.text);
}

/** Has the shape of a name or value rather than an English word. */
function isIdentifier(word: string): boolean {
  return /\d/.test(word) || /\w[-_/.:=@#]\w/.test(word) || /[a-z][A-Z]/.test(word);
}

const trimToken = (t: string): string => t.replace(/^-+/, '').replace(/[.:]+$/, '');

const UNITS: [RegExp, string][] = [
  [/^(?:ms|msecs?|milliseconds?)$/i, 'ms'],
  [/^(?:s|secs?|seconds?)$/i, 's'],
  [/^(?:m|mins?|minutes?)$/i, 'min'],
  [/^(?:h|hrs?|hours?)$/i, 'h'],
  [/^(?:d|days?)$/i, 'd'],
];
const UNIT = '(?:ms|msecs?|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)';
const DURATION = new RegExp(`(?<![\\w.:])\\d+\\s*${UNIT}\\b(?:\\s+\\d+\\s*${UNIT}\\b)*`, 'gi');

/**
 * The same on both sides: `1,234` → `1234` (a thousands separator is not a new number), runs of spaces
 * → one, and a duration → one compact token (`1 h 4 min`, `1h 4 minutes` → `1h4min`), so `35 min`
 * admits `35 minutes` but not a bare `35`.
 */
function normalise(s: string): string {
  return s
    .replace(/(\d),(?=\d{3}\b)/g, '$1')
    .replace(/[ \t]+/g, ' ')
    .replace(DURATION, (d) => [...d.matchAll(/(\d+)\s*([a-z]+)/gi)].map(([, n, u]) => `${n}${UNITS.find(([re]) => re.test(u!))![1]}`).join(''));
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
