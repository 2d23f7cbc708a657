// What the system catalog tells about denied objects. Under an access policy a denied schema,
// table or column answers as if it did not exist — also to introspection. A statement may read
// the catalog only through relations that either hold nothing about schemas, relations and
// columns (OPEN), or that pgmcp can filter: each of those is replaced, in the text sent, by a
// subquery over the same relation without the rows of denied objects (FILTERED); a name that
// refers to a CTE is the CTE (cte-scope.ts). Every other catalog relation is refused. Functions
// and casts that turn a name or an oid into what the catalog knows of it (regclass casts,
// pg_relation_size, obj_description, has_table_privilege …) are allowed only on a constant
// name of a visible object; a denied one gets the error a missing one gets, and to_regclass
// (to_regtype, to_regnamespace) of one answers NULL as for a missing one. Type names and string
// constants PostgreSQL reads as a reg type by their context are resolved too, and a denied one
// gets PostgreSQL's error for a missing one (catalog-names.ts). Sequences go with the table or
// column they belong to. Error positions are counted back into the caller's text
// (sent-text.ts). Definitions of views, rules, constraints and functions are refused
// (pg_get_viewdef, pg_views …) or blanked (pg_proc's bodies; defaults, generation expressions
// and index definitions that depend on anything denied): text that can name anything.
// docs/security.md, "The system catalog", says what is filtered, open and refused.
import { scanSync } from 'libpg-query';
import type { Lookup } from '../../db/call-session.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { nameMatcher } from '../../core/glob.js';
import { quoteIdent } from '../../core/sql.js';
import type { Judge } from './policy-judge.js';
import {
  literalTypes,
  nameLiterals,
  typeRefs,
  type NameLiteral,
  type TypeRef,
  type WrittenName,
} from './catalog-names.js';
import { relationUses, writtenName, type RelationUse } from './cte-scope.js';
import { nameParts, tryParse, visitNodes } from './parse-tree.js';
import type { ResolvedRelation } from './relation-access.js';
import { characters, type Replacement } from './sent-text.js';

const SYSTEM = new Set(['pg_catalog', 'information_schema']);

