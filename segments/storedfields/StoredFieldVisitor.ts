/**
 * What a stored-fields reader hands out, field by field (Lucene's StoredFieldVisitor): for each
 * stored field of a doc, in the order it was written, the reader asks needsField(); on 'yes' it
 * decodes the value and calls the method of its type, on 'no' it skips the value, on 'stop' it
 * ends the doc. A visitor implements the value methods it cares about.
 *
 * A bytes value is a view of the reader's decompressed chunk: valid until the next call on the
 * reader (copy it to keep it). Longs are bigints (Java's int64 range); floats are float32 values.
 */
export type StoredFieldStatus = 'yes' | 'no' | 'stop';

export interface StoredFieldVisitor {
  needsField(fieldNumber: number): StoredFieldStatus;
  stringField?(fieldNumber: number, value: string): void;
  binaryField?(fieldNumber: number, value: Uint8Array): void;
  intField?(fieldNumber: number, value: number): void;
  longField?(fieldNumber: number, value: bigint): void;
  floatField?(fieldNumber: number, value: number): void;
  doubleField?(fieldNumber: number, value: number): void;
}

/** A stored value with its Lucene type (the record type of Lucene90StoredFieldsFormat). */
export type StoredValue =
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'bytes'; readonly value: Uint8Array }
  | { readonly type: 'int'; readonly value: number }
  | { readonly type: 'long'; readonly value: bigint }
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'double'; readonly value: number };

/** One field of a doc as the convenience readers return it. */
export type StoredField = { readonly fieldNumber: number } & StoredValue;

/** Collects every field of a doc (bytes copied). */
export class DocumentCollector implements StoredFieldVisitor {
  readonly fields: StoredField[] = [];

  needsField(): StoredFieldStatus {
    return 'yes';
  }
  stringField(fieldNumber: number, value: string): void {
    this.fields.push({ fieldNumber, type: 'string', value });
  }
  binaryField(fieldNumber: number, value: Uint8Array): void {
    this.fields.push({ fieldNumber, type: 'bytes', value: value.slice() });
  }
  intField(fieldNumber: number, value: number): void {
    this.fields.push({ fieldNumber, type: 'int', value });
  }
  longField(fieldNumber: number, value: bigint): void {
    this.fields.push({ fieldNumber, type: 'long', value });
  }
  floatField(fieldNumber: number, value: number): void {
    this.fields.push({ fieldNumber, type: 'float', value });
  }
  doubleField(fieldNumber: number, value: number): void {
    this.fields.push({ fieldNumber, type: 'double', value });
  }
}
