// The catalog filter's tables: which catalog relations pgmcp can filter (FILTERED: each is
// replaced in the text sent by a subquery without the rows of denied objects), which columns it
// blanks where they could name a denied object (BLANKED), and which hold nothing about schemas,
// relations or columns and are read as they are (OPEN). catalog-access.ts applies them.
export const SYSTEM = new Set(['pg_catalog', 'information_schema']);

/** The oids (as SQL array literals) of what the policy denies, for the filters. */
export interface Denied {
  /** pg_namespace oids. */
  ns: string;
  /** pg_class oids: denied relations, their indexes and TOAST tables, indexes on denied columns. */
  rels: string;
  /** pg_type oids: the row types of denied relations and their array types. */
  types: string;
  /** `relid:attnum` of denied columns. */
  cols: string;
}

type Filter = (d: Denied) => string;

// Filters are written over the relation aliased `x`. Only oids appear in them (an EXPLAIN of
// the statement shows the filter): no name of a denied object is ever part of the text sent.
const notIn = (expr: string, list: string): string =>
  `NOT (${expr} = ANY (${list}::pg_catalog.oid[]))`;
const colNotIn = (rel: string, attnum: string, d: Denied): string =>
  `NOT ((${rel})::pg_catalog.text || ':' || (${attnum})::pg_catalog.text = ANY (${d.cols}::pg_catalog.text[]))`;
/** A relation named by schema and name columns (views that show names only). */
const relByName = (schema: string, name: string, d: Denied): string =>
  `NOT EXISTS (SELECT FROM pg_catalog.pg_class fc JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
     WHERE fn.nspname = ${schema} AND fc.relname = ${name}
       AND (fc.oid = ANY (${d.rels}::pg_catalog.oid[]) OR fn.oid = ANY (${d.ns}::pg_catalog.oid[])))`;
const schemaByName = (schema: string, d: Denied): string =>
  `NOT EXISTS (SELECT FROM pg_catalog.pg_namespace fn WHERE fn.nspname = ${schema} AND fn.oid = ANY (${d.ns}::pg_catalog.oid[]))`;
const colByName = (schema: string, table: string, column: string, d: Denied): string =>
  `NOT EXISTS (SELECT FROM pg_catalog.pg_attribute fa JOIN pg_catalog.pg_class fc ON fc.oid = fa.attrelid
     JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
     WHERE fn.nspname = ${schema} AND fc.relname = ${table} AND fa.attname = ${column}
       AND (fa.attrelid::pg_catalog.text || ':' || fa.attnum::pg_catalog.text) = ANY (${d.cols}::pg_catalog.text[]))`;
const and = (...parts: string[]): string => parts.join(' AND ');
/** Whether a type named by schema and name columns is denied (its schema, itself, its relation). */
const typeDeniedByName = (schema: string, name: string, d: Denied): string =>
  `EXISTS (SELECT FROM pg_catalog.pg_type ft JOIN pg_catalog.pg_namespace fn ON fn.oid = ft.typnamespace
     WHERE fn.nspname = ${schema} AND ft.typname = ${name}
       AND (ft.oid = ANY (${d.types}::pg_catalog.oid[]) OR fn.oid = ANY (${d.ns}::pg_catalog.oid[])
         OR ft.typrelid = ANY (${d.rels}::pg_catalog.oid[]) OR ft.typelem = ANY (${d.types}::pg_catalog.oid[])))`;
/**
 * Whether an object (a default, an index) depends on anything denied: a relation, a column, a
 * type, a function or a schema. The dependencies PostgreSQL records are what its definition's
 * text can name.
 */
