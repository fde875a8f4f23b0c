import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../src/http/body.js';
import type { VectorPath } from '../src/http/vectorJson.js';
import { HttpError } from '../src/http/errors.js';

/** The body parse with the vector at `path` read straight into a Float32Array. */
const parseSearchJson = (text: string, path: VectorPath, dims: number): unknown => parseJsonBody(Buffer.from(text), { path, dims });
import { mulberry32 } from '../src/gen/Rng.js';

/** What the plain path gives: JSON.parse, the array rounded to float32. */
function plain(text: string, path: readonly string[]): unknown {
  const body = JSON.parse(text);
  let parent = body;
  for (const key of path.slice(0, -1)) parent = parent[key];
  parent[path.at(-1)!] = Float32Array.from(parent[path.at(-1)!]);
  return body;
}

/** Numbers written every way JSON allows and clients do: shortest round trip, fixed digits, exponents, integers, signs. */
function numberTexts(seed: number, n: number): string[] {
  const rand = mulberry32(seed);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const magnitude = 10 ** Math.floor(rand() * 16 - 10);
    const x = (rand() * 2 - 1) * magnitude;
    switch (i % 8) {
      case 0:
        out.push(String(Math.fround(x)));
        break;
      case 1:
        out.push(Math.fround(x).toPrecision(9));
        break;
      case 2:
        out.push(x.toPrecision(17));
        break;
      case 3:
        out.push(x.toExponential(Math.floor(rand() * 20)));
        break;
      case 4:
        out.push(String(Math.round(x * 1000)));
        break;
      case 5:
        out.push(x.toFixed(Math.floor(rand() * 20)).replace(/^-0(\.0*)?$/, '-0'));
        break;
      case 6:
        out.push(x.toExponential(6).replace('e', 'E').replace('E+', 'E'));
        break;
      default:
        out.push(String(x));
        break;
    }
  }
  return out;
}

describe("a search body's vector read straight into a Float32Array", () => {
  it("gives JSON.parse's numbers, rounded to float32, for every way of writing them", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const texts = numberTexts(seed, 512);
      const text = `{"k": 10, "vector": [${texts.join(',')}], "oversample": 2}`;
      const parsed = parseSearchJson(text, ['vector'], texts.length) as { vector: Float32Array };
      expect(parsed.vector).toBeInstanceOf(Float32Array);
      expect(parsed).toEqual(plain(text, ['vector']));
      // Bit for bit (toEqual treats -0 and 0 alike).
      const expected = Float32Array.from(texts.map(Number));
      expect(new Uint32Array(parsed.vector.buffer)).toEqual(new Uint32Array(expected.buffer));
    }
  });

  it('edge numbers: zeros, subnormals, float32 extremes, long mantissas, big exponents', () => {
    const texts = [
      '0',
      '-0',
      '0.0',
      '-0.0e-5',
      '1e-45',
      '1.4e-45',
      '3.4028234663852886e38',
      '-3.4028234e38',
      '123456789012345678901234567890',
      '0.000000000000000000000123456789012345678',
      '1E+2',
      '1e022',
      '9007199254740993',
      '4.9406564584124654e-324',
      '1e-400',
    ];
    const text = `{"vector":[${texts.join(', ')}],"k":1}`;
    const parsed = parseSearchJson(text, ['vector'], texts.length) as { vector: Float32Array };
    expect(parsed.vector).toBeInstanceOf(Float32Array);
    expect(new Uint32Array(parsed.vector.buffer)).toEqual(new Uint32Array(Float32Array.from(texts.map(Number)).buffer));
  });

  it('finds the ES query vector under knn, with whitespace anywhere JSON allows', () => {
    const text = ' {\n "size" : 3 ,\t"knn" : { "field" : "v", "k": 3,\r\n "query_vector" : [ 1 , -2.5 ,3e1 ] , "num_candidates": 9 } , "_source": false }\n';
    const parsed = parseSearchJson(text, ['knn', 'query_vector'], 3) as { knn: { query_vector: Float32Array } };
    expect(parsed.knn.query_vector).toBeInstanceOf(Float32Array);
    expect(parsed).toEqual(plain(text, ['knn', 'query_vector']));
  });

  it('leaves everything it does not expect to JSON.parse: the plain value comes back, so validation names the problem', () => {
    const cases = [
      '{"vector": [1, 2], "k": 1}', // wrong length
      '{"vector": [1, 2, 3, 4], "k": 1}',
      '{"vector": [1, "x", 3], "k": 1}',
      '{"vector": [1, null, 3], "k": 1}',
      '{"vector": [1, 1e39, 3], "k": 1}', // beyond float32
      '{"vector": [1, 1e400, 3], "k": 1}', // beyond double
      '{"vector": [1, [2], 3], "k": 1}',
      '{"vector": "AACAPwAAAEAAAEBA", "k": 1}', // base64: validation decodes it
      '{"vector": [1, 2, 3], "vector": [4, 5, 6]}', // repeated: the last wins, as JSON.parse says
      '{"knn": {"query_vector": [1, 2, 3]}, "knn": {"query_vector": [4, 5, 6]}}',
      '{"\\u0076ector": [1, 2, 3]}',
      '{"k": 1}',
      '[1, 2, 3]',
      '{"nested": {"vector": [1, 2, 3]}, "s": "a \\" [1,2,3] \\\\", "vector": [1, 2, 3]}',
    ];
    for (const text of cases) {
      const path = text.includes('knn') ? (['knn', 'query_vector'] as const) : (['vector'] as const);
      const parsed = parseSearchJson(text, path, 3);
      const fast = JSON.stringify(parsed, (_, v) => (v instanceof Float32Array ? [...v] : v));
      expect(fast, text).toBe(JSON.stringify(JSON.parse(text)));
    }
  });

  it("invalid JSON is a 400 with JSON.parse's own message for the whole text", () => {
    for (const text of [
      '{"vector": [1, 2, 3], "k": }',
      '{"vector": [1, 2, 3]',
      '{"vector": [01, 2, 3]}',
      '{"vector": [1, 2, 3,]}',
      '{"vector": [1 2 3]}',
      '{"vector": [.5, 2, 3]}',
      '{"vector": [1, 2, 3]} x',
    ]) {
      let expected: unknown;
      try {
        JSON.parse(text);
      } catch (e) {
        expected = (e as Error).message;
      }
      expect(() => parseSearchJson(text, ['vector'], 3), text).toThrow(HttpError);
      expect(() => parseSearchJson(text, ['vector'], 3), text).toThrow(`request body is not valid JSON: ${expected as string}`);
    }
  });

  it('bad UTF-8 around the vector is a 400; a byte-order mark after it is not taken for whitespace', () => {
    const vector = '[1, 2, 3]';
    const bad = Buffer.concat([Buffer.from(`{"k": "`), Buffer.from([0xc3, 0x28]), Buffer.from(`", "vector": ${vector}}`)]);
    expect(() => parseJsonBody(bad, { path: ['vector'], dims: 3 })).toThrow('request body is not valid UTF-8');
    const bom = Buffer.concat([Buffer.from(`{"vector": ${vector}`), Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('}')]);
    expect(() => parseJsonBody(bom, { path: ['vector'], dims: 3 })).toThrow(/not valid JSON/);
    // A byte-order mark in front of the body is dropped, as before.
    const lead = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`{"vector": ${vector}}`)]);
    expect(parseJsonBody(lead, { path: ['vector'], dims: 3 })).toEqual({ vector: [1, 2, 3] });
  });
});
