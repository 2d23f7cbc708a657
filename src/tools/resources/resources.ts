// The pg:// resources: server facts and statistics (server-resources.ts), and two templates
// that describe a schema or a table from the catalog (catalog-resources.ts).
import type { Catalog } from '../../catalog/index.js';
import type { ResourceSpec, ResourceTemplateSpec } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { createCatalogTemplates } from './catalog-resources.js';
import { createServerResources } from './server-resources.js';

export interface ResourceDeps {
  db: Database;
  catalog: Catalog;
  statementTimeoutMs: number;
  allowWrites: boolean;
  /** Include other sessions' SQL text in pg://stat/activity (it may hold secrets). */
  showQueryText?: boolean;
}

export function createBuiltinResources(deps: ResourceDeps): {
  resources: ResourceSpec[];
  templates: ResourceTemplateSpec[];
} {
  return { resources: createServerResources(deps), templates: createCatalogTemplates(deps) };
}
