import { mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../segments/input/InputError.js';
import { encodeNpy, parseNpyHeader, writeNpy } from '../segments/input/Npy.js';
import { batchIds, detectFormat, openVectorSource, readAllVectors } from '../segments/input/openVectorSource.js';
import type { VectorBatch, VectorSource } from '../segments/input/VectorSource.js';
import { readIvecs } from '../segments/input/XvecsReader.js';
import { FvecsWriter, IvecsWriter, writeFvecs, writeIvecs } from '../segments/input/XvecsWriter.js';
import { firstNonFinite } from '../segments/input/finite.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'prescore-input-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function sample(rows: number, dims: number, seed = 1): Float32Array {
  const out = new Float32Array(rows * dims);
  let s = seed;
  for (let i = 0; i < out.length; i++) {
    s = (Math.imul(s, 1103515245) + 12345) | 0;
    out[i] = ((s >>> 8) / 2 ** 24 - 0.5) * 4;
  }
  return out;
}

async function collect(source: VectorSource, maxRows: number): Promise<VectorBatch[]> {
  const out: VectorBatch[] = [];
  for await (const b of source.batches(maxRows)) out.push(b);
  return out;
}

function concat(batches: VectorBatch[], dims: number): Float32Array {
  const rows = batches.reduce((n, b) => n + b.rows, 0);
  const out = new Float32Array(rows * dims);
  let off = 0;
  for (const b of batches) {
    out.set(b.vectors, off);
    off += b.vectors.length;
  }
  return out;
}

/** Runs fn and returns the InputError it throws (failing if it throws anything else). */
async function inputError(fn: () => Promise<unknown>): Promise<InputError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return err as InputError;
  }
  throw new Error('expected an InputError');
}

async function drain(path: string, maxRows = 3): Promise<void> {
  const source = await openVectorSource(path);
  for await (const _ of source.batches(maxRows)) {
    // consume
  }
}

/** A v1 .npy file with a hand-written header dictionary (padded to 64 bytes) and raw data. */
function npyWithDict(dict: string, data: Uint8Array): Uint8Array {
  const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
  const bytes = new Uint8Array(total + data.length);
  bytes.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(bytes.buffer).setUint16(8, total - 10, true);
  bytes.set(new TextEncoder().encode(dict.padEnd(total - 11, ' ') + '\n'), 10);
  bytes.set(data, total);
  return bytes;
}

/** Raw fvecs rows with explicit headers (for malformed files). */
function rawXvecs(rows: { dim: number; values: number[] }[], kind: 'f' | 'i' = 'f'): Uint8Array {
  const buf = new ArrayBuffer(rows.reduce((n, r) => n + 4 + 4 * r.values.length, 0));
  const view = new DataView(buf);
  let o = 0;
  for (const r of rows) {
    view.setInt32(o, r.dim, true);
    o += 4;
    for (const v of r.values) {
      if (kind === 'f') view.setFloat32(o, v, true);
      else view.setInt32(o, v, true);
      o += 4;
    }
  }
  return new Uint8Array(buf);
}

describe('format detection', () => {
  it('maps extensions and rejects unknown ones naming the file', () => {
    expect(detectFormat('a/b.fvecs')).toBe('fvecs');
    expect(detectFormat('b.IVECS')).toBe('ivecs');
    expect(detectFormat('x.npy')).toBe('npy');
    expect(detectFormat('x.jsonl')).toBe('jsonl');
    expect(detectFormat('x.ndjson')).toBe('jsonl');
    expect(() => detectFormat('data/x.csv')).toThrow(InputError);
    expect(() => detectFormat('data/x.csv')).toThrow(/data\/x\.csv.*'\.csv'/);
  });
});

