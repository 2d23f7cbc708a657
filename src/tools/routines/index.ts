// Tools that live in the database, part 1: routines opted in with an `@mcp` comment
// (docs/sql-tools.md, "Annotated routines"). Loaded once at start by the composition root.
import {
  loadRoutineCatalog,
  type RoutineCatalog,
  type RoutineDescriptor,
} from '../../catalog/routines.js';
import { ANONYMOUS } from '../../core/principal.js';
import type { ToolSpec } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { callRoutine, isAuthorized, type CallDeps } from './call.js';
import {
  deriveRoutine,
  qualifiedName,
  RoutineNotSupported,
  toolNameOf,
  type DerivedRoutine,
} from './derive.js';

export { parseRoutineComment } from '../../catalog/routines.js';
export type { DerivedRoutine } from './derive.js';

export interface RoutineToolOptions {
  /** false: serve no routine tools at all (database.routineTools). Default true. */
  enabled?: boolean;
  /** Schemas to look in; default: every non-system schema. */
  schemas?: readonly string[];
  /** Expose only routines with at least one of these @tags (default: all). */
  tags?: readonly string[];
  /** database.allowWrites: VOLATILE routines and procedures run read-write only when true. */
  allowWrites: boolean;
  statementTimeoutMs: number;
  /** Row cap of set-returning routines (database.maxRows; default 1000). */
  maxRows?: number;
  /** Byte cap of a routine's result (database.maxResultBytes; default 1 MiB). */
  maxResultBytes?: number;
  /** Startup warnings: skipped routines, overloads, SECURITY DEFINER without search_path. */
  warn?: (message: string) => void;
}

/** A tool made from a routine; `derived` keeps the descriptor it came from. */
export interface RoutineToolSpec extends ToolSpec {
  readonly derived: DerivedRoutine;
  /** Where the tool comes from, for messages: `function public.order_total(integer)`. */
  readonly source: string;
}

/** `function schema.name(argtype, …)`: the routine as PostgreSQL identifies it (input types). */
export function routineSignature(r: RoutineDescriptor, types: RoutineCatalog['types']): string {
  const inputs = r.arguments
    .filter((a) => a.mode !== 'out' && a.mode !== 'table')
    .map((a) => types.get(a.typeOid)?.sql ?? `oid ${a.typeOid}`);
  return `${r.kind} ${qualifiedName(r)}(${inputs.join(', ')})`;
}

export interface RoutineTools {
  tools: RoutineToolSpec[];
  warnings: string[];
}

/** Turn a loaded routine catalog into tools (no database access). */
export function deriveRoutineTools(
  db: Database,
  catalog: RoutineCatalog,
  options: Omit<RoutineToolOptions, 'schemas' | 'warn'>,
): RoutineTools {
  const warnings: string[] = [];
  const byName = new Map<string, DerivedRoutine[]>();
  for (const routine of catalog.routines) {
    const where = `${routine.kind} ${qualifiedName(routine)} (oid ${routine.oid})`;
    if (options.tags && options.tags.length > 0) {
      if (!routine.annotations.tags.some((t) => options.tags!.includes(t))) continue;
    }
    if (routine.annotations.rateLimiter !== undefined) {
      // NpgsqlRest's rule too: the annotation limits the HTTP route, not tools/call.
      warnings.push(
        `${where} has @rate_limiter ${routine.annotations.rateLimiter}, which does not apply to its MCP tool: tools/call runs the routine directly. Limit MCP traffic with rateLimit.requestsPerMinute or rateLimit.routes.`,
      );
    }
    if (!routine.executable) {
      warnings.push(`${where} is annotated @mcp but this role may not EXECUTE it; skipped.`);
      continue;
    }
    if (routine.securityDefiner && !routine.pinsSearchPath) {
      warnings.push(
        `${where} is SECURITY DEFINER without SET search_path: pin it (ALTER FUNCTION … SET search_path = …).`,
      );
    }
    try {
      const derived = deriveRoutine(routine, catalog.types, options);
      const list = byName.get(derived.name) ?? [];
      list.push(derived);
      byName.set(derived.name, list);
    } catch (error) {
      if (!(error instanceof RoutineNotSupported)) throw error;
      warnings.push(`${where} is annotated @mcp but cannot be a tool: ${error.message}; skipped.`);
    }
  }
  const tools: RoutineToolSpec[] = [];
  const deps: CallDeps = {
    db,
    types: catalog.types,
    statementTimeoutMs: options.statementTimeoutMs,
    maxRows: options.maxRows ?? 1000,
    maxResultBytes: options.maxResultBytes ?? 1_048_576,
  };
  for (const [name, list] of [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (list.length > 1) {
      const who = list.map((d) => `${qualifiedName(d.routine)}(oid ${d.routine.oid})`).join(', ');
      warnings.push(
        `The tool name "${name}" is claimed by ${list.length} routines (${who}); neither is exposed. Give each a distinct @mcp_name.`,
      );
      continue;
    }
    const derived = list[0]!;
    const spec: RoutineToolSpec = {
      name: derived.name,
      description: derived.description,
      inputSchema: derived.inputSchema,
      annotations: derived.annotations,
      derived,
      source: routineSignature(derived.routine, catalog.types),
      call: (args, ctx) => callRoutine(derived, deps, args, ctx),
      // A routine may run long: a client may run it as a task (docs/tools.md, Tasks).
      taskSupport: 'optional',
    };
    if (derived.outputSchema) spec.outputSchema = derived.outputSchema;
    if (derived.routine.annotations.tags.length > 0) spec.tags = derived.routine.annotations.tags;
    // Listed only to callers who may run it (docs/sql-tools.md, "Who sees what").
    if (derived.routine.annotations.authorize !== null) {
      spec.allows = (principal) => isAuthorized(derived, principal);
      const roles = derived.routine.annotations.authorize;
      if (roles.length > 0) spec.requiredRoles = roles;
    }
    tools.push(spec);
  }
  return { tools, warnings };
}

/**
 * Read the annotated routines (one read-only transaction, two catalog queries) and derive their
 * tools. Warnings go to options.warn; the tools are ready for registry.addTool().
 */
export async function loadRoutineTools(
  db: Database,
  options: RoutineToolOptions,
): Promise<RoutineToolSpec[]> {
  if (options.enabled === false) return [];
  const catalog = await db.withTransaction(
    { readOnly: true, timeoutMs: options.statementTimeoutMs, principal: ANONYMOUS },
    (client) => loadRoutineCatalog(client, options.schemas ? { schemas: options.schemas } : {}),
  );
  const { tools, warnings } = deriveRoutineTools(db, catalog, options);
  for (const warning of warnings) options.warn?.(warning);
  return tools;
}

export { toolNameOf };
