/**
 * `node dist/segments/kernels/emitWasm.js [outDir]`: compiles kernels.wat once and writes
 * kernels.wasm (+ kernels.wasm.sha256, the WAT's hash) next to the compiled Kernels.js, so threads
 * load the binary without starting wabt. Optional: without it Kernels compiles the WAT itself.
 */
import { emitKernelsWasm } from './KernelsBinary.js';

const out = await emitKernelsWasm(process.argv[2]);
console.log(`kernels: wrote ${out}`);
