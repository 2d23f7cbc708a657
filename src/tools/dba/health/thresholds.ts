// The thresholds of analyze_db_health, documented in docs/tools.md.
export const THRESHOLDS = {
  /** An index never scanned since statistics were reset is reported from this size. */
  unusedIndexBytes: 1024 * 1024,
  /** An index this many times larger than its rows need (and at least indexBloatBytes) is bloated. */
  indexBloatFactor: 2,
  indexBloatBytes: 10 * 1024 * 1024,
  /** Connections in use at this share of max_connections are reported. */
  connectionShare: 0.8,
  /** Sessions idle in a transaction for longer than this (seconds). */
  idleInTransactionSeconds: 300,
  /** Dead tuples: at least this many, and this share of the table's tuples … */
  deadTuples: 1000,
  deadShare: 0.2,
  /** … with no vacuum (manual or auto) for this long (seconds), or ever. */
  vacuumAgeSeconds: 24 * 3600,
  /** Rows changed since the last analyze, as a share of the table (and at least deadTuples). */
  analyzeShare: 0.2,
  /** Transaction-id age of a database or table, as a share of autovacuum_freeze_max_age. */
  wraparoundShare: 1,
  /** A sequence is reported when this share of its range is used. */
  sequenceShare: 0.75,
  /** A replication slot retaining more WAL than this (bytes), or inactive. */
  slotRetainedBytes: 1024 * 1024 * 1024,
  /** A standby whose replay lags by more than this (seconds). */
  replicationLagSeconds: 60,
  /** Cache hit ratio below this, once at least cacheMinBlocks blocks were read. */
  cacheHitRatio: 0.95,
  cacheMinBlocks: 1000,
} as const;
