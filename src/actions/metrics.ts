/** The MetricProbe verification uses, over the Prometheus client: an instant query's first sample. */
import type { PrometheusClient } from '../evidence/prometheus/client.js';
import type { MetricProbe } from './types.js';

export function prometheusProbe(client: PrometheusClient): MetricProbe {
  return {
    async value(query) {
      const { data } = await client.query(query);
      const raw = data.resultType === 'vector' ? data.result[0]?.value[1] : data.resultType === 'scalar' ? data.result[1] : undefined;
      return raw === undefined ? undefined : Number(raw);
    },
  };
}
