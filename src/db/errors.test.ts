import { describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../core/errors.js';
import {
  connectFailure,
  connectionDetail,
  connectionReason,
  describeDbError,
  fromPgError,
  isConnectionError,
  isPgError,
  lostConnection,
} from './errors.js';

/** What a driver throws for a server error: an Error with the protocol's fields as properties. */
function pgError(code: string, message: string, fields: Record<string, string> = {}): Error {
  return Object.assign(new Error(message), { code, ...fields });
}

/** What a socket failure looks like: an Error with a Node errno code. */
function socketError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('fromPgError classifies by SQLSTATE', () => {
  // The server's state, not the statement: pgmcp's own words, never the server's text.
  it.each([
    ['08000', ErrorCodes.DB_UNAVAILABLE, 'unavailable', /^The connection to the database failed/],
    ['08001', ErrorCodes.DB_UNAVAILABLE, 'unavailable', /^The connection to the database failed/],
    ['08006', ErrorCodes.DB_UNAVAILABLE, 'unavailable', /^The connection to the database failed/],
    ['57P01', ErrorCodes.DB_UNAVAILABLE, 'unavailable', /shutting down, or an administrator/],
    ['57P02', ErrorCodes.DB_UNAVAILABLE, 'unavailable', /restarting after another/],
    ['57P03', ErrorCodes.DB_UNAVAILABLE, 'unavailable', /starting up or shutting down/],
    ['57P04', ErrorCodes.DB_UNAVAILABLE, 'unavailable', /database was dropped/],
    ['57P05', ErrorCodes.DB_UNAVAILABLE, 'unavailable', /idle connection/],
    ['53000', ErrorCodes.DB_OUT_OF_RESOURCES, 'unavailable', /out of resources/],
    ['53100', ErrorCodes.DB_OUT_OF_RESOURCES, 'unavailable', /out of disk space/],
    ['53200', ErrorCodes.DB_OUT_OF_RESOURCES, 'unavailable', /out of memory/],
    ['53300', ErrorCodes.DB_OUT_OF_RESOURCES, 'unavailable', /out of connection slots/],
    ['53400', ErrorCodes.DB_OUT_OF_RESOURCES, 'unavailable', /configured limit/],
    ['40001', ErrorCodes.DB_CONFLICT, 'conflict', /fail to serialize/],
    ['40P01', ErrorCodes.DB_CONFLICT, 'conflict', /deadlocked/],
  ])('%s is %s (%s) in its own words', (sqlstate, code, category, words) => {
    const raw = `server text ${sqlstate}`;
    const error = fromPgError(
      pgError(sqlstate, raw, { detail: 'Process 1: SELECT secret_of_another_session()' }),
    );
    expect(error).toMatchObject({ code, category, details: { sqlstate } });
    expect(error.message).toMatch(words);
    expect(error.message).not.toContain(raw);
    expect(JSON.stringify(error.details)).not.toContain('secret_of_another_session');
    expect(typeof error.details?.['reason']).toBe('string');
  });

  it('a conflict says whether the statement ran again', () => {
    const deadlock = pgError('40P01', 'deadlock detected');
    expect(fromPgError(deadlock, { readOnly: false }).message).toMatch(
      /Nothing of it was committed/,
    );
    expect(fromPgError(deadlock, { readOnly: true, retried: true }).message).toMatch(
      /run again once and met the same conflict/,
    );
  });

  it('25006: a write in a read-only call is refused as such; in a read-write call the server is read-only', () => {
    const raw = pgError('25006', 'cannot execute INSERT in a read-only transaction');
    expect(fromPgError(raw, { readOnly: true })).toMatchObject({
      code: ErrorCodes.WRITE_NOT_ALLOWED,
      category: 'input',
      details: { sqlstate: '25006' },
    });
    const standby = fromPgError(raw, { readOnly: false });
    expect(standby).toMatchObject({ code: ErrorCodes.DB_READ_ONLY, category: 'unavailable' });
    expect(standby.message).toMatch(/accepts only reads right now/);
  });

  it('42501 is forbidden, PGMCP211: what was denied and what to do', () => {
    const error = fromPgError(pgError('42501', 'permission denied for table t'));
    expect(error).toMatchObject({
      code: ErrorCodes.DB_PERMISSION_DENIED,
      category: 'forbidden',
      details: { sqlstate: '42501' },
    });
    expect(error.message).toMatch(/^permission denied for table t\. .*GRANT/);
  });

  it.each([
    ['28000', 'invalid authorization'],
    ['28P01', 'password authentication failed'],
  ])('%s (%s) is unavailable, PGMCP201', (sqlstate, message) => {
    const error = fromPgError(pgError(sqlstate, message));
    expect(error).toMatchObject({
      code: ErrorCodes.DB_UNAVAILABLE,
      category: 'unavailable',
      message,
      details: { sqlstate },
    });
  });

  it.each([
    ['23505', 'conflict'],
    ['23503', 'conflict'],
    ['23502', 'conflict'],
    ['42601', 'database'],
    ['42P01', 'database'],
    ['22012', 'database'],
    ['25006', 'database'],
    ['P0001', 'database'],
    ['XX000', 'database'],
  ])('%s is %s, PGMCP202', (sqlstate, category) => {
    const error = fromPgError(pgError(sqlstate, `failure ${sqlstate}`));
    expect(error).toMatchObject({
      code: ErrorCodes.DB_QUERY_FAILED,
      category,
      message: `failure ${sqlstate}`,
      details: { sqlstate },
    });
  });

  it('57014 is a timeout naming the limit, PGMCP203', () => {
    const error = fromPgError(pgError('57014', 'canceling statement due to statement timeout'), {
      timeoutMs: 1500,
    });
    expect(error).toMatchObject({
      code: ErrorCodes.DB_TIMEOUT,
      category: 'timeout',
      details: { sqlstate: '57014' },
    });
    expect(error.message).toMatch(/^The query timed out \(limit 1500 ms\)\./);
  });

  it('57014 without a known limit says only that it timed out', () => {
    const error = fromPgError(pgError('57014', 'canceling statement due to statement timeout'));
    expect(error.code).toBe(ErrorCodes.DB_TIMEOUT);
    expect(error.message).toMatch(/^The query timed out\. /);
    expect(error.message).not.toContain('limit');
  });

  it('57014 from elsewhere (an administrator, the server) is a cancel the caller did not ask for', () => {
    const error = fromPgError(pgError('57014', 'canceling statement due to user request'), {
      timeoutMs: 1500,
    });
    expect(error).toMatchObject({
      code: ErrorCodes.DB_CANCELLED,
      category: 'unavailable',
      details: { sqlstate: '57014' },
    });
    expect(error.message).toMatch(/^The query was cancelled on the database server .*Try again\.$/);
  });

  it('57014 after a cancellation is a cancel, PGMCP204, whatever the limit', () => {
    const error = fromPgError(pgError('57014', 'canceling statement due to user request'), {
      cancelled: true,
      timeoutMs: 1500,
    });
    expect(error).toMatchObject({
      code: ErrorCodes.DB_CANCELLED,
      category: 'input',
      message: 'The query was cancelled.',
      details: { sqlstate: '57014' },
    });
  });
});

describe('a Bind refused for its number of values', () => {
  const bind = pgError(
    '08P01',
    'bind message supplies 0 parameters, but prepared statement "" requires 1',
    { severity: 'ERROR' },
  );
  it("is the statement's fault, on a connection that goes on", () => {
    expect(fromPgError(bind)).toMatchObject({
      code: ErrorCodes.DB_QUERY_FAILED,
      category: 'database',
    });
    expect(lostConnection(bind)).toBe(false);
  });
  // Older PgBouncer sends its own errors as ERROR 08P01, then closes the connection.
  it.each(['query_wait_timeout', 'server conn crashed?', 'no more connections allowed'])(
    "a pooler's ERROR 08P01 (%s) is still a lost connection",
    (message) => {
      const pooler = pgError('08P01', message, { severity: 'ERROR' });
      expect(fromPgError(pooler)).toMatchObject({ code: ErrorCodes.DB_UNAVAILABLE });
      expect(lostConnection(pooler)).toBe(true);
    },
  );
});

describe('fromPgError keeps the fields', () => {
  it('keeps every field PostgreSQL sent and the original as the cause', () => {
    const original = pgError('23505', 'duplicate key value violates unique constraint "t_pkey"', {
      detail: 'Key (id)=(1) already exists.',
      hint: 'Use another id.',
      position: '15',
      where: 'SQL statement "INSERT INTO t VALUES (1)"',
      schema: 'public',
      table: 't',
      column: 'id',
      constraint: 't_pkey',
    });
    const error = fromPgError(original);
    expect(error).toBeInstanceOf(AppError);
    expect(error.message).toBe(original.message);
    expect(error.cause).toBe(original);
    expect(error.details).toEqual({
      sqlstate: '23505',
      detail: 'Key (id)=(1) already exists.',
      hint: 'Use another id.',
      position: '15',
      where: 'SQL statement "INSERT INTO t VALUES (1)"',
      schema: 'public',
      table: 't',
      column: 'id',
      constraint: 't_pkey',
    });
  });

  it('adds no key for a field that was not sent', () => {
    const error = fromPgError(
      pgError('42P01', 'relation "nope" does not exist', { position: '8' }),
    );
    expect(error.details).toEqual({ sqlstate: '42P01', position: '8' });
  });

  it('keeps the fields on timeouts and cancellations too', () => {
    const original = pgError('57014', 'canceling statement', { where: 'PL/pgSQL function f()' });
    expect(fromPgError(original).details).toEqual({
      sqlstate: '57014',
      where: 'PL/pgSQL function f()',
    });
    expect(fromPgError(original, { cancelled: true }).details).toEqual({
      sqlstate: '57014',
      where: 'PL/pgSQL function f()',
    });
  });

  it('returns an AppError as it is', () => {
    const error = new AppError(ErrorCodes.TOOL_INPUT_INVALID, 'bad input', { category: 'input' });
    expect(fromPgError(error)).toBe(error);
  });
});

describe('fromPgError without a SQLSTATE', () => {
  it.each([
    ['ECONNREFUSED', 'connection refused'],
    ['ECONNRESET', 'connection reset'],
    ['ENOTFOUND', 'host not found'],
    ['ETIMEDOUT', 'connection timed out'],
    ['ENOENT', 'socket or file not found'],
    ['EHOSTUNREACH', 'host unreachable'],
    ['EPIPE', 'connection closed'], // five capitals, like a SQLSTATE
  ])('a socket error %s is unavailable, saying why without the address', (code, meaning) => {
    const original = socketError(code, `connect ${code} db.internal:5432`);
    const error = fromPgError(original);
    const reason = `${meaning} (${code})`;
    expect(error).toMatchObject({
      code: ErrorCodes.DB_UNAVAILABLE,
      category: 'unavailable',
      message: `The database is unavailable; the connection failed: ${reason}. Try again shortly.`,
      details: { reason },
    });
    expect(error.message).not.toContain('db.internal');
    expect(error.cause).toBe(original);
  });

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error and is not queryable',
    'sorry, too many connections',
  ])('a driver message "%s" is unavailable', (message) => {
    expect(fromPgError(new Error(message))).toMatchObject({
      code: ErrorCodes.DB_UNAVAILABLE,
      category: 'unavailable',
    });
  });

  it('anything else is internal, PGMCP900, and its text stays in the cause', () => {
    const original = new TypeError('Cannot read properties of undefined');
    const error = fromPgError(original);
    expect(error).toMatchObject({
      code: ErrorCodes.INTERNAL,
      category: 'internal',
      message: 'Internal error while talking to the database.',
    });
    expect(error.cause).toBe(original);
    expect(fromPgError('a string').code).toBe(ErrorCodes.INTERNAL);
    expect(fromPgError(undefined).code).toBe(ErrorCodes.INTERNAL);
  });
});

