// The routines and registry handlers of several databases in the shared registry. Each database
// keeps its live catalog in its own registry (beside its built-ins); the shared registry holds ONE
// routed entry per name, routed like the built-ins: the call's database decides. An entry is in
// scope only for callers who may use at least one database that has it, and a change in database
// X is announced only to the users of X (and of any database whose entry of a changed name
// shows through).
import type { ToolResult } from '../core/content.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { JsonSchema } from '../core/json-schema.js';
import type { Principal } from '../core/principal.js';
import type {
  CallContext,
  PromptSpec,
  ResourceSpec,
  ResourceTemplateSpec,
  ToolSpec,
} from '../core/specs.js';
import { onTarget, withDatabaseArgument } from './database-routing.js';
import type { DatabaseDirectory, DatabaseTarget } from './databases.js';
import {
  listedView,
  specIn,
  type AnySpec,
  type Audience,
  type BatchSlot,
  type CatalogKind,
  type Registry,
  type RegistryBatch,
} from './registry.js';

type Slot = BatchSlot;
const SLOTS: readonly Slot[] = ['tools', 'resources', 'templates', 'prompts'];
const KIND: Record<Slot, CatalogKind> = {
  tools: 'tools',
  resources: 'resources',
  templates: 'resources',
  prompts: 'prompts',
};
const WORD: Record<Slot, string> = {
  tools: 'tool',
  resources: 'resource',
  templates: 'resource template',
  prompts: 'prompt',
};

/** What one database serves from its live catalog, by slot (keys: name, uri, uriTemplate). */
export type OwnedEntries = Record<Slot, readonly string[]>;

export interface DatabaseCatalogs {
  /**
   * Bring the shared registry in line with every database's live entries, after `database`
   * reloaded (null: at start); `changed`: the kinds its reload changed in its own registry
   * (who may see an entry can change without its listing). Returns the kinds announced.
   */
  sync(database: string | null, changed?: readonly CatalogKind[]): CatalogKind[];
}

const lookup = specIn;