const dependsOnDenied = (classid: string, objid: string, d: Denied): string =>
  `EXISTS (SELECT FROM pg_catalog.pg_depend dp WHERE dp.classid = '${classid}'::pg_catalog.regclass AND dp.objid = ${objid}
     AND ((dp.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
           AND (dp.refobjid = ANY (${d.rels}::pg_catalog.oid[]) OR NOT ${colNotIn('dp.refobjid', 'dp.refobjsubid', d)}
             OR EXISTS (SELECT FROM pg_catalog.pg_class dc WHERE dc.oid = dp.refobjid AND dc.relnamespace = ANY (${d.ns}::pg_catalog.oid[]))))
       OR (dp.refclassid = 'pg_catalog.pg_type'::pg_catalog.regclass
           AND (dp.refobjid = ANY (${d.types}::pg_catalog.oid[])
             OR EXISTS (SELECT FROM pg_catalog.pg_type dt WHERE dt.oid = dp.refobjid
               AND (dt.typnamespace = ANY (${d.ns}::pg_catalog.oid[]) OR dt.typrelid = ANY (${d.rels}::pg_catalog.oid[])))))
       OR (dp.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
           AND EXISTS (SELECT FROM pg_catalog.pg_proc dr WHERE dr.oid = dp.refobjid AND dr.pronamespace = ANY (${d.ns}::pg_catalog.oid[])))
       OR (dp.refclassid = 'pg_catalog.pg_namespace'::pg_catalog.regclass AND dp.refobjid = ANY (${d.ns}::pg_catalog.oid[]))))`;
/** A column's default or generation expression (pg_attrdef), found by names, depends on anything denied. */
const defaultDenied = (d: Denied): string =>
  `EXISTS (SELECT FROM pg_catalog.pg_attrdef fd JOIN pg_catalog.pg_class fc ON fc.oid = fd.adrelid
     JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
     JOIN pg_catalog.pg_attribute fa ON fa.attrelid = fd.adrelid AND fa.attnum = fd.adnum
     WHERE fn.nspname = x.table_schema AND fc.relname = x.table_name AND fa.attname = x.column_name
       AND ${dependsOnDenied('pg_catalog.pg_attrdef', 'fd.oid', d)})`;
const blankIf = (condition: string, column: string): string =>
  `CASE WHEN ${condition} THEN NULL ELSE x.${column} END`;

