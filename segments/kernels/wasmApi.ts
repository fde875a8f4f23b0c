/**
 * The slice of the WebAssembly JS API the kernels use, typed locally: the project's lib
 * (ES2023, no DOM) and @types/node 20 do not declare the WebAssembly global, and a global
 * declaration here could clash with other modules' or a future lib's.
 */
declare const wasmModuleBrand: unique symbol;

/** A compiled WebAssembly.Module (opaque; structured-cloneable to worker threads). */
export interface WasmModule {
  readonly [wasmModuleBrand]: true;
}

export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(deltaPages: number): number;
}

export interface WasmInstance {
  readonly exports: Record<string, unknown>;
}

interface WasmApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => WasmInstance;
  instantiate(module: WasmModule, imports: Record<string, Record<string, unknown>>): Promise<WasmInstance>;
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
}

export const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
