import type { RandomAccessBytes } from '../store/RandomAccessBytes.js';
import type { MappedFile } from '../store/native/MappedFile.js';

/**
 * The producer's view of its data files: every read goes through load() or `bytes`, which refuse
 * once the producer is closed (Lucene's AlreadyClosedException). A mapping's views point at memory
 * that close() unmaps; touching one afterwards would crash the process instead of throwing, so
 * iterators, term dictionaries and skippers reach the bytes only through this guard.
 */
export class CloseGuardedBytes implements RandomAccessBytes {
  private closed = false;

  constructor(
    private readonly inner: RandomAccessBytes,
    private readonly owner: string,
  ) {}

  get name(): string {
    return this.inner.name;
  }
  get length(): number {
    return this.inner.length;
  }
  get mapping(): MappedFile | null {
    return this.inner.mapping;
  }
  get bytes(): Uint8Array {
    this.check();
    return this.inner.bytes;
  }
  load(offset: number, length: number): number {
    this.check();
    return this.inner.load(offset, length);
  }
  pin(offset: number, length: number): Uint8Array {
    this.check();
    return this.inner.pin(offset, length);
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.inner.close();
  }

  private check(): void {
    if (this.closed) throw new Error(`${this.owner} is closed (reading ${this.inner.name})`);
  }
}