/** Catalog relations a statement may read under a policy, filtered. Keys: `schema.name`. */
export const FILTERED: Record<string, Filter> = {
  'pg_catalog.pg_namespace': (d) => notIn('x.oid', d.ns),
  'pg_catalog.pg_class': (d) =>
    and(notIn('x.oid', d.rels), notIn('x.relnamespace', d.ns), notIn('x.reltype', d.types)),
  'pg_catalog.pg_attribute': (d) =>
    and(notIn('x.attrelid', d.rels), colNotIn('x.attrelid', 'x.attnum', d)),
  'pg_catalog.pg_type': (d) =>
    and(
      notIn('x.oid', d.types),
      notIn('x.typnamespace', d.ns),
      notIn('x.typrelid', d.rels),
      notIn('x.typelem', d.types),
    ),
  'pg_catalog.pg_index': (d) => and(notIn('x.indexrelid', d.rels), notIn('x.indrelid', d.rels)),
  'pg_catalog.pg_constraint': (d) =>
    and(
      notIn('x.conrelid', d.rels),
      notIn('x.confrelid', d.rels),
      notIn('x.conindid', d.rels),
      notIn('x.connamespace', d.ns),
      notIn('x.contypid', d.types),
      `NOT EXISTS (SELECT FROM pg_catalog.unnest(x.conkey) k WHERE NOT ${colNotIn('x.conrelid', 'k', d)})`,
      `NOT EXISTS (SELECT FROM pg_catalog.unnest(x.confkey) k WHERE NOT ${colNotIn('x.confrelid', 'k', d)})`,
    ),
  'pg_catalog.pg_attrdef': (d) =>
    and(notIn('x.adrelid', d.rels), colNotIn('x.adrelid', 'x.adnum', d)),
  'pg_catalog.pg_trigger': (d) => and(notIn('x.tgrelid', d.rels), notIn('x.tgconstrrelid', d.rels)),
  'pg_catalog.pg_inherits': (d) => and(notIn('x.inhrelid', d.rels), notIn('x.inhparent', d.rels)),
  'pg_catalog.pg_proc': (d) => notIn('x.pronamespace', d.ns),
  'pg_catalog.pg_description': (d) =>
    and(
      `NOT (x.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass AND (x.objoid = ANY (${d.rels}::pg_catalog.oid[]) OR NOT ${colNotIn('x.objoid', 'x.objsubid', d)}))`,
      `NOT (x.classoid = 'pg_catalog.pg_namespace'::pg_catalog.regclass AND x.objoid = ANY (${d.ns}::pg_catalog.oid[]))`,
      `NOT (x.classoid = 'pg_catalog.pg_type'::pg_catalog.regclass AND x.objoid = ANY (${d.types}::pg_catalog.oid[]))`,
      `NOT (x.classoid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND EXISTS (SELECT FROM pg_catalog.pg_proc fp WHERE fp.oid = x.objoid AND fp.pronamespace = ANY (${d.ns}::pg_catalog.oid[])))`,
      `NOT (x.classoid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND EXISTS (SELECT FROM pg_catalog.pg_constraint fk WHERE fk.oid = x.objoid AND (fk.conrelid = ANY (${d.rels}::pg_catalog.oid[]) OR fk.connamespace = ANY (${d.ns}::pg_catalog.oid[]))))`,
      `NOT (x.classoid = 'pg_catalog.pg_trigger'::pg_catalog.regclass AND EXISTS (SELECT FROM pg_catalog.pg_trigger ft WHERE ft.oid = x.objoid AND ft.tgrelid = ANY (${d.rels}::pg_catalog.oid[])))`,
    ),
  'pg_catalog.pg_tables': (d) => relByName('x.schemaname', 'x.tablename', d),
  'pg_catalog.pg_indexes': (d) =>
    and(relByName('x.schemaname', 'x.tablename', d), relByName('x.schemaname', 'x.indexname', d)),
  'pg_catalog.pg_sequences': (d) => relByName('x.schemaname', 'x.sequencename', d),
  'pg_catalog.pg_sequence': (d) => notIn('x.seqrelid', d.rels),
  // Locks of other sessions on denied relations (or on denied objects) are not shown.
  'pg_catalog.pg_locks': (d) =>
    and(
      `(x.relation IS NULL OR ${notIn('x.relation', d.rels)})`,
      `NOT coalesce(x.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND x.objid = ANY (${d.rels}::pg_catalog.oid[]), false)`,
      `NOT coalesce(x.classid = 'pg_catalog.pg_namespace'::pg_catalog.regclass AND x.objid = ANY (${d.ns}::pg_catalog.oid[]), false)`,
      `NOT coalesce(x.classid = 'pg_catalog.pg_type'::pg_catalog.regclass AND x.objid = ANY (${d.types}::pg_catalog.oid[]), false)`,
    ),
  'pg_catalog.pg_stat_all_tables': (d) => notIn('x.relid', d.rels),
  'pg_catalog.pg_stat_user_tables': (d) => notIn('x.relid', d.rels),
  'pg_catalog.pg_stat_sys_tables': (d) => notIn('x.relid', d.rels),
  'pg_catalog.pg_stat_xact_all_tables': (d) => notIn('x.relid', d.rels),
  'pg_catalog.pg_stat_xact_user_tables': (d) => notIn('x.relid', d.rels),
  'pg_catalog.pg_statio_all_tables': (d) => notIn('x.relid', d.rels),
  'pg_catalog.pg_statio_user_tables': (d) => notIn('x.relid', d.rels),
  'pg_catalog.pg_stat_all_indexes': (d) =>
    and(notIn('x.relid', d.rels), notIn('x.indexrelid', d.rels)),
  'pg_catalog.pg_stat_user_indexes': (d) =>
    and(notIn('x.relid', d.rels), notIn('x.indexrelid', d.rels)),
  'pg_catalog.pg_statio_all_indexes': (d) =>
    and(notIn('x.relid', d.rels), notIn('x.indexrelid', d.rels)),
  'pg_catalog.pg_statio_user_indexes': (d) =>
    and(notIn('x.relid', d.rels), notIn('x.indexrelid', d.rels)),
  'pg_catalog.pg_statio_all_sequences': (d) => notIn('x.relid', d.rels),
  'pg_catalog.pg_statio_user_sequences': (d) => notIn('x.relid', d.rels),
  // Only statements prepared with SQL PREPARE (which the guard refuses): never pgmcp's own.
  'pg_catalog.pg_prepared_statements': () => 'x.from_sql',
  'information_schema.schemata': (d) => schemaByName('x.schema_name', d),
  'information_schema.tables': (d) => relByName('x.table_schema', 'x.table_name', d),
  'information_schema.columns': (d) =>
    and(
      relByName('x.table_schema', 'x.table_name', d),
      colByName('x.table_schema', 'x.table_name', 'x.column_name', d),
    ),
  'information_schema.table_constraints': (d) =>
    and(
      relByName('x.table_schema', 'x.table_name', d),
      schemaByName('x.constraint_schema', d),
      `NOT EXISTS (SELECT FROM pg_catalog.pg_constraint fk JOIN pg_catalog.pg_namespace fn ON fn.oid = fk.connamespace
         WHERE fn.nspname = x.constraint_schema AND fk.conname = x.constraint_name
           AND (fk.conrelid = ANY (${d.rels}::pg_catalog.oid[]) OR fk.confrelid = ANY (${d.rels}::pg_catalog.oid[])
             OR EXISTS (SELECT FROM pg_catalog.unnest(fk.conkey) k WHERE NOT ${colNotIn('fk.conrelid', 'k', d)})))`,
    ),
  'information_schema.key_column_usage': (d) =>
    and(
      relByName('x.table_schema', 'x.table_name', d),
      colByName('x.table_schema', 'x.table_name', 'x.column_name', d),
      schemaByName('x.constraint_schema', d),
    ),
  'information_schema.constraint_column_usage': (d) =>
    and(
      relByName('x.table_schema', 'x.table_name', d),
      colByName('x.table_schema', 'x.table_name', 'x.column_name', d),
      schemaByName('x.constraint_schema', d),
    ),
  'information_schema.sequences': (d) => relByName('x.sequence_schema', 'x.sequence_name', d),
};

