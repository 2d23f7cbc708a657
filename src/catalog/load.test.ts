import { describe, expect, it } from 'vitest';
import { buildSnapshot, EVERYTHING_VISIBLE, type CatalogRows } from './load.js';
import type { ColumnRow, ConstraintRow, IndexRow, RelationRow } from './queries.js';
import type { VisibilityRules } from './types.js';

const relation = (
  oid: number,
  schema: string,
  name: string,
  over: Partial<RelationRow> = {},
): RelationRow => ({
  oid: String(oid),
  schema,
  name,
  relkind: 'r',
  is_partition: false,
  reltuples: 10,
  size_estimate: '8192',
  comment: null,
  parent_schema: null,
  parent_name: null,
  partition_key: null,
  partition_bound: null,
  selectable: true,
  ...over,
});

const column = (
  relid: number,
  position: number,
  name: string,
  over: Partial<ColumnRow> = {},
): ColumnRow => ({
  relid: String(relid),
  name,
  position,
  data_type: 'integer',
  not_null: false,
  identity: '',
  generated: '',
  default_expr: null,
  type_name: 'int4',
  typmod: -1,
  comment: null,
  ...over,
});

const index = (
  relid: number,
  name: string,
  keys: number[],
  over: Partial<IndexRow> = {},
): IndexRow => ({
  relid: String(relid),
  name,
  method: 'btree',
  is_unique: false,
  is_primary: false,
  partial: false,
  has_expressions: false,
  valid: true,
  keys,
  key_count: keys.length,
  ...over,
});

const key = (
  relid: number,
  name: string,
  type: 'p' | 'u' | 'f',
  keys: number[],
  over: Partial<ConstraintRow> = {},
): ConstraintRow => ({
  relid: String(relid),
  name,
  type,
  keys,
  ref_schema: null,
  ref_table: null,
  ref_columns: null,
  on_update: 'a',
  on_delete: 'a',
  ...over,
});

// Out of order on purpose: the snapshot sorts.
const rows: CatalogRows = {
  database: 'shop',
  versionNum: 150020,
  schemas: [
    { name: 'sales', comment: 'Sales' },
    { name: 'app', comment: null },
  ],
  relations: [
    relation(3, 'sales', 'orders', { comment: 'One purchase', reltuples: 1000 }),
    relation(2, 'sales', 'customers', { reltuples: -1 }),
    relation(4, 'sales', 'events', { relkind: 'p', reltuples: -1, partition_key: 'RANGE (at)' }),
    relation(5, 'sales', 'events_2025', {
      is_partition: true,
      parent_schema: 'sales',
      parent_name: 'events',
      partition_bound: "FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
      reltuples: 30,
      size_estimate: '16384',
    }),
    relation(6, 'sales', 'events_2024', {
      is_partition: true,
      parent_schema: 'sales',
      parent_name: 'events',
      reltuples: 12,
    }),
    relation(7, 'app', 'docs', { relkind: 'v' }),
    relation(8, 'app', 'secrets'),
    relation(9, 'app', 'widgets', { relkind: 'S' }),
  ],
  columns: [
    column(3, 2, 'customer_id', { not_null: true }),
    column(3, 1, 'id', {
      data_type: 'bigint',
      not_null: true,
      default_expr: "nextval('orders_id_seq'::regclass)",
    }),
    column(3, 4, 'embedding', { data_type: 'vector(3)', type_name: 'vector', typmod: 3 }),
    column(3, 5, 'total_cents', { generated: 's', default_expr: '(total * 100)' }),
    column(2, 1, 'id', { identity: 'a', not_null: true }),
    column(2, 2, 'email', { data_type: 'text', comment: 'Login' }),
    column(2, 3, 'ssn', { data_type: 'text' }),
    column(7, 1, 'body', { data_type: 'text' }),
    column(8, 1, 'value', { data_type: 'text' }),
  ],
  constraints: [
    key(3, 'orders_pkey', 'p', [1]),
    key(2, 'customers_pkey', 'p', [1]),
    key(2, 'customers_email_key', 'u', [2]),
    key(3, 'orders_customer_fkey', 'f', [2], {
      ref_schema: 'sales',
      ref_table: 'customers',
      ref_columns: ['id'],
      on_delete: 'c',
    }),
    key(3, 'orders_secret_fkey', 'f', [2], {
      ref_schema: 'app',
      ref_table: 'secrets',
      ref_columns: ['value'],
    }),
    key(2, 'customers_ssn_key', 'u', [3]),
  ],
  indexes: [
    index(3, 'orders_pkey', [1], { is_unique: true, is_primary: true }),
    index(3, 'orders_customer_idx', [2, 1]),
    index(3, 'orders_expr_idx', [0], { has_expressions: true }),
    index(2, 'customers_ssn_idx', [3]),
    index(2, 'customers_lower_email', [0], { has_expressions: true }),
    index(2, 'customers_email_incl', [2, 3], { key_count: 1 }),
    index(2, 'customers_email_key', [2], { is_unique: true }),
  ],
};

