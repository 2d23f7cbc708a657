// The built-in tools, resources and prompts. Everything here sees the database through the
// access policy; only query_database may write, and only where the database allows writes.
import type { Catalog } from '../../catalog/index.js';
import type { ToolSpec } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import type { EmbeddingProviders } from '../../embeddings/index.js';
import type { AccessPolicy } from '../access-policy.js';
import { roleGate } from '../gate.js';
import type { Registry } from '../registry.js';
import type { ScreenLogger } from '../query/credential-screen.js';
import type { PolicyCache } from '../query/policy-cache.js';
import { createCountRowsTool } from './count-rows.js';
import { createExecuteExplainTool } from '../explain/execute-explain.js';
import { createGenerateEmbeddingTool } from './generate-embedding.js';
import { createGetSchemaInfoTool } from './get-schema-info.js';
import { createBuiltinPrompts } from '../prompts/prompts.js';
import { createDbaTools } from '../dba/index.js';
import {
  createQueryDatabaseTool,
  type QueryDatabaseOptions,
  type QueryLimits,
} from '../query/query-database.js';
import {
  createReadResourceTool,
  registryReader,
  type ResourceReader,
} from '../resources/read-resource.js';
import { createBuiltinResources } from '../resources/resources.js';
import { createSimilaritySearchTool } from '../search/similarity-search.js';

export interface BuiltinDeps {
  db: Database;
  /** Built with the same policy (createCatalog(db, policy, …)). */
  catalog: Catalog;
  policy: AccessPolicy;
  limits: QueryLimits;
  allowWrites: boolean;
  /** Functions refused in free SQL (sql-guard's DEFAULT_DENIED_FUNCTIONS plus configured ones). */
  deniedFunctions: readonly string[];
  /** Show other sessions' SQL text in pg://stat/activity. */
  showQueryText: boolean;
  /** How read_resource reads a URI; default: straight from the registry. */
  readResource?: ResourceReader;
  /** query_database's own settings; without them query_database is not registered. */
  queryDatabase?: Pick<QueryDatabaseOptions, 'maxPlanCost' | 'maxPlanRows' | 'signer' | 'nonces'>;
  /** tools.<name>.roles from the configuration: who may call each built-in tool. */
  toolRoles?: Readonly<Record<string, readonly string[]>>;
  /** tools.<name>.enabled from the configuration: false leaves the tool out. */
  toolEnabled?: Readonly<Record<string, boolean>>;
  /** Embedding providers; without them generate_embedding and similarity_search are not registered. */
  embeddings?: EmbeddingProviders;
  /** query_database's policy lookups kept between calls (invalidate it when the catalog reloads). */
  policyCache?: PolicyCache;
  /** The server log (what a lookup that failed fell back to). */
  logger?: ScreenLogger;
}

/**
 * The built-ins whose calls may run long, so a client may run them as tasks (docs/tools.md,
 * Tasks): the queries, EXPLAIN ANALYZE, the vector search and the index analyses.
 */
const TASK_TOOLS: ReadonlySet<string> = new Set([
  'query_database',
  'execute_explain',
  'similarity_search',
  'analyze_query_indexes',
  'analyze_workload_indexes',
]);

/** Registers the built-ins; returns the names of those tools.<name>.enabled left out. */
export function registerBuiltins(registry: Registry, deps: BuiltinDeps): string[] {
  const disabled: string[] = [];
  // tools.<name>.roles: only callers with one of the roles may use that tool.
  const add = (spec: ToolSpec): void => {
    if (deps.toolEnabled?.[spec.name] === false) {
      disabled.push(spec.name);
      return;
    }
    Object.assign(spec, roleGate(deps.toolRoles?.[spec.name] ?? []));
    if (TASK_TOOLS.has(spec.name)) spec.taskSupport = 'optional';
    registry.addTool(spec, { compileOnFirstCall: true });
  };
  const timeout = deps.limits.statementTimeoutMs;
  if (deps.queryDatabase) {
    add(
      createQueryDatabaseTool(deps.db, {
        ...deps.queryDatabase,
        limits: deps.limits,
        allowWrites: deps.allowWrites,
        deniedFunctions: deps.deniedFunctions,
        policy: deps.policy,
        policyCache: deps.policyCache ?? null,
        ...(deps.logger ? { logger: deps.logger } : {}),
      }),
    );
  }
  add(createGetSchemaInfoTool(deps.catalog));
  add(
    createCountRowsTool({
      db: deps.db,
      catalog: deps.catalog,
      statementTimeoutMs: timeout,
      deniedFunctions: deps.deniedFunctions,
      policy: deps.policy,
    }),
  );
  add(
    createExecuteExplainTool({
      db: deps.db,
      catalog: deps.catalog,
      policy: deps.policy,
      statementTimeoutMs: timeout,
      deniedFunctions: deps.deniedFunctions,
    }),
  );
  if (deps.embeddings) {
    add(createGenerateEmbeddingTool(deps.embeddings));
    add(
      createSimilaritySearchTool({
        db: deps.db,
        catalog: deps.catalog,
        embeddings: deps.embeddings,
        statementTimeoutMs: timeout,
        deniedFunctions: deps.deniedFunctions,
        policy: deps.policy,
      }),
    );
  }
  for (const tool of createDbaTools({
    db: deps.db,
    catalog: deps.catalog,
    policy: deps.policy,
    statementTimeoutMs: timeout,
    deniedFunctions: deps.deniedFunctions,
    writes: deps.queryDatabase
      ? {
          signer: deps.queryDatabase.signer,
          allowed: deps.allowWrites,
          ...(deps.queryDatabase.nonces ? { nonces: deps.queryDatabase.nonces } : {}),
        }
      : null,
  }))
    add(tool);
  add(createReadResourceTool(registry, deps.readResource ?? registryReader(registry)));

  const { resources, templates } = createBuiltinResources({
    db: deps.db,
    catalog: deps.catalog,
    statementTimeoutMs: timeout,
    allowWrites: deps.allowWrites,
    showQueryText: deps.showQueryText,
  });
  for (const resource of resources) registry.addResource(resource);
  for (const template of templates) registry.addTemplate(template);
  for (const prompt of createBuiltinPrompts({
    catalog: deps.catalog,
    maxRows: deps.limits.maxRows,
  }))
    registry.addPrompt(prompt);
  return disabled;
}

export { createCountRowsTool } from './count-rows.js';
export { createExecuteExplainTool } from '../explain/execute-explain.js';
export { createGetSchemaInfoTool } from './get-schema-info.js';
export { createGenerateEmbeddingTool } from './generate-embedding.js';
export { createSimilaritySearchTool } from '../search/similarity-search.js';
export { createQueryDatabaseTool, type QueryDatabaseOptions } from '../query/query-database.js';
export { createPolicyCache, GENERATION_KEPT_SQL, type PolicyCache } from '../query/policy-cache.js';
export { createBuiltinPrompts } from '../prompts/prompts.js';
export {
  createReadResourceTool,
  registryReader,
  type ResourceReader,
} from '../resources/read-resource.js';
export { createBuiltinResources } from '../resources/resources.js';
export {
  AUTHENTICATE_USER,
  createAuthenticateUserTool,
  registerAuthenticateUser,
  type AuthenticateUserDeps,
  type LoginFunction,
  type LoginSession,
} from './authenticate-user.js';
