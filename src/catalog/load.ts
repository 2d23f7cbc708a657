// Turns the rows of the catalog queries into descriptors, dropping what the access policy
// hides: a hidden table, a hidden column, and every key, index or foreign key that would
// name one (an index definition or a composite key would otherwise give it away).
import type pg from 'pg';
import { withholdCredential } from '../core/credential-shape.js';
import {
  COLUMNS_SQL,
  CONSTRAINTS_SQL,
  INDEXES_SQL,
  INFO_SQL,
  RELATIONS_SQL,
  VIEW_READS_SQL,
  SCHEMAS_SQL,
  type ColumnRow,
  type ConstraintRow,
  type IndexRow,
  type RelationRow,
} from './queries.js';
import type {
  CatalogSnapshot,
  ColumnDescriptor,
  ForeignKeyDescriptor,
  IndexDescriptor,
  RelationDescriptor,
  RelationKind,
  SchemaDescriptor,
  VisibilityRules,
} from './types.js';

const KINDS: Record<string, RelationKind> = {
  r: 'table',
  v: 'view',
  m: 'materialized_view',
  p: 'partitioned_table',
  f: 'foreign_table',
};

const VECTOR_TYPES = new Set(['vector', 'halfvec', 'sparsevec']);

const FK_ACTIONS: Record<string, string> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
};

/** Code-point order, the same on every machine (localeCompare is not). */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export const EVERYTHING_VISIBLE: VisibilityRules = {
  active: false,
  schemaVisible: () => true,
  tableVisible: () => true,
  columnVisible: () => true,
  columnMasked: () => false,
};

interface Working {
  relation: RelationDescriptor;
  /** attnum → column name, including hidden columns (to recognise what to drop). */
  names: Map<number, string>;
  hidden: Set<string>;
}

/** Run the catalog queries on `client` (inside the caller's transaction). */
export async function loadSnapshot(
  client: pg.ClientBase,
  policy: VisibilityRules = EVERYTHING_VISIBLE,
): Promise<CatalogSnapshot> {
  const info = (await client.query<{ database: string; version_num: number }>(INFO_SQL)).rows[0]!;
  const schemaRows = (await client.query<{ name: string; comment: string | null }>(SCHEMAS_SQL))
    .rows;
  const relationRows = (await client.query<RelationRow>(RELATIONS_SQL)).rows;
  const columnRows = (await client.query<ColumnRow>(COLUMNS_SQL)).rows;
  const constraintRows = (await client.query<ConstraintRow>(CONSTRAINTS_SQL)).rows;
  const indexRows = (await client.query<IndexRow>(INDEXES_SQL)).rows;
  // Only a policy can hide a view for what it reads.
  const viewReads = policy.active ? (await client.query<ViewReadRow>(VIEW_READS_SQL)).rows : [];
  return buildSnapshot(
    {
      database: info.database,
      versionNum: info.version_num,
      schemas: schemaRows,
      relations: relationRows,
      columns: columnRows,
      constraints: constraintRows,
      indexes: indexRows,
      viewReads,
    },
    policy,
  );
}

export interface CatalogRows {
  database: string;
  versionNum: number;
  schemas: { name: string; comment: string | null }[];
  relations: RelationRow[];
  columns: ColumnRow[];
  constraints: ConstraintRow[];
  indexes: IndexRow[];
  /** What views read (VIEW_READS_SQL); loaded under a policy only. */
  viewReads?: ViewReadRow[];
}

export interface ViewReadRow {
  oid: string;
  schema: string;
  name: string;
  column: string | null;
}

/** Views that read, at any depth, a table or column the policy denies: hidden like it. */
function viewsHiddenByReads(rows: readonly ViewReadRow[], policy: VisibilityRules): Set<string> {
  const hidden = new Set<string>();
  for (const r of rows) {
    if (
      !policy.tableVisible(r.schema, r.name) ||
      (r.column !== null && !policy.columnVisible(r.schema, r.name, r.column))
    )
      hidden.add(String(r.oid));
  }
  return hidden;
}

