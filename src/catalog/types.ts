// Typed descriptors of what the database holds, as pgmcp's tools, resources and prompts
// see it: system schemas and everything the access policy hides are already gone.

export type RelationKind =
  'table' | 'view' | 'materialized_view' | 'partitioned_table' | 'foreign_table';

/**
 * What the catalog needs of an access policy. tools/access-policy.ts satisfies it; it is
 * restated here because catalog/ sits below tools/ and may not import it.
 */
export interface VisibilityRules {
  readonly active: boolean;
  schemaVisible(schema: string): boolean;
  tableVisible(schema: string, table: string): boolean;
  columnVisible(schema: string, table: string, column: string): boolean;
  columnMasked(schema: string, table: string, column: string): boolean;
}

export interface QualifiedName {
  schema: string;
  name: string;
}

export interface VectorInfo {
  /** pgvector's type name: vector, halfvec or sparsevec. */
  type: string;
  /** Declared dimensions; null when the column was declared without them. */
  dimensions: number | null;
}

export interface ForeignKeyRef {
  schema: string;
  table: string;
  column: string;
}

export interface ColumnDescriptor {
  name: string;
  /** attnum: 1-based position in the table (gaps where columns were dropped). */
  position: number;
  /** format_type(), e.g. "character varying(80)", "vector(8)", "demo.object_kind". */
  dataType: string;
  nullable: boolean;
  /** Default expression as PostgreSQL prints it, e.g. "now()"; null when none. */
  default: string | null;
  identity: 'always' | 'by_default' | null;
  /** Generation expression of a generated column, and how it is kept. */
  generated: { kind: 'stored' | 'virtual'; expression: string } | null;
  comment: string | null;
  /** Part of the primary key. */
  isPrimaryKey: boolean;
  /** Alone forms a unique constraint or unique index (the primary key counts). */
  isUnique: boolean;
  /** The column is the first column of at least one index. */
  isIndexed: boolean;
  /** Single-column foreign key target (the first, when there are several). */
  references: ForeignKeyRef | null;
  vector: VectorInfo | null;
  /** The access policy masks its values in query results. */
  masked: boolean;
}

export interface KeyDescriptor {
  name: string;
  columns: string[];
}

export interface ForeignKeyDescriptor {
  name: string;
  columns: string[];
  references: { schema: string; table: string; columns: string[] };
  onUpdate: string;
  onDelete: string;
}

export interface IndexDescriptor {
  name: string;
  /** Key columns in order; null for an expression position. */
  columns: (string | null)[];
  /** INCLUDE columns (not part of the key). */
  include: string[];
  /** Some key position is an expression. */
  expressions: boolean;
  /** Access method: btree, hash, gin, gist, hnsw, ivfflat, … */
  method: string;
  unique: boolean;
  primary: boolean;
  partial: boolean;
  valid: boolean;
}

export interface RelationDescriptor {
  oid: number;
  schema: string;
  name: string;
  kind: RelationKind;
  comment: string | null;
  columns: ColumnDescriptor[];
  primaryKey: KeyDescriptor | null;
  uniqueKeys: KeyDescriptor[];
  foreignKeys: ForeignKeyDescriptor[];
  indexes: IndexDescriptor[];
  /**
   * Planner's row estimate (pg_class.reltuples); for a partitioned table the sum over its
   * partitions. Null when never analyzed or vacuumed.
   */
  rowEstimate: number | null;
  /**
   * Estimated bytes on disk (table, TOAST and indexes, from relpages: as fresh as the last
   * VACUUM/ANALYZE). Exact sizes cost a file-system call per relation and are read per table.
   */
  sizeEstimateBytes: number;
  /** The relation is a partition; parent is its partitioned table (when visible). */
  isPartition: boolean;
  parent: QualifiedName | null;
  /** Partition bound, e.g. "FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')". */
  partitionBound: string | null;
  /** Partitioning scheme of a partitioned table, e.g. "RANGE (observed_at)". */
  partitionKey: string | null;
  /** Direct partitions (visible ones), sorted. */
  partitions: QualifiedName[];
  /** Whether the connected role may SELECT from it. */
  selectable: boolean;
  /** Has at least one vector/halfvec/sparsevec column. */
  hasVectors: boolean;
}

export interface SchemaDescriptor {
  name: string;
  comment: string | null;
}

export interface CatalogSnapshot {
  /** current_database() */
  database: string;
  /** server_version_num, e.g. 150020. */
  serverVersionNum: number;
  /** Date.now() when loaded. */
  loadedAt: number;
  /** Visible schemas, sorted by name (including schemas without relations). */
  schemas: readonly SchemaDescriptor[];
  /** Visible relations, sorted by schema then name. Partitions included. */
  relations: readonly RelationDescriptor[];
  schema(name: string): SchemaDescriptor | undefined;
  relation(schema: string, name: string): RelationDescriptor | undefined;
  /** All visible relations of that name in any schema, sorted by schema. */
  relationsNamed(name: string): RelationDescriptor[];
  relationsOf(schema: string): RelationDescriptor[];
}