describe('fvecs', () => {
  it('round-trips through FvecsWriter in batches of any size', async () => {
    const dims = 7;
    const data = sample(23, dims);
    const path = join(dir, 'rt.fvecs');
    const w = await FvecsWriter.open(path, dims, { bufferBytes: 100 }); // forces several flushes
    await w.write(data.subarray(0, 5 * dims));
    await w.write(data.subarray(5 * dims));
    expect(w.rows).toBe(23);
    await w.close();
    const source = await openVectorSource(path);
    expect(source).toMatchObject({ format: 'fvecs', dims, count: 23, hasIds: false });
    for (const maxRows of [1, 4, 23, 1000]) {
      const batches = await collect(source, maxRows);
      expect(batches.map((b) => b.firstRow)).toEqual(Array.from({ length: Math.ceil(23 / maxRows) }, (_, i) => i * maxRows));
      expect(concat(batches, dims)).toEqual(data);
      expect(batches.every((b) => b.ids === undefined)).toBe(true);
    }
    const [first] = await collect(source, 4);
    expect(batchIds(first)).toEqual(['0', '1', '2', '3']);
  });

  it('can stop early; every pass starts again at row 0', async () => {
    const dims = 4;
    const data = sample(50, dims, 9);
    for (const [name, write] of [
      ['early.fvecs', () => writeFvecs(join(dir, 'early.fvecs'), data, dims)],
      ['early.npy', () => writeNpy(join(dir, 'early.npy'), data, dims)],
    ] as const) {
      await write();
      const source = await openVectorSource(join(dir, name));
      for (let pass = 0; pass < 3; pass++) {
        for await (const b of source.batches(7)) {
          expect(b.firstRow).toBe(0);
          expect(b.vectors).toEqual(data.subarray(0, 7 * dims));
          break;
        }
      }
      expect(concat(await collect(source, 7), dims)).toEqual(data);
    }
  });

  it('rejects NaN and Infinity naming the row', async () => {
    const dims = 4;
    const data = sample(10, dims);
    data[6 * dims + 2] = NaN;
    await writeFvecs(join(dir, 'nan.fvecs'), data, dims);
    const e = await inputError(() => drain(join(dir, 'nan.fvecs')));
    expect(e.message).toContain('nan.fvecs');
    expect(e.message).toMatch(/row 6 component 2: value is NaN/);
    expect(e.location.row).toBe(6);

    data[6 * dims + 2] = 0;
    data[9 * dims] = -Infinity;
    await writeFvecs(join(dir, 'inf.fvecs'), data, dims);
    expect((await inputError(() => drain(join(dir, 'inf.fvecs')))).message).toMatch(/inf\.fvecs: row 9 component 0: value is -Infinity/);
  });

  it('rejects a truncated file (partial last row) naming the row', async () => {
    const dims = 5;
    const path = join(dir, 'trunc.fvecs');
    await writeFvecs(path, sample(8, dims), dims);
    await truncate(path, 8 * 24 - 7);
    const e = await inputError(() => openVectorSource(path));
    expect(e.message).toMatch(/trunc\.fvecs: row 7: truncated/);
    await truncate(path, 7 * 24 + 2); // ends inside row 7's header
    expect((await inputError(() => openVectorSource(path))).message).toMatch(/row 7: truncated/);
  });

  it('rejects ragged rows naming the row, whether or not the size is a multiple of the row size', async () => {
    // Size not a multiple: found at open.
    const a = join(dir, 'ragged-a.fvecs');
    await writeFile(
      a,
      rawXvecs([
        { dim: 3, values: [1, 2, 3] },
        { dim: 3, values: [1, 2, 3] },
        { dim: 2, values: [1, 2] },
      ]),
    );
    expect((await inputError(() => openVectorSource(a))).message).toMatch(/ragged-a\.fvecs: row 2: dimension header 2, expected 3/);
    // Size a multiple (a 2-dim and a 4-dim row make two 3-dim rows' bytes): found while streaming.
    const b = join(dir, 'ragged-b.fvecs');
    await writeFile(
      b,
      rawXvecs([
        { dim: 3, values: [1, 2, 3] },
        { dim: 2, values: [1, 2] },
        { dim: 4, values: [1, 2, 3, 4] },
      ]),
    );
    const source = await openVectorSource(b);
    expect(source.count).toBe(3);
    expect((await inputError(() => drain(b, 10))).message).toMatch(/ragged-b\.fvecs: row 1: dimension header 2, expected 3/);
  });

  it('rejects empty, missing and unreadable files and bad headers', async () => {
    await writeFile(join(dir, 'empty.fvecs'), new Uint8Array(0));
    expect((await inputError(() => openVectorSource(join(dir, 'empty.fvecs')))).message).toMatch(/empty\.fvecs: empty file/);
    expect((await inputError(() => openVectorSource(join(dir, 'missing.fvecs')))).message).toMatch(/missing\.fvecs: cannot open \(ENOENT/);
    await mkdir(join(dir, 'adir.fvecs'));
    expect((await inputError(() => openVectorSource(join(dir, 'adir.fvecs')))).message).toMatch(/adir\.fvecs: .*(not a regular file|EISDIR)/);
    await writeFile(join(dir, 'neg.fvecs'), rawXvecs([{ dim: -5, values: [] }]));
    expect((await inputError(() => openVectorSource(join(dir, 'neg.fvecs')))).message).toMatch(/neg\.fvecs: row 0: invalid dimension header -5/);
    await writeFile(join(dir, 'short.fvecs'), new Uint8Array(3));
    expect((await inputError(() => openVectorSource(join(dir, 'short.fvecs')))).message).toMatch(/short\.fvecs: row 0: truncated/);
  });
});

describe('ivecs', () => {
  it('round-trips with IvecsWriter, readIvecs and as float vectors', async () => {
    const dims = 3;
    const data = Int32Array.from({ length: 12 }, (_, i) => i * 7 - 20);
    const path = join(dir, 'rt.ivecs');
    const w = await IvecsWriter.open(path, dims);
    await w.write(data);
    await w.close();
    expect(await readIvecs(path)).toEqual({ dims, count: 4, data });
    const all = await readAllVectors(path);
    expect(all.vectors).toEqual(Float32Array.from(data));
  });

  it('rejects values float32 cannot hold exactly when read as vectors', async () => {
    const path = join(dir, 'big.ivecs');
    await writeIvecs(path, Int32Array.of(1, 2, 3, 4, (1 << 24) + 1, 6), 3);
    expect((await inputError(() => drain(path))).message).toMatch(/big\.ivecs: row 1 component 1: value 16777217/);
  });
});

describe('npy', () => {
  it('round-trips format versions 1, 2 and 3', async () => {
    const dims = 6;
    const data = sample(11, dims, 3);
    for (const version of [1, 2, 3] as const) {
      const path = join(dir, `v${version}.npy`);
      await writeNpy(path, data, dims, { version });
      const bytes = encodeNpy(data, dims, { version });
      const header = parseNpyHeader(bytes);
      expect(header.dataOffset % 64).toBe(0);
      expect(header).toMatchObject({ major: version, descr: '<f4', fortranOrder: false, shape: [11, 6] });
      const source = await openVectorSource(path);
      expect(source).toMatchObject({ format: 'npy', dims, count: 11, hasIds: false });
      expect(concat(await collect(source, 4), dims)).toEqual(data);
    }
  });

  it('parses headers as NumPy writes them, including old Python 2 forms', () => {
    const bytes = npyWithDict("{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 2L), }", new Uint8Array(24));
    expect(parseNpyHeader(bytes)).toMatchObject({ shape: [3, 2], descr: '<f4', fortranOrder: false, dataOffset: 128 });
  });

  it('rejects other dtypes, shapes and orders naming what it found', async () => {
    const data = sample(4, 2);
    const cases: [string, Parameters<typeof writeNpy>[3], RegExp][] = [
      ['f8.npy', { descr: '<f8' }, /f8\.npy: unsupported dtype '<f8' with shape \(4, 2\)/],
      ['be.npy', { descr: '>f4' }, /unsupported dtype '>f4'/],
      ['fortran.npy', { fortranOrder: true }, /fortran\.npy: Fortran \(column-major\) order is not supported \(shape \(4, 2\)/],
      ['3d.npy', { shape: [2, 2, 2] }, /3d\.npy: expected a 2-D array \(rows, dims\), got shape \(2, 2, 2\)/],
      ['1d.npy', { shape: [8] }, /1d\.npy: expected a 2-D array \(rows, dims\), got shape \(8,\)/],
      ['zero.npy', { shape: [0, 2] }, /zero\.npy: empty array/],
    ];
    for (const [name, options, pattern] of cases) {
      const path = join(dir, name);
      await writeNpy(path, name === 'zero.npy' ? new Float32Array(0) : data, 2, options);
      expect((await inputError(() => openVectorSource(path))).message).toMatch(pattern);
    }
    // A structured dtype.
    const structured = npyWithDict("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }", new Uint8Array(16));
    await writeFile(join(dir, 'struct.npy'), structured);
    expect((await inputError(() => openVectorSource(join(dir, 'struct.npy')))).message).toMatch(/struct\.npy: unsupported dtype \[\('a', '<f4'\)\]/);
  });

  it('rejects truncation (naming the row), trailing bytes, bad magic and non-finite values', async () => {
    const dims = 3;
    const data = sample(5, dims);
    const path = join(dir, 'trunc.npy');
    await writeNpy(path, data, dims);
    const offset = parseNpyHeader(encodeNpy(data, dims)).dataOffset;
    await truncate(path, offset + 4 * 10 - 1); // 9 values + 3 bytes: inside row 3
    expect((await inputError(() => openVectorSource(path))).message).toMatch(new RegExp(`trunc\\.npy: row 3: truncated: shape \\(5, 3\\) needs ${offset + 60} bytes`));

    const bytes = encodeNpy(data, dims);
    await writeFile(join(dir, 'trailing.npy'), Buffer.concat([bytes, Buffer.from([1, 2])]));
    expect((await inputError(() => openVectorSource(join(dir, 'trailing.npy')))).message).toMatch(/2 unexpected bytes/);

    await writeFile(join(dir, 'magic.npy'), Buffer.from('PK\x03\x04 this is a zip file'));
    expect((await inputError(() => openVectorSource(join(dir, 'magic.npy')))).message).toMatch(/magic\.npy: not a \.npy file/);

    const bad = data.slice();
    bad[4 * dims + 1] = Infinity;
    await writeNpy(join(dir, 'inf.npy'), bad, dims);
    expect((await inputError(() => drain(join(dir, 'inf.npy'), 2))).message).toMatch(/inf\.npy: row 4 component 1: value is Infinity/);

    await writeFile(join(dir, 'empty.npy'), new Uint8Array(0));
    expect((await inputError(() => openVectorSource(join(dir, 'empty.npy')))).message).toMatch(/empty\.npy: empty file/);
  });
});

describe('jsonl', () => {
  const line = (id: unknown, vector: unknown) => JSON.stringify({ id, vector });

  it('round-trips ids and vectors, skipping blank lines, with BOM and CRLF', async () => {
    const dims = 3;
    const data = sample(9, dims);
    const lines = ['\uFEFF' + line('a', Array.from(data.subarray(0, 3)))];
    for (let r = 1; r < 9; r++) {
      if (r === 4) lines.push('', '   ');
      lines.push(JSON.stringify({ id: r === 5 ? 5 : `doc-${r}`, vector: Array.from(data.subarray(r * dims, (r + 1) * dims)), extra: { x: 1 } }));
    }
    const path = join(dir, 'rt.jsonl');
    await writeFile(path, lines.join('\r\n') + '\r\n');
    const source = await openVectorSource(path);
    expect(source).toMatchObject({ format: 'jsonl', dims, hasIds: true });
    expect(source.count).toBeUndefined();
    const batches = await collect(source, 4);
    expect(batches.map((b) => [b.firstRow, b.rows])).toEqual([
      [0, 4],
      [4, 4],
      [8, 1],
    ]);
    expect(concat(batches, dims)).toEqual(data);
    expect(batches.flatMap((b) => batchIds(b))).toEqual(['a', 'doc-1', 'doc-2', 'doc-3', 'doc-4', '5', 'doc-6', 'doc-7', 'doc-8']);
  });

  it('handles lines longer than the read buffer and a last line without newline', async () => {
    const dims = 40_000;
    const v = Array.from(sample(1, dims));
    const path = join(dir, 'long.jsonl');
    await writeFile(path, `${line(1, v)}\n${line(2, v)}`);
    const all = await readAllVectors(path);
    expect(all.count).toBe(2);
    expect(all.ids).toEqual(['1', '2']);
    expect(all.vectors.subarray(dims)).toEqual(Float32Array.from(v));
  });

  it('rejects each kind of bad row naming file, row and line', async () => {
    const ok = line('ok', [1, 2]);
    const cases: [string, string[], RegExp][] = [
      ['json', [ok, '', '{"id": "x", "vector": [1, 2]'], /json\.jsonl: row 1 \(line 3\): invalid JSON/],
      ['nan', [ok, '{"id": "x", "vector": [NaN, 1]}'], /nan\.jsonl: row 1 \(line 2\): invalid JSON/],
      ['noid', [ok, '{"vector": [1, 2]}'], /noid\.jsonl: row 1 \(line 2\): missing "id"/],
      ['badid', [ok, line(true, [1, 2])], /badid\.jsonl: row 1 \(line 2\): "id" must be a string or a number, got true/],
      ['novec', [ok, '{"id": "b"}'], /novec\.jsonl: row 1 \(line 2\): missing "vector"/],
      ['vecstr', [ok, line('b', 'hello')], /vecstr\.jsonl: row 1 \(line 2\): "vector" must be an array of numbers/],
      ['ragged', [ok, ok.replace('ok', 'b'), line('c', [1, 2, 3])], /ragged\.jsonl: row 2 \(line 3\): "vector" has 3 dims, expected 2/],
      ['nonnum', [ok, line('b', [1, '2'])], /nonnum\.jsonl: row 1 \(line 2\): "vector" component 1 is not a number \(got "2"\)/],
      ['null', [ok, line('b', [1, null])], /null\.jsonl: row 1 \(line 2\): "vector" component 1 is not a number \(got null\)/],
      ['overflow', [ok, line('b', [1e39, 1])], /overflow\.jsonl: row 1 \(line 2\): "vector" component 0 = 1e\+39 is Infinity as float32/],
      ['dup', [ok, line('b', [1, 2]), line('ok', [3, 4])], /dup\.jsonl: row 2 \(line 3\): duplicate id "ok" \(first used by row 0\)/],
      ['dupnum', [line(7, [1, 2]), line('7', [3, 4])], /dupnum\.jsonl: row 1 \(line 2\): duplicate id "7"/],
      ['array', [ok, '[1, 2]'], /array\.jsonl: row 1 \(line 2\): expected an object/],
      ['first', ['{"id": "a", "vector": []}'], /first\.jsonl: row 0 \(line 1\): "vector" is empty/],
      ['firstnan', [line('a', [1, 'x'])], /firstnan\.jsonl: row 0 \(line 1\): "vector" component 1 is not a finite float32 number/],
    ];
    for (const [name, lines, pattern] of cases) {
      const path = join(dir, `${name}.jsonl`);
      await writeFile(path, lines.join('\n') + '\n');
      const e = await inputError(() => drain(path));
      expect(e.message, name).toMatch(pattern);
    }
  });

  it('rejects empty and blank-only files', async () => {
    await writeFile(join(dir, 'empty.jsonl'), '');
    await writeFile(join(dir, 'blank.jsonl'), '\n  \n\r\n');
    for (const name of ['empty.jsonl', 'blank.jsonl']) {
      expect((await inputError(() => openVectorSource(join(dir, name)))).message).toMatch(new RegExp(`${name.replace('.', '\\.')}: empty file`));
    }
  });
});

describe('validation speed', () => {
  it('firstNonFinite finds the first bad element', () => {
    const a = new Float32Array(1000);
    expect(firstNonFinite(a)).toBe(-1);
    a[997] = Infinity;
    a[998] = NaN;
    expect(firstNonFinite(a)).toBe(997);
    expect(firstNonFinite(a, 998)).toBe(998);
    a[3] = -Infinity;
    expect(firstNonFinite(a)).toBe(3);
    expect(firstNonFinite(a, 4, 997)).toBe(-1);
  });

  it('streams a 32 MiB fvecs file in batches of the requested size, every row intact (speed: bench:knn build time)', async () => {
    const dims = 1024;
    const rows = 8192; // 32 MiB
    const path = join(dir, 'speed.fvecs');
    const w = await FvecsWriter.open(path, dims);
    const block = sample(1024, dims);
    for (let i = 0; i < rows / 1024; i++) await w.write(block);
    await w.close();
    const source = await openVectorSource(path);
    let n = 0;
    for await (const b of source.batches(2048)) {
      expect(b.firstRow).toBe(n);
      expect(b.rows).toBe(Math.min(2048, rows - n));
      // Row r of the file is row r % 1024 of the block written.
      for (const r of [0, b.rows - 1]) {
        const src = ((n + r) % 1024) * dims;
        expect(b.vectors.subarray(r * dims, (r + 1) * dims)).toEqual(block.subarray(src, src + dims));
      }
      n += b.rows;
    }
    expect(n).toBe(rows);
  });
});
