/**
 * Data-store exporter metrics: what a database, cache or broker says about itself through its usual
 * exporter (postgres_exporter, mysqld_exporter, redis_exporter for Redis and Valkey, memcached_exporter,
 * the Percona MongoDB exporter). A cache whose maxmemory was cut shows no 5xx anywhere: it evicts; a
 * database behind a migration's lock answers nothing wrong, its lock count and oldest transaction climb.
 * These are the ids the analyzers read, whatever the engine:
 *
 * | id                       | unit      | trouble | what |
 * |--------------------------|-----------|---------|------|
 * | `store_up`               | ratio     | low     | the exporter reaches the server (`pg_up`, `redis_up`, …) |
 * | `store_evictions`        | keys/s    | high    | keys evicted for memory (`redis_evicted_keys_total`, `memcached_items_evicted_total`) |
 * | `store_memory_ratio`     | ratio     | high    | used memory / its configured limit (`maxmemory`, memcached `-m`) |
 * | `store_hit_ratio`        | ratio     | low     | cache hits / lookups |
 * | `store_connections_ratio`| ratio     | high    | connections / the server's maximum |
 * | `store_locks`            | locks     | high    | locks held or awaited (`pg_locks_count`, InnoDB row-lock waits) |
 * | `store_oldest_tx`        | seconds   | high    | the longest-running transaction (`pg_stat_activity_max_tx_duration`) |
 * | `store_deadlocks`        | per s     | high    | deadlocks detected |
 * | `store_replication_lag`  | seconds   | high    | a replica's delay |
 * | `store_latency`          | seconds   | high    | the server's own command/operation latency (Redis p99 or mean per command, MongoDB mean op) |
 *
 * The first recipe whose series all exist wins for an id. `$sel` is the candidate's selector.
 */
import type { CatalogEntry } from './catalog.js';

export interface StoreRecipe {
  id: string;
  title: string;
  unit: string;
  badWhen: 'high' | 'low';
  threshold?: number;
  /** Metric names that must all exist for the candidate. */
  needs: string[];
  /** PromQL with `$sel` for the candidate's matchers. */
  template: string;
}

