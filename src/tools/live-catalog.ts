// The tools, resources and prompts that live in the database (annotated routines and registry
// handlers), kept in step with it while the server runs: each reload reads both sources again,
// diffs them against what this module put into the registry, and applies the difference as
// ONE registry batch, so clients get at most one list_changed per kind. Entries other sources
// registered (built-ins, the fixture server's conformance fixtures) are never touched: a name they hold wins.
import type { Catalog } from '../catalog/catalog.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { PromptSpec, ResourceSpec, ResourceTemplateSpec, ToolSpec } from '../core/specs.js';
import type { Database } from '../db/database.js';
import { loadRegistryHandlers, type ExchangeLog, type LoadedHandlers } from './handlers/index.js';
import {
  specIn,
  type AnySpec,
  type BatchSlot,
  type CatalogKind,
  type Registry,
  type RegistryBatch,
} from './registry.js';
import { loadRoutineTools, type RoutineToolOptions } from './routines/index.js';

export interface LiveCatalogOptions {
  db: Database;
  registry: Registry;
  /** Invalidated on every reload so get_schema_info sees new tables. */
  catalog?: Pick<Catalog, 'invalidate'>;
  logger: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
  /** The database's name, said in every warning (with several databases, which one failed). */
  database?: string;
  routines: Omit<RoutineToolOptions, 'warn'>;
  /** Registry handlers; omit to leave them out. */
  handlers?: {
    statementTimeoutMs: number;
    allowWrites: boolean;
    exchangeLog?: ExchangeLog;
    mode?: 'auto' | 'mcp' | 'pgmi';
  };
}

export interface ReloadResult {
  /** Kinds whose lists changed (one list_changed each). */
  changed: CatalogKind[];
  added: string[];
  removed: string[];
  replaced: string[];
  /**
   * Names claimed twice, as `tool NAME: <first place>, and <second place>` (the composition
   * root makes these a startup error; on later reloads the second claim is skipped with a
   * warning and the first keeps serving).
   */
  clashes: string[];
}

export interface LiveCatalog {
  /** Read both sources and apply the difference. Calls never overlap: a second one waits. */
  reload(reason?: string): Promise<ReloadResult>;
  /**
   * Whether the last reload read both sources (false before the first, and after one that
   * could not reach the database: what is served then may not be all the database has).
   */
  known(): boolean;
  /** What this module currently owns in the registry, by kind (for tests and diagnostics). */
  owned(): { tools: string[]; resources: string[]; templates: string[]; prompts: string[] };
}

type Slot = BatchSlot;

interface Desired {
  tools: ToolSpec[];
  resources: ResourceSpec[];
  templates: ResourceTemplateSpec[];
  prompts: PromptSpec[];
}

const SLOTS: readonly Slot[] = ['tools', 'resources', 'templates', 'prompts'];

/** How a clash names an entry of each slot (the words the composition root uses). */
const KIND_WORD: Record<Slot, string> = {
  tools: 'tool',
  resources: 'resource',
  templates: 'resource template',
  prompts: 'prompt',
};

const CATALOG_KIND: Record<Slot, CatalogKind> = {
  tools: 'tools',
  resources: 'resources',
  templates: 'resources',
  prompts: 'prompts',
};

/** Who may see a routine's tool is decided by its annotations (@authorize), not its view. */
function visibilityOf(spec: AnySpec): string {
  const derived = (spec as { derived?: { routine?: { annotations?: unknown } } }).derived;
  return JSON.stringify(derived?.routine?.annotations ?? null);
}

const keyOf: Record<Slot, (spec: AnySpec) => string> = {
  tools: (s) => (s as ToolSpec).name,
  resources: (s) => (s as ResourceSpec).uri,
  templates: (s) => (s as ResourceTemplateSpec).uriTemplate,
  prompts: (s) => (s as PromptSpec).name,
};

interface Owned {
  /** 'routine' entries are pure data plus a call bound to it; handler specs also close over
   * fields they do not show (requires_auth, ...), so those are always swapped for fresh ones. */
  source: 'routine' | 'handler';
  fingerprint: string;
}

