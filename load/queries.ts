/**
 * The query vectors a run cycles through: rows of an `.fvecs` file, or seeded random unit
 * vectors when no file is given (useful against a server whose index is synthetic).
 */
import { Rng } from './rng.js';
import { readFvecs } from './vecfile.js';

/** Query vectors, row after row. */
export interface QuerySet {
  readonly dim: number;
  readonly count: number;
  /** Row-major `count * dim`. */
  readonly data: Float32Array;
  /** Where the vectors came from, for the report. */
  readonly source: string;
}

/** The first `limit` rows of an `.fvecs` file as queries. */
export function queriesFromFvecs(path: string, limit = 100_000): QuerySet {
  const rows = readFvecs(path, limit);
  if (rows.count === 0) throw new Error(`fvecs ${path}: no query rows`);
  return { dim: rows.dim, count: rows.count, data: rows.data, source: path };
}

/** `count` random unit vectors (isotropic Gaussian, normalised), reproducible from `seed`. */
export function randomUnitQueries(dim: number, count: number, seed: number): QuerySet {
  if (!Number.isInteger(dim) || dim < 1 || dim > 65_536) throw new Error(`--dim must be an integer in [1, 65536], got ${dim}`);
  const rng = new Rng(seed, 2);
  const data = new Float32Array(dim * count);
  for (let q = 0; q < count; q++) {
    let norm = 0;
    const base = q * dim;
    for (let i = 0; i < dim; i++) {
      const g = rng.gaussian();
      data[base + i] = g;
      norm += g * g;
    }
    const inv = 1 / Math.sqrt(norm || 1);
    for (let i = 0; i < dim; i++) data[base + i] *= inv;
  }
  return { dim, count, data, source: `random unit vectors (dim ${dim}, seed ${seed})` };
}
