import pg from 'pg';

// date, timestamp and timestamptz keep PostgreSQL's own text. pg's default makes a JS Date in
// the process's time zone, which moves a date or a timestamp without time zone (2024-03-01
// became 2024-02-29T15:00:00.000Z under TZ=Asia/Tokyo) and drops microseconds. Cursors take
// their parsers from their own config, so readers pass these too.
const DATE_TIME_OIDS = new Set([1082, 1114, 1184]);
export const PG_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    DATE_TIME_OIDS.has(oid) && format !== 'binary'
      ? (value: string) => value
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};