/** Every data field of a spec (a routine's descriptor included; functions are left out). */
function fingerprint(spec: AnySpec): string {
  return JSON.stringify(spec);
}

/** The startup error for names claimed twice (as the composition root reports them). */
export function nameClashError(clashes: readonly string[]): AppError {
  return new AppError(
    ErrorCodes.CONFIG_INVALID,
    `A name is claimed twice: ${clashes.join('; ')}. Rename one of each pair (@mcp_name for a routine, the "name" of a registry handler).`,
    { category: 'config', details: { clashes: [...clashes] } },
  );
}

export function createLiveCatalog(options: LiveCatalogOptions): LiveCatalog {
  const { db, registry, logger } = options;
  const named = options.database === undefined ? {} : { database: options.database };
  const ofDatabase = options.database === undefined ? '' : ` of database ${options.database}`;
  const owned: Record<Slot, Map<string, Owned>> = {
    tools: new Map(),
    resources: new Map(),
    templates: new Map(),
    prompts: new Map(),
  };
  // Warnings repeat on every reload; say each once.
  const warned = new Set<string>();
  const warnOnce = (message: string): void => {
    if (warned.has(message)) return;
    warned.add(message);
    logger.warn(
      named,
      options.database === undefined ? message : `${message} (database ${options.database})`,
    );
  };
  let queue: Promise<unknown> = Promise.resolve();
  let readAll = false;

  /** The registry's entries for the names we own (what a source that failed keeps serving). */
  const current = (slot: Slot): AnySpec[] =>
    [...owned[slot].keys()]
      .map((key) => lookup(slot, key))
      .filter((spec): spec is AnySpec => spec !== undefined);

  const lookup = (slot: Slot, key: string): AnySpec | undefined => specIn(registry, slot, key);

  const load = async (): Promise<{
    desired: Desired;
    source: Map<string, Owned['source']>;
    places: Map<string, string>;
    clashes: string[];
  }> => {
    const places = new Map<string, string>();
    const clashes: string[] = [];
    const desired: Desired = { tools: [], resources: [], templates: [], prompts: [] };
    const source = new Map<string, Owned['source']>();
    // readAll keeps the last reload's answer until this one ends: a call during a reload is
    // not told the database is out of reach.
    let failed = false;
    try {
      const tools = await loadRoutineTools(db, { ...options.routines, warn: warnOnce });
      desired.tools.push(...tools);
      for (const t of tools) {
        source.set(`tools:${t.name}`, 'routine');
        places.set(`tools:${t.name}`, t.source);
      }
    } catch (error) {
      failed = true;
      logger.warn(
        { ...named, err: { message: (error as Error).message } },
        `annotated routines${ofDatabase} not reloaded; keeping the current ones`,
      );
      for (const [name, entry] of owned.tools) {
        const spec = entry.source === 'routine' ? registry.tool(name)?.spec : undefined;
        if (spec) {
          desired.tools.push(spec);
          source.set(`tools:${name}`, 'routine');
          places.set(`tools:${name}`, (spec as { source?: string }).source ?? `routine ${name}`);
        }
      }
    }
    if (!options.handlers) {
      readAll = !failed;
      return { desired, source, places, clashes };
    }
    let handlers: LoadedHandlers | null = null;
    try {
      handlers = await loadRegistryHandlers(db, options.handlers);
      for (const { what, error } of handlers.skipped ?? []) {
        logger.warn(
          { ...named, err: { message: error.message } },
          `registry handler ${what}${ofDatabase} not served`,
        );
      }
    } catch (error) {
      failed = true;
      logger.warn(
        { ...named, err: { message: (error as Error).message } },
        `registry handlers${ofDatabase} not reloaded; keeping the current ones`,
      );
    }
    readAll = !failed;
    for (const slot of SLOTS) {
      const specs: AnySpec[] = handlers
        ? handlers[slot]
        : current(slot).filter((s) => owned[slot].get(keyOf[slot](s))?.source === 'handler');
      for (const spec of specs) {
        const key = `${slot}:${keyOf[slot](spec)}`;
        const place = `registry handler ${slot === 'templates' ? 'resource' : KIND_WORD[slot]} ${(spec as { name: string }).name}`;
        const first = places.get(key);
        if (first !== undefined) {
          clashes.push(`${KIND_WORD[slot]} ${keyOf[slot](spec)}: ${first}, and ${place}`);
          continue;
        }
        places.set(key, place);
        source.set(key, 'handler');
        (desired[slot] as AnySpec[]).push(spec);
      }
    }
    return { desired, source, places, clashes };
  };

  const reloadNow = async (reason: string): Promise<ReloadResult> => {
    options.catalog?.invalidate();
    const { desired, source, places, clashes } = await load();
    const batch: RegistryBatch = {};
    const announce = new Set<CatalogKind>();
    const result: ReloadResult = { changed: [], added: [], removed: [], replaced: [], clashes };
    const next: Record<Slot, Map<string, Owned>> = {
      tools: new Map(),
      resources: new Map(),
      templates: new Map(),
      prompts: new Map(),
    };
    for (const slot of SLOTS) {
      const remove: string[] = [];
      const add: AnySpec[] = [];
      const wanted = new Map<string, AnySpec>();
      for (const spec of desired[slot] as AnySpec[]) wanted.set(keyOf[slot](spec), spec);
      for (const key of owned[slot].keys()) {
        if (!wanted.has(key)) {
          remove.push(key);
          result.removed.push(`${slot}:${key}`);
        }
      }
      for (const [key, spec] of wanted) {
        const from = source.get(`${slot}:${key}`) ?? 'handler';
        const print = fingerprint(spec);
        const had = owned[slot].get(key);
        if (had && had.source === 'routine' && from === 'routine' && had.fingerprint === print) {
          next[slot].set(key, had);
          continue;
        }
        if (had) {
          remove.push(key);
          if (had.fingerprint !== print) result.replaced.push(`${slot}:${key}`);
          const old = lookup(slot, key);
          if (old && visibilityOf(old) !== visibilityOf(spec)) announce.add(CATALOG_KIND[slot]);
        } else if (lookup(slot, key) !== undefined) {
          // Another source (a built-in, say) holds the name: it wins, as at start.
          clashes.push(
            `${KIND_WORD[slot]} ${key}: built-in, and ${places.get(`${slot}:${key}`) ?? key}`,
          );
          continue;
        } else {
          result.added.push(`${slot}:${key}`);
        }
        add.push(spec);
        next[slot].set(key, { source: from, fingerprint: print });
      }
      if (remove.length > 0 || add.length > 0) {
        (batch as Record<Slot, { remove: string[]; add: AnySpec[] }>)[slot] = { remove, add };
      }
    }
    if (announce.size > 0) batch.announce = [...announce];
    const applied = registry.apply(batch);
    for (const skip of applied.skipped) {
      next[skip.kind].delete(skip.key);
      result.added = result.added.filter((k) => k !== `${skip.kind}:${skip.key}`);
      warnOnce(`${skip.kind.replace(/s$/, '')} ${skip.key} skipped: ${skip.error.message}`);
    }
    for (const slot of SLOTS) owned[slot] = next[slot];
    result.changed = applied.changed;
    for (const clash of clashes)
      warnOnce(`A name is claimed twice (the first is served): ${clash}`);
    logger.debug({ ...named, reason, ...result }, `live catalog${ofDatabase} reloaded`);
    return result;
  };

  return {
    reload(reason = 'manual') {
      const run = queue.then(() => reloadNow(reason));
      queue = run.catch(() => undefined);
      return run;
    },
    known: () => readAll,
    owned: () => ({
      tools: [...owned.tools.keys()].sort(),
      resources: [...owned.resources.keys()].sort(),
      templates: [...owned.templates.keys()].sort(),
      prompts: [...owned.prompts.keys()].sort(),
    }),
  };
}
