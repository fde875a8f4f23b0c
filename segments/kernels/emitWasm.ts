/**
 * `node dist/segments/kernels/emitWasm.js [outDir]`: compiles kernels.wat once per memory kind and
 * writes kernels.wasm and kernels.shared.wasm (+ `.sha256`, the hash of the text as compiled) next
 * to the compiled Kernels.js, so threads load the binaries without starting wabt. Optional:
 * without them Kernels compiles the WAT itself.
 */
import { emitKernelsWasm } from './KernelsBinary.js';

const out = await emitKernelsWasm(process.argv[2]);
console.log(`kernels: wrote ${out.join(', ')}`);
