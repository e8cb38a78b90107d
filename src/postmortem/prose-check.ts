/**
 * The mechanical check of the model's prose: every fact-shaped token in it must occur in the facts the
 * model was given. Fact-shaped means numbers and times, hypothesis labels (`H2`), URLs, user mentions,
 * code in backticks, identifiers (anything with a digit, `-`, `_`, `/`, `.`, `:`, `=` or camelCase inside:
 * `shop/checkout`, `payments-db`, a sha) and capitalised words inside a sentence (names of people and
 * products). Plain lower-case English is free. Strict on purpose: a false alarm costs the nicer prose
 * (the rule-based text is used), a missed one would publish a fact the record does not hold.
 */

/** Words that may be capitalised mid-sentence without being facts. */
const ALWAYS_ALLOWED = new Set(['i', 'utc', 'vigil', 'e.g', 'i.e']);

const NUMBER = /\d+(?:[.:]\d+)*/g;
/** Both end on a character that cannot close a sentence, so the sentence's full stop stays in the text. */
const URL = /https?:\/\/[^\s<>()`"'|]*[^\s<>()`"'|.,;:!?]/g;
const MENTION = /<@([A-Z0-9]+)(?:\|[^>]*)?>|(?<![\w.])@([\w.-]*\w)/g;
const CODE = /`([^`]+)`/g;
/** Punctuation around a word that is not part of it. */
const EDGE = /^[\s"'“”‘’(\[{*_~,;:!?.…—–-]+|[\s"'“”‘’)\]}*_~,;:!?.…—–-]+$/g;

/** What the prose may draw on: the text of every fact sent, and the numbers in it. */
export interface FactCorpus {
  text: string;
  numbers: Set<string>;
  labels: Set<string>;
}

export function factCorpus(leaves: string[]): FactCorpus {
  const text = leaves.join('\n');
  const labels = new Set(text.match(/(?<!\w)H\d+(?!\w)/g) ?? []);
  const numbers = new Set<string>();
  for (const n of normaliseNumbers(text).match(NUMBER) ?? []) {
    numbers.add(n);
    // `14:02:11` also allows `14:02`; every part stands alone too (`2026-11-29` gives 2026, 11, 29).
    const parts = n.split(/[.:]/);
    parts.forEach((p, i) => {
      numbers.add(String(Number(p)));
      numbers.add(p);
      if (i > 0 && n.includes(':')) numbers.add(parts.slice(0, i + 1).join(':'));
    });
  }
  return { text: text.toLowerCase(), numbers, labels };
}

/** `1,234` → `1234`, on both sides, so a thousands separator is not a new number. */
const normaliseNumbers = (s: string): string => s.replace(/(\d),(?=\d{3}\b)/g, '$1');

/**
 * The fact-shaped tokens of `prose` that the corpus does not hold (deduplicated, in order). Empty means
 * the prose states nothing beyond the facts, as far as a mechanical check can tell.
 */
export function unsupportedFacts(prose: string, corpus: FactCorpus): string[] {
  const found: string[] = [];
  const miss = (token: string): void => {
    if (!found.includes(token)) found.push(token);
  };
  const has = (s: string): boolean => corpus.text.includes(s.toLowerCase());

  let rest = normaliseNumbers(prose);
  const cut = (re: RegExp, check: (m: RegExpMatchArray) => void): void => {
    for (const m of rest.matchAll(re)) check(m);
    rest = rest.replace(re, ' ');
  };
  cut(URL, (m) => {
    if (!has(m[0])) miss(m[0]);
  });
  cut(MENTION, (m) => {
    const id = m[1] ?? m[2]!;
    if (!has(id)) miss(m[1] ? `<@${id}>` : `@${id}`);
  });
  cut(CODE, (m) => {
    if (!has(m[1]!.trim())) miss(`\`${m[1]}\``);
  });

  let sentenceStart = true;
  for (const raw of rest.split(/\s+/)) {
    const word = raw.replace(EDGE, '').replace(/['’]s$/, '');
    const startsHere = sentenceStart;
    sentenceStart = /[.!?:;]["'”’)]*$|^[—–-]$/.test(raw) || raw === '';
    if (!word) continue;
    if (ALWAYS_ALLOWED.has(word.toLowerCase())) continue;
    if (/^H\d+$/.test(word)) {
      if (!corpus.labels.has(word)) miss(word);
    } else if (/^[\d.:,/%+×x-]+$/.test(word) && /\d/.test(word)) {
      for (const n of word.match(NUMBER) ?? []) if (!corpus.numbers.has(n) && !corpus.numbers.has(String(Number(n)))) miss(n);
    } else if (isIdentifier(word)) {
      if (!has(word)) miss(word);
    } else if (/^[A-Z]{2,}s?$/.test(word) || (/^[A-Z]/.test(word) && !startsHere)) {
      // Acronyms (`OOM`, `PRs`) anywhere, names inside a sentence: as whole words.
      if (!hasWord(corpus, word) && !hasWord(corpus, word.replace(/s$/, ''))) miss(word);
    }
  }
  return found;
}

/** Has the shape of a name or value rather than an English word. */
function isIdentifier(word: string): boolean {
  return /\d/.test(word) || /\w[-_/.:=@#]\w/.test(word) || /[a-z][A-Z]/.test(word);
}

const hasWord = (corpus: FactCorpus, word: string): boolean => new RegExp(`(?<!\\w)${escapeRe(word.toLowerCase())}(?!\\w)`).test(corpus.text);

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
