// Which schemas, tables and columns a caller may see, and which columns come back masked.
// One policy serves free SQL (relations and columns resolved from the parse tree) and
// introspection alike, so a denied table is neither queryable nor listed.
import { globToRegExp } from '../core/glob.js';

export interface AccessRules {
  /** Schemas that may be used; empty = every schema. Globs with `*`. */
  allowSchemas: readonly string[];
  denySchemas: readonly string[];
  /** `table`, `schema.table`, globs allowed; empty allow-list = every table. */
  allowTables: readonly string[];
  denyTables: readonly string[];
  /** `column`, `table.column` or `schema.table.column`, globs allowed (e.g. `*.ssn`). */
  denyColumns: readonly string[];
  maskColumns: readonly string[];
  /**
   * Functions (`name`, `schema.name`, globs) whose bodies pgmcp cannot analyse (plpgsql, C …)
   * that statements may call anyway while a policy is active.
   */
  allowFunctions?: readonly string[];
  /** Let masked columns decide which rows come back and in what order (filters, sorts, joins). */
  allowMaskedPredicates?: boolean;
}

export const NO_RULES: AccessRules = {
  allowSchemas: [],
  denySchemas: [],
  allowTables: [],
  denyTables: [],
  denyColumns: [],
  maskColumns: [],
  allowFunctions: [],
  allowMaskedPredicates: false,
};

export interface AccessPolicy {
  /** False when no rule is configured: callers may skip resolution work entirely. */
  readonly active: boolean;
  readonly hasColumnRules: boolean;
  schemaVisible(schema: string): boolean;
  tableVisible(schema: string, table: string): boolean;
  columnVisible(schema: string, table: string, column: string): boolean;
  columnMasked(schema: string, table: string, column: string): boolean;
  /** A function whose body cannot be analysed that the config allows all the same. */
  functionAllowed(schema: string, name: string): boolean;
  readonly allowMaskedPredicates: boolean;
}

export const MASK = '****';

/** System schemas stay readable unless denied explicitly: clients need the catalog. */
const SYSTEM_SCHEMAS = new Set(['pg_catalog', 'information_schema']);

/** A pattern of 1–3 dot-separated parts matched against the last parts of a qualified name. */
function matcher(patterns: readonly string[], arity: number): (parts: string[]) => boolean {
  const compiled = patterns.map((p) => p.split('.').map(globToRegExp));
  return (parts) =>
    compiled.some((pattern) => {
      if (pattern.length > arity) return false;
      const tail = parts.slice(parts.length - pattern.length);
      return pattern.every((re, i) => re.test(tail[i] ?? ''));
    });
}

export function createAccessPolicy(rules: AccessRules): AccessPolicy {
  const allowSchema = matcher(rules.allowSchemas, 1);
  const denySchema = matcher(rules.denySchemas, 1);
  const allowTable = matcher(rules.allowTables, 2);
  const denyTable = matcher(rules.denyTables, 2);
  const denyColumn = matcher(rules.denyColumns, 3);
  const maskColumn = matcher(rules.maskColumns, 3);
  const allowFunction = matcher(rules.allowFunctions ?? [], 2);
  const schemaVisible = (schema: string): boolean => {
    if (denySchema([schema])) return false;
    if (rules.allowSchemas.length === 0 || SYSTEM_SCHEMAS.has(schema)) return true;
    return allowSchema([schema]);
  };
  const tableVisible = (schema: string, table: string): boolean => {
    if (!schemaVisible(schema)) return false;
    if (denyTable([schema, table])) return false;
    if (rules.allowTables.length === 0 || SYSTEM_SCHEMAS.has(schema)) return true;
    return allowTable([schema, table]);
  };
  return {
    // allowFunctions and allowMaskedPredicates only loosen rules: alone they are no policy.
    active: [
      rules.allowSchemas,
      rules.denySchemas,
      rules.allowTables,
      rules.denyTables,
      rules.denyColumns,
      rules.maskColumns,
    ].some((list) => list.length > 0),
    hasColumnRules: rules.denyColumns.length > 0 || rules.maskColumns.length > 0,
    schemaVisible,
    tableVisible,
    columnVisible: (schema, table, column) =>
      tableVisible(schema, table) && !denyColumn([schema, table, column]),
    columnMasked: (schema, table, column) => maskColumn([schema, table, column]),
    functionAllowed: (schema, name) => allowFunction([schema, name]),
    allowMaskedPredicates: rules.allowMaskedPredicates === true,
  };
}