describe('catalog snapshot', () => {
  it('builds sorted descriptors with keys, indexes, vectors and partitions', () => {
    const snap = buildSnapshot(rows, EVERYTHING_VISIBLE);
    expect(snap.database).toBe('shop');
    expect(snap.schemas.map((s) => s.name)).toEqual(['app', 'sales']);
    expect(snap.relations.map((r) => `${r.schema}.${r.name}`)).toEqual([
      'app.docs',
      'app.secrets',
      'sales.customers',
      'sales.events',
      'sales.events_2024',
      'sales.events_2025',
      'sales.orders',
    ]);
    const orders = snap.relation('sales', 'orders')!;
    expect(orders.columns.map((c) => c.name)).toEqual([
      'id',
      'customer_id',
      'embedding',
      'total_cents',
    ]);
    expect(orders.columns[0]).toMatchObject({
      isPrimaryKey: true,
      isUnique: true,
      isIndexed: true,
    });
    expect(orders.columns[1]).toMatchObject({
      isIndexed: true,
      references: { schema: 'sales', table: 'customers', column: 'id' },
    });
    expect(orders.columns[2]).toMatchObject({ vector: { type: 'vector', dimensions: 3 } });
    expect(orders.columns[3]).toMatchObject({
      default: null,
      generated: { kind: 'stored', expression: '(total * 100)' },
    });
    expect(orders.hasVectors).toBe(true);
    expect(orders.foreignKeys.map((f) => [f.name, f.onDelete])).toEqual([
      ['orders_customer_fkey', 'CASCADE'],
      ['orders_secret_fkey', 'NO ACTION'],
    ]);
    expect(orders.indexes.find((i) => i.name === 'orders_expr_idx')).toMatchObject({
      columns: [null],
      expressions: true,
    });
    const customers = snap.relation('sales', 'customers')!;
    expect(customers.rowEstimate).toBeNull();
    expect(customers.columns[0]).toMatchObject({ identity: 'always' });
    expect(customers.indexes.find((i) => i.name === 'customers_email_incl')).toMatchObject({
      columns: ['email'],
      include: ['ssn'],
    });

    const events = snap.relation('sales', 'events')!;
    expect(events.kind).toBe('partitioned_table');
    expect(events.partitions.map((p) => p.name)).toEqual(['events_2024', 'events_2025']);
    expect(events.rowEstimate).toBe(42);
    expect(events.sizeEstimateBytes).toBe(8192 + 8192 + 16384);
    expect(snap.relation('sales', 'events_2025')).toMatchObject({
      isPartition: true,
      parent: { schema: 'sales', name: 'events' },
    });
    expect(snap.relation('app', 'docs')!.rowEstimate).toBeNull();
    expect(snap.relationsNamed('orders').map((r) => r.schema)).toEqual(['sales']);
    expect(snap.relationsOf('app').map((r) => r.name)).toEqual(['docs', 'secrets']);
  });

  it('drops what the policy hides, and every key or index that would name it', () => {
    const policy: VisibilityRules = {
      active: true,
      schemaVisible: () => true,
      tableVisible: (schema, table) => !(schema === 'app' && table === 'secrets'),
      columnVisible: (schema, table, col) =>
        !(schema === 'app' && table === 'secrets') && col !== 'ssn',
      columnMasked: (_s, _t, col) => col === 'email',
    };
    const snap = buildSnapshot(rows, policy);
    const text = JSON.stringify(snap.relations);
    expect(text).not.toContain('secret');
    expect(text).not.toContain('ssn');
    const customers = snap.relation('sales', 'customers')!;
    expect(customers.columns.map((c) => c.name)).toEqual(['id', 'email']);
    expect(customers.uniqueKeys.map((k) => k.name)).toEqual(['customers_email_key']);
    // The INCLUDE index names ssn; the expression index might: both gone.
    expect(customers.indexes.map((i) => i.name)).toEqual(['customers_email_key']);
    expect(customers.columns[1]!.masked).toBe(true);
    // Where no column is hidden, expression indexes stay.
    expect(snap.relation('sales', 'orders')!.indexes.map((i) => i.name)).toContain(
      'orders_expr_idx',
    );
    expect(snap.relation('sales', 'orders')!.foreignKeys.map((f) => f.name)).toEqual([
      'orders_customer_fkey',
    ]);
  });

  it('withholds comments and defaults that read like a credential', () => {
    const snap = buildSnapshot(
      {
        ...rows,
        schemas: [{ name: 'ops', comment: 'Replica: host=db user=rep password=hunter2' }],
        relations: [relation(20, 'ops', 'links', { comment: 'Links' })],
        columns: [
          column(20, 1, 'conn', {
            data_type: 'text',
            default_expr: "'host=db password=hunter2'::text",
            comment: 'Connection string',
          }),
          column(20, 2, 'hash', { data_type: 'text', comment: 'e.g. md5' + 'ab'.repeat(16) }),
        ],
        constraints: [],
        indexes: [],
      },
      EVERYTHING_VISIBLE,
    );
    expect(snap.schemas[0]!.comment).toBe('[credential withheld]');
    const links = snap.relation('ops', 'links')!;
    expect(links.comment).toBe('Links');
    expect(links.columns.map((c) => [c.default, c.comment])).toEqual([
      ['[credential withheld]', 'Connection string'],
      [null, '[credential withheld]'],
    ]);
  });

  it('hides a schema the policy hides, and a partition’s hidden parent', () => {
    const policy: VisibilityRules = {
      ...EVERYTHING_VISIBLE,
      active: true,
      schemaVisible: (schema) => schema !== 'app',
      tableVisible: (schema, table) => schema !== 'app' && table !== 'events',
    };
    const snap = buildSnapshot(rows, policy);
    expect(snap.schemas.map((s) => s.name)).toEqual(['sales']);
    expect(snap.relation('sales', 'events')).toBeUndefined();
    expect(snap.relation('sales', 'events_2024')!.parent).toBeNull();
  });
});