/** The oids (as SQL array literals) of what the policy denies, for the filters. */
interface Denied {
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
const FILTERED: Record<string, Filter> = {
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
const BLANKED: Record<string, Record<string, (d: Denied) => string>> = {
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
const OPEN = new Set(
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

/** Which argument of a catalog function names what: a relation, a schema, a type, a column. */
type Arg = 'rel' | 'schema' | 'type' | 'column' | 'attnum' | 'free';

const REL1: Arg[][] = [['rel'], ['rel', 'free'], ['rel', 'free', 'free']];
const PRIVILEGE = (kind: Arg): Arg[][] => [
  [kind, 'free'],
  ['free', kind, 'free'],
];

/** Functions that answer about the object an argument names, by arity. */
const NAMING: Record<string, Arg[][]> = {
  // The function-call form of a cast (regclass('app.orders')) is the cast.
  regclass: [['rel']],
  regtype: [['type']],
  regnamespace: [['schema']],
  nextval: REL1,
  setval: REL1,
  to_regclass: [['rel']],
  to_regnamespace: [['schema']],
  to_regtype: [['type']],
  pg_relation_size: REL1,
  pg_total_relation_size: REL1,
  pg_table_size: REL1,
  pg_indexes_size: REL1,
  pg_relation_filenode: REL1,
  pg_relation_filepath: REL1,
  pg_partition_tree: REL1,
  pg_partition_root: REL1,
  pg_partition_ancestors: REL1,
  pg_sequence_last_value: REL1,
  pg_sequence_parameters: REL1,
  currval: REL1,
  pg_table_is_visible: REL1,
  pg_type_is_visible: [['type']],
  pg_relation_is_updatable: REL1,
  pg_column_is_updatable: [['rel', 'attnum', 'free']],
  row_security_active: REL1,
  pg_index_has_property: REL1,
  pg_index_column_has_property: REL1,
  pg_get_replica_identity_index: REL1,
  pg_get_indexdef: REL1,
  obj_description: REL1,
  col_description: [['rel', 'attnum']],
  has_table_privilege: PRIVILEGE('rel'),
  has_sequence_privilege: PRIVILEGE('rel'),
  has_any_column_privilege: PRIVILEGE('rel'),
  has_column_privilege: [
    ['rel', 'column', 'free'],
    ['free', 'rel', 'column', 'free'],
  ],
  has_schema_privilege: PRIVILEGE('schema'),
  has_type_privilege: PRIVILEGE('type'),
};

/** pg_stat_get_* (and _xact_) functions take a relation's oid. */
const STAT_FUNCTION =
  /^pg_stat_get_(xact_)?(numscans|lastscan|tuples_|live_tuples|dead_tuples|mod_since|ins_since|blocks_|last_|vacuum_|autovacuum_|analyze_|autoanalyze_)/;

/**
 * Functions refused under a policy whatever their arguments: they turn an oid into a name or a
 * definition (text that can name anything), or run SQL text.
 */
const REFUSED_FUNCTIONS = nameMatcher([
  'pg_get_viewdef',
  'pg_get_ruledef',
  'pg_get_triggerdef',
  'pg_get_constraintdef',
  'pg_get_expr',
  'pg_get_functiondef',
  'pg_get_function_*',
  'pg_get_partkeydef',
  'pg_get_partition_constraintdef',
  'pg_get_statisticsobjdef*',
  'pg_get_serial_sequence',
  'pg_get_publication_tables',
  'pg_get_object_address',
  'pg_describe_object',
  'pg_identify_object*',
  'pg_filenode_relation',
  'format_type',
  'pg_function_is_visible',
  'pg_operator_is_visible',
  'pg_opclass_is_visible',
  'pg_opfamily_is_visible',
  'pg_collation_is_visible',
  'pg_conversion_is_visible',
  'pg_statistics_obj_is_visible',
  'pg_ts_*_is_visible',
  'pg_stat_get_activity',
  'pg_stat_get_backend_activity',
  'pg_stat_get_progress_info',
  'pg_mcv_list_items',
  'to_regproc*',
  'to_regoper*',
  'to_regcollation',
  'reg*in',
  'reg*out',
  // The function-call form of a cast to a reg type other than regclass, regtype, regnamespace
  // and regrole (judged like the cast, which is refused).
  'regproc',
  'regprocedure',
  'regoper',
  'regoperator',
  'regconfig',
  'regdictionary',
  'regcollation',
  'reg*recv',
  'reg*send',
  'has_function_privilege',
  'has_foreign_data_wrapper_privilege',
  'has_server_privilege',
]);

/** The reg* types: a cast to one reads the catalog. */
const REG_TYPES = new Set([
  'regclass',
  'regtype',
  'regnamespace',
  'regrole',
  'regproc',
  'regprocedure',
  'regoper',
  'regoperator',
  'regconfig',
  'regdictionary',
  'regcollation',
]);

function refuse(message: string): AppError {
  return new AppError(ErrorCodes.CATALOG_NOT_FILTERED, message, { category: 'forbidden' });
}

/**
 * The error PostgreSQL gives for a missing relation: a denied one gets the same. `position`
 * (1-based, in the caller's characters) where PostgreSQL's own error for a missing one has one.
 */
function missing(
  kind: 'relation' | 'schema' | 'type' | 'column',
  name: string,
  position?: number,
): AppError {
  const sqlstate = { relation: '42P01', schema: '3F000', type: '42704', column: '42703' }[kind];
  return new AppError(ErrorCodes.DB_QUERY_FAILED, `${kind} "${name}" does not exist`, {
    category: 'database',
    details: position === undefined ? { sqlstate } : { sqlstate, position: String(position) },
  });
}

const ALTERNATIVE =
  'information_schema.schemata, tables, columns, table_constraints and key_column_usage, and pg_catalog.pg_namespace, pg_class, pg_attribute, pg_type, pg_index, pg_constraint, pg_tables and pg_indexes are filtered by the policy; or use get_schema_info';

/** A constant argument: its text, whether it was a number, and the reg* type it is cast to. */
interface Constant {
  text: string;
  numeric: boolean;
  cast: string | null;
}

function constantOf(node: unknown): Constant | null {
  const n = node as Record<string, unknown> | null;
  if (!n || typeof n !== 'object') return null;
  const c = n['A_Const'] as Record<string, { sval?: string; ival?: number }> | undefined;
  if (c) {
    if (c['sval']) return { text: c['sval'].sval ?? '', numeric: false, cast: null };
    if (c['ival']) return { text: String(c['ival'].ival ?? 0), numeric: true, cast: null };
    return null;
  }
  const t = n['TypeCast'] as {
    arg?: unknown;
    typeName?: { names?: unknown; arrayBounds?: unknown };
  };
  if (t) {
    if (t.typeName?.arrayBounds) return null;
    const inner = constantOf(t.arg);
    if (!inner) return null;
    const names = nameParts(t.typeName?.names);
    const type = (names[names.length - 1] ?? '').toLowerCase();
    return { ...inner, cast: REG_TYPES.has(type) ? type : inner.cast };
  }
  return null;
}

/** A qualified name as PostgreSQL reads it (`a.b`, `"A".b`), or null when it is not one. */
export function splitName(text: string): string[] | null {
  const parts: string[] = [];
  let i = 0;
  const s = text.trim();
  while (i <= s.length) {
    if (s[i] === '"') {
      let j = i + 1;
      let part = '';
      for (;;) {
        if (j >= s.length) return null;
        if (s[j] === '"') {
          if (s[j + 1] === '"') {
            part += '"';
            j += 2;
            continue;
          }
          break;
        }
        part += s[j];
        j++;
      }
      if (part === '') return null;
      parts.push(part);
      i = j + 1;
    } else {
      const m = /^[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/.exec(s.slice(i));
      if (!m) return null;
      parts.push(m[0].toLowerCase());
      i += m[0].length;
    }
    if (i === s.length) break;
    if (s[i] !== '.') return null;
    i++;
  }
  return parts.length >= 1 && parts.length <= 2 ? parts : null;
}

interface Use {
  /** Where the use is (for refusals): the statement, or a view or function. */
  label: string;
  /**
   * to_regclass, to_regtype and to_regnamespace answer NULL for a missing name: the statement
   * can be sent with a NULL argument where the name is denied (a view's or function's body
   * cannot, and its calls are judged like casts).
   */
  lookups: boolean;
}

/** Functions that answer NULL for a name that names nothing, and what they name. */
const LOOKUPS: Record<string, 'rel' | 'type' | 'schema'> = {
  to_regclass: 'rel',
  to_regtype: 'type',
  to_regnamespace: 'schema',
};

/** A call of one of LOOKUPS on a constant name: answered NULL when the name is denied. */
interface NameLookup {
  kind: 'rel' | 'type' | 'schema';
  /** The name as written in the constant, resolved by the same function PostgreSQL calls. */
  text: string;
  /** Byte offset of the call in the statement. */
  location: number;
}

/** What a statement's text asks of the catalog, collected from its tree. */
interface Wants {
  rels: { parts: string[]; text: string }[];
  schemas: string[];
  types: { parts: string[]; text: string }[];
  columns: { rel: string[]; column: string | number }[];
  lookups: NameLookup[];
  /** Types the text names (casts, column definition lists …): judged by name. */
  typeRefs: TypeRef[];
  /** String constants that read as names, their type left to PostgreSQL. */
  literals: NameLiteral[];
}

function collect(tree: unknown, use: Use): Wants {
  const wants: Wants = {
    rels: [],
    schemas: [],
    types: [],
    columns: [],
    lookups: [],
    typeRefs: [],
    literals: [],
  };
  // Constants judged as a catalog function's argument are not judged again as literals.
  const named = new WeakSet<object>();
  const argConst = (arg: unknown): void => {
    if (arg && typeof arg === 'object' && 'A_Const' in arg)
      named.add((arg as { A_Const: object }).A_Const);
  };
  const judgeConstant = (c: Constant | null, kind: Arg, what: string): string[] | null => {
    if (!c)
      throw refuse(
        `Refused: ${use.label}${what} is given a computed value; under an access policy it may only name a visible object by a constant (as in '${kind === 'schema' ? 'app' : 'app.orders'}'${kind === 'rel' ? '::regclass' : ''}), or it could name what the policy hides.`,
      );
    if (c.numeric)
      throw refuse(
        `Refused: ${use.label}${what} names an object by its oid; under an access policy name it (as in 'app.orders'::regclass), or it could name what the policy hides.`,
      );
    const parts = splitName(c.text);
    if (!parts)
      throw missing(kind === 'schema' ? 'schema' : kind === 'type' ? 'type' : 'relation', c.text);
    return parts;
  };
  const addKind = (kind: Arg, c: Constant | null, what: string): string[] | null => {
    // The cast decides what a constant names (obj_description('app'::regnamespace, …)).
    const effective: Arg =
      c?.cast === 'regnamespace' ? 'schema' : c?.cast === 'regtype' ? 'type' : kind;
    if (c?.cast && !['regclass', 'regnamespace', 'regtype', 'regrole'].includes(c.cast))
      throw refuse(
        `Refused: ${use.label}a cast to ${c.cast} reads the catalog by name, and under an access policy only regclass, regtype, regnamespace and regrole are judged. ${ALTERNATIVE}.`,
      );
    if (c?.cast === 'regrole') return null;
    const parts = judgeConstant(c, effective, what);
    if (!parts) return null;
    if (effective === 'schema') {
      if (parts.length !== 1) throw missing('schema', c!.text);
      wants.schemas.push(parts[0]!);
    } else if (effective === 'type') wants.types.push({ parts, text: c!.text });
    else wants.rels.push({ parts, text: c!.text });
    return parts;
  };
  // A cast handled as a function's argument is not judged again as a cast.
  const judged = new WeakSet<object>();
  visitNodes(tree, (type, body) => {
    if (type === 'FuncCall') {
      const call = body as { funcname?: unknown; args?: unknown[] };
      const parts = nameParts(call.funcname);
      const name = (parts[parts.length - 1] ?? '').toLowerCase();
      const args = call.args ?? [];
      if (REFUSED_FUNCTIONS(name))
        throw refuse(
          `Refused: ${use.label}calls ${name}, which can show or name what the access policy hides (a definition, or the object behind an oid). ${ALTERNATIVE}.`,
        );
      const lookup = LOOKUPS[name];
      const only = args.length === 1 ? constantOf(args[0]) : null;
      const location = (call as { location?: number }).location;
      if (use.lookups && lookup && only && !only.numeric && !only.cast && location !== undefined) {
        // PostgreSQL resolves the name; a denied one is then sent as NULL (checkCatalog).
        wants.lookups.push({ kind: lookup, text: only.text, location });
        argConst(args[0]);
        const arg = args[0];
        if (arg && typeof arg === 'object' && 'TypeCast' in arg)
          judged.add((arg as { TypeCast: object }).TypeCast);
        return;
      }
      const shapes = NAMING[name] ?? (STAT_FUNCTION.test(name) ? REL1 : undefined);
      if (!shapes) return;
      const shape = shapes.find((s) => s.length === args.length);
      if (!shape)
        throw refuse(`Refused: ${use.label}calls ${name} in a form pgmcp does not judge.`);
      let rel: string[] | null = null;
      shape.forEach((kind, i) => {
        const arg = args[i];
        if (kind === 'free') return;
        argConst(arg);
        const c = constantOf(arg);
        if (arg && typeof arg === 'object' && 'TypeCast' in arg)
          judged.add((arg as { TypeCast: object }).TypeCast);
        if (kind === 'column' || kind === 'attnum') {
          if (!c || !rel)
            throw refuse(
              `Refused: ${use.label}${name} is given a computed column; under an access policy name it by a constant.`,
            );
          wants.columns.push({
            rel,
            column: kind === 'attnum' && c.numeric ? Number(c.text) : c.text,
          });
          return;
        }
        const parts = addKind(kind, c, `${name}'s argument `);
        if (kind === 'rel' && parts) rel = parts;
      });
    } else if (type === 'TypeCast') {
      if (judged.has(body as object)) return;
      const cast = body as { typeName?: { names?: unknown; arrayBounds?: unknown }; arg?: unknown };
      const names = nameParts(cast.typeName?.names);
      const target = (names[names.length - 1] ?? '').toLowerCase();
      if (!REG_TYPES.has(target)) return;
      if (target === 'regrole') return;
      if (cast.typeName?.arrayBounds)
        throw refuse(
          `Refused: ${use.label}casts to ${target}[]; under an access policy cast one constant name at a time.`,
        );
      const c = constantOf(cast.arg);
      // Nested casts ('x'::text::regclass) are one constant: judge the outermost only.
      if (cast.arg && typeof cast.arg === 'object' && 'TypeCast' in cast.arg)
        judged.add((cast.arg as { TypeCast: object }).TypeCast);
      addKind(
        target === 'regnamespace' ? 'schema' : target === 'regtype' ? 'type' : 'rel',
        c ? { ...c, cast: target } : null,
        `a cast to ${target} `,
      );
    }
  });
  wants.typeRefs = typeRefs(tree).filter((t) => !SYSTEM.has(t.parts[t.parts.length - 2] ?? ''));
  wants.literals = nameLiterals(tree, named);
  return wants;
}

const DENIED_SQL = `SELECT c.oid::int8 AS oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
  c.relnamespace::int8 AS ns, c.reltype::int8 AS type, coalesce(t.typarray, 0)::int8 AS array_type,
  c.reltoastrelid::int8 AS toast, coalesce(i.indrelid, 0)::int8 AS of_table,
  coalesce(i.indkey::text, '') AS indkey
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_type t ON t.oid = c.reltype
LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid`;

const NAMESPACES_SQL = `SELECT oid::int8 AS oid, nspname AS schema FROM pg_catalog.pg_namespace`;

const COLUMNS_SQL = `SELECT a.attrelid::int8 AS rel, a.attnum::int AS attnum, a.attname AS name
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE a.attnum > 0 AND NOT a.attisdropped AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')`;

interface RelRow {
  oid: string;
  schema: string;
  name: string;
  kind: string;
  ns: string;
  type: string;
  array_type: string;
  toast: string;
  of_table: string;
  indkey: string;
}

/** Sequences that belong to a relation or a column (serial, identity, OWNED BY). */
const OWNED_SEQUENCES_SQL = `SELECT d.objid::int8 AS seq, d.refobjid::int8 AS rel, d.refobjsubid::int AS attnum
FROM pg_catalog.pg_depend d
JOIN pg_catalog.pg_class s ON s.oid = d.objid AND s.relkind = 'S'
WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
  AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
  AND d.deptype IN ('a', 'i')`;

interface Facts {
  denied: Denied;
  deniedNs: Set<number>;
  /** The names of denied schemas (a qualified name in one answers as a missing schema). */
  deniedNsNames: Set<string>;
  deniedRels: Set<number>;
  deniedTypes: Set<number>;
  deniedCols: Set<string>;
  /** Visible relations with a denied column, by oid: `schema.name`. */
  withDeniedCols: Map<number, string>;
}

const arrayLiteral = (values: Iterable<number | string>): string =>
  `'{${[...values].map((v) => (typeof v === 'number' ? String(v) : `"${v}"`)).join(',')}}'`;

async function readFacts(lookup: Lookup, judge: Judge): Promise<Facts> {
  const { policy } = judge;
  const deniedNs = new Set<number>();
  const deniedRels = new Set<number>();
  const deniedTypes = new Set<number>();
  const deniedCols = new Set<string>();
  const deniedNsNames = new Set<string>();
  const withDeniedCols = new Map<number, string>();
  const namespaces = await lookup.query<{ oid: string; schema: string }>(NAMESPACES_SQL);
  for (const n of namespaces.rows)
    if (!policy.schemaVisible(n.schema)) {
      deniedNs.add(Number(n.oid));
      deniedNsNames.add(n.schema);
    }
  const { rows } = await lookup.query<RelRow>(DENIED_SQL);
  const byOid = new Map(rows.map((r) => [Number(r.oid), r]));
  const deny = (r: RelRow): void => {
    deniedRels.add(Number(r.oid));
    if (Number(r.type) !== 0) deniedTypes.add(Number(r.type));
    if (Number(r.array_type) !== 0) deniedTypes.add(Number(r.array_type));
    if (Number(r.toast) !== 0) deniedRels.add(Number(r.toast));
  };
  for (const r of rows) if (!policy.tableVisible(r.schema, r.name)) deny(r);
  if (policy.hasColumnRules) {
    const cols = await lookup.query<{ rel: string; attnum: number; name: string }>(COLUMNS_SQL);
    for (const c of cols.rows) {
      const r = byOid.get(Number(c.rel));
      if (r && !deniedRels.has(Number(r.oid)) && !policy.columnVisible(r.schema, r.name, c.name)) {
        deniedCols.add(`${c.rel}:${c.attnum}`);
        withDeniedCols.set(Number(r.oid), `${r.schema}.${r.name}`);
      }
    }
  }
  // Sequences go with the relation or column they belong to (serial, identity, OWNED BY).
  const owned = await lookup.query<{ seq: string; rel: string; attnum: number }>(
    OWNED_SEQUENCES_SQL,
  );
  for (const o of owned.rows) {
    const seq = byOid.get(Number(o.seq));
    if (seq && (deniedRels.has(Number(o.rel)) || deniedCols.has(`${o.rel}:${o.attnum}`))) deny(seq);
  }
  // Indexes (and their TOAST) go with their table, and with the columns they index.
  for (const r of rows) {
    const table = Number(r.of_table);
    if (table === 0) continue;
    const onDeniedColumn = r.indkey
      .split(' ')
      .some((attnum) => deniedCols.has(`${table}:${attnum}`));
    if (deniedRels.has(table) || onDeniedColumn) deny(r);
  }
  // TOAST indexes of denied TOAST tables.
  for (const r of rows) if (deniedRels.has(Number(r.of_table))) deny(r);
  return {
    denied: {
      ns: arrayLiteral(deniedNs),
      rels: arrayLiteral(deniedRels),
      types: arrayLiteral(deniedTypes),
      cols: arrayLiteral(deniedCols),
    },
    deniedNs,
    deniedNsNames,
    deniedRels,
    deniedTypes,
    deniedCols,
    withDeniedCols,
  };
}

const RESOLVE_SQL = `SELECT r.i::int AS i, c.oid::int8 AS oid, c.relnamespace::int8 AS ns
FROM pg_catalog.unnest($1::text[]) WITH ORDINALITY AS r(ref, i)
JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(r.ref)`;

const RESOLVE_TYPES_SQL = `SELECT r.i::int AS i, t.oid::int8 AS oid, t.typnamespace::int8 AS ns, t.typrelid::int8 AS rel
FROM pg_catalog.unnest($1::text[]) WITH ORDINALITY AS r(ref, i)
JOIN pg_catalog.pg_type t ON t.oid = pg_catalog.to_regtype(r.ref)`;

const RESOLVE_COLUMNS_SQL = `SELECT r.i::int AS i, a.attrelid::int8 AS rel, a.attnum::int AS attnum
FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::int[])) AS r(ref, name, num)
JOIN pg_catalog.pg_attribute a ON a.attrelid = pg_catalog.to_regclass(r.ref)
  AND a.attnum > 0 AND NOT a.attisdropped AND (a.attname = r.name OR a.attnum = r.num)`;

const quoted = (parts: string[]): string => parts.map(quoteIdent).join('.');

/** Throws when a constant names an object that is missing or denied (the same error for both). */
async function judgeWants(
  lookup: Lookup,
  wants: Wants,
  facts: () => Promise<Facts>,
): Promise<void> {
  if (wants.rels.length === 0 && wants.schemas.length === 0 && wants.types.length === 0) return;
  const f = await facts();
  if (wants.rels.length > 0) {
    const { rows } = await lookup.query<{ i: number; oid: string; ns: string }>(RESOLVE_SQL, [
      wants.rels.map((r) => quoted(r.parts)),
    ]);
    const found = new Map(rows.map((r) => [r.i, r]));
    wants.rels.forEach((r, k) => {
      const row = found.get(k + 1);
      if (!row || f.deniedRels.has(Number(row.oid)) || f.deniedNs.has(Number(row.ns)))
        throw missing('relation', r.text);
    });
  }
  if (wants.schemas.length > 0) {
    const { rows } = await lookup.query<{ schema: string; oid: string }>(
      `SELECT s.schema, n.oid::int8 AS oid FROM pg_catalog.unnest($1::text[]) AS s(schema)
       LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = s.schema`,
      [wants.schemas],
    );
    for (const row of rows)
      if (row.oid === null || f.deniedNs.has(Number(row.oid))) throw missing('schema', row.schema);
  }
  if (wants.types.length > 0) {
    const { rows } = await lookup.query<{ i: number; oid: string; ns: string; rel: string }>(
      RESOLVE_TYPES_SQL,
      [wants.types.map((t) => quoted(t.parts))],
    );
    const found = new Map(rows.map((r) => [r.i, r]));
    wants.types.forEach((t, k) => {
      const row = found.get(k + 1);
      if (
        !row ||
        f.deniedTypes.has(Number(row.oid)) ||
        f.deniedNs.has(Number(row.ns)) ||
        f.deniedRels.has(Number(row.rel))
      )
        throw missing('type', t.text);
    });
  }
  if (wants.columns.length > 0) {
    const { rows } = await lookup.query<{ i: number; rel: string; attnum: number }>(
      RESOLVE_COLUMNS_SQL,
      [
        wants.columns.map((c) => quoted(c.rel)),
        wants.columns.map((c) => (typeof c.column === 'string' ? c.column : null)),
        wants.columns.map((c) => (typeof c.column === 'number' ? c.column : null)),
      ],
    );
    const found = new Map(rows.map((r) => [r.i, r]));
    wants.columns.forEach((c, k) => {
      const row = found.get(k + 1);
      if (row && f.deniedCols.has(`${row.rel}:${row.attnum}`))
        throw missing('column', String(c.column));
    });
  }
}

/**
 * Names written as types or in string constants, resolved as PostgreSQL resolves them:
 * to_regclass (not for a `[]` name), to_regtype, and the schema a qualified name names (or
 * that a single name is). Only the names that resolve to something come back.
 */
const RESOLVE_NAMES_SQL = `SELECT r.i::int AS i,
  coalesce(c.oid, 0)::int8 AS rel, coalesce(c.relnamespace, 0)::int8 AS rel_ns,
  coalesce(t.oid, 0)::int8 AS type, coalesce(t.typnamespace, 0)::int8 AS type_ns,
  coalesce(t.typrelid, 0)::int8 AS type_rel,
  coalesce(e.oid, 0)::int8 AS elem, coalesce(e.typnamespace, 0)::int8 AS elem_ns,
  coalesce(e.typrelid, 0)::int8 AS elem_rel, coalesce(n.oid, 0)::int8 AS ns
FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::bool[]))
  WITH ORDINALITY AS r(ref, schema, relation, i)
LEFT JOIN pg_catalog.pg_class c ON c.oid = CASE WHEN r.relation THEN pg_catalog.to_regclass(r.ref) END
LEFT JOIN pg_catalog.pg_type t ON t.oid = pg_catalog.to_regtype(r.ref)
LEFT JOIN pg_catalog.pg_type e ON e.oid = CASE WHEN t.typelem <> 0 THEN t.typelem ELSE t.typbasetype END
LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = r.schema
WHERE c.oid IS NOT NULL OR t.oid IS NOT NULL OR n.oid IS NOT NULL`;

interface NameRow {
  i: number;
  rel: string;
  rel_ns: string;
  type: string;
  type_ns: string;
  type_rel: string;
  elem: string;
  elem_ns: string;
  elem_rel: string;
  ns: string;
}

/** What a name that resolved names of what the policy denies. */
interface NameVerdict {
  /** A qualified name in a denied schema (missing schema: 3F000 whatever the object). */
  schema: boolean;
  /** A single name that is a denied schema's. */
  isSchema: boolean;
  relation: boolean;
  type: boolean;
  /** A visible relation with a denied column whose row type (or array of it) this is. */
  rowType: string | null;
}

function verdictOf(name: WrittenName, row: NameRow | undefined, f: Facts): NameVerdict {
  const n = (v: string | undefined): number => Number(v ?? 0);
  const qualified = name.parts.length > 1;
  const nsDenied = row !== undefined && n(row.ns) !== 0 && f.deniedNs.has(n(row.ns));
  const typeDenied =
    row !== undefined &&
    n(row.type) !== 0 &&
    (f.deniedTypes.has(n(row.type)) ||
      f.deniedNs.has(n(row.type_ns)) ||
      f.deniedRels.has(n(row.type_rel)) ||
      f.deniedTypes.has(n(row.elem)) ||
      f.deniedNs.has(n(row.elem_ns)) ||
      f.deniedRels.has(n(row.elem_rel)));
  return {
    schema: qualified && nsDenied,
    isSchema: !qualified && nsDenied,
    relation:
      row !== undefined &&
      n(row.rel) !== 0 &&
      (f.deniedRels.has(n(row.rel)) || f.deniedNs.has(n(row.rel_ns))),
    type: typeDenied,
    rowType:
      row === undefined
        ? null
        : (f.withDeniedCols.get(n(row.type_rel)) ?? f.withDeniedCols.get(n(row.elem_rel)) ?? null),
  };
}

/** The name as PostgreSQL's error writes it: parts joined by dots, `[]` for an array. */
const shown = (name: WrittenName): string => name.parts.join('.') + (name.array ? '[]' : '');
const schemaOf = (name: WrittenName): string => name.parts[name.parts.length - 2] ?? '';

/** The error PostgreSQL gives a missing name read as `type` (a reg type's name, or null: any). */
function missingAs(
  name: WrittenName,
  v: NameVerdict,
  type: string | null,
  position: number | undefined,
): AppError | null {
  const base = type?.replace(/\[\]$/, '') ?? null;
  if (base !== null && (!REG_TYPES.has(base) || base === 'regrole')) return null;
  if (v.schema) return missing('schema', schemaOf(name), position);
  if ((base === null || base === 'regclass') && v.relation)
    return missing('relation', shown(name), position);
  if ((base === null || base === 'regtype') && v.type)
    return missing('type', shown(name), position);
  if ((base === null || base === 'regnamespace') && v.isSchema)
    return missing('schema', name.parts[0]!, position);
  return null;
}

/**
 * Throws when a type the text names, or a string constant PostgreSQL reads as a reg type,
 * names what the policy denies: with the error PostgreSQL gives a missing one (the same text,
 * SQLSTATE and position), so a denied name and a missing one answer alike. A type that is the
 * row type of a visible table with a denied column is refused: a value of it shows the column.
 * `sql` is the statement (to ask PostgreSQL which constants it reads as a reg type); null for
 * a view's or function's body, whose constants are judged as if they were read so.
 */
async function judgeNames(
  lookup: Lookup,
  wants: Wants,
  facts: () => Promise<Facts>,
  statement: { sql: string; tree: unknown } | null,
): Promise<void> {
  if (wants.typeRefs.length === 0 && wants.literals.length === 0) return;
  const items: { name: WrittenName; relation: boolean }[] = [];
  for (const t of wants.typeRefs) items.push({ name: t, relation: false });
  for (const l of wants.literals)
    for (const name of l.names) items.push({ name, relation: !name.array });
  const { rows } = await lookup.query<NameRow>(RESOLVE_NAMES_SQL, [
    items.map(({ name }) => quoted(name.parts.slice(-2)) + (name.array ? '[]' : '')),
    items.map(({ name }) => (name.parts.length > 1 ? schemaOf(name) : name.parts[0]!)),
    items.map((item) => item.relation),
  ]);
  if (rows.length === 0) return;
  const f = await facts();
  const found = new Map(rows.map((r) => [r.i, r]));
  const sql = statement?.sql ?? '';
  const position = (location: number): number | undefined =>
    statement
      ? characters(Buffer.from(sql, 'utf8').subarray(0, location).toString('utf8')) + 1
      : undefined;
  let k = 0;
  const verdicts = items.map((item) => verdictOf(item.name, found.get(++k), f));
  // Types, in text order.
  const types = wants.typeRefs.map((t, i) => ({ t, v: verdicts[i]! }));
  for (const { t, v } of types.sort((a, b) => a.t.location - b.t.location)) {
    const error = missingAs(
      t,
      { ...v, relation: false, isSchema: false },
      'regtype',
      position(t.location),
    );
    if (error) throw error;
    if (v.rowType)
      throw new AppError(
        ErrorCodes.TOOL_INPUT_INVALID,
        `Refused: the query names the row type of ${v.rowType}, which has columns you may not use (a value of that type shows them). Name the visible columns you need; get_schema_info lists them.`,
        { category: 'forbidden' },
      );
  }
  // Constants that name something denied: what PostgreSQL reads them as decides.
  let at = wants.typeRefs.length;
  const suspects: { literal: NameLiteral; names: { name: WrittenName; v: NameVerdict }[] }[] = [];
  for (const literal of wants.literals) {
    const names = literal.names.map((name) => ({ name, v: verdicts[at++]! }));
    if (names.some(({ name, v }) => missingAs(name, v, null, undefined) !== null))
      suspects.push({ literal, names });
  }
  if (suspects.length === 0) return;
  const read = statement
    ? await literalTypes(
        lookup,
        statement.sql,
        statement.tree,
        suspects.map((s) => s.literal),
      )
    : null;
  const ordered = suspects
    .map((s, i) => ({ ...s, type: read?.[i] ?? null }))
    .sort((a, b) => a.literal.location - b.literal.location);
  for (const { literal, names, type } of ordered) {
    for (const { name, v } of names) {
      const error = missingAs(name, v, type, position(literal.location));
      if (error) throw error;
    }
  }
}

const catalogName = (rel: { schema: string; name: string }): string => `${rel.schema}.${rel.name}`;

function refuseRelation(rel: { schema: string; name: string }, label: string): AppError {
  return refuse(
    `Refused: ${label}reads ${catalogName(rel)}, which can show what the access policy hides and is not filtered by it. ${ALTERNATIVE}.`,
  );
}

/**
 * For a view's definition or a SQL function's body: it runs as written, so catalog relations
 * it reads must be open ones, and its casts and catalog functions are judged like a statement's.
 */
export async function checkCatalogInBody(
  lookup: Lookup,
  judge: Judge,
  relations: readonly ResolvedRelation[],
  tree: unknown,
  label: string,
): Promise<void> {
  if (!judge.policy.active) return;
  for (const rel of relations) {
    if (!SYSTEM.has(rel.schema) || OPEN.has(catalogName(rel))) continue;
    throw refuseRelation(rel, label);
  }
  const wants = collect(tree, { label, lookups: false });
  let facts: Promise<Facts> | null = null;
  const getFacts = (): Promise<Facts> => (facts ??= readFacts(lookup, judge));
  await judgeWants(lookup, wants, getFacts);
  await judgeNames(lookup, wants, getFacts, null);
}

/** The statement to send instead of the caller's, and where it differs from it. */
export interface SentStatement {
  text: string;
  /** In the caller's characters, in text order: for error positions (sent-text.ts). */
  replacements: Replacement[];
}

/**
 * Under an active policy: refuses what reads the catalog in a way the policy cannot filter, and
 * returns the statement to send instead when it reads filtered catalog relations or looks up a
 * denied name with to_regclass and the like (else null).
 */
export async function checkCatalog(
  lookup: Lookup,
  judge: Judge,
  relations: readonly ResolvedRelation[],
  tree: unknown,
  sql: string,
): Promise<SentStatement | null> {
  if (!judge.policy.active) return null;
  // A name that refers to a CTE wherever it is written reads no catalog relation.
  const uses = relationUses(tree);
  const named = new Set(uses.filter((u) => !u.cte).map(writtenName));
  const filtered: ResolvedRelation[] = [];
  for (const rel of relations) {
    if (!named.has(rel.written)) continue;
    if (!SYSTEM.has(rel.schema) || OPEN.has(catalogName(rel))) continue;
    if (!FILTERED[catalogName(rel)]) throw refuseRelation(rel, 'the query ');
    filtered.push(rel);
  }
  const wants = collect(tree, { label: 'the query: ', lookups: true });
  let facts: Promise<Facts> | null = null;
  const getFacts = (): Promise<Facts> => (facts ??= readFacts(lookup, judge));
  // A sequence that belongs to a denied table or column is denied with it.
  for (const rel of relations) {
    if (rel.kind !== 'S' || SYSTEM.has(rel.schema)) continue;
    if ((await getFacts()).deniedRels.has(rel.oid)) throw missing('relation', rel.written);
  }
  await judgeWants(lookup, wants, getFacts);
  await judgeNames(lookup, wants, getFacts, { sql, tree });
  const nulled = await deniedLookups(lookup, wants.lookups, getFacts);
  if (filtered.length === 0 && nulled.length === 0) return null;
  const { denied } = await getFacts();
  return rewrite(sql, tree, filtered, uses, nulled, denied);
}

const LOOKUP_SQL: Record<NameLookup['kind'], string> = {
  rel: RESOLVE_SQL,
  type: RESOLVE_TYPES_SQL,
  schema: `SELECT r.i::int AS i, n.oid::int8 AS oid, n.oid::int8 AS ns
FROM pg_catalog.unnest($1::text[]) WITH ORDINALITY AS r(ref, i)
JOIN pg_catalog.pg_namespace n ON n.oid = pg_catalog.to_regnamespace(r.ref)`,
};

/**
 * The to_regclass (to_regtype, to_regnamespace) calls whose name resolves to a denied object:
 * each is sent with a NULL argument, so it answers NULL as it does for a missing name. The name
 * is resolved by the same function on the call's connection, so exactly as the statement would.
 */
async function deniedLookups(
  lookup: Lookup,
  lookups: readonly NameLookup[],
  facts: () => Promise<Facts>,
): Promise<number[]> {
  const out: number[] = [];
  for (const kind of ['rel', 'type', 'schema'] as const) {
    const these = lookups.filter((l) => l.kind === kind);
    if (these.length === 0) continue;
    const { rows } = await lookup.query<{ i: number; oid: string; ns: string; rel?: string }>(
      LOOKUP_SQL[kind],
      [these.map((l) => l.text)],
    );
    if (rows.length === 0) continue;
    const f = await facts();
    for (const row of rows) {
      const denied =
        f.deniedNs.has(Number(row.ns)) ||
        (kind === 'rel' && f.deniedRels.has(Number(row.oid))) ||
        (kind === 'type' &&
          (f.deniedTypes.has(Number(row.oid)) || f.deniedRels.has(Number(row.rel))));
      if (denied) out.push(these[row.i - 1]!.location);
    }
  }
  return out;
}

/**
 * The statement with every filtered catalog relation replaced by its filtered subquery, and the
 * argument of every denied lookup by NULL.
 */
function rewrite(
  sql: string,
  tree: unknown,
  filtered: readonly ResolvedRelation[],
  uses: readonly RelationUse[],
  nulled: readonly number[],
  denied: Denied,
): SentStatement {
  const byWritten = new Map(filtered.map((r) => [r.written, r]));
  const bytes = Buffer.from(sql, 'utf8');
  const tokens = scanSync(sql).tokens;
  const edits: { start: number; end: number; text: string }[] = [];
  for (const use of uses) {
    if (!use.range || use.cte || use.location === undefined) continue;
    const rel = byWritten.get(writtenName(use));
    if (!rel) continue;
    // The name as written: one to three identifiers joined by dots, from the node's location.
    const first = tokens.findIndex((t) => t.start === use.location);
    if (first < 0) throw cannotFilter(rel);
    let last = first;
    while (tokens[last + 1]?.text === '.' && tokens[last + 2]) last += 2;
    const blank = BLANKED[catalogName(rel)];
    const list = blank
      ? rel.columns
          .map((c) =>
            blank[c.name]
              ? `${blank[c.name]!(denied)} AS ${quoteIdent(c.name)}`
              : `x.${quoteIdent(c.name)}`,
          )
          .join(', ')
      : 'x.*';
    const subquery = `(SELECT ${list} FROM ${catalogName(rel)} x WHERE ${FILTERED[catalogName(rel)]!(denied)})`;
    edits.push({
      start: tokens[first]!.start,
      end: tokens[last]!.end,
      text: use.alias === null ? `${subquery} AS ${quoteIdent(rel.name)}` : subquery,
    });
  }
  // A column qualified by a filtered relation's schema (pg_catalog.pg_class.relname) names the
  // subquery, which has only the relation's own name: the schema is left out of it.
  const unaliased = new Set<string>();
  for (const use of uses) {
    const rel = use.cte || use.alias !== null ? undefined : byWritten.get(writtenName(use));
    if (rel) unaliased.add(catalogName(rel));
  }
  visitNodes(tree, (type, body) => {
    if (type !== 'ColumnRef' || unaliased.size === 0) return;
    const ref = body as { fields?: unknown; location?: number };
    const parts = nameParts(ref.fields);
    if (parts.length < 3 || ref.location === undefined) return;
    const [schema, name] = parts.slice(-3, -1);
    if (!unaliased.has(`${schema}.${name}`)) return;
    const first = tokens.findIndex((t) => t.start === ref.location);
    const drop = parts.length - 2;
    if (first < 0 || tokens[first + 2 * drop - 1]?.text !== '.') return;
    edits.push({ start: tokens[first]!.start, end: tokens[first + 2 * drop]!.start, text: '' });
  });
  for (const location of nulled) {
    // Everything between the call's parentheses (its one argument).
    let open = tokens.findIndex((t) => t.start === location);
    while (open >= 0 && open < tokens.length && tokens[open]!.text !== '(') open++;
    let close = open;
    for (let depth = 0; open >= 0 && close < tokens.length; close++) {
      const text = tokens[close]!.text;
      if (text === '(') depth++;
      else if (text === ')' && --depth === 0) break;
    }
    if (open < 0 || close >= tokens.length)
      throw refuse(
        'Refused: the query calls to_regclass, to_regtype or to_regnamespace in a form pgmcp does not judge.',
      );
    edits.push({
      start: tokens[open]!.end,
      end: tokens[close]!.start,
      text: 'NULL::pg_catalog.text',
    });
  }
  edits.sort((a, b) => a.start - b.start);
  const charsTo = (offset: number): number =>
    characters(bytes.subarray(0, offset).toString('utf8'));
  const replacements = edits.map((e) => ({
    start: charsTo(e.start),
    end: charsTo(e.end),
    length: characters(e.text),
  }));
  let out = bytes;
  for (const e of [...edits].reverse())
    out = Buffer.concat([out.subarray(0, e.start), Buffer.from(e.text), out.subarray(e.end)]);
  const text = out.toString('utf8');
  const parsed = tryParse(text);
  if (!parsed.ok || parsed.tree.stmts?.length !== 1) {
    if (filtered.length > 0) throw cannotFilter(filtered[0]!);
    throw refuse(
      'Refused: the query calls to_regclass, to_regtype or to_regnamespace in a form pgmcp does not judge.',
    );
  }
  return { text, replacements };
}

function cannotFilter(rel: { schema: string; name: string }): AppError {
  return refuse(
    `Refused: the query reads ${catalogName(rel)} in a form the access policy cannot filter (TABLE, ONLY, TABLESAMPLE …); read it with SELECT … FROM ${catalogName(rel)}.`,
  );
}
