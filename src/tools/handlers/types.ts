// One row of mcp.handler as the loader reads it, and the options every handler call runs with.
import type { JsonSchema } from '../../core/json-schema.js';
import type { PromptArgumentSpec } from '../../core/specs.js';
import type { ExchangeLog } from './exchange-log.js';

export interface RegistryHandlerOptions {
  statementTimeoutMs: number;
  /** Read-write transactions only when the database is configured to allow writes. */
  allowWrites: boolean;
  exchangeLog?: ExchangeLog;
  /**
   * Where handlers come from (registry.mode): pgmcp's mcp registry, an existing pgmi
   * deployment's api.mcp_handle_request, or auto (pgmi's when it is there). Default auto.
   */
  mode?: 'auto' | 'mcp' | 'pgmi';
}

export interface HandlerRow {
  id: string;
  type: 'tool' | 'resource' | 'prompt';
  name: string;
  description: string | null;
  input_schema: JsonSchema | null;
  output_schema: JsonSchema | null;
  uri_template: string | null;
  mime_type: string | null;
  arguments: PromptArgumentSpec[] | null;
  tags: string[];
  requires_auth: boolean;
  function_name: string;
}
