// Tools, resources and prompts from the SQL handler registry (schema mcp, installed by
// `pgmcp install`): each row of mcp.handler becomes a spec whose calls run the generated
// function mcp.handler_<type>_<name>(mcp.request) in one transaction with the caller's identity.
export { addRegistryHandlers, loadRegistryHandlers, type LoadedHandlers } from './loader.js';
export type { HandlerRow, RegistryHandlerOptions } from './types.js';
export { createExchangeLog, type ExchangeLog, type ExchangeRecord } from './exchange-log.js';
export { applyRegistryScripts, installedVersion, pgRunner, registryScripts } from './install.js';