/**
 * Columns of filtered relations that come back NULL: a function's body is text that can name
 * anything, denied tables included; a visible column's type, domain, default or generation
 * expression, or a visible index's definition, where it names something denied.
 */
export const BLANKED: Record<string, Record<string, (d: Denied) => string>> = {
  'pg_catalog.pg_proc': {
    prosrc: () => 'NULL::pg_catalog.text',
    prosqlbody: () => 'NULL::pg_catalog.pg_node_tree',
  },
  'information_schema.columns': {
    udt_catalog: (d) => blankIf(typeDeniedByName('x.udt_schema', 'x.udt_name', d), 'udt_catalog'),
    udt_schema: (d) => blankIf(typeDeniedByName('x.udt_schema', 'x.udt_name', d), 'udt_schema'),
    udt_name: (d) => blankIf(typeDeniedByName('x.udt_schema', 'x.udt_name', d), 'udt_name'),
    domain_catalog: (d) =>
      blankIf(typeDeniedByName('x.domain_schema', 'x.domain_name', d), 'domain_catalog'),
    domain_schema: (d) =>
      blankIf(typeDeniedByName('x.domain_schema', 'x.domain_name', d), 'domain_schema'),
    domain_name: (d) =>
      blankIf(typeDeniedByName('x.domain_schema', 'x.domain_name', d), 'domain_name'),
    column_default: (d) => blankIf(defaultDenied(d), 'column_default'),
    generation_expression: (d) => blankIf(defaultDenied(d), 'generation_expression'),
  },
  'pg_catalog.pg_indexes': {
    indexdef: (d) =>
      blankIf(
        `EXISTS (SELECT FROM pg_catalog.pg_class fi JOIN pg_catalog.pg_namespace fn ON fn.oid = fi.relnamespace
           WHERE fn.nspname = x.schemaname AND fi.relname = x.indexname
             AND ${dependsOnDenied('pg_catalog.pg_class', 'fi.oid', d)})`,
        'indexdef',
      ),
  },
};

/** Catalog relations that hold nothing about schemas, relations or columns: read as they are. */
export const OPEN = new Set(
  [
    'pg_roles',
    'pg_user',
    'pg_authid',
    'pg_shadow',
    'pg_auth_members',
    'pg_database',
    'pg_db_role_setting',
    'pg_settings',
    'pg_file_settings',
    'pg_extension',
    'pg_available_extensions',
    'pg_available_extension_versions',
    'pg_language',
    'pg_am',
    'pg_tablespace',
    'pg_timezone_names',
    'pg_timezone_abbrevs',
    'pg_prepared_xacts',
    'pg_cursors',
    'pg_largeobject_metadata',
    'pg_stat_database',
    'pg_stat_bgwriter',
    'pg_config',
  ].map((name) => `pg_catalog.${name}`),
);
