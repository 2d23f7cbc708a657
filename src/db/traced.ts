// One round trip to PostgreSQL as a client span: the database, the operation of the trip's
// statement (its first keyword), its text only when telemetry.includeSql says so. With
// telemetry.sqlComment the statement goes out with a sqlcommenter comment naming this span, so
// a line of PostgreSQL's log (log_min_duration_statement, auto_explain) leads to the trace.
//
// The comment is added here, as the statement is sent: every decision about the statement (the
// SQL guard, the access policy, the plan check) was made on the text without it. It starts on a
// line of its own, so a caller's trailing `--` comment cannot swallow it, and holds only the
// span's hex ids (core/tracing.ts), so nothing in it can end it early.
import { sqlComment, sqlOperation, tracingSettings, inSpan, SpanKind } from '../core/tracing.js';
import type { PipelineResult, PipelineStep } from './pipeline.js';

export function roundTrip(
  database: string,
  step: PipelineStep,
  send: (sent: PipelineStep) => Promise<PipelineResult>,
): Promise<PipelineResult> {
  const settings = tracingSettings();
  if (!settings.on) return send(step);
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
