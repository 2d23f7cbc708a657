// The log levels pino knows, in a module of their own: the command line offers them as choices
// without loading the configuration's schema (and zod) for commands that never read one.
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
