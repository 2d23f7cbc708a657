// Type names for result columns. Common built-in OIDs are known; others are looked up
// once in pg_type (on the call's own connection) and cached.
import type { Lookup } from '../../db/call-session.js';

const BUILTIN: Record<number, string> = {
  16: 'boolean',
  17: 'bytea',
  18: 'char',
  19: 'name',
  20: 'bigint',
  21: 'smallint',
  23: 'integer',
  25: 'text',
  26: 'oid',
  114: 'json',
  142: 'xml',
  700: 'real',
  701: 'double precision',
  790: 'money',
  869: 'inet',
  650: 'cidr',
  1042: 'character',
  1043: 'character varying',
  1082: 'date',
  1083: 'time without time zone',
  1114: 'timestamp without time zone',
  1184: 'timestamp with time zone',
  1186: 'interval',
  1266: 'time with time zone',
  1700: 'numeric',
  2950: 'uuid',
  3802: 'jsonb',
  1000: 'boolean[]',
  1005: 'smallint[]',
  1007: 'integer[]',
  1016: 'bigint[]',
  1009: 'text[]',
  1015: 'character varying[]',
  1021: 'real[]',
  1022: 'double precision[]',
  1231: 'numeric[]',
  2951: 'uuid[]',
  3807: 'jsonb[]',
  199: 'json[]',
  1115: 'timestamp without time zone[]',
  1185: 'timestamp with time zone[]',
  1182: 'date[]',
  2249: 'record',
  2278: 'void',
  3614: 'tsvector',
  3615: 'tsquery',
};

const cache = new Map<number, string>();

export async function typeNames(
  client: Lookup,
  oids: readonly number[],
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  const unknown: number[] = [];
  for (const oid of oids) {
    const name = BUILTIN[oid] ?? cache.get(oid);
    if (name) out.set(oid, name);
    else if (!unknown.includes(oid)) unknown.push(oid);
  }
  if (unknown.length > 0) {
    const result = await client.query<{ oid: number; name: string }>(
      'SELECT oid::int AS oid, format_type(oid, NULL) AS name FROM pg_catalog.pg_type WHERE oid = ANY($1::oid[])',
      [unknown],
    );
    for (const row of result.rows) {
      cache.set(row.oid, row.name);
      out.set(row.oid, row.name);
    }
  }
  return out;
}
