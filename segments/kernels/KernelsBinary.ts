import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { substituteSearchContext } from './SearchContextLayout.js';

/**
 * Where the kernels' wasm binaries come from. The hand-written source is `kernels.wat` (in the
 * source tree, next to Kernels.ts), compiled in two variants that differ only in the imported
 * memory: 'private' (a thread's own growable memory) and 'shared' (a SharedArrayBuffer-backed
 * arena that several threads' instances import). At run time, per process or thread:
 *   1. `kernels.wasm` / `kernels.shared.wasm` next to this compiled module, if present and built
 *      from the same text (its sidecar `.sha256` holds the SHA-256 of the text as compiled):
 *      `npm run build` emits them with `node dist/segments/kernels/emitWasm.js`;
 *   2. otherwise the WAT is compiled with wabt: ~80-190 ms (CPU) for the first thread of a
 *      process, mostly wabt's own start-up, ~25-45 ms for later threads (V8 reuses wabt's
 *      compiled module). This is the path of vitest on the TS sources and of a plain `tsc` build.
 * A prebuilt binary loads in ~1 ms; a posted Module instantiates in well under that.
 * The compiled WebAssembly.Module is cached per thread and can be posted to worker threads.
 */

/** Which memory a kernels module imports. */
export type KernelsMemoryKind = 'private' | 'shared';

/**
 * wabt features the WAT needs: SIMD (v128, i8x16.popcnt), bulk memory (memory.copy/fill),
 * multi-value, threads (the imported memory is shared).
 */
export const WAT_FEATURES = { simd: true, bulk_memory: true, multi_value: true, threads: true } as const;

export interface KernelsBinaryInfo {
  /** 'wasm': a prebuilt kernels.wasm; 'wat': compiled from kernels.wat with wabt. */
  readonly source: 'wasm' | 'wat';
  readonly path: string;
  /** Time to produce the bytes (read, or wabt load + parse + encode), ms. */
  readonly bytesMs: number;
  /** Time to compile the bytes to a WebAssembly.Module, ms. */
  readonly compileMs: number;
  readonly byteLength: number;
}

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The WAT next to this module (TS sources, or a dist that copied it), else the source tree's
 * copy seen from dist/segments/kernels (outDir "dist", rootDir ".").
 */
export function findKernelsWat(): string | undefined {
  for (const candidate of [join(here, 'kernels.wat'), join(here, '..', '..', '..', 'segments', 'kernels', 'kernels.wat')]) {
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The kernels' WAT as compiled: the file's text with the search-context offsets substituted
 * (SearchContextLayout.ts), so a prebuilt binary's hash also changes when the layout does.
 */
export function readKernelsWat(path: string, memory: KernelsMemoryKind = 'private'): string {
  const text = readFileSync(path, 'utf8').replace(/\{\{memory\.sharing\}\}/g, memory === 'shared' ? 'shared' : '');
  return substituteSearchContext(text, path);
}

function binaryName(memory: KernelsMemoryKind): string {
  return memory === 'shared' ? 'kernels.shared.wasm' : 'kernels.wasm';
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Compiles WAT text to a wasm binary with wabt (loaded lazily: prebuilt binaries never pay for
 * it). wabt.js 1.0.39's validator rejects shared memories even with the threads feature on (its
 * parser and encoder accept them), so text importing one is validated with the import made
 * private: the same code, and V8 validates the shared binary again when compiling it.
 */
export async function compileWat(text: string, filename = 'kernels.wat'): Promise<Uint8Array> {
  const require = createRequire(import.meta.url);
  const wabtInit = require('wabt') as typeof import('wabt');
  const wabt = await wabtInit();
  const privateText = text.replace(/(\(memory\s+\d+\s+\d+)\s+shared\)/g, '$1)');
  if (privateText !== text) {
    const check = wabt.parseWat(filename, privateText, WAT_FEATURES);
    try {
      check.validate();
    } finally {
      check.destroy();
    }
  }
  const mod = wabt.parseWat(filename, text, WAT_FEATURES);
  try {
    if (privateText === text) mod.validate();
    return mod.toBinary({}).buffer;
  } finally {
    mod.destroy();
  }
}

/** The kernels binary, from a fresh prebuilt one if there is one, else compiled from the WAT. */
export async function loadKernelsBytes(memory: KernelsMemoryKind = 'private'): Promise<{ bytes: Uint8Array; source: 'wasm' | 'wat'; path: string; bytesMs: number }> {
  const t0 = performance.now();
  const watPath = findKernelsWat();
  const watText = watPath ? readKernelsWat(watPath, memory) : undefined;
  const wasmPath = join(here, binaryName(memory));
  if (existsSync(wasmPath)) {
    const hashPath = `${wasmPath}.sha256`;
    const builtFrom = existsSync(hashPath) ? readFileSync(hashPath, 'utf8').trim() : '';
    if (watText === undefined || builtFrom === sha256(watText)) {
      const bytes = new Uint8Array(readFileSync(wasmPath));
      return { bytes, source: 'wasm', path: wasmPath, bytesMs: performance.now() - t0 };
    }
  }
  if (watPath === undefined || watText === undefined) {
    throw new Error(`kernels: neither ${binaryName(memory)} nor kernels.wat found (looked next to ${here} and in the source tree)`);
  }
  const bytes = await compileWat(watText, watPath);
  return { bytes, source: 'wat', path: watPath, bytesMs: performance.now() - t0 };
}

/** Writes both binaries and their `.sha256` sidecars into outDir (default: next to this module); returns their paths. */
export async function emitKernelsWasm(outDir = here): Promise<string[]> {
  const watPath = findKernelsWat();
  if (!watPath) throw new Error(`kernels: kernels.wat not found from ${here}`);
  const written: string[] = [];
  for (const memory of ['private', 'shared'] as const) {
    const watText = readKernelsWat(watPath, memory);
    const bytes = await compileWat(watText, watPath);
    const out = join(outDir, binaryName(memory));
    writeFileSync(out, bytes);
    writeFileSync(`${out}.sha256`, `${sha256(watText)}\n`);
    written.push(out);
  }
  return written;
}
