/**
 * A strict reader of the Prometheus text exposition format (0.0.4), for tests: every line is a HELP, a
 * TYPE or a sample of a family declared before it; names and labels follow the data model; values are
 * floats (or +Inf/-Inf/NaN, case-insensitive as Prometheus' own parser takes them: prom-client writes `Nan`). Throws on the first line that is not; returns the samples.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*';
const VALUE = '(?:[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?|[-+]?[iI][nN][fF]|[nN][aA][nN])';
const HELP = new RegExp(`^# HELP (${NAME}) (.*)$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL}="(?:[^"\\\\\\n]|\\\\[\\\\"n])*")(?:,${LABEL}="(?:[^"\\\\\\n]|\\\\[\\\\"n])*")*,?)?\\})? (${VALUE})(?: -?\\d+)?$`);
const PAIR = new RegExp(`(${LABEL})="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"`, 'g');

export function parsePrometheusText(text: string): { samples: Sample[]; types: Map<string, string> } {
  if (!text.endsWith('\n')) throw new Error('exposition does not end with a newline');
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  text
    .slice(0, -1)
    .split('\n')
    .forEach((line, i) => {
      if (line === '') return;
      const where = `line ${i + 1}: ${line.slice(0, 120)}`;
      if (line.startsWith('#')) {
        const type = TYPE.exec(line);
        if (type) {
          if (types.has(type[1]!)) throw new Error(`${where}: second TYPE for ${type[1]}`);
          return void types.set(type[1]!, type[2]!);
        }
        if (HELP.test(line)) return;
        throw new Error(`${where}: not a HELP or TYPE line`);
      }
      const m = SAMPLE.exec(line);
      if (!m) throw new Error(`${where}: not a sample`);
      const name = m[1]!;
      const family = [...types.keys()].find((f) => name === f || (/^(histogram|summary)$/.test(types.get(f)!) && ['_bucket', '_sum', '_count'].some((s) => name === f + s)));
      if (!family) throw new Error(`${where}: sample without a TYPE for its family`);
      const labels: Record<string, string> = {};
      for (const [, k, v] of (m[2] ?? '').matchAll(PAIR)) labels[k!] = v!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      const raw = m[3]!.toLowerCase();
      const value = raw.endsWith('inf') ? (raw.startsWith('-') ? -Infinity : Infinity) : raw === 'nan' ? NaN : Number(raw);
      samples.push({ name, labels, value });
    });
  return { samples, types };
}

/** The sum of a metric's samples whose labels include `labels`. */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
}
