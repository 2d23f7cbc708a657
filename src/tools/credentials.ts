// Credentials the catalog holds, which no tool may hand to a model whatever role pgmcp connects
// as and whatever the access policy says: password hashes, user-mapping options (FDW passwords),
// subscription connection strings. They are columns the policy treats as denied, always; and,
// as a backstop for paths no analysis sees (a plpgsql function that returns a hash), values
// shaped like a credential are withheld from every answer.

export interface SecretColumn {
  schema: string;
  table: string;
  column: string;
  /** What the column holds, for the refusal. */
  holds: string;
}

const PASSWORD_HASH = 'role password hashes';
const MAPPING = 'user-mapping options (foreign-server user names and passwords)';
const CONNINFO = 'connection strings (with passwords)';
const SAMPLES =
  'sample values of every column (password hashes included, once pg_authid is ANALYZEd)';

/** Every column of the catalog known to hold credentials, by the relation it is read from. */
const SECRET_COLUMNS: readonly SecretColumn[] = [
  { schema: 'pg_catalog', table: 'pg_authid', column: 'rolpassword', holds: PASSWORD_HASH },
  { schema: 'pg_catalog', table: 'pg_shadow', column: 'passwd', holds: PASSWORD_HASH },
  { schema: 'pg_catalog', table: 'pg_user_mapping', column: 'umoptions', holds: MAPPING },
  { schema: 'pg_catalog', table: 'pg_user_mappings', column: 'umoptions', holds: MAPPING },
  { schema: 'information_schema', table: '_pg_user_mappings', column: 'umoptions', holds: MAPPING },
  {
    schema: 'information_schema',
    table: 'user_mapping_options',
    column: 'option_value',
    holds: MAPPING,
  },
  { schema: 'pg_catalog', table: 'pg_subscription', column: 'subconninfo', holds: CONNINFO },
  { schema: 'pg_catalog', table: 'pg_stat_wal_receiver', column: 'conninfo', holds: CONNINFO },
  ...[1, 2, 3, 4, 5].map((n) => ({
    schema: 'pg_catalog',
    table: 'pg_statistic',
    column: `stavalues${n}`,
    holds: SAMPLES,
  })),
  ...['stxdndistinct', 'stxddependencies', 'stxdmcv', 'stxdexpr'].map((column) => ({
    schema: 'pg_catalog',
    table: 'pg_statistic_ext_data',
    column,
    holds: SAMPLES,
  })),
];

const byColumn = new Map(SECRET_COLUMNS.map((c) => [`${c.schema}.${c.table}.${c.column}`, c]));

/** Relations holding a secret column (a whole-row value or `*` of them carries it). */
const SECRET_RELATIONS: ReadonlySet<string> = new Set(
  SECRET_COLUMNS.map((c) => `${c.schema}.${c.table}`),
);

/** Their bare names: a statement that names none of them cannot read one directly. */
export const SECRET_RELATION_NAMES: ReadonlySet<string> = new Set(
  SECRET_COLUMNS.map((c) => c.table),
);

export function secretColumn(schema: string, table: string, column: string): SecretColumn | null {
  return byColumn.get(`${schema}.${table}.${column}`) ?? null;
}

export function isSecretRelation(schema: string, table: string): boolean {
  return SECRET_RELATIONS.has(`${schema}.${table}`);
}

// The shapes themselves live in core, where the catalog can use them too.
export { looksLikeCredential, WITHHELD } from '../core/credential-shape.js';
