export { configSchema, LOG_LEVELS, TRANSPORTS } from './schema.js';
export type { Config, LogLevel, Transport } from './schema.js';
export { loadConfig } from './load.js';
export type { LoadConfigInput } from './load.js';
export { parseHostPort } from './flags.js';
export type { ConfigFlags } from './flags.js';
export { ENV_VARIABLES } from './env.js';
export type { EnvVariable } from './env.js';
export { redactConfig, redactUrl } from './redact.js';
