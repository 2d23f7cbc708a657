// Catalog functions and casts that turn a name or an oid into what the catalog knows of it:
// which argument of each names what (NAMING), which are refused outright, the reg* types judged,
// and the errors the catalog filter gives (a refusal, or PostgreSQL's error for a missing object).
import { AppError, ErrorCodes } from '../../core/errors.js';
import { nameMatcher } from '../../core/glob.js';
/** Which argument of a catalog function names what: a relation, a schema, a type, a column. */
export type Arg = 'rel' | 'schema' | 'type' | 'column' | 'attnum' | 'free';

export const REL1: Arg[][] = [['rel'], ['rel', 'free'], ['rel', 'free', 'free']];
const PRIVILEGE = (kind: Arg): Arg[][] => [
  [kind, 'free'],
  ['free', kind, 'free'],
];

/** Functions that answer about the object an argument names, by arity. */
export const NAMING: Record<string, Arg[][]> = {
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
export const STAT_FUNCTION =
  /^pg_stat_get_(xact_)?(numscans|lastscan|tuples_|live_tuples|dead_tuples|mod_since|ins_since|blocks_|last_|vacuum_|autovacuum_|analyze_|autoanalyze_)/;

/**
 * Functions refused under a policy whatever their arguments: they turn an oid into a name or a
 * definition (text that can name anything), or run SQL text.
 */
export const REFUSED_FUNCTIONS = nameMatcher([
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
export const REG_TYPES = new Set([
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

export function refuse(message: string): AppError {
  return new AppError(ErrorCodes.CATALOG_NOT_FILTERED, message, { category: 'forbidden' });
}

/**
 * The error PostgreSQL gives for a missing relation: a denied one gets the same. `position`
 * (1-based, in the caller's characters) where PostgreSQL's own error for a missing one has one.
 */
export function missing(
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

export const ALTERNATIVE =
  'information_schema.schemata, tables, columns, table_constraints and key_column_usage, and pg_catalog.pg_namespace, pg_class, pg_attribute, pg_type, pg_index, pg_constraint, pg_tables and pg_indexes are filtered by the policy; or use get_schema_info';
