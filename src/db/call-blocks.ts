// What a call's transaction block is made of: the values it runs under, and the statements that
// open and close it.
import type { Principal } from '../core/principal.js';
import { callRole } from './call-role.js';
import type { PipelineStep } from './pipeline.js';
import type { CallSettings } from './session-settings.js';

interface Block {
  readOnly: boolean;
  timeoutMs: number;
  principal: Principal;
}

/** The values a call runs under (sent only where they differ from the connection's base). */
export const callSettings = (
  tx: Block,
  configuredRole: string | null | undefined,
): CallSettings => ({
  statementTimeout: `${tx.timeoutMs}ms`,
  idleTimeout: `${tx.timeoutMs + 5_000}ms`,
  userId: tx.principal.userId ?? '',
  tenantId: tx.principal.tenantId ?? '',
  claims: JSON.stringify(tx.principal.claims),
  role: callRole(tx.principal.pgRole, configuredRole),
});

/**
 * BEGIN (read-only or not) and the call's settings. A read-only block always ends in
 * ROLLBACK: it wrote nothing, and the rollback undoes whatever a caller's function did to
 * the session (set_config, session-level or not), which keeps the connection's base true.
 */
export const opening = (tx: Block, settings: PipelineStep | null): PipelineStep[] => [
  { text: tx.readOnly ? 'BEGIN READ ONLY' : 'BEGIN READ WRITE', values: [] },
  ...(settings ? [settings] : []),
];

export const closing = (tx: Block): PipelineStep => ({
  text: tx.readOnly ? 'ROLLBACK' : 'COMMIT',
  values: [],
});