describe('secrets stay out of the messages', () => {
  const SECRET = 'hunter2-s3cret';
  const url = `postgres://app:${SECRET}@db.internal:5432/app`;

  it('a connection failure whose text holds the URL never shows its password', () => {
    for (const original of [
      socketError('ECONNREFUSED', `could not reach ${url}`),
      new Error(`Connection terminated unexpectedly (${url})`),
    ]) {
      const error = fromPgError(original);
      expect(error.message).not.toContain(SECRET);
      expect(describeDbError(error)).not.toContain(SECRET);
      expect(JSON.stringify(error.details ?? {})).not.toContain(SECRET);
    }
  });

  it('an unexpected failure whose text holds the URL answers with our own message', () => {
    const error = fromPgError(new Error(`pool misconfigured: ${url}`));
    expect(error.message).not.toContain(SECRET);
    expect(describeDbError(error)).not.toContain(SECRET);
  });

  it('a timeout or cancel does not repeat the server text', () => {
    const original = pgError('57014', `canceling statement (${SECRET})`);
    expect(fromPgError(original, { timeoutMs: 10 }).message).not.toContain(SECRET);
    expect(fromPgError(original, { cancelled: true }).message).not.toContain(SECRET);
  });
});

describe('isPgError and isConnectionError', () => {
  it('recognises a SQLSTATE by shape, not by class', () => {
    expect(isPgError(pgError('42601', 'syntax error'))).toBe(true);
    expect(isPgError(pgError('P0001', 'raised'))).toBe(true);
    expect(isPgError(socketError('ECONNREFUSED', 'refused'))).toBe(false);
    expect(isPgError(pgError('4260', 'too short'))).toBe(false);
    expect(isPgError(pgError('42p01', 'lower case'))).toBe(false);
    expect(isPgError({ code: '42601', message: 'not an Error' })).toBe(false);
    expect(isPgError(new Error('no code'))).toBe(false);
  });

  it('recognises connection failures by errno code or driver message', () => {
    expect(isConnectionError(socketError('ECONNRESET', 'reset'))).toBe(true);
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionError(new Error('division by zero'))).toBe(false);
    expect(isConnectionError({ code: 'ECONNRESET', message: 'not an Error' })).toBe(false);
  });

  it('recognises SSL and certificate failures, but not a server error that mentions them', () => {
    expect(isConnectionError(new Error('The server does not support SSL connections'))).toBe(true);
    expect(isConnectionError(socketError('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed'))).toBe(true);
    expect(isConnectionError(socketError('ERR_TLS_CERT_ALTNAME_INVALID', 'altnames'))).toBe(true);
    expect(isConnectionError(new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: no password'))).toBe(
      true,
    );
    expect(isConnectionError(pgError('42P01', 'relation "certificate" does not exist'))).toBe(
      false,
    );
  });
});

