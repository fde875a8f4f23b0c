import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { findKernelsWat, readKernelsWat } from '../segments/kernels/KernelsBinary.js';
import { SEARCH_CONTEXT, SEARCH_CONTEXT_FIELDS, substituteSearchContext } from '../segments/kernels/SearchContextLayout.js';

/**
 * hnswSearchL0's context block is defined once (SearchContextLayout.ts): kernels.wat names the
 * fields, the build substitutes their offsets, and ResidentGraphSearcher writes through the same
 * table, so the two sides cannot drift. (That they agree end to end is what the
 * residentGraphSearcher tests check: identical results to the JS searcher.)
 */
describe('search context layout', () => {
  const wat = readFileSync(findKernelsWat()!, 'utf8');

  it('gives every field its own 4-byte slot inside the block', () => {
    const offsets = SEARCH_CONTEXT_FIELDS.map((f) => SEARCH_CONTEXT[f.name]);
    expect(new Set(offsets).size).toBe(offsets.length);
    for (const o of offsets) {
      expect(o % 4).toBe(0);
      expect(o + 4).toBeLessThanOrEqual(SEARCH_CONTEXT.bytes);
    }
    expect(SEARCH_CONTEXT.bytes % 16).toBe(0);
    expect(SEARCH_CONTEXT_FIELDS.length).toBe(33);
  });

  it('round trip: every field the layout defines is read or written by kernels.wat at its offset, and nothing else is', () => {
    const compiled = readKernelsWat(findKernelsWat()!);
    expect(compiled).not.toMatch(/\{\{/);
    // Each placeholder became its field's offset in an access of $ctx.
    const named = [...wat.matchAll(/\((\w+)\.(load|store) offset=\{\{ctx\.(\w+)\}\} \(local\.get \$ctx\)/g)].map((m) => m[3]);
    expect(new Set(named)).toEqual(new Set(SEARCH_CONTEXT_FIELDS.map((f) => f.name)));
    const accesses = [...compiled.matchAll(/\((\w+)\.(load|store) offset=(\d+) \(local\.get \$ctx\)/g)].map((m) => Number(m[3]));
    expect(new Set(accesses)).toEqual(new Set(SEARCH_CONTEXT_FIELDS.map((f) => SEARCH_CONTEXT[f.name])));
    // No access of the context without a named offset.
    expect(compiled).not.toMatch(/\.(load|store) \(local\.get \$ctx\)/);
  });

  it('fails the compile on a field the layout does not define, and on one the kernel never reads', () => {
    expect(() => substituteSearchContext(wat.replace('{{ctx.visitLimit}}', '{{ctx.visitLimt}}'))).toThrow(/visitLimt.*is not a field/);
    expect(() => substituteSearchContext(wat.replace('offset={{ctx.entry}}', 'offset=88'))).toThrow(/entry defined in SearchContextLayout.ts but never read/);
  });
});
