export * from './content.js';
export * from './errors.js';
export * from './json-schema.js';
export * from './principal.js';
export * from './specs.js';
export * from './sql.js';