describe('connectFailure: anything that stops a connection opening is unavailable', () => {
  const SECRET = 'hunter2-s3cret';

  it.each([
    [
      new Error('The server does not support SSL connections'),
      'The server does not support SSL connections',
    ],
    [
      socketError('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'),
      'self-signed certificate',
    ],
    [socketError('CERT_HAS_EXPIRED', 'certificate has expired'), 'certificate has expired'],
    [
      socketError('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.5:5432'),
      'connection refused (ECONNREFUSED)',
    ],
    [
      new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'),
      'SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string',
    ],
    [new Error('something nobody foresaw'), 'something nobody foresaw'],
  ])('%s', (original, reason) => {
    const error = connectFailure(original);
    expect(error).toMatchObject({
      code: ErrorCodes.DB_UNAVAILABLE,
      category: 'unavailable',
      message: `The database is unavailable; pgmcp cannot connect to it: ${reason}.`,
      details: { reason },
    });
    expect(error.cause).toBe(original);
  });

  it('a login or database name the server refused keeps its SQLSTATE', () => {
    for (const [sqlstate, message] of [
      ['28P01', 'password authentication failed for user "app"'],
      ['3D000', 'database "nope" does not exist'],
    ] as const) {
      expect(connectFailure(pgError(sqlstate, message))).toMatchObject({
        code: ErrorCodes.DB_UNAVAILABLE,
        category: 'unavailable',
        message: `The database is unavailable; pgmcp cannot connect to it: ${message}.`,
        details: { reason: message, sqlstate },
      });
    }
  });

  it("the server starting up or out of connection slots: its state in pgmcp's words, with the SQLSTATE", () => {
    for (const [sqlstate, raw, reason] of [
      ['57P03', 'the database system is starting up', 'the server is starting up or shutting down'],
      ['53300', 'sorry, too many clients already', 'the server is out of connection slots'],
    ] as const) {
      const error = connectFailure(pgError(sqlstate, raw));
      expect(error).toMatchObject({
        code: ErrorCodes.DB_UNAVAILABLE,
        category: 'unavailable',
        details: { sqlstate },
      });
      expect(error.message).toContain(`cannot connect to it: ${reason}`);
      expect(error.message).not.toContain(raw);
    }
  });

  it('every address of a host refused: the reason of an AggregateError', () => {
    const all = Object.assign(
      new AggregateError([socketError('ECONNREFUSED', 'connect ECONNREFUSED ::1:5432')], ''),
      { code: 'ECONNREFUSED' },
    );
    expect(connectFailure(all).message).toContain('connection refused (ECONNREFUSED)');
    expect(connectionDetail(connectFailure(all))).toBe('connect ECONNREFUSED ::1:5432');
  });

  it('never a password, in the message, the details or what the CLI prints', () => {
    const url = `postgres://app:${SECRET}@db.internal:5432/app`;
    const error = connectFailure(new Error(`could not open ${url}\nsecond line`));
    expect(error.message).toBe(
      'The database is unavailable; pgmcp cannot connect to it: could not open postgres://app:****@db.internal:5432/app.',
    );
    expect(JSON.stringify(error.details)).not.toContain(SECRET);
    expect(connectionDetail(error)).not.toContain(SECRET);
  });

  it('an AppError passes through, and the CLI sees the driver words with the address', () => {
    const own = new AppError(ErrorCodes.EMBEDDED_LOCKED, 'locked', { category: 'unavailable' });
    expect(connectFailure(own)).toBe(own);
    const refused = connectFailure(
      socketError('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.5:5432'),
    );
    expect(connectionDetail(refused)).toBe('connect ECONNREFUSED 10.0.0.5:5432');
    expect(connectionReason(socketError('ENOTFOUND', 'getaddrinfo ENOTFOUND db'))).toBe(
      'host not found (ENOTFOUND)',
    );
  });
});

