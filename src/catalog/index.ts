// Introspection of the database into typed descriptors, and the cache that serves them.
export { createCatalog, structureFingerprint } from './catalog.js';
export type { Catalog, CatalogChangeListener, CatalogOptions } from './catalog.js';
export { buildSnapshot, byText, EVERYTHING_VISIBLE, loadSnapshot, makeSnapshot } from './load.js';
export type { CatalogRows } from './load.js';
export type * from './types.js';
export { loadDetails } from './details.js';
export type { RelationDetails } from './details.js';