export const STORE_RECIPES: readonly StoreRecipe[] = [
  // Reachability.
  { id: 'store_up', title: 'Store reachable by its exporter', unit: 'ratio', badWhen: 'low', threshold: 0.5, needs: ['pg_up'], template: 'min(pg_up{$sel})' },
  { id: 'store_up', title: 'Store reachable by its exporter', unit: 'ratio', badWhen: 'low', threshold: 0.5, needs: ['mysql_up'], template: 'min(mysql_up{$sel})' },
  { id: 'store_up', title: 'Store reachable by its exporter', unit: 'ratio', badWhen: 'low', threshold: 0.5, needs: ['redis_up'], template: 'min(redis_up{$sel})' },
  { id: 'store_up', title: 'Store reachable by its exporter', unit: 'ratio', badWhen: 'low', threshold: 0.5, needs: ['mongodb_up'], template: 'min(mongodb_up{$sel})' },
  { id: 'store_up', title: 'Store reachable by its exporter', unit: 'ratio', badWhen: 'low', threshold: 0.5, needs: ['memcached_up'], template: 'min(memcached_up{$sel})' },
  // Memory and evictions (caches).
  { id: 'store_evictions', title: 'Keys evicted for memory', unit: 'keys/s', badWhen: 'high', needs: ['redis_evicted_keys_total'], template: 'sum(rate(redis_evicted_keys_total{$sel}[1m]))' },
  { id: 'store_evictions', title: 'Items evicted for memory', unit: 'keys/s', badWhen: 'high', needs: ['memcached_items_evicted_total'], template: 'sum(rate(memcached_items_evicted_total{$sel}[1m]))' },
  { id: 'store_memory_ratio', title: 'Used memory / maxmemory', unit: 'ratio', badWhen: 'high', threshold: 0.95, needs: ['redis_memory_used_bytes', 'redis_memory_max_bytes'], template: 'max(redis_memory_used_bytes{$sel}) / max(redis_memory_max_bytes{$sel} > 0)' },
  { id: 'store_memory_ratio', title: 'Used memory / memory limit', unit: 'ratio', badWhen: 'high', threshold: 0.95, needs: ['memcached_current_bytes', 'memcached_limit_bytes'], template: 'max(memcached_current_bytes{$sel}) / max(memcached_limit_bytes{$sel} > 0)' },
  {
    id: 'store_hit_ratio', title: 'Cache hit ratio', unit: 'ratio', badWhen: 'low', needs: ['redis_keyspace_hits_total', 'redis_keyspace_misses_total'],
    template: 'sum(rate(redis_keyspace_hits_total{$sel}[1m])) / (sum(rate(redis_keyspace_hits_total{$sel}[1m])) + sum(rate(redis_keyspace_misses_total{$sel}[1m])))',
  },
  // Connections.
  { id: 'store_connections_ratio', title: 'Connections / max_connections', unit: 'ratio', badWhen: 'high', threshold: 0.9, needs: ['pg_stat_activity_count', 'pg_settings_max_connections'], template: 'sum(pg_stat_activity_count{$sel}) / max(pg_settings_max_connections{$sel})' },
  { id: 'store_connections_ratio', title: 'Threads connected / max_connections', unit: 'ratio', badWhen: 'high', threshold: 0.9, needs: ['mysql_global_status_threads_connected', 'mysql_global_variables_max_connections'], template: 'max(mysql_global_status_threads_connected{$sel}) / max(mysql_global_variables_max_connections{$sel})' },
  { id: 'store_connections_ratio', title: 'Clients / maxclients', unit: 'ratio', badWhen: 'high', threshold: 0.9, needs: ['redis_connected_clients', 'redis_config_maxclients'], template: 'max(redis_connected_clients{$sel}) / max(redis_config_maxclients{$sel})' },
  // Locks and long transactions (databases).
  { id: 'store_locks', title: 'Locks held or awaited', unit: 'locks', badWhen: 'high', needs: ['pg_locks_count'], template: 'sum(pg_locks_count{$sel})' },
  { id: 'store_locks', title: 'InnoDB row-lock waits', unit: 'locks', badWhen: 'high', needs: ['mysql_global_status_innodb_row_lock_current_waits'], template: 'max(mysql_global_status_innodb_row_lock_current_waits{$sel})' },
  { id: 'store_oldest_tx', title: 'Longest running transaction', unit: 'seconds', badWhen: 'high', needs: ['pg_stat_activity_max_tx_duration'], template: 'max(pg_stat_activity_max_tx_duration{$sel})' },
  { id: 'store_deadlocks', title: 'Deadlocks per second', unit: 'per s', badWhen: 'high', needs: ['pg_stat_database_deadlocks'], template: 'sum(rate(pg_stat_database_deadlocks{$sel}[5m]))' },
  // Latency as the server measures it (an AOF fsync stall, a slow disk, a hot key): the callers' pools
  // fill while the server answers nothing wrong. p99 where the exporter has it (redis_exporter ≥ 1.58,
  // INFO LATENCYSTATS), else the mean per command.
  { id: 'store_latency', title: 'Command latency p99 (server side)', unit: 'seconds', badWhen: 'high', needs: ['redis_latency_percentiles_usec'], template: 'max(redis_latency_percentiles_usec{quantile="0.99",$sel}) / 1e6' },
  { id: 'store_latency', title: 'Mean command latency (server side)', unit: 'seconds', badWhen: 'high', needs: ['redis_commands_duration_seconds_total', 'redis_commands_total'], template: 'sum(rate(redis_commands_duration_seconds_total{$sel}[1m])) / sum(rate(redis_commands_total{$sel}[1m]))' },
  { id: 'store_latency', title: 'Mean operation latency (server side)', unit: 'seconds', badWhen: 'high', needs: ['mongodb_mongod_op_latencies_latency_total', 'mongodb_mongod_op_latencies_ops_total'], template: 'sum(rate(mongodb_mongod_op_latencies_latency_total{$sel}[1m])) / sum(rate(mongodb_mongod_op_latencies_ops_total{$sel}[1m])) / 1e6' },
  // Replication.
  { id: 'store_replication_lag', title: 'Replication lag', unit: 'seconds', badWhen: 'high', needs: ['pg_replication_lag_seconds'], template: 'max(pg_replication_lag_seconds{$sel})' },
  { id: 'store_replication_lag', title: 'Replication lag', unit: 'seconds', badWhen: 'high', needs: ['pg_replication_lag'], template: 'max(pg_replication_lag{$sel})' },
  { id: 'store_replication_lag', title: 'Seconds behind the primary', unit: 'seconds', badWhen: 'high', needs: ['mysql_slave_status_seconds_behind_master'], template: 'max(mysql_slave_status_seconds_behind_master{$sel})' },
  { id: 'store_replication_lag', title: 'Replica set member lag', unit: 'seconds', badWhen: 'high', needs: ['mongodb_mongod_replset_member_replication_lag'], template: 'max(mongodb_mongod_replset_member_replication_lag{$sel})' },
];

/** Every metric name a recipe reads: what discovery asks Prometheus about. */
export const STORE_METRIC_NAMES: readonly string[] = [...new Set(STORE_RECIPES.flatMap((r) => r.needs))];

/** The ids whose rise (or fall, for `low`) says the store itself is in trouble. */
export const STORE_IDS = new Set(STORE_RECIPES.map((r) => r.id));

/** The catalog entries for a candidate whose series include `present`, one per id. */
export function storeEntries(present: Set<string>, selector: string): CatalogEntry[] {
  const out: CatalogEntry[] = [];
  for (const r of STORE_RECIPES) {
    if (out.some((e) => e.id === r.id) || !r.needs.every((n) => present.has(n))) continue;
    out.push({ id: r.id, title: r.title, unit: r.unit, badWhen: r.badWhen, ...(r.threshold !== undefined ? { threshold: r.threshold } : {}), template: r.template.replaceAll('$sel', selector) });
  }
  return out;
}