describe('describeDbError', () => {
  const failed = (details: Record<string, unknown>, message = 'syntax error at or near "form"') =>
    new AppError(ErrorCodes.DB_QUERY_FAILED, message, { category: 'database', details });

  it('gives SQLSTATE, message, detail and hint, one per line', () => {
    expect(
      describeDbError(
        failed(
          { sqlstate: '23505', detail: 'Key (id)=(1) already exists.', hint: 'Pick another.' },
          'dup',
        ),
      ),
    ).toBe('ERROR 23505: dup\nDETAIL: Key (id)=(1) already exists.\nHINT: Pick another.');
  });

  it('marks the position under the line of the query that holds it', () => {
    const query = 'select *\nform t\nwhere true';
    // Position is 1-based over the whole text: the "f" of "form" is character 10.
    expect(describeDbError(failed({ sqlstate: '42601', position: '10' }), query)).toBe(
      ['ERROR 42601: syntax error at or near "form"', 'LINE: form t', '      ^'].join('\n'),
    );
    expect(describeDbError(failed({ sqlstate: '42601', position: '13' }), query)).toBe(
      ['ERROR 42601: syntax error at or near "form"', 'LINE: form t', '         ^'].join('\n'),
    );
  });

  it('leaves the position out without a query or when it falls outside it', () => {
    const error = failed({ sqlstate: '42601', position: '99' });
    expect(describeDbError(error, 'select 1')).toBe('ERROR 42601: syntax error at or near "form"');
    expect(describeDbError(failed({ sqlstate: '42601', position: '3' }))).toBe(
      'ERROR 42601: syntax error at or near "form"',
    );
    expect(describeDbError(failed({ sqlstate: '42601', position: '0' }), 'select 1')).toBe(
      'ERROR 42601: syntax error at or near "form"',
    );
  });

  it('is the bare message for an error without a SQLSTATE', () => {
    expect(
      describeDbError(new AppError(ErrorCodes.INTERNAL, 'oops', { category: 'internal' })),
    ).toBe('oops');
  });
});
