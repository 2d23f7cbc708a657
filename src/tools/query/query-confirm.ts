// query_database, stage "confirm": a write runs only once confirmed, by the user through
// elicitation where the client supports it, else by calling again with the nonce of a preview.
// No connection is held here: the user may take a while to answer.
import type { ToolResult } from '../../core/content.js';
import type { CallContext } from '../../core/specs.js';
import type { Estimate } from './query-plan.js';
import type { WriteConfirmations } from './write-confirmation.js';

const NOTHING_RUN = {
  columns: [],
  rows: [],
  rowCount: 0,
  truncated: false,
  nextOffset: null,
};

/**
 * For a write that came without a nonce: the preview (or the user's refusal) to answer with,
 * or null when the user confirmed it and it may run now.
 */
export async function confirmWrite(
  ctx: CallContext,
  confirmations: WriteConfirmations,
  query: string,
  params: unknown[],
  explained: Estimate | null,
): Promise<ToolResult | null> {
  // null, not 0, when the planner could not estimate it (DDL): 0 would read as "touches nothing".
  const estimatedRows = explained ? Math.round(explained.written) : null;
  const summary = `This statement writes to the database${estimatedRows !== null ? ` (the planner estimates it writes ${estimatedRows} row${estimatedRows === 1 ? '' : 's'})` : ''}.`;
  if (ctx.clientSupports('elicitation')) {
    const { confirm } = await ctx.requestInput({
      confirm: {
        method: 'elicitation/create',
        params: {
          message: `${summary}\n\n${query}\n\nRun it?`,
          requestedSchema: {
            type: 'object',
            properties: { run: { type: 'boolean', title: 'Run this write', default: false } },
            required: ['run'],
          },
        },
      },
    });
    const answer = confirm as { action?: string; content?: { run?: unknown } };
    if (answer.action === 'accept' && answer.content?.run === true) return null;
    return {
      content: [{ type: 'text', text: `${summary} Not run: the user did not confirm it.` }],
      structuredContent: { ...NOTHING_RUN, command: null },
    };
  }
  const issued = confirmations.issue(query, params);
  return {
    content: [
      {
        type: 'text',
        text: [
          `${summary} It has NOT run yet.`,
          explained ? `Plan:\n${JSON.stringify(explained.plan)}` : '',
          `To run exactly this statement with the same params, call query_database again with confirm: "${issued}" (valid for 5 minutes, once). Ask the user first.`,
        ]
          .filter(Boolean)
          .join('\n\n'),
      },
    ],
    structuredContent: {
      ...NOTHING_RUN,
      confirmation: {
        nonce: issued,
        estimatedRows,
        plan: explained?.plan ?? null,
      },
    },
  };
}
