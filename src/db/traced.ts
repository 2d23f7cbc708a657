// One round trip to PostgreSQL as a client span: the database, the operation of the trip's
// statement (its first keyword), its text only when telemetry.includeSql says so. With
// telemetry.sqlComment the statement goes out with a sqlcommenter comment naming this span, so
// a line of PostgreSQL's log (log_min_duration_statement, auto_explain) leads to the trace.
//
// The comment is added here, as the statement is sent: every decision about the statement (the
// SQL guard, the access policy, the plan check) was made on the text without it. It starts on a
// line of its own, so a caller's trailing `--` comment cannot swallow it, and holds only the
// span's hex ids (core/tracing.ts), so nothing in it can end it early.
import {
  inSpan,
  inTrace,
  sqlComment,
  sqlOperation,
  SpanKind,
  tracingSettings,
} from '../core/tracing.js';
import type pg from 'pg';
import type { PipelineResult, PipelineStep } from './pipeline.js';

export function roundTrip<R extends { rows: unknown[] } = PipelineResult>(
  database: string,
  step: PipelineStep,
  send: (sent: PipelineStep) => Promise<R>,
): Promise<R> {
  const settings = tracingSettings();
  // pgmcp's own work outside a request (a catalog reload) starts no trace of its own.
  if (!settings.on || !inTrace()) return send(step);
  const operation = sqlOperation(step.text);
  const attributes: Record<string, string> = {
    'db.system': 'postgresql',
    'db.system.name': 'postgresql',
    'db.name': database,
    'db.namespace': database,
  };
  if (operation) attributes['db.operation.name'] = operation;
  if (settings.includeSql) attributes['db.query.text'] = step.text;
  return inSpan(
    operation ? `${operation} ${database}` : database,
    attributes,
    async (span) => {
      const comment = sqlComment();
      const result = await send(comment ? { ...step, text: `${step.text}\n${comment}` } : step);
      span?.setAttribute('db.response.returned_rows', result.rows.length);
      return result;
    },
    { kind: SpanKind.CLIENT },
  );
}

/**
 * The connection a block of several statements (withTransaction) hands its work, each `query`
 * of text a round trip as above (its queryMode, rowMode and types kept). Cursors and other
 * submittables, named statements and callback calls pass as they are. With tracing off, the
 * client itself.
 */
export function tracedClient(client: pg.PoolClient, database: string): pg.PoolClient {
  if (!tracingSettings().on) return client;
  const query = (...args: unknown[]): unknown => {
    const [first, values] = args;
    const plain =
      args.length <= 2 &&
      typeof args.at(-1) !== 'function' &&
      (typeof first === 'string' ||
        (typeof first === 'object' &&
          first !== null &&
          typeof (first as { text?: unknown }).text === 'string' &&
          // A named statement's text must not change between calls (pg prepares it once).
          (first as { name?: unknown }).name === undefined &&
          typeof (first as { submit?: unknown }).submit !== 'function'));
    if (!plain) return (client.query as (...a: unknown[]) => unknown)(...args);
    const config =
      typeof first === 'string' ? { text: first } : (first as { text: string; values?: unknown[] });
    const given = (values as unknown[] | undefined) ?? config.values ?? [];
    return roundTrip(database, { text: config.text, values: given }, (sent) =>
      client.query({ ...config, text: sent.text, values: sent.values } as pg.QueryConfig),
    );
  };
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'query') return query;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
