// How pgmcp's calls read PostgreSQL's values (the pool's and the cursors' parsers).
import pg from 'pg';

// date, timestamp and timestamptz keep PostgreSQL's own text. pg's default makes a JS Date in
// the process's time zone, which moves a date or a timestamp without time zone (2024-03-01
// became 2024-02-29T15:00:00.000Z under TZ=Asia/Tokyo) and drops microseconds. Cursors take
// their parsers from their own config, so readers pass these too.
const DATE_TIME_OIDS = new Set([1082, 1114, 1184]);
// Their arrays, and numeric[], are read as arrays of PostgreSQL's text too: pg's defaults make
// Dates of the first (as above) and binary floats of numeric[] (1.10000000000000000001 became
// 1.1), while a numeric alone is already kept as text.
const TEXT_ARRAY_OIDS = new Set([1182, 1115, 1185, 1231]);
// text[]: its parser keeps each element's text (pg-types' TypeId lists no array types).
const TEXT_ARRAY = 1009 as Parameters<typeof pg.types.getTypeParser>[0];
export const PG_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format === 'binary') return pg.types.getTypeParser(oid, format);
    if (DATE_TIME_OIDS.has(oid)) return (value: string) => value;
    if (TEXT_ARRAY_OIDS.has(oid)) return pg.types.getTypeParser(TEXT_ARRAY, 'text');
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig['getTypeParser'],
};