export function createDatabaseCatalogs(
  shared: Registry,
  directory: DatabaseDirectory,
  owned: (database: string) => OwnedEntries,
  /** Whether a database's entries are known (its last reload reached it); default: always. */
  known: (database: string) => boolean = () => true,
): DatabaseCatalogs {
  // The default database first, then configuration order: whose definition a name shows.
  const order = [
    directory.get(directory.defaultName)!,
    ...directory.targets.filter((t) => t.name !== directory.defaultName),
  ];
  /** Per slot and key: the databases that have it, and the listed view of the routed entry. */
  let routed: Record<Slot, Map<string, { holders: string[]; view: string }>> = {
    tools: new Map(),
    resources: new Map(),
    templates: new Map(),
    prompts: new Map(),
  };

  const may = (principal: Principal, name: string): boolean =>
    directory.access(principal, name) === 'ok';

  /** The database a call of `key` runs on: the one it names, else the caller's current one if
   * it has the entry, else the first the caller may use that has it. */
  const choose = (
    slot: Slot,
    key: string,
    holders: readonly string[],
    ctx: CallContext,
    requested: string | undefined,
  ): DatabaseTarget => {
    const selected = ctx.database?.selected ?? null;
    let target: DatabaseTarget | undefined;
    if (requested !== undefined) {
      target = directory.resolve(ctx.principal, requested, selected);
    } else {
      const current = directory.currentFor(ctx.principal, selected);
      const name =
        current !== null && holders.includes(current)
          ? current
          : holders.find((h) => may(ctx.principal, h));
      target = name === undefined ? undefined : directory.get(name);
    }
    if (target && !holders.includes(target.name) && !known(target.name)) {
      // Its entries are not known: it could not be reached, so whether it has this one is not
      // known either. Saying it is not defined there would be a guess.
      throw new AppError(
        ErrorCodes.DB_UNAVAILABLE,
        `Database unavailable: ${target.name} cannot be reached right now, so its ${WORD[slot]}s are not known (${key} among them or not). Try again later, or use another database (the database argument).`,
        { category: 'unavailable', details: { database: target.name } },
      );
    }
    if (!target || !holders.includes(target.name)) {
      const where = holders.filter((h) => may(ctx.principal, h));
      throw new AppError(
        ErrorCodes.DATABASE_NOT_FOUND,
        `The ${WORD[slot]} ${key} is not defined in database ${target?.name ?? '(none)'}${where.length > 0 ? `; it is in: ${where.join(', ')} (the database argument, or select_database_connection)` : ''}.`,
        { category: 'not_found', details: { database: target?.name ?? null } },
      );
    }
    ctx.database?.used(target.name);
    return target;
  };

  const own = <T extends AnySpec>(target: DatabaseTarget, slot: Slot, key: string): T => {
    const spec = lookup(target.registry, slot, key);
    if (!spec) {
      throw new AppError(
        ErrorCodes.DATABASE_NOT_FOUND,
        `The ${WORD[slot]} ${key} was just removed from database ${target.name}.`,
        { category: 'not_found', details: { database: target.name } },
      );
    }
    return spec as T;
  };

  const gates = (
    slot: Slot,
    key: string,
    holders: readonly string[],
  ): Pick<ToolSpec, 'allows' | 'inScope' | 'requiredRoles'> => {
    const specs = holders.map((h) => lookup(directory.get(h)!.registry, slot, key));
    const gated = specs.some((s) => s?.allows !== undefined);
    // The roles to name in a refusal: those of every database's definition together.
    const roles = [
      ...new Set(specs.flatMap((s) => (s && 'requiredRoles' in s ? (s.requiredRoles ?? []) : []))),
    ];
    return {
      ...(roles.length > 0 ? { requiredRoles: roles } : {}),
      inScope: (principal) => holders.some((h) => may(principal, h)),
      ...(gated
        ? {
            allows: (principal: Principal) =>
              holders.some((h, i) => {
                const spec = specs[i];
                return may(principal, h) && (spec?.allows?.(principal) ?? true);
              }),
          }
        : {}),
    };
  };

  const routeTool = (first: ToolSpec, holders: string[]): ToolSpec => {
    const key = first.name;
    const properties = (first.inputSchema['properties'] as Record<string, unknown>) ?? {};
    // A routine with a parameter of its own named database is routed by the session alone.
    const argument = !('database' in properties);
    const inputSchema: JsonSchema = argument
      ? withDatabaseArgument(first.inputSchema)
      : first.inputSchema;
    return {
      ...first,
      inputSchema,
      ...gates('tools', key, holders),
      async call(args, ctx): Promise<ToolResult> {
        const { database, ...rest } = argument ? args : { ...args, database: undefined };
        const requested = typeof database === 'string' ? database : undefined;
        const target = choose('tools', key, holders, ctx, requested);
        const tool = target.registry.tool(key);
        if (!tool) own(target, 'tools', key);
        // The databases may define the name differently: their own schema decides.
        const problems = tool!.validate(argument ? rest : args);
        if (problems) {
          throw new AppError(
            ErrorCodes.TOOL_INPUT_INVALID,
            `Invalid arguments for ${key} in database ${target.name}: ${problems.join('; ')}`,
            { category: 'input', details: { database: target.name } },
          );
        }
        return onTarget(target, () => tool!.spec.call(argument ? rest : args, ctx));
      },
    };
  };

  const routeEntry = (slot: Slot, first: AnySpec, key: string, holders: string[]): AnySpec => {
    switch (slot) {
      case 'tools':
        return routeTool(first as ToolSpec, holders);
      case 'resources':
        return {
          ...(first as ResourceSpec),
          ...gates(slot, key, holders),
          read(ctx) {
            const target = choose(slot, key, holders, ctx, undefined);
            return onTarget(target, () => own<ResourceSpec>(target, slot, key).read(ctx), 'read');
          },
        } satisfies ResourceSpec;
      case 'templates':
        return {
          ...(first as ResourceTemplateSpec),
          ...gates(slot, key, holders),
          read(uri, vars, ctx) {
            const target = choose(slot, key, holders, ctx, undefined);
            return onTarget(
              target,
              () => own<ResourceTemplateSpec>(target, slot, key).read(uri, vars, ctx),
              'read',
            );
          },
        } satisfies ResourceTemplateSpec;
      case 'prompts':
        return {
          ...(first as PromptSpec),
          ...gates(slot, key, holders),
          get(args, ctx) {
            const target = choose(slot, key, holders, ctx, undefined);
            return onTarget(
              target,
              () => own<PromptSpec>(target, slot, key).get(args, ctx),
              'read',
            );
          },
        } satisfies PromptSpec;
    }
  };

  return {
    sync(database, changed = []) {
      const next: typeof routed = {
        tools: new Map(),
        resources: new Map(),
        templates: new Map(),
        prompts: new Map(),
      };
      const batch: RegistryBatch = {};
      const kinds = new Set<CatalogKind>(database === null ? [] : changed);
      // The databases whose users may see a difference.
      const concerned = new Set<string>(database === null ? [] : [database]);
      for (const slot of SLOTS) {
        const holders = new Map<string, string[]>();
        for (const target of order) {
          for (const key of owned(target.name)[slot]) {
            const list = holders.get(key) ?? [];
            list.push(target.name);
            holders.set(key, list);
          }
        }
        const remove: string[] = [];
        const add: AnySpec[] = [];
        for (const [key, had] of routed[slot]) {
          if (!holders.has(key)) {
            remove.push(key);
            kinds.add(KIND[slot]);
            for (const h of had.holders) concerned.add(h);
          }
        }
        for (const [key, list] of holders) {
          const first = lookup(directory.get(list[0]!)!.registry, slot, key);
          if (!first) continue;
          const spec = routeEntry(slot, first, key, list);
          const view = listedView(spec);
          const had = routed[slot].get(key);
          next[slot].set(key, { holders: list, view });
          if (had && had.view === view && had.holders.join() === list.join()) {
            // Same listing, but a database's own entry may have been swapped: re-route to it.
            if (database !== null && list.includes(database)) {
              remove.push(key);
              add.push(spec);
            }
            continue;
          }
          if (had) remove.push(key);
          else if (lookup(shared, slot, key) !== undefined) {
            // A built-in (or another source) holds the name in the shared registry: it wins.
            next[slot].delete(key);
            continue;
          }
          add.push(spec);
          kinds.add(KIND[slot]);
          for (const h of [...list, ...(had?.holders ?? [])]) concerned.add(h);
        }
        if (remove.length > 0 || add.length > 0) {
          (batch as Record<Slot, { remove: string[]; add: AnySpec[] }>)[slot] = { remove, add };
        }
      }
      routed = next;
      if (kinds.size === 0 && Object.keys(batch).length === 0) return [];
      batch.announce = [...kinds];
      const audience: Audience = (principal) => [...concerned].some((name) => may(principal, name));
      if (database !== null) batch.audience = audience;
      const applied = shared.apply(batch);
      for (const skip of applied.skipped) routed[skip.kind].delete(skip.key);
      return applied.changed;
    },
  };
}