export function buildSnapshot(rows: CatalogRows, policy: VisibilityRules): CatalogSnapshot {
  const schemas: SchemaDescriptor[] = rows.schemas
    .filter((s) => policy.schemaVisible(s.name))
    .map((s) => ({ name: s.name, comment: withholdCredential(s.comment) }))
    .sort((a, b) => byText(a.name, b.name));

  const work = new Map<string, Working>();
  const hiddenViews = viewsHiddenByReads(rows.viewReads ?? [], policy);
  for (const r of rows.relations) {
    if (!policy.tableVisible(r.schema, r.name)) continue;
    if (hiddenViews.has(String(r.oid))) continue;
    const kind = KINDS[r.relkind];
    if (!kind) continue;
    const hasRows = kind === 'table' || kind === 'materialized_view' || kind === 'foreign_table';
    work.set(r.oid, {
      relation: {
        oid: Number(r.oid),
        schema: r.schema,
        name: r.name,
        kind,
        comment: withholdCredential(r.comment),
        columns: [],
        primaryKey: null,
        uniqueKeys: [],
        foreignKeys: [],
        indexes: [],
        rowEstimate: hasRows && r.reltuples >= 0 ? Math.round(r.reltuples) : null,
        sizeEstimateBytes: Number(r.size_estimate),
        isPartition: r.is_partition,
        parent:
          r.parent_schema !== null &&
          r.parent_name !== null &&
          policy.tableVisible(r.parent_schema, r.parent_name)
            ? { schema: r.parent_schema, name: r.parent_name }
            : null,
        partitionBound: withholdCredential(r.partition_bound),
        partitionKey: withholdCredential(r.partition_key),
        partitions: [],
        selectable: r.selectable,
        hasVectors: false,
      },
      names: new Map(),
      hidden: new Set(),
    });
  }

  for (const c of rows.columns) {
    const w = work.get(c.relid);
    if (!w) continue;
    const rel = w.relation;
    w.names.set(c.position, c.name);
    if (!policy.columnVisible(rel.schema, rel.name, c.name)) {
      w.hidden.add(c.name);
      continue;
    }
    const vector = VECTOR_TYPES.has(c.type_name)
      ? { type: c.type_name, dimensions: c.typmod > 0 ? c.typmod : null }
      : null;
    if (vector) rel.hasVectors = true;
    const generated =
      c.generated === 's' || c.generated === 'v'
        ? {
            kind: c.generated === 's' ? ('stored' as const) : ('virtual' as const),
            expression: withholdCredential(c.default_expr ?? ''),
          }
        : null;
    rel.columns.push({
      name: c.name,
      position: c.position,
      dataType: c.data_type,
      nullable: !c.not_null,
      default: generated ? null : withholdCredential(c.default_expr),
      identity: c.identity === 'a' ? 'always' : c.identity === 'd' ? 'by_default' : null,
      generated,
      comment: withholdCredential(c.comment),
      isPrimaryKey: false,
      isUnique: false,
      isIndexed: false,
      references: null,
      vector,
      masked: policy.columnMasked(rel.schema, rel.name, c.name),
    });
  }

  const columnNames = (w: Working, keys: readonly number[]): string[] | null => {
    const names: string[] = [];
    for (const key of keys) {
      const name = w.names.get(key);
      if (name === undefined || w.hidden.has(name)) return null;
      names.push(name);
    }
    return names;
  };

  for (const k of rows.constraints) {
    const w = work.get(k.relid);
    if (!w) continue;
    const columns = columnNames(w, k.keys ?? []);
    if (!columns) continue;
    if (k.type === 'p') w.relation.primaryKey = { name: k.name, columns };
    else if (k.type === 'u') w.relation.uniqueKeys.push({ name: k.name, columns });
    else {
      const refSchema = k.ref_schema;
      const refTable = k.ref_table;
      const refColumns = k.ref_columns ?? [];
      if (refSchema === null || refTable === null) continue;
      if (!policy.tableVisible(refSchema, refTable)) continue;
      if (refColumns.some((col) => !policy.columnVisible(refSchema, refTable, col))) continue;
      const fk: ForeignKeyDescriptor = {
        name: k.name,
        columns,
        references: { schema: refSchema, table: refTable, columns: refColumns },
        onUpdate: FK_ACTIONS[k.on_update] ?? k.on_update,
        onDelete: FK_ACTIONS[k.on_delete] ?? k.on_delete,
      };
      w.relation.foreignKeys.push(fk);
    }
  }

  for (const i of rows.indexes) {
    const w = work.get(i.relid);
    if (!w) continue;
    const all = i.keys ?? [];
    const keyNames = columnNames(
      w,
      all.slice(0, i.key_count).filter((key) => key !== 0),
    );
    const include = columnNames(w, all.slice(i.key_count));
    if (!keyNames || !include) continue;
    // Expressions and predicates are not resolved to columns: where columns are hidden,
    // such an index might name one, so it goes too.
    if (w.hidden.size > 0 && (i.has_expressions || i.partial)) continue;
    const index: IndexDescriptor = {
      name: i.name,
      columns: all.slice(0, i.key_count).map((key) => (key === 0 ? null : w.names.get(key)!)),
      include,
      expressions: i.has_expressions,
      method: i.method,
      unique: i.is_unique,
      primary: i.is_primary,
      partial: i.partial,
      valid: i.valid,
    };
    w.relation.indexes.push(index);
  }

  for (const w of work.values()) finishRelation(w.relation);

  // Partitions under their parents, and parents' estimates summed over their leaves.
  const byName = new Map<string, RelationDescriptor>();
  for (const w of work.values())
    byName.set(`${w.relation.schema}\u0000${w.relation.name}`, w.relation);
  for (const rel of byName.values()) {
    if (!rel.parent) continue;
    const parent = byName.get(`${rel.parent.schema}\u0000${rel.parent.name}`);
    if (parent) parent.partitions.push({ schema: rel.schema, name: rel.name });
    else rel.parent = null;
  }
  const summed = new Set<RelationDescriptor>();
  const sum = (rel: RelationDescriptor): void => {
    if (summed.has(rel)) return;
    summed.add(rel);
    rel.partitions.sort((a, b) => byText(a.schema, b.schema) || byText(a.name, b.name));
    if (rel.kind !== 'partitioned_table') return;
    let rowsTotal: number | null = null;
    let bytes = rel.sizeEstimateBytes;
    for (const p of rel.partitions) {
      const child = byName.get(`${p.schema}\u0000${p.name}`)!;
      sum(child);
      if (child.rowEstimate !== null) rowsTotal = (rowsTotal ?? 0) + child.rowEstimate;
      bytes += child.sizeEstimateBytes;
    }
    rel.rowEstimate = rowsTotal;
    rel.sizeEstimateBytes = bytes;
  };
  for (const rel of byName.values()) sum(rel);

  const relations = [...byName.values()].sort(
    (a, b) => byText(a.schema, b.schema) || byText(a.name, b.name),
  );
  return makeSnapshot(rows.database, rows.versionNum, schemas, relations);
}

