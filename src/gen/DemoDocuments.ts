import { open } from 'node:fs/promises';

/**
 * The demo's documents (`prescore start`): a few fields per base row to filter on and show in
 * `_source`, written as a `--fields` file row-aligned with base.fvecs (row i is doc id "i"):
 *
 *   {"title":"Quiet atlas","category":"books","year":2017,"in_stock":true}
 *
 * - `title` (text): an adjective and a noun of the row's category; kept in `_source` only.
 * - `category` (keyword): one of DEMO_CATEGORIES, each about 1/6 of the rows.
 * - `year` (integer): uniform in [1990, 2024].
 * - `in_stock` (boolean): true for about 70 % of the rows.
 *
 * Each value is a hash of the row number alone, so the same rows get the same fields at any size
 * and on any machine, and writing 100,000 rows takes milliseconds. The fields do not depend on
 * the vectors: a filter on them cuts the index uniformly.
 */
export const DEMO_CATEGORIES = ['books', 'music', 'film', 'games', 'garden', 'kitchen'] as const;

const NOUNS: Record<(typeof DEMO_CATEGORIES)[number], readonly string[]> = {
  books: ['atlas', 'novel', 'cookbook', 'field guide'],
  music: ['album', 'songbook', 'vinyl single', 'live recording'],
  film: ['documentary', 'drama', 'comedy', 'western'],
  games: ['board game', 'card game', 'puzzle', 'strategy game'],
  garden: ['planter', 'trowel', 'seed kit', 'watering can'],
  kitchen: ['kettle', 'skillet', 'teapot', 'knife set'],
};
const ADJECTIVES = ['Quiet', 'Bright', 'Classic', 'Compact', 'Vintage', 'Modern', 'Handmade', 'Rustic'] as const;

export const DEMO_FIRST_YEAR = 1990;
export const DEMO_LAST_YEAR = 2024;

/** The demo's Elasticsearch `mappings` object (the vector field is added by the build). */
export function demoMapping(): Record<string, unknown> {
  return {
    properties: {
      title: { type: 'text' },
      category: { type: 'keyword' },
      year: { type: 'integer' },
      in_stock: { type: 'boolean' },
    },
  };
}

/** A 32-bit integer hash (lowbias32): well mixed, so consecutive rows get unrelated values. */
function hash32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

export interface DemoFields {
  readonly title: string;
  readonly category: (typeof DEMO_CATEGORIES)[number];
  readonly year: number;
  readonly in_stock: boolean;
}

/** Row `row`'s fields. */
export function demoFields(row: number): DemoFields {
  const a = hash32(row * 4 + 1);
  const b = hash32(row * 4 + 2);
  const category = DEMO_CATEGORIES[a % DEMO_CATEGORIES.length]!;
  const nouns = NOUNS[category];
  return {
    title: `${ADJECTIVES[(a >>> 8) % ADJECTIVES.length]} ${nouns[(a >>> 16) % nouns.length]}`,
    category,
    year: DEMO_FIRST_YEAR + (b % (DEMO_LAST_YEAR - DEMO_FIRST_YEAR + 1)),
    in_stock: (b >>> 8) % 10 < 7,
  };
}

/** Writes rows [0, n) of the demo's fields as JSON Lines (the build's `--fields` file). */
export async function writeDemoFields(path: string, n: number): Promise<void> {
  const fh = await open(path, 'w');
  try {
    const CHUNK = 10_000;
    for (let from = 0; from < n; from += CHUNK) {
      let text = '';
      for (let row = from; row < Math.min(n, from + CHUNK); row++) text += `${JSON.stringify(demoFields(row))}\n`;
      await fh.write(text);
    }
  } finally {
    await fh.close();
  }
}
