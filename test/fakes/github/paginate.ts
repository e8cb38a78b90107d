/**
 * GitHub's page-number pagination: `per_page` (default 30, at most 100) and `page` (from 1), with a
 * `Link` header carrying absolute URLs for `prev`, `next`, `last` and `first` (what `octokit.paginate`
 * follows: it reads `rel="next"`).
 */

export interface Page<T> {
  items: T[];
  link?: string;
}

export function paginate<T>(all: T[], url: URL): Page<T> {
  const perPage = clamp(Number(url.searchParams.get('per_page') ?? 30) || 30, 1, 100);
  const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
  const last = Math.max(1, Math.ceil(all.length / perPage));
  const items = all.slice((page - 1) * perPage, page * perPage);
  const at = (n: number): string => {
    const u = new URL(url.toString());
    u.searchParams.set('per_page', String(perPage));
    u.searchParams.set('page', String(n));
    return u.toString();
  };
  const rels: string[] = [];
  if (page > 1) rels.push(`<${at(page - 1)}>; rel="prev"`);
  if (page < last) rels.push(`<${at(page + 1)}>; rel="next"`, `<${at(last)}>; rel="last"`);
  if (page > 1) rels.push(`<${at(1)}>; rel="first"`);
  return rels.length > 0 ? { items, link: rels.join(', ') } : { items };
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, Math.floor(n)));
}