function finishRelation(rel: RelationDescriptor): void {
  rel.columns.sort((a, b) => a.position - b.position);
  const byName = new Map<string, ColumnDescriptor>(rel.columns.map((c) => [c.name, c]));
  const mark = (names: readonly (string | null)[], what: 'isPrimaryKey' | 'isUnique'): void => {
    for (const name of names) {
      const col = name === null ? undefined : byName.get(name);
      if (col) col[what] = true;
    }
  };
  if (rel.primaryKey) {
    mark(rel.primaryKey.columns, 'isPrimaryKey');
    if (rel.primaryKey.columns.length === 1) mark(rel.primaryKey.columns, 'isUnique');
  }
  for (const key of rel.uniqueKeys) if (key.columns.length === 1) mark(key.columns, 'isUnique');
  for (const index of rel.indexes) {
    if (!index.valid) continue;
    const first = index.columns[0];
    const col = first === null || first === undefined ? undefined : byName.get(first);
    if (col) col.isIndexed = true;
    if (index.unique && !index.partial && index.columns.length === 1 && col) col.isUnique = true;
  }
  for (const fk of rel.foreignKeys) {
    if (fk.columns.length !== 1) continue;
    const col = byName.get(fk.columns[0]!);
    if (col && !col.references) {
      col.references = {
        schema: fk.references.schema,
        table: fk.references.table,
        column: fk.references.columns[0]!,
      };
    }
  }
  rel.uniqueKeys.sort((a, b) => byText(a.name, b.name));
  rel.foreignKeys.sort((a, b) => byText(a.name, b.name));
  rel.indexes.sort((a, b) => byText(a.name, b.name));
}

export function makeSnapshot(
  database: string,
  serverVersionNum: number,
  schemas: SchemaDescriptor[],
  relations: RelationDescriptor[],
): CatalogSnapshot {
  const schemaIndex = new Map(schemas.map((s) => [s.name, s]));
  const relationIndex = new Map<string, RelationDescriptor>();
  const named = new Map<string, RelationDescriptor[]>();
  const ofSchema = new Map<string, RelationDescriptor[]>();
  for (const rel of relations) {
    relationIndex.set(`${rel.schema}\u0000${rel.name}`, rel);
    const sameName = named.get(rel.name) ?? [];
    sameName.push(rel);
    named.set(rel.name, sameName);
    const inSchema = ofSchema.get(rel.schema) ?? [];
    inSchema.push(rel);
    ofSchema.set(rel.schema, inSchema);
  }
  return {
    database,
    serverVersionNum,
    loadedAt: Date.now(),
    schemas,
    relations,
    schema: (name) => schemaIndex.get(name),
    relation: (schema, name) => relationIndex.get(`${schema}\u0000${name}`),
    relationsNamed: (name) => named.get(name) ?? [],
    relationsOf: (schema) => ofSchema.get(schema) ?? [],
  };
}
