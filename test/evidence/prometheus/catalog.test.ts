import { describe, expect, it } from 'vitest';
import {
  CONTAINER_RESTARTS,
  DEPENDENCY_CATALOG,
  ERROR_RATIO,
  TARGET_CATALOG,
  escapeLabelValue,
  renderPromQL,
} from '../../../src/evidence/prometheus/catalog.js';

describe('catalog', () => {
  it('renders the error ratio for a target, service defaulting to the workload', () => {
    expect(renderPromQL(ERROR_RATIO.template, { namespace: 'shop', workload: 'checkout' })).toBe(
      '(sum(rate(http_requests_total{namespace="shop",service="checkout",code=~"5.."}[1m])) or vector(0)) / sum(rate(http_requests_total{namespace="shop",service="checkout"}[1m]))',
    );
    expect(renderPromQL(ERROR_RATIO.template, { namespace: 'shop', workload: 'checkout', service: 'checkout-http' })).toContain('service="checkout-http"');
  });

  it('matches pods by a regex with the workload name escaped', () => {
    expect(renderPromQL(CONTAINER_RESTARTS.template, { namespace: 'shop', workload: 'api.v2' })).toContain('pod=~"api\\\\.v2-([a-z0-9]{1,10}-[a-z0-9]{5}|[0-9]+|[a-z0-9]{5})"');
    expect(renderPromQL(CONTAINER_RESTARTS.template, { namespace: 'shop', workload: 'db', podRegex: 'db-[0-9]+' })).toContain('pod=~"db-[0-9]+"');
  });

  it('escapes label values so they cannot break out of the string literal', () => {
    expect(escapeLabelValue('a"b\\c\nd\u0001')).toBe('a\\"b\\\\c\\nd\\x01');
    const q = renderPromQL(ERROR_RATIO.template, { namespace: 'x"} or vector(1) #', workload: 'w' });
    expect(q).toContain('namespace="x\\"} or vector(1) #"');
  });

  it('has unique ids and no unfilled placeholders', () => {
    const all = [...TARGET_CATALOG, ...DEPENDENCY_CATALOG];
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    for (const e of all) expect(renderPromQL(e.template, { namespace: 'n', workload: 'w' }), e.id).not.toMatch(/\$[a-z]/);
  });
});
