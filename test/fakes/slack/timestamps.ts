/**
 * Slack message timestamps: "<unix seconds>.<6 digits>", unique per channel and ordered. Like real Slack, a ts
 * is the post's wall-clock time (apps read it as "when was this posted"), bumped by 100 µs when two posts
 * land in the same microsecond. A fixed `startSeconds` gives deterministic values instead (e.g. "1764430000.000100").
 */
export class TsClock {
  private micros: number;

  constructor(private readonly startSeconds?: number) {
    this.micros = startSeconds === undefined ? 0 : startSeconds * 1_000_000;
  }

  next(): string {
    const wall = this.startSeconds === undefined ? Date.now() * 1000 : 0;
    this.micros = Math.max(this.micros + 100, wall);
    return formatTs(this.micros);
  }
}

export function formatTs(micros: number): string {
  const seconds = Math.floor(micros / 1_000_000);
  const fraction = String(micros % 1_000_000).padStart(6, '0');
  return `${seconds}.${fraction}`;
}

/** Compares two ts strings numerically (same-length fractions, so seconds then fraction). */
export function compareTs(a: string, b: string): number {
  const [as = '0', af = '0'] = a.split('.');
  const [bs = '0', bf = '0'] = b.split('.');
  return Number(as) - Number(bs) || Number(af.padEnd(6, '0')) - Number(bf.padEnd(6, '0'));
}
