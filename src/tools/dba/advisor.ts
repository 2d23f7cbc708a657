// Greedy index selection over hypothetical indexes: each round tries every remaining candidate
// together with the ones already chosen, keeps the one that lowers the workload's weighted
// estimated cost the most — if it lowers it by at least MIN_GAIN and the chosen set still fits
// the size budget — and stops when none does.
import type pg from 'pg';
import {
  explainCost,
  indexDefinition,
  indexesUsed,
  withHypo,
  type IndexSpec,
} from './hypothetical.js';

/** A candidate is kept only when it lowers the remaining weighted cost by at least this share. */
export const MIN_GAIN = 0.1;
/** At most this many candidates are tried (the first ones found) and indexes chosen. */
export const MAX_CANDIDATES = 40;
export const MAX_CHOSEN = 10;
/** At most this many EXPLAINs in one analysis; past it the selection stops with what it has. */
export const MAX_EXPLAINS = 2000;

export interface WorkloadStatement {
  text: string;
  explainable: string;
  /** How much the statement counts (calls in the workload; 1 for a given query). */
  weight: number;
}

export interface QueryCost {
  query: string;
  before: number;
  after: number;
}

export interface Recommendation {
  index: IndexSpec;
  definition: string;
  sizeBytes: number;
  /** The statements whose final plan uses it, with their cost before and after. */
  queries: QueryCost[];
}

export interface Advice {
  recommendations: Recommendation[];
  /** Every statement's cost without and with the recommended indexes. */
  costs: QueryCost[];
  candidatesTried: number;
  /** The selection stopped at MAX_EXPLAINS before it was done. */
  stoppedEarly: boolean;
}

export async function recommendIndexes(
  client: pg.ClientBase,
  hypopg: string,
  statements: readonly WorkloadStatement[],
  candidates: readonly IndexSpec[],
  budgetBytes: number,
): Promise<Advice> {
  const tried = candidates.slice(0, MAX_CANDIDATES);
  return withHypo(client, hypopg, async (hypo) => {
    let explains = 0;
    let stoppedEarly = false;
    const costsOf = async (): Promise<{ cost: number; plan: unknown }[]> => {
      explains += statements.length;
      const out = [];
      for (const s of statements) out.push(await explainCost(client, s.explainable));
      return out;
    };
    const weighted = (costs: { cost: number }[]): number =>
      costs.reduce((sum, c, i) => sum + c.cost * statements[i]!.weight, 0);
    const baseline = await costsOf();
    let current = weighted(baseline);
    const chosen: { spec: IndexSpec; size: number }[] = [];
    let remaining = [...tried];
    while (chosen.length < MAX_CHOSEN && remaining.length > 0) {
      let best: { spec: IndexSpec; size: number; total: number } | null = null;
      const helpful: IndexSpec[] = [];
      for (const spec of remaining) {
        if (explains + statements.length > MAX_EXPLAINS) {
          stoppedEarly = true;
          break;
        }
        await hypo.reset();
        let size = 0;
        for (const c of [...chosen.map((c) => c.spec), spec]) size += (await hypo.create(c)).size;
        if (size > budgetBytes) continue;
        const total = weighted(await costsOf());
        if (total < current) helpful.push(spec);
        if (!best || total < best.total) best = { spec, size: size - sizeOf(chosen), total };
      }
      if (!best || current <= 0 || (current - best.total) / current < MIN_GAIN) break;
      chosen.push({ spec: best.spec, size: best.size });
      current = best.total;
      // A candidate that lowered nothing this round will not help more next to a better index.
      remaining = helpful.filter((s) => s !== best.spec);
      if (stoppedEarly) break;
    }
    // The final set, once more: which plan uses which index.
    await hypo.reset();
    const names: string[] = [];
    for (const c of chosen) {
      names.push((await hypo.create(c.spec)).name);
    }
    const final = await costsOf();
    const costs = statements.map((s, i) => ({
      query: s.text,
      before: baseline[i]!.cost,
      after: final[i]!.cost,
    }));
    const recommendations = chosen.map((c, n) => ({
      index: c.spec,
      definition: indexDefinition(c.spec, true),
      sizeBytes: c.size,
      queries: costs.filter((_, i) => indexesUsed(final[i]!.plan).includes(names[n]!)),
    }));
    return { recommendations, costs, candidatesTried: tried.length, stoppedEarly };
  });
}

const sizeOf = (chosen: { size: number }[]): number => chosen.reduce((s, c) => s + c.size, 0);
