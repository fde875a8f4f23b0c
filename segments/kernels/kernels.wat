;; prescore's WebAssembly SIMD kernels (hand-written; compiled by wabt, see KernelsBinary.ts).
;;
;; Every instance imports a memory ("env" "memory", up to 65536 pages = 4 GiB): either a thread's
;; private one, or a shared arena that every worker's instance imports (segments' codes and
;; graphs, read-only while searched, plus one private scratch region per worker; see
;; segments/index/Arena.ts). The text is compiled twice, once per kind of memory: the import's
;; sharing (double braces) becomes "shared" or nothing (KernelsBinary.ts). The TypeScript
;; allocator in Kernels.ts hands out a thread's part of it; pointers are byte addresses, treated
;; as unsigned. Byte 0..63 are never handed out, so pointer 0 can mean "absent". Nothing here
;; uses atomics: arena bytes written by one thread (a segment being loaded) are read by others
;; only after a task message ordered the write before the read.
;;
;; Float maths is plain IEEE binary32 (wasm has no implicit FMA), so the OSQ estimator below is
;; bit-identical to Lucene's float code and to JsKernels' Math.fround emulation. The fp32 sums
;; (dot, squareDistance, cosine, dotBatch) use SIMD lane order and are NOT bit-identical to
;; Lucene's scalar order; callers compare them with a relative tolerance.
(module
  (import "env" "memory" (memory 1 65536 {{memory.sharing}}))

  ;; Where osqRecords' cache-line touches leave their (meaningless) sum, so no engine drops the loads.
  (global $touchSink (mut i32) (i32.const 0))

  ;; ---------------------------------------------------------------------------------------
  ;; Horizontal sums.
  (func $hsumI32 (param $v v128) (result i32)
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $v)) (i32x4.extract_lane 1 (local.get $v)))
      (i32.add (i32x4.extract_lane 2 (local.get $v)) (i32x4.extract_lane 3 (local.get $v)))))

  (func $hsumF32 (param $v v128) (result f32)
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $v)) (f32x4.extract_lane 1 (local.get $v)))
      (f32.add (f32x4.extract_lane 2 (local.get $v)) (f32x4.extract_lane 3 (local.get $v)))))

  ;; ---------------------------------------------------------------------------------------
  ;; $bitDot(p0, stride, d, nbytes): sum over p = 0..3 of popcount(plane_p AND doc) << p over the
  ;; first nbytes (a multiple of 16) of each, plane p at p0 + p*stride, doc at d.
  ;;
  ;; Rather than four i8x16.popcnt per 16-byte chunk (x64 has no byte popcount below AVX-512, so
  ;; each is ~10 instructions of nibble-table lookups), the chunks are summed bit-sliced: every
  ;; bit lane keeps a 4-bit counter in a0..a3 (a_k holds bit k of all 128 counters). Adding a
  ;; chunk adds the 4-bit value (x3 x2 x1 x0), x_p = plane_p AND doc, to each lane's counter with a
  ;; ripple-carry adder (a half adder at bit 0, full adders at bits 1..3); the carry out of bit 3,
  ;; worth 16, is popcounted into u8 lanes cc (<= 8 per chunk, flushed to u32 every 31 chunks).
  ;; At the end the counters are read out with one popcount per bit:
  ;;   total = popcnt(a0) + 2 popcnt(a1) + 4 popcnt(a2) + 8 popcnt(a3) + 16 * sum(cc)
  ;; i.e. one i8x16.popcnt per chunk instead of four, plus four per call.
  (func $bitDot (param $p0 i32) (param $stride i32) (param $d i32) (param $nbytes i32) (result i32)
    (local $p1 i32) (local $p2 i32) (local $p3 i32) (local $i i32) (local $blockEnd i32)
    (local $dv v128) (local $x v128) (local $t v128) (local $c v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $cc v128) (local $w v128) (local $acc32 v128)
    (local.set $p1 (i32.add (local.get $p0) (local.get $stride)))
    (local.set $p2 (i32.add (local.get $p1) (local.get $stride)))
    (local.set $p3 (i32.add (local.get $p2) (local.get $stride)))
    (block $done
      (loop $block
        (br_if $done (i32.ge_u (local.get $i) (local.get $nbytes)))
        (local.set $blockEnd
          (select
            (local.get $nbytes)
            (i32.add (local.get $i) (i32.const 496))
            (i32.lt_u (i32.sub (local.get $nbytes) (local.get $i)) (i32.const 496))))
        (local.set $cc (v128.const i32x4 0 0 0 0))
        (loop $chunk
          (local.set $dv (v128.load align=1 (i32.add (local.get $d) (local.get $i))))
          ;; bit 0: half adder
          (local.set $x (v128.and (local.get $dv) (v128.load align=1 (i32.add (local.get $p0) (local.get $i)))))
          (local.set $c (v128.and (local.get $a0) (local.get $x)))
          (local.set $a0 (v128.xor (local.get $a0) (local.get $x)))
          ;; bits 1..3: full adders; carry = majority(a, x, c) = (a == x) ? a : c
          (local.set $x (v128.and (local.get $dv) (v128.load align=1 (i32.add (local.get $p1) (local.get $i)))))
          (local.set $t (v128.xor (local.get $a1) (local.get $x)))
          (local.set $a1 (v128.xor (local.get $t) (local.get $c)))
          (local.set $c (v128.bitselect (local.get $c) (local.get $x) (local.get $t)))
          (local.set $x (v128.and (local.get $dv) (v128.load align=1 (i32.add (local.get $p2) (local.get $i)))))
          (local.set $t (v128.xor (local.get $a2) (local.get $x)))
          (local.set $a2 (v128.xor (local.get $t) (local.get $c)))
          (local.set $c (v128.bitselect (local.get $c) (local.get $x) (local.get $t)))
          (local.set $x (v128.and (local.get $dv) (v128.load align=1 (i32.add (local.get $p3) (local.get $i)))))
          (local.set $t (v128.xor (local.get $a3) (local.get $x)))
          (local.set $a3 (v128.xor (local.get $t) (local.get $c)))
          (local.set $c (v128.bitselect (local.get $c) (local.get $x) (local.get $t)))
          ;; carry out of bit 3 (worth 16)
          (local.set $cc (i8x16.add (local.get $cc) (i8x16.popcnt (local.get $c))))
          (local.set $i (i32.add (local.get $i) (i32.const 16)))
          (br_if $chunk (i32.lt_u (local.get $i) (local.get $blockEnd))))
        (local.set $acc32
          (i32x4.add (local.get $acc32)
            (i32x4.extadd_pairwise_i16x8_u
              (i16x8.shl (i16x8.extadd_pairwise_i8x16_u (local.get $cc)) (i32.const 4)))))
        (br $block)))
    ;; read the counters out: Horner in u8 lanes (<= 8 * 15 = 120), then widen
    (local.set $w (i8x16.popcnt (local.get $a3)))
    (local.set $w (i8x16.add (i8x16.add (local.get $w) (local.get $w)) (i8x16.popcnt (local.get $a2))))
    (local.set $w (i8x16.add (i8x16.add (local.get $w) (local.get $w)) (i8x16.popcnt (local.get $a1))))
    (local.set $w (i8x16.add (i8x16.add (local.get $w) (local.get $w)) (i8x16.popcnt (local.get $a0))))
    (local.set $acc32
      (i32x4.add (local.get $acc32)
        (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $w)))))
    (call $hsumI32 (local.get $acc32)))

  ;; int4BitDotProduct(q, d, n): sum over p = 0..3 of popcount(plane_p AND doc) << p, where
  ;; plane p is the n bytes at q + p*n and doc is the n bytes at d. Whole 16-byte chunks go
  ;; through $bitDot; the rest 8 bytes at a time with i64.popcnt, then byte by byte, so nothing
  ;; outside [q, q+4n) and [d, d+n) is read.
  (func $int4BitDotProduct (export "int4BitDotProduct")
    (param $q i32) (param $d i32) (param $n i32) (result i32)
    (local $q1 i32) (local $q2 i32) (local $q3 i32)
    (local $i i32) (local $sum i32) (local $x i64) (local $xb i32)
    (local.set $q1 (i32.add (local.get $q) (local.get $n)))
    (local.set $q2 (i32.add (local.get $q1) (local.get $n)))
    (local.set $q3 (i32.add (local.get $q2) (local.get $n)))
    (local.set $i (i32.and (local.get $n) (i32.const -16)))
    (local.set $sum (call $bitDot (local.get $q) (local.get $n) (local.get $d) (local.get $i)))
    (block $t8Done
      (loop $t8
        (br_if $t8Done (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $n)))
        (local.set $x (i64.load align=1 (i32.add (local.get $d) (local.get $i))))
        (local.set $sum
          (i32.add (local.get $sum)
            (i32.wrap_i64
              (i64.add
                (i64.add
                  (i64.popcnt (i64.and (local.get $x)
                    (i64.load align=1 (i32.add (local.get $q) (local.get $i)))))
                  (i64.shl (i64.popcnt (i64.and (local.get $x)
                    (i64.load align=1 (i32.add (local.get $q1) (local.get $i))))) (i64.const 1)))
                (i64.add
                  (i64.shl (i64.popcnt (i64.and (local.get $x)
                    (i64.load align=1 (i32.add (local.get $q2) (local.get $i))))) (i64.const 2))
                  (i64.shl (i64.popcnt (i64.and (local.get $x)
                    (i64.load align=1 (i32.add (local.get $q3) (local.get $i))))) (i64.const 3)))))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $t8)))
    (block $t1Done
      (loop $t1
        (br_if $t1Done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $xb (i32.load8_u (i32.add (local.get $d) (local.get $i))))
        (local.set $sum
          (i32.add (local.get $sum)
            (i32.add
              (i32.add
                (i32.popcnt (i32.and (local.get $xb)
                  (i32.load8_u (i32.add (local.get $q) (local.get $i)))))
                (i32.shl (i32.popcnt (i32.and (local.get $xb)
                  (i32.load8_u (i32.add (local.get $q1) (local.get $i))))) (i32.const 1)))
              (i32.add
                (i32.shl (i32.popcnt (i32.and (local.get $xb)
                  (i32.load8_u (i32.add (local.get $q2) (local.get $i))))) (i32.const 2))
                (i32.shl (i32.popcnt (i32.and (local.get $xb)
                  (i32.load8_u (i32.add (local.get $q3) (local.get $i))))) (i32.const 3))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $t1)))
    (local.get $sum))

  ;; ---------------------------------------------------------------------------------------
  ;; osqScore: Lucene's 1-bit x 4-bit OSQ estimator (Lucene104ScalarQuantizedVectorScorer's
  ;; quantizedScore; record layout in segments/quantized/ScalarQuantizedVectorsFormat.ts) for n doc records, written as f32 to out[k].
  ;;
  ;; Record k is ords[k] when ords != 0 (an i32 array), else start + k. Records are
  ;; [code codeBytes][lower f32][upper f32][additionalCorrection f32][componentSum i32], packed
  ;; back to back with no alignment (29 bytes for 100 dims), so every load is align=1.
  ;;
  ;; The query planes (4 x codeBytes at `planes`) are first copied to `pad` with each plane
  ;; zero-padded to stride = codeBytes rounded up to 16 (pad must hold 4 * stride bytes). The
  ;; $bitDot then reads whole 16-byte chunks of the doc code: the bytes past the code belong to
  ;; the record's 16 bytes of corrections (so the load stays inside the record) and meet zero
  ;; plane bytes, so they add nothing.
  ;;
  ;; Arithmetic, float32 throughout, in Lucene's order (checked against apache/lucene
  ;; lucene/core/src/java/org/apache/lucene/codecs/lucene104/Lucene104ScalarQuantizedVectorScorer.java
  ;; at eb31ec0: the max(d2, 0) clamp is EUCLIDEAN-only, the [-1, 1] clamp DOT_PRODUCT/COSINE-only,
  ;; MIP is unclamped; VectorUtil.scaleMaxInnerProductScore computes 1 / (1 + -1 * s'), equal to
  ;; 1 / (1 - s') since negation is exact):
  ;;   lx = ux - ax            (Lucene multiplies by the 1-bit scale 1f; x * 1f == x)
  ;;   ly = (uy - ay) * (1f/15f)
  ;;   s  = ((ax*ay)*D + (ay*lx)*x1) + (ax*ly)*y1) + (lx*ly)*qc   (D, x1, y1, qc as float)
  ;;   EUCLIDEAN (0):  d2 = (corrY + corrX) - 2*s;  score = 1 / (1 + max(d2, 0))
  ;;   others:         s' = s + ((corrY + corrX) - centroidDP)
  ;;     MAXIMUM_INNER_PRODUCT (3): s' < 0 ? 1 / (1 - s') : s' + 1
  ;;     DOT_PRODUCT (1), COSINE (2): (1 + min(max(s', -1), 1)) / 2
  (func $osqScore (export "osqScore")
    (param $planes i32) (param $codeBytes i32) (param $pad i32)
    (param $records i32) (param $recordSize i32)
    (param $ords i32) (param $start i32) (param $n i32) (param $out i32)
    (param $ay f32) (param $uy f32) (param $y1 i32) (param $corrY f32)
    (param $dims i32) (param $sim i32) (param $centroidDP f32)
    (call $osqRecords
      (call $padPlanes (local.get $planes) (local.get $codeBytes) (local.get $pad))
      (local.get $pad) (local.get $codeBytes) (local.get $records) (local.get $recordSize)
      (local.get $ords) (local.get $start) (local.get $n) (local.get $out)
      (local.get $ay) (f32.mul (f32.sub (local.get $uy) (local.get $ay)) (f32.const 0x1.111112p-4))
      (f32.convert_i32_s (local.get $dims)) (f32.convert_i32_s (local.get $y1))
      (local.get $corrY) (local.get $sim) (local.get $centroidDP)))

  ;; Copies the 4 planes (codeBytes each) to pad with each plane zero-padded to a 16-byte stride;
  ;; returns the stride.
  (func $padPlanes (param $planes i32) (param $codeBytes i32) (param $pad i32) (result i32)
    (local $stride i32) (local $p i32)
    (local.set $stride (i32.and (i32.add (local.get $codeBytes) (i32.const 15)) (i32.const -16)))
    (loop $padPlane
      (memory.copy
        (i32.add (local.get $pad) (i32.mul (local.get $p) (local.get $stride)))
        (i32.add (local.get $planes) (i32.mul (local.get $p) (local.get $codeBytes)))
        (local.get $codeBytes))
      (memory.fill
        (i32.add (i32.add (local.get $pad) (i32.mul (local.get $p) (local.get $stride)))
          (local.get $codeBytes))
        (i32.const 0)
        (i32.sub (local.get $stride) (local.get $codeBytes)))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (br_if $padPlane (i32.lt_u (local.get $p) (i32.const 4))))
    (local.get $stride))

  ;; The record loop of osqScore over padded planes; ly = (uy - ay) / 15 (as 1f/15f), df = dims
  ;; and y1f = the query's component sum as float.
  (func $osqRecords
    (param $stride i32) (param $pad i32) (param $codeBytes i32)
    (param $records i32) (param $recordSize i32)
    (param $ords i32) (param $start i32) (param $n i32) (param $out i32)
    (param $ay f32) (param $ly f32) (param $df f32) (param $y1f f32) (param $corrY f32)
    (param $sim i32) (param $centroidDP f32)
    (local $p i32) (local $touch i32)
    (local $k i32) (local $rec i32) (local $cor i32)
    (local $ax f32) (local $lx f32) (local $cx f32) (local $s f32) (local $r f32)
    ;; Random ords (graph search): touch every cache line of every record first. The touches are
    ;; independent loads, so the core keeps many misses in flight, while the scoring loop below
    ;; is ~200 instructions per record and out-of-order execution alone overlaps only 2-3
    ;; records' misses (measured ~1.3x faster on 1024-dim records spread over 144 MB). wasm has
    ;; no prefetch instruction; the loaded bytes are summed into $touchSink so the loads stay.
    (if (i32.and (i32.ne (local.get $ords) (i32.const 0)) (i32.gt_s (local.get $n) (i32.const 1)))
      (then
        (loop $touchRecord
          (local.set $rec
            (i32.add (local.get $records)
              (i32.mul (local.get $recordSize)
                (i32.load (i32.add (local.get $ords) (i32.shl (local.get $k) (i32.const 2)))))))
          (local.set $p (i32.const 0))
          (loop $touchLine
            (local.set $touch (i32.add (local.get $touch) (i32.load8_u (i32.add (local.get $rec) (local.get $p)))))
            (local.set $p (i32.add (local.get $p) (i32.const 64)))
            (br_if $touchLine (i32.lt_u (local.get $p) (local.get $recordSize))))
          (local.set $touch
            (i32.add (local.get $touch)
              (i32.load8_u (i32.sub (i32.add (local.get $rec) (local.get $recordSize)) (i32.const 1)))))
          (local.set $k (i32.add (local.get $k) (i32.const 1)))
          (br_if $touchRecord (i32.lt_u (local.get $k) (local.get $n))))
        (global.set $touchSink (local.get $touch))
        (local.set $k (i32.const 0))))

    (if (i32.gt_s (local.get $n) (i32.const 0))
      (then
        (loop $record
          (local.set $rec
            (i32.add (local.get $records)
              (i32.mul (local.get $recordSize)
                (if (result i32) (local.get $ords)
                  (then (i32.load (i32.add (local.get $ords) (i32.shl (local.get $k) (i32.const 2)))))
                  (else (i32.add (local.get $start) (local.get $k)))))))

          (local.set $cor (i32.add (local.get $rec) (local.get $codeBytes)))
          (local.set $ax (f32.load align=1 (local.get $cor)))
          (local.set $lx (f32.sub (f32.load offset=4 align=1 (local.get $cor)) (local.get $ax)))
          (local.set $cx (f32.load offset=8 align=1 (local.get $cor)))
          (local.set $s
            (f32.add
              (f32.add
                (f32.add
                  (f32.mul (f32.mul (local.get $ax) (local.get $ay)) (local.get $df))
                  (f32.mul (f32.mul (local.get $ay) (local.get $lx))
                    (f32.convert_i32_s (i32.load offset=12 align=1 (local.get $cor)))))
                (f32.mul (f32.mul (local.get $ax) (local.get $ly)) (local.get $y1f)))
              (f32.mul (f32.mul (local.get $lx) (local.get $ly))
                (f32.convert_i32_s
                  (call $bitDot (local.get $pad) (local.get $stride) (local.get $rec) (local.get $stride))))))
          (if (i32.eqz (local.get $sim))
            (then
              (local.set $r
                (f32.div (f32.const 1)
                  (f32.add (f32.const 1)
                    (f32.max
                      (f32.sub (f32.add (local.get $corrY) (local.get $cx))
                        (f32.mul (f32.const 2) (local.get $s)))
                      (f32.const 0))))))
            (else
              (local.set $s
                (f32.add (local.get $s)
                  (f32.sub (f32.add (local.get $corrY) (local.get $cx)) (local.get $centroidDP))))
              (if (i32.eq (local.get $sim) (i32.const 3))
                (then
                  (local.set $r
                    (if (result f32) (f32.lt (local.get $s) (f32.const 0))
                      (then (f32.div (f32.const 1) (f32.sub (f32.const 1) (local.get $s))))
                      (else (f32.add (local.get $s) (f32.const 1))))))
                (else
                  (local.set $r
                    (f32.div
                      (f32.add (f32.const 1)
                        (f32.min (f32.max (local.get $s) (f32.const -1)) (f32.const 1)))
                      (f32.const 2)))))))
          (f32.store align=1
            (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 2)))
            (local.get $r))
          (local.set $k (i32.add (local.get $k) (i32.const 1)))
          (br_if $record (i32.lt_u (local.get $k) (local.get $n)))))))

  ;; ---------------------------------------------------------------------------------------
  ;; HNSW level-0 beam search: HnswGraphSearcher.searchLevel on level 0 from one entry point,
  ;; scoring with the 1-bit estimator above, or the multi-bit one below ($encodedRecords, by the
  ;; context's docBits), and with identical results (same visit order, same
  ;; queue tie rules, same nextUp stopping rule, same visit-limit accounting).
  ;;
  ;; Both queues are min-heaps of i64 keys, Lucene's NeighborQueue encoding:
  ;;   results    (worst on top):  sortable(score) << 32 | ~node   (equal scores: larger node worse)
  ;;   candidates (best on top):  ~sortable(score) << 32 | node    (equal scores: smaller node first)
  ;; sortable(f) = bits(f) ^ ((bits(f) >> 31) & 0x7fffffff) (NumericUtils.floatToSortableInt).
  ;;
  ;; The search context at $ctx: 4-byte fields whose offsets are defined once, in
  ;; SearchContextLayout.ts (what each field holds is documented there); each `offset=` below
  ;; names its field in double braces, replaced by the field's offset before this text is
  ;; compiled. In short: the query (planes, corrections), the segment (records, level-0 lists
  ;; with their stride, live bitset), the worker's scratch (visit stamps and their generation,
  ;; both heaps, neighbour buffers) and where the results go.
  ;; Returns the number of results written.
  (func $sortable (param $s f32) (result i32)
    (local $b i32)
    (local.set $b (i32.reinterpret_f32 (local.get $s)))
    (i32.xor (local.get $b) (i32.and (i32.shr_s (local.get $b) (i32.const 31)) (i32.const 0x7fffffff))))

  (func $unsortable (param $v i32) (result f32)
    (f32.reinterpret_i32
      (i32.xor (local.get $v) (i32.and (i32.shr_s (local.get $v) (i32.const 31)) (i32.const 0x7fffffff)))))

  ;; Math.nextUp(float)
  (func $nextUp (param $v f32) (result f32)
    (if (f32.ne (local.get $v) (local.get $v)) (then (return (local.get $v))))
    (if (f32.eq (local.get $v) (f32.const inf)) (then (return (local.get $v))))
    (if (f32.eq (local.get $v) (f32.const 0)) (then (return (f32.const 0x1p-149))))
    (f32.reinterpret_i32
      (i32.add (i32.reinterpret_f32 (local.get $v))
        (select (i32.const 1) (i32.const -1) (f32.gt (local.get $v) (f32.const 0))))))

  ;; Min-heap of i64 at $h: place $key at position $i (a new last slot) and sift it up.
  (func $heapUp (param $h i32) (param $i i32) (param $key i64)
    (local $p i32) (local $pk i64)
    (block $done
      (loop $up
        (br_if $done (i32.eqz (local.get $i)))
        (local.set $p (i32.shr_u (i32.sub (local.get $i) (i32.const 1)) (i32.const 1)))
        (local.set $pk (i64.load (i32.add (local.get $h) (i32.shl (local.get $p) (i32.const 3)))))
        (br_if $done (i64.le_s (local.get $pk) (local.get $key)))
        (i64.store (i32.add (local.get $h) (i32.shl (local.get $i) (i32.const 3))) (local.get $pk))
        (local.set $i (local.get $p))
        (br $up)))
    (i64.store (i32.add (local.get $h) (i32.shl (local.get $i) (i32.const 3))) (local.get $key)))

  ;; Min-heap of $n i64 at $h: put $key at position $i (its old entry is discarded) and sift it down.
  (func $heapDown (param $h i32) (param $n i32) (param $i i32) (param $key i64)
    (local $c i32) (local $ck i64) (local $rk i64)
    (block $done
      (loop $down
        (local.set $c (i32.add (i32.shl (local.get $i) (i32.const 1)) (i32.const 1)))
        (br_if $done (i32.ge_u (local.get $c) (local.get $n)))
        (local.set $ck (i64.load (i32.add (local.get $h) (i32.shl (local.get $c) (i32.const 3)))))
        (if (i32.lt_u (i32.add (local.get $c) (i32.const 1)) (local.get $n))
          (then
            (local.set $rk (i64.load offset=8 (i32.add (local.get $h) (i32.shl (local.get $c) (i32.const 3)))))
            (if (i64.lt_s (local.get $rk) (local.get $ck))
              (then
                (local.set $c (i32.add (local.get $c) (i32.const 1)))
                (local.set $ck (local.get $rk))))))
        (br_if $done (i64.le_s (local.get $key) (local.get $ck)))
        (i64.store (i32.add (local.get $h) (i32.shl (local.get $i) (i32.const 3))) (local.get $ck))
        (local.set $i (local.get $c))
        (br $down)))
    (i64.store (i32.add (local.get $h) (i32.shl (local.get $i) (i32.const 3))) (local.get $key)))

  (func (export "hnswSearchL0") (param $ctx i32) (result i32)
    (local $codeBytes i32) (local $pad i32) (local $padStride i32) (local $records i32) (local $recordSize i32)
    (local $ay f32) (local $ly f32) (local $df f32) (local $y1f f32) (local $corrY f32)
    (local $sim i32) (local $centroidDP f32)
    (local $adj i32) (local $stride i32) (local $visited i32) (local $gen i32) (local $live i32)
    (local $cand i32) (local $res i32) (local $k i32) (local $nbrOrds i32) (local $nbrScores i32)
    (local $visitedCount i32) (local $limit i32)
    (local $nc i32) (local $nr i32) (local $minAccepted f32) (local $explore i32) (local $top f32)
    (local $node i32) (local $base i32) (local $cnt i32) (local $budget i32) (local $n i32)
    (local $j i32) (local $f i32) (local $i i32) (local $s f32) (local $key i64) (local $size i32)
    (local $outOrds i32) (local $outScores i32)
    (local $docBits i32) (local $query i32) (local $planeBytes i32) (local $lxScale f32)
    (local $twoHop i32) (local $seeds i32) (local $seedCount i32) (local $base2 i32) (local $cnt2 i32) (local $j2 i32)
    (local.set $codeBytes (i32.load offset={{ctx.codeBytes}} (local.get $ctx)))
    (local.set $pad (i32.load offset={{ctx.pad}} (local.get $ctx)))
    (local.set $records (i32.load offset={{ctx.records}} (local.get $ctx)))
    (local.set $recordSize (i32.load offset={{ctx.recordSize}} (local.get $ctx)))
    (local.set $ay (f32.load offset={{ctx.ay}} (local.get $ctx)))
    ;; queryScale is 1f/15f for the 4-bit queries of 1- and 2-bit docs (osqScore's constant)
    (local.set $ly (f32.mul (f32.sub (f32.load offset={{ctx.uy}} (local.get $ctx)) (local.get $ay))
      (f32.load offset={{ctx.queryScale}} (local.get $ctx))))
    (local.set $y1f (f32.convert_i32_s (i32.load offset={{ctx.y1}} (local.get $ctx))))
    (local.set $corrY (f32.load offset={{ctx.corrY}} (local.get $ctx)))
    (local.set $df (f32.convert_i32_s (i32.load offset={{ctx.dims}} (local.get $ctx))))
    (local.set $sim (i32.load offset={{ctx.similarity}} (local.get $ctx)))
    (local.set $centroidDP (f32.load offset={{ctx.centroidDP}} (local.get $ctx)))
    (local.set $adj (i32.load offset={{ctx.adj}} (local.get $ctx)))
    (local.set $stride (i32.shl (i32.load offset={{ctx.stride}} (local.get $ctx)) (i32.const 2)))
    (local.set $visited (i32.load offset={{ctx.visited}} (local.get $ctx)))
    (local.set $gen (i32.load offset={{ctx.gen}} (local.get $ctx)))
    (local.set $live (i32.load offset={{ctx.live}} (local.get $ctx)))
    (local.set $twoHop (i32.load offset={{ctx.twoHop}} (local.get $ctx)))
    (local.set $seeds (i32.load offset={{ctx.seeds}} (local.get $ctx)))
    (local.set $seedCount (i32.load offset={{ctx.seedCount}} (local.get $ctx)))
    (local.set $cand (i32.load offset={{ctx.candidates}} (local.get $ctx)))
    (local.set $res (i32.load offset={{ctx.results}} (local.get $ctx)))
    (local.set $k (i32.load offset={{ctx.k}} (local.get $ctx)))
    (local.set $nbrOrds (i32.load offset={{ctx.nbrOrds}} (local.get $ctx)))
    (local.set $nbrScores (i32.load offset={{ctx.nbrScores}} (local.get $ctx)))
    (local.set $visitedCount (i32.load offset={{ctx.visitedCount}} (local.get $ctx)))
    (local.set $limit (i32.load offset={{ctx.visitLimit}} (local.get $ctx)))
    (local.set $docBits (i32.load offset={{ctx.docBits}} (local.get $ctx)))
    (local.set $lxScale (f32.load offset={{ctx.lxScale}} (local.get $ctx)))
    (local.set $query (i32.load offset={{ctx.planes}} (local.get $ctx)))
    (local.set $planeBytes (i32.shr_u (i32.add (i32.load offset={{ctx.dims}} (local.get $ctx)) (i32.const 7)) (i32.const 3)))
    ;; 1-bit docs: the 4 query planes of codeBytes padded; 2-bit docs: of planeBytes (the doc code
    ;; is two planes); 4, 7 and 8 bits read the query bytes in place.
    (if (i32.le_u (local.get $docBits) (i32.const 2))
      (then
        (local.set $padStride
          (call $padPlanes (local.get $query)
            (select (local.get $codeBytes) (local.get $planeBytes) (i32.eq (local.get $docBits) (i32.const 1)))
            (local.get $pad)))))

    ;; the entry point, then the seeds (a filtered search's extra entry points): each scored once,
    ;; a candidate, and a result when accepted; the visit limit ends the list
    (local.set $i (i32.const -1))
    (block $entered
      (loop $enter
        (local.set $f
          (if (result i32) (i32.lt_s (local.get $i) (i32.const 0))
            (then (i32.load offset={{ctx.entry}} (local.get $ctx)))
            (else (i32.load (i32.add (local.get $seeds) (i32.shl (local.get $i) (i32.const 2)))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (if (i32.ne (i32.load (i32.add (local.get $visited) (i32.shl (local.get $f) (i32.const 2)))) (local.get $gen))
          (then
            (i32.store (i32.add (local.get $visited) (i32.shl (local.get $f) (i32.const 2))) (local.get $gen))
            (br_if $entered (i32.ge_s (local.get $visitedCount) (local.get $limit)))
            (i32.store (local.get $nbrOrds) (local.get $f))
            (if (i32.eq (local.get $docBits) (i32.const 1))
              (then
                (call $osqRecords (local.get $padStride) (local.get $pad) (local.get $codeBytes)
                  (local.get $records) (local.get $recordSize) (local.get $nbrOrds) (i32.const 0) (i32.const 1)
                  (local.get $nbrScores) (local.get $ay) (local.get $ly) (local.get $df) (local.get $y1f)
                  (local.get $corrY) (local.get $sim) (local.get $centroidDP)))
              (else
                (call $encodedRecords (local.get $query) (local.get $docBits) (local.get $codeBytes) (local.get $planeBytes)
                  (local.get $padStride) (local.get $pad) (local.get $records) (local.get $recordSize)
                  (local.get $nbrOrds) (i32.const 0) (i32.const 1) (local.get $nbrScores)
                  (local.get $ay) (local.get $ly) (local.get $lxScale) (local.get $df) (local.get $y1f) (local.get $corrY)
                  (local.get $sim) (local.get $centroidDP))))
            (local.set $s (f32.load (local.get $nbrScores)))
            (local.set $visitedCount (i32.add (local.get $visitedCount) (i32.const 1)))
            (call $heapUp (local.get $cand) (local.get $nc)
              (i64.or (i64.shl (i64.extend_i32_s (i32.xor (call $sortable (local.get $s)) (i32.const -1))) (i64.const 32))
                (i64.extend_i32_u (local.get $f))))
            (local.set $nc (i32.add (local.get $nc) (i32.const 1)))
            (if (i32.or (i32.eqz (local.get $live))
                  (i32.and (i32.shr_u (i32.load (i32.add (local.get $live) (i32.shl (i32.shr_u (local.get $f) (i32.const 5)) (i32.const 2))))
                    (i32.and (local.get $f) (i32.const 31))) (i32.const 1)))
              (then
                (call $heapUp (local.get $res) (local.get $nr)
                  (i64.or (i64.shl (i64.extend_i32_s (call $sortable (local.get $s))) (i64.const 32))
                    (i64.extend_i32_u (i32.xor (local.get $f) (i32.const -1)))))
                (local.set $nr (i32.add (local.get $nr) (i32.const 1)))))))
        (br_if $enter (i32.lt_s (local.get $i) (local.get $seedCount)))))

    (local.set $minAccepted
      (call $nextUp
        (if (result f32) (i32.ge_u (local.get $nr) (local.get $k))
          (then (call $unsortable (i32.wrap_i64 (i64.shr_s (i64.load (local.get $res)) (i64.const 32)))))
          (else (f32.const -inf)))))
    (local.set $explore (i32.const 1))

    (block $exit
      (loop $main
        (br_if $exit (i32.eqz (local.get $nc)))
        (br_if $exit (i32.ge_s (local.get $visitedCount) (local.get $limit)))
        (local.set $key (i64.load (local.get $cand)))
        (local.set $top (call $unsortable (i32.xor (i32.wrap_i64 (i64.shr_s (local.get $key) (i64.const 32))) (i32.const -1))))
        (if (f32.lt (local.get $top) (local.get $minAccepted))
          (then
            (if (i32.and (local.get $explore) (f32.eq (call $nextUp (local.get $top)) (local.get $minAccepted)))
              (then (local.set $explore (i32.const 0)))
              (else (br $exit)))))
        ;; pop the best candidate
        (local.set $node (i32.wrap_i64 (local.get $key)))
        (local.set $nc (i32.sub (local.get $nc) (i32.const 1)))
        (if (i32.gt_u (local.get $nc) (i32.const 0))
          (then
            (call $heapDown (local.get $cand) (local.get $nc) (i32.const 0)
              (i64.load (i32.add (local.get $cand) (i32.shl (local.get $nc) (i32.const 3)))))))
        ;; its unvisited neighbours, within the visit budget
        (local.set $base (i32.add (local.get $adj) (i32.mul (local.get $node) (local.get $stride))))
        (local.set $cnt (i32.load (local.get $base)))
        (local.set $budget (i32.sub (local.get $limit) (local.get $visitedCount)))
        (local.set $n (i32.const 0))
        (local.set $j (i32.const 1))
        (block $nbrDone
          (loop $nbr
            (br_if $nbrDone (i32.gt_s (local.get $j) (local.get $cnt)))
            (local.set $f (i32.load (i32.add (local.get $base) (i32.shl (local.get $j) (i32.const 2)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br_if $nbr (i32.eq (i32.load (i32.add (local.get $visited) (i32.shl (local.get $f) (i32.const 2)))) (local.get $gen)))
            (i32.store (i32.add (local.get $visited) (i32.shl (local.get $f) (i32.const 2))) (local.get $gen))
            (if (i32.or (i32.eqz (local.get $twoHop))
                  (i32.and (i32.shr_u (i32.load (i32.add (local.get $live) (i32.shl (i32.shr_u (local.get $f) (i32.const 5)) (i32.const 2))))
                    (i32.and (local.get $f) (i32.const 31))) (i32.const 1)))
              (then
                (br_if $nbrDone (i32.ge_s (local.get $n) (local.get $budget)))
                (i32.store (i32.add (local.get $nbrOrds) (i32.shl (local.get $n) (i32.const 2))) (local.get $f))
                (local.set $n (i32.add (local.get $n) (i32.const 1)))
                (br $nbr)))
            ;; filtered traversal, $f rejected: cross it to its accepted unvisited neighbours,
            ;; unless this hop already holds half as many accepted nodes as the node has neighbours
            (br_if $nbr (i32.ge_s (i32.shl (local.get $n) (i32.const 1)) (local.get $cnt)))
            (local.set $base2 (i32.add (local.get $adj) (i32.mul (local.get $f) (local.get $stride))))
            (local.set $cnt2 (i32.load (local.get $base2)))
            (local.set $j2 (i32.const 1))
            (block $hop2Done
              (loop $hop2
                (br_if $hop2Done (i32.gt_s (local.get $j2) (local.get $cnt2)))
                (local.set $f (i32.load (i32.add (local.get $base2) (i32.shl (local.get $j2) (i32.const 2)))))
                (local.set $j2 (i32.add (local.get $j2) (i32.const 1)))
                ;; the filter bit first: the bitset stays in cache, the stamps (4 bytes per node)
                ;; do not, and most second-hop nodes of a selective filter are rejected
                (br_if $hop2 (i32.eqz (i32.and (i32.shr_u (i32.load (i32.add (local.get $live) (i32.shl (i32.shr_u (local.get $f) (i32.const 5)) (i32.const 2))))
                  (i32.and (local.get $f) (i32.const 31))) (i32.const 1))))
                (br_if $hop2 (i32.eq (i32.load (i32.add (local.get $visited) (i32.shl (local.get $f) (i32.const 2)))) (local.get $gen)))
                (i32.store (i32.add (local.get $visited) (i32.shl (local.get $f) (i32.const 2))) (local.get $gen))
                (br_if $nbrDone (i32.ge_s (local.get $n) (local.get $budget)))
                (i32.store (i32.add (local.get $nbrOrds) (i32.shl (local.get $n) (i32.const 2))) (local.get $f))
                (local.set $n (i32.add (local.get $n) (i32.const 1)))
                (br $hop2)))
            (br $nbr)))
        (br_if $main (i32.eqz (local.get $n)))
        (if (i32.eq (local.get $docBits) (i32.const 1))
          (then
            (call $osqRecords (local.get $padStride) (local.get $pad) (local.get $codeBytes)
              (local.get $records) (local.get $recordSize) (local.get $nbrOrds) (i32.const 0) (local.get $n)
              (local.get $nbrScores) (local.get $ay) (local.get $ly) (local.get $df) (local.get $y1f)
              (local.get $corrY) (local.get $sim) (local.get $centroidDP)))
          (else
            (call $encodedRecords (local.get $query) (local.get $docBits) (local.get $codeBytes) (local.get $planeBytes)
              (local.get $padStride) (local.get $pad) (local.get $records) (local.get $recordSize)
              (local.get $nbrOrds) (i32.const 0) (local.get $n) (local.get $nbrScores)
              (local.get $ay) (local.get $ly) (local.get $lxScale) (local.get $df) (local.get $y1f) (local.get $corrY)
              (local.get $sim) (local.get $centroidDP))))
        (local.set $visitedCount (i32.add (local.get $visitedCount) (local.get $n)))
        (local.set $i (i32.const 0))
        (loop $collect
          (local.set $s (f32.load (i32.add (local.get $nbrScores) (i32.shl (local.get $i) (i32.const 2)))))
          (if (f32.ge (local.get $s) (local.get $minAccepted))
            (then
              (local.set $f (i32.load (i32.add (local.get $nbrOrds) (i32.shl (local.get $i) (i32.const 2)))))
              (call $heapUp (local.get $cand) (local.get $nc)
                (i64.or (i64.shl (i64.extend_i32_s (i32.xor (call $sortable (local.get $s)) (i32.const -1))) (i64.const 32))
                  (i64.extend_i32_u (local.get $f))))
              (local.set $nc (i32.add (local.get $nc) (i32.const 1)))
              (if (i32.or (i32.eqz (local.get $live))
                    (i32.and (i32.shr_u (i32.load (i32.add (local.get $live) (i32.shl (i32.shr_u (local.get $f) (i32.const 5)) (i32.const 2))))
                      (i32.and (local.get $f) (i32.const 31))) (i32.const 1)))
                (then
                  (local.set $key
                    (i64.or (i64.shl (i64.extend_i32_s (call $sortable (local.get $s))) (i64.const 32))
                      (i64.extend_i32_u (i32.xor (local.get $f) (i32.const -1)))))
                  (if (i32.lt_u (local.get $nr) (local.get $k))
                    (then
                      (call $heapUp (local.get $res) (local.get $nr) (local.get $key))
                      (local.set $nr (i32.add (local.get $nr) (i32.const 1)))
                      (local.set $minAccepted
                        (call $nextUp
                          (if (result f32) (i32.ge_u (local.get $nr) (local.get $k))
                            (then (call $unsortable (i32.wrap_i64 (i64.shr_s (i64.load (local.get $res)) (i64.const 32)))))
                            (else (f32.const -inf))))))
                    (else
                      (if (i64.ge_s (local.get $key) (i64.load (local.get $res)))
                        (then
                          (call $heapDown (local.get $res) (local.get $nr) (i32.const 0) (local.get $key))
                          (local.set $minAccepted
                            (call $nextUp
                              (call $unsortable (i32.wrap_i64 (i64.shr_s (i64.load (local.get $res)) (i64.const 32))))))))))))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $collect (i32.lt_u (local.get $i) (local.get $n))))
        (br $main)))

    (i32.store offset={{ctx.visitedCount}} (local.get $ctx) (local.get $visitedCount))
    ;; the results, best first: the min-heap pops the worst first
    (local.set $outOrds (i32.load offset={{ctx.outOrds}} (local.get $ctx)))
    (local.set $outScores (i32.load offset={{ctx.outScores}} (local.get $ctx)))
    (local.set $size (local.get $nr))
    (block $drained
      (loop $drain
        (br_if $drained (i32.eqz (local.get $nr)))
        (local.set $key (i64.load (local.get $res)))
        (local.set $nr (i32.sub (local.get $nr) (i32.const 1)))
        (i32.store (i32.add (local.get $outOrds) (i32.shl (local.get $nr) (i32.const 2)))
          (i32.xor (i32.wrap_i64 (local.get $key)) (i32.const -1)))
        (f32.store (i32.add (local.get $outScores) (i32.shl (local.get $nr) (i32.const 2)))
          (call $unsortable (i32.wrap_i64 (i64.shr_s (local.get $key) (i64.const 32)))))
        (if (i32.gt_u (local.get $nr) (i32.const 0))
          (then
            (call $heapDown (local.get $res) (local.get $nr) (i32.const 0)
              (i64.load (i32.add (local.get $res) (i32.shl (local.get $nr) (i32.const 3)))))))
        (br $drain)))
    (local.get $size))

  ;; ---------------------------------------------------------------------------------------
  ;; osqLossAndGrid: OptimizedScalarQuantizer.lossAndGrid for query-side quantization, two
  ;; components per f64x2 step. Same per-component arithmetic as the JS (double, with the grid
  ;; point s = (float)(k / last) and Java's half-up rounding, NaN rounding to 0), but the seven
  ;; sums are accumulated in two lanes (even and odd components) and added at the end, as
  ;; Lucene's vectorized OSQ helpers also reorder them; so intervals can differ from the scalar
  ;; path in the last bits. Index-side (stored) codes never use it.
  ;; Writes (daa, dab, dbb, dax, dbx) as f64 at $grid; returns the anisotropic loss.
  ;; Rounding (inlined twice below; V8 does not inline small wasm calls here): floor(v + 0.5) is
  ;; Math.round for 0 <= v < 2^52 except v = 0.49999999999999994, and NaN must round to 0.
  (func (export "osqLossAndGrid")
    (param $vec i32) (param $dim i32) (param $a f64) (param $b f64) (param $points i32)
    (param $norm2 f64) (param $lambda f64) (param $grid i32) (result f64)
    (local $step f64) (local $last f64) (local $i i32) (local $pairs i32)
    (local $A v128) (local $B v128) (local $STEP v128) (local $STEPINV v128) (local $GSI v128) (local $INVLAST v128)
    (local $x v128) (local $c v128) (local $d v128) (local $s v128) (local $oms v128) (local $v v128) (local $y v128)
    (local $xe v128) (local $e v128) (local $daa v128) (local $dab v128) (local $dbb v128) (local $dax v128) (local $dbx v128)
    (local.set $last (f64.convert_i32_s (i32.sub (local.get $points) (i32.const 1))))
    (local.set $step (f64.div (f64.sub (local.get $b) (local.get $a)) (local.get $last)))
    (local.set $A (f64x2.splat (local.get $a)))
    (local.set $B (f64x2.splat (local.get $b)))
    (local.set $STEP (f64x2.splat (local.get $step)))
    (local.set $STEPINV (f64x2.splat (f64.div (f64.const 1) (local.get $step))))
    (local.set $GSI (f64x2.splat (f64.promote_f32
      (f32.div (f32.demote_f64 (local.get $last)) (f32.demote_f64 (f64.sub (local.get $b) (local.get $a)))))))
    ;; (float)(k * (1 / last)) == (float)(k / last) for every grid index k of every bit count
    ;; (checked exhaustively; test/quantization.test.ts), so the division becomes a multiplication.
    (local.set $INVLAST (f64x2.splat (f64.div (f64.const 1) (local.get $last))))
    ;; an odd last component is processed as a pair with a zero whose terms are masked to 0 below
    (local.set $pairs (i32.shr_u (i32.add (local.get $dim) (i32.const 1)) (i32.const 1)))
    (block $done
      (loop $pair
        (br_if $done (i32.ge_u (local.get $i) (local.get $pairs)))
        (local.set $x
          (f64x2.promote_low_f32x4
            (if (result v128) (i32.lt_u (i32.shl (i32.add (local.get $i) (i32.const 1)) (i32.const 1)) (i32.add (local.get $dim) (i32.const 1)))
              (then (v128.load64_zero (i32.add (local.get $vec) (i32.shl (local.get $i) (i32.const 3)))))
              (else (v128.load32_zero (i32.add (local.get $vec) (i32.shl (local.get $i) (i32.const 3))))))))
        ;; clamp as Lucene's min(max(x, a), b) (pmax: x < a ? a : x; pmin: y > b ? b : y), then centre on a
        (local.set $c (f64x2.sub (f64x2.pmin (f64x2.pmax (local.get $x) (local.get $A)) (local.get $B)) (local.get $A)))
        (local.set $d
          (f64x2.sub (local.get $x)
            (f64x2.add (local.get $A)
              (f64x2.mul (local.get $STEP) (v128.andnot
              (local.tee $y (f64x2.floor (f64x2.add (local.tee $v (f64x2.mul (local.get $c) (local.get $STEPINV))) (v128.const f64x2 0.5 0.5))))
              (v128.or (f64x2.ne (local.get $y) (local.get $y))
                (f64x2.eq (local.get $v) (v128.const f64x2 0x1.fffffffffffffp-2 0x1.fffffffffffffp-2))))))))
        (local.set $s
          (f64x2.promote_low_f32x4
            (f32x4.demote_f64x2_zero
              (f64x2.mul (v128.andnot
              (local.tee $y (f64x2.floor (f64x2.add (local.tee $v (f64x2.mul (local.get $c) (local.get $GSI))) (v128.const f64x2 0.5 0.5))))
              (v128.or (f64x2.ne (local.get $y) (local.get $y))
                (f64x2.eq (local.get $v) (v128.const f64x2 0x1.fffffffffffffp-2 0x1.fffffffffffffp-2)))) (local.get $INVLAST)))))
        (local.set $oms (f64x2.sub (v128.const f64x2 1 1) (local.get $s)))
        (if (i32.lt_u (i32.shl (i32.add (local.get $i) (i32.const 1)) (i32.const 1)) (i32.add (local.get $dim) (i32.const 1)))
          (then)
          (else
            ;; the padding lane (x = 0) must add nothing: zero its terms
            (local.set $d (v128.and (local.get $d) (v128.const i64x2 -1 0)))
            (local.set $s (v128.and (local.get $s) (v128.const i64x2 -1 0)))
            (local.set $oms (v128.and (local.get $oms) (v128.const i64x2 -1 0)))))
        (local.set $xe (f64x2.add (local.get $xe) (f64x2.mul (local.get $x) (local.get $d))))
        (local.set $e (f64x2.add (local.get $e) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $daa (f64x2.add (local.get $daa) (f64x2.mul (local.get $oms) (local.get $oms))))
        (local.set $dab (f64x2.add (local.get $dab) (f64x2.mul (local.get $oms) (local.get $s))))
        (local.set $dbb (f64x2.add (local.get $dbb) (f64x2.mul (local.get $s) (local.get $s))))
        (local.set $dax (f64x2.add (local.get $dax) (f64x2.mul (local.get $x) (local.get $oms))))
        (local.set $dbx (f64x2.add (local.get $dbx) (f64x2.mul (local.get $x) (local.get $s))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $pair)))
    (f64.store offset=0 (local.get $grid) (f64.add (f64x2.extract_lane 0 (local.get $daa)) (f64x2.extract_lane 1 (local.get $daa))))
    (f64.store offset=8 (local.get $grid) (f64.add (f64x2.extract_lane 0 (local.get $dab)) (f64x2.extract_lane 1 (local.get $dab))))
    (f64.store offset=16 (local.get $grid) (f64.add (f64x2.extract_lane 0 (local.get $dbb)) (f64x2.extract_lane 1 (local.get $dbb))))
    (f64.store offset=24 (local.get $grid) (f64.add (f64x2.extract_lane 0 (local.get $dax)) (f64x2.extract_lane 1 (local.get $dax))))
    (f64.store offset=32 (local.get $grid) (f64.add (f64x2.extract_lane 0 (local.get $dbx)) (f64x2.extract_lane 1 (local.get $dbx))))
    (f64.add
      (f64.div
        (f64.mul
          (f64.mul (f64.sub (f64.const 1) (local.get $lambda))
            (f64.add (f64x2.extract_lane 0 (local.get $xe)) (f64x2.extract_lane 1 (local.get $xe))))
          (f64.add (f64x2.extract_lane 0 (local.get $xe)) (f64x2.extract_lane 1 (local.get $xe))))
        (local.get $norm2))
      (f64.mul (local.get $lambda)
        (f64.add (f64x2.extract_lane 0 (local.get $e)) (f64x2.extract_lane 1 (local.get $e))))))

  ;; ---------------------------------------------------------------------------------------
  ;; Two more passes of the query quantizer, in the JS quantizer's exact arithmetic (so codes and
  ;; corrections are bit-identical to it; test/quantization.test.ts): the COSINE normalisation
  ;; and the rounding onto the grid. At 1024 dims (fastest of 60 x 1000 calls): normalise 3.7 ->
  ;; 0.55 us, round 4.7 -> 3.2 us, of ~50 us per quantization, run once per segment per query.
  ;; The centring pass stays in JS: Welford's running mean is a chain of dependent f64 divisions,
  ;; as fast in JS (7.8 us) as in wasm (7.6 us).

  ;; osqNormalize: VectorUtil.l2normalize in place. norm2 = Σ v[i]² in Lucene's scalar order
  ;; (above 32 dims four stride-4 f32 accumulators, i.e. the lanes of one f32x4, reduced
  ;; ((l0 + l1) + l2) + l3, then a sequential tail); when norm2 is neither 0 nor within 1e-5 of 1,
  ;; every component is divided by (float)sqrt(norm2). Returns norm2 (0: left unchanged, the
  ;; caller reports the zero vector).
  (func (export "osqNormalize") (param $vec i32) (param $dim i32) (result f32)
    (local $i i32) (local $upper i32) (local $acc v128) (local $n2 f32) (local $len f32) (local $lenv v128) (local $p i32) (local $x f32)
    (if (i32.gt_u (local.get $dim) (i32.const 32))
      (then
        (local.set $upper (i32.and (local.get $dim) (i32.const -4)))
        (block $d (loop $l
          (br_if $d (i32.ge_u (local.get $i) (local.get $upper)))
          (local.set $acc (f32x4.add (local.get $acc)
            (f32x4.mul
              (v128.load align=4 (i32.add (local.get $vec) (i32.shl (local.get $i) (i32.const 2))))
              (v128.load align=4 (i32.add (local.get $vec) (i32.shl (local.get $i) (i32.const 2)))))))
          (local.set $i (i32.add (local.get $i) (i32.const 4)))
          (br $l)))
        (local.set $n2 (f32.add (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
          (f32x4.extract_lane 2 (local.get $acc))) (f32x4.extract_lane 3 (local.get $acc))))))
    (block $d (loop $l
      (br_if $d (i32.ge_u (local.get $i) (local.get $dim)))
      (local.set $x (f32.load (i32.add (local.get $vec) (i32.shl (local.get $i) (i32.const 2)))))
      (local.set $n2 (f32.add (local.get $n2) (f32.mul (local.get $x) (local.get $x))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (if (f32.eq (local.get $n2) (f32.const 0)) (then (return (local.get $n2))))
    (if (f64.le (f64.abs (f64.sub (f64.promote_f32 (local.get $n2)) (f64.const 1))) (f64.const 1e-5)) (then (return (local.get $n2))))
    (local.set $len (f32.demote_f64 (f64.sqrt (f64.promote_f32 (local.get $n2)))))
    (local.set $lenv (f32x4.splat (local.get $len)))
    (local.set $i (i32.const 0))
    (local.set $upper (i32.and (local.get $dim) (i32.const -4)))
    (block $d (loop $l
      (br_if $d (i32.ge_u (local.get $i) (local.get $upper)))
      (local.set $p (i32.add (local.get $vec) (i32.shl (local.get $i) (i32.const 2))))
      (v128.store align=4 (local.get $p) (f32x4.div (v128.load align=4 (local.get $p)) (local.get $lenv)))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br $l)))
    (block $d (loop $l
      (br_if $d (i32.ge_u (local.get $i) (local.get $dim)))
      (local.set $p (i32.add (local.get $vec) (i32.shl (local.get $i) (i32.const 2))))
      (f32.store (local.get $p) (f32.div (f32.load (local.get $p)) (local.get $len)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (local.get $n2))

  ;; osqCodes: the quantizer's last pass. code = round((min(max(x, a), b) - a) / step) in f32
  ;; with Java's half-up rounding (NaN gives 0: trunc_sat), one byte per component at $dest;
  ;; returns Σ codes.
  (func (export "osqCodes") (param $vec i32) (param $dim i32) (param $a f32) (param $b f32) (param $step f32) (param $dest i32) (result i32)
    (local $i i32) (local $code i32) (local $sum i32)
    (block $d (loop $l
      (br_if $d (i32.ge_u (local.get $i) (local.get $dim)))
      (local.set $code (i32.trunc_sat_f64_s (f64.add (f64.promote_f32
        (f32.div (f32.sub (f32.min (f32.max (f32.load (i32.add (local.get $vec) (i32.shl (local.get $i) (i32.const 2)))) (local.get $a)) (local.get $b)) (local.get $a))
          (local.get $step))) (f64.const 0.5))))
      (i32.store8 (i32.add (local.get $dest) (local.get $i)) (local.get $code))
      (local.set $sum (i32.add (local.get $sum) (local.get $code)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (local.get $sum))

  ;; ---------------------------------------------------------------------------------------
  ;; fp32 kernels. dot and squareDistance keep four f32x4 accumulators over 16 floats, then one
  ;; over the remaining groups of 4, reduce (acc0+acc1)+(acc2+acc3) and lanes (l0+l1)+(l2+l3),
  ;; then add the last dim % 4 products sequentially.
  (func $dot (export "dot") (param $a i32) (param $b i32) (param $dim i32) (result f32)
    (local $i i32) (local $n16 i32) (local $n4 i32) (local $nb i32) (local $s f32)
    (local $acc0 v128) (local $acc1 v128) (local $acc2 v128) (local $acc3 v128)
    (local.set $n16 (i32.shl (i32.and (local.get $dim) (i32.const -16)) (i32.const 2)))
    (local.set $n4 (i32.shl (i32.and (local.get $dim) (i32.const -4)) (i32.const 2)))
    (local.set $nb (i32.shl (local.get $dim) (i32.const 2)))
    (if (local.get $n16)
      (then
        (loop $l16
          (local.set $acc0 (f32x4.add (local.get $acc0) (f32x4.mul
            (v128.load align=4 (i32.add (local.get $a) (local.get $i)))
            (v128.load align=4 (i32.add (local.get $b) (local.get $i))))))
          (local.set $acc1 (f32x4.add (local.get $acc1) (f32x4.mul
            (v128.load offset=16 align=4 (i32.add (local.get $a) (local.get $i)))
            (v128.load offset=16 align=4 (i32.add (local.get $b) (local.get $i))))))
          (local.set $acc2 (f32x4.add (local.get $acc2) (f32x4.mul
            (v128.load offset=32 align=4 (i32.add (local.get $a) (local.get $i)))
            (v128.load offset=32 align=4 (i32.add (local.get $b) (local.get $i))))))
          (local.set $acc3 (f32x4.add (local.get $acc3) (f32x4.mul
            (v128.load offset=48 align=4 (i32.add (local.get $a) (local.get $i)))
            (v128.load offset=48 align=4 (i32.add (local.get $b) (local.get $i))))))
          (local.set $i (i32.add (local.get $i) (i32.const 64)))
          (br_if $l16 (i32.lt_u (local.get $i) (local.get $n16))))))
    (block $d4
      (loop $l4
        (br_if $d4 (i32.ge_u (local.get $i) (local.get $n4)))
        (local.set $acc0 (f32x4.add (local.get $acc0) (f32x4.mul
          (v128.load align=4 (i32.add (local.get $a) (local.get $i)))
          (v128.load align=4 (i32.add (local.get $b) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l4)))
    (local.set $s (call $hsumF32
      (f32x4.add (f32x4.add (local.get $acc0) (local.get $acc1))
        (f32x4.add (local.get $acc2) (local.get $acc3)))))
    (block $d1
      (loop $l1
        (br_if $d1 (i32.ge_u (local.get $i) (local.get $nb)))
        (local.set $s (f32.add (local.get $s) (f32.mul
          (f32.load (i32.add (local.get $a) (local.get $i)))
          (f32.load (i32.add (local.get $b) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $l1)))
    (local.get $s))

  (func $squareDistance (export "squareDistance") (param $a i32) (param $b i32) (param $dim i32) (result f32)
    (local $i i32) (local $n16 i32) (local $n4 i32) (local $nb i32) (local $s f32) (local $e f32)
    (local $acc0 v128) (local $acc1 v128) (local $acc2 v128) (local $acc3 v128) (local $v v128)
    (local.set $n16 (i32.shl (i32.and (local.get $dim) (i32.const -16)) (i32.const 2)))
    (local.set $n4 (i32.shl (i32.and (local.get $dim) (i32.const -4)) (i32.const 2)))
    (local.set $nb (i32.shl (local.get $dim) (i32.const 2)))
    (if (local.get $n16)
      (then
        (loop $l16
          (local.set $v (f32x4.sub
            (v128.load align=4 (i32.add (local.get $a) (local.get $i)))
            (v128.load align=4 (i32.add (local.get $b) (local.get $i)))))
          (local.set $acc0 (f32x4.add (local.get $acc0) (f32x4.mul (local.get $v) (local.get $v))))
          (local.set $v (f32x4.sub
            (v128.load offset=16 align=4 (i32.add (local.get $a) (local.get $i)))
            (v128.load offset=16 align=4 (i32.add (local.get $b) (local.get $i)))))
          (local.set $acc1 (f32x4.add (local.get $acc1) (f32x4.mul (local.get $v) (local.get $v))))
          (local.set $v (f32x4.sub
            (v128.load offset=32 align=4 (i32.add (local.get $a) (local.get $i)))
            (v128.load offset=32 align=4 (i32.add (local.get $b) (local.get $i)))))
          (local.set $acc2 (f32x4.add (local.get $acc2) (f32x4.mul (local.get $v) (local.get $v))))
          (local.set $v (f32x4.sub
            (v128.load offset=48 align=4 (i32.add (local.get $a) (local.get $i)))
            (v128.load offset=48 align=4 (i32.add (local.get $b) (local.get $i)))))
          (local.set $acc3 (f32x4.add (local.get $acc3) (f32x4.mul (local.get $v) (local.get $v))))
          (local.set $i (i32.add (local.get $i) (i32.const 64)))
          (br_if $l16 (i32.lt_u (local.get $i) (local.get $n16))))))
    (block $d4
      (loop $l4
        (br_if $d4 (i32.ge_u (local.get $i) (local.get $n4)))
        (local.set $v (f32x4.sub
          (v128.load align=4 (i32.add (local.get $a) (local.get $i)))
          (v128.load align=4 (i32.add (local.get $b) (local.get $i)))))
        (local.set $acc0 (f32x4.add (local.get $acc0) (f32x4.mul (local.get $v) (local.get $v))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l4)))
    (local.set $s (call $hsumF32
      (f32x4.add (f32x4.add (local.get $acc0) (local.get $acc1))
        (f32x4.add (local.get $acc2) (local.get $acc3)))))
    (block $d1
      (loop $l1
        (br_if $d1 (i32.ge_u (local.get $i) (local.get $nb)))
        (local.set $e (f32.sub
          (f32.load (i32.add (local.get $a) (local.get $i)))
          (f32.load (i32.add (local.get $b) (local.get $i)))))
        (local.set $s (f32.add (local.get $s) (f32.mul (local.get $e) (local.get $e))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $l1)))
    (local.get $s))

  ;; (a.b, a.a, b.b) with two f32x4 accumulators per quantity over 8 floats, one over the
  ;; remaining group of 4, then the dim % 4 tail sequentially.
  (func $cosineSums (param $a i32) (param $b i32) (param $dim i32) (result f32 f32 f32)
    (local $i i32) (local $n8 i32) (local $n4 i32) (local $nb i32)
    (local $x v128) (local $y v128)
    (local $ab0 v128) (local $ab1 v128) (local $aa0 v128) (local $aa1 v128) (local $bb0 v128) (local $bb1 v128)
    (local $sab f32) (local $saa f32) (local $sbb f32) (local $fx f32) (local $fy f32)
    (local.set $n8 (i32.shl (i32.and (local.get $dim) (i32.const -8)) (i32.const 2)))
    (local.set $n4 (i32.shl (i32.and (local.get $dim) (i32.const -4)) (i32.const 2)))
    (local.set $nb (i32.shl (local.get $dim) (i32.const 2)))
    (if (local.get $n8)
      (then
        (loop $l8
          (local.set $x (v128.load align=4 (i32.add (local.get $a) (local.get $i))))
          (local.set $y (v128.load align=4 (i32.add (local.get $b) (local.get $i))))
          (local.set $ab0 (f32x4.add (local.get $ab0) (f32x4.mul (local.get $x) (local.get $y))))
          (local.set $aa0 (f32x4.add (local.get $aa0) (f32x4.mul (local.get $x) (local.get $x))))
          (local.set $bb0 (f32x4.add (local.get $bb0) (f32x4.mul (local.get $y) (local.get $y))))
          (local.set $x (v128.load offset=16 align=4 (i32.add (local.get $a) (local.get $i))))
          (local.set $y (v128.load offset=16 align=4 (i32.add (local.get $b) (local.get $i))))
          (local.set $ab1 (f32x4.add (local.get $ab1) (f32x4.mul (local.get $x) (local.get $y))))
          (local.set $aa1 (f32x4.add (local.get $aa1) (f32x4.mul (local.get $x) (local.get $x))))
          (local.set $bb1 (f32x4.add (local.get $bb1) (f32x4.mul (local.get $y) (local.get $y))))
          (local.set $i (i32.add (local.get $i) (i32.const 32)))
          (br_if $l8 (i32.lt_u (local.get $i) (local.get $n8))))))
    (if (i32.lt_u (local.get $i) (local.get $n4))
      (then
        (local.set $x (v128.load align=4 (i32.add (local.get $a) (local.get $i))))
        (local.set $y (v128.load align=4 (i32.add (local.get $b) (local.get $i))))
        (local.set $ab0 (f32x4.add (local.get $ab0) (f32x4.mul (local.get $x) (local.get $y))))
        (local.set $aa0 (f32x4.add (local.get $aa0) (f32x4.mul (local.get $x) (local.get $x))))
        (local.set $bb0 (f32x4.add (local.get $bb0) (f32x4.mul (local.get $y) (local.get $y))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))))
    (local.set $sab (call $hsumF32 (f32x4.add (local.get $ab0) (local.get $ab1))))
    (local.set $saa (call $hsumF32 (f32x4.add (local.get $aa0) (local.get $aa1))))
    (local.set $sbb (call $hsumF32 (f32x4.add (local.get $bb0) (local.get $bb1))))
    (block $d1
      (loop $l1
        (br_if $d1 (i32.ge_u (local.get $i) (local.get $nb)))
        (local.set $fx (f32.load (i32.add (local.get $a) (local.get $i))))
        (local.set $fy (f32.load (i32.add (local.get $b) (local.get $i))))
        (local.set $sab (f32.add (local.get $sab) (f32.mul (local.get $fx) (local.get $fy))))
        (local.set $saa (f32.add (local.get $saa) (f32.mul (local.get $fx) (local.get $fx))))
        (local.set $sbb (f32.add (local.get $sbb) (f32.mul (local.get $fy) (local.get $fy))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $l1)))
    (local.get $sab) (local.get $saa) (local.get $sbb))

  ;; Writes (a.b, a.a, b.b) as three f32 at out.
  (func (export "cosineParts") (param $a i32) (param $b i32) (param $dim i32) (param $out i32)
    (local $sab f32) (local $saa f32) (local $sbb f32)
    (call $cosineSums (local.get $a) (local.get $b) (local.get $dim))
    (local.set $sbb) (local.set $saa) (local.set $sab)
    (f32.store align=4 (local.get $out) (local.get $sab))
    (f32.store offset=4 align=4 (local.get $out) (local.get $saa))
    (f32.store offset=8 align=4 (local.get $out) (local.get $sbb)))

  ;; Lucene's cosine: float sums, quotient sum / sqrt(norm1 * norm2) in double, cast to float.
  (func (export "cosine") (param $a i32) (param $b i32) (param $dim i32) (result f32)
    (local $sab f32) (local $saa f32) (local $sbb f32)
    (call $cosineSums (local.get $a) (local.get $b) (local.get $dim))
    (local.set $sbb) (local.set $saa) (local.set $sab)
    (f32.demote_f64
      (f64.div (f64.promote_f32 (local.get $sab))
        (f64.sqrt (f64.mul (f64.promote_f32 (local.get $saa)) (f64.promote_f32 (local.get $sbb)))))))

  ;; ---------------------------------------------------------------------------------------
  ;; dotBatch(qs, nq, ds, nd, dim, out): out[q*nd + d] = dot(query q, doc d), row-major float
  ;; matrices. Docs are taken in blocks of about 192 KiB (kept in L2); for each block every group
  ;; of 4 queries sweeps it 2 docs at a time with a 4x2 register tile (8 accumulators), so each
  ;; doc vector is read once per 4 queries and each query vector once per 2 docs.
  ;; Leftover docs (odd block) and queries (nq % 4) fall back to $dot.
  (func $tailDot (param $s f32) (param $a i32) (param $b i32) (param $i i32) (param $nb i32) (result f32)
    (block $d1
      (loop $l1
        (br_if $d1 (i32.ge_u (local.get $i) (local.get $nb)))
        (local.set $s (f32.add (local.get $s) (f32.mul
          (f32.load (i32.add (local.get $a) (local.get $i)))
          (f32.load (i32.add (local.get $b) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $l1)))
    (local.get $s))

  (func $tile4x2 (param $q0 i32) (param $row i32) (param $d0 i32) (param $dim i32)
    (param $o i32) (param $ostride i32)
    (local $q1 i32) (local $q2 i32) (local $q3 i32) (local $d1 i32)
    (local $i i32) (local $n4 i32) (local $nb i32)
    (local $x0 v128) (local $x1 v128) (local $y v128)
    (local $a00 v128) (local $a01 v128) (local $a10 v128) (local $a11 v128)
    (local $a20 v128) (local $a21 v128) (local $a30 v128) (local $a31 v128)
    (local.set $q1 (i32.add (local.get $q0) (local.get $row)))
    (local.set $q2 (i32.add (local.get $q1) (local.get $row)))
    (local.set $q3 (i32.add (local.get $q2) (local.get $row)))
    (local.set $d1 (i32.add (local.get $d0) (local.get $row)))
    (local.set $n4 (i32.shl (i32.and (local.get $dim) (i32.const -4)) (i32.const 2)))
    (local.set $nb (i32.shl (local.get $dim) (i32.const 2)))
    (if (local.get $n4)
      (then
        (loop $k
          (local.set $x0 (v128.load align=4 (i32.add (local.get $d0) (local.get $i))))
          (local.set $x1 (v128.load align=4 (i32.add (local.get $d1) (local.get $i))))
          (local.set $y (v128.load align=4 (i32.add (local.get $q0) (local.get $i))))
          (local.set $a00 (f32x4.add (local.get $a00) (f32x4.mul (local.get $y) (local.get $x0))))
          (local.set $a01 (f32x4.add (local.get $a01) (f32x4.mul (local.get $y) (local.get $x1))))
          (local.set $y (v128.load align=4 (i32.add (local.get $q1) (local.get $i))))
          (local.set $a10 (f32x4.add (local.get $a10) (f32x4.mul (local.get $y) (local.get $x0))))
          (local.set $a11 (f32x4.add (local.get $a11) (f32x4.mul (local.get $y) (local.get $x1))))
          (local.set $y (v128.load align=4 (i32.add (local.get $q2) (local.get $i))))
          (local.set $a20 (f32x4.add (local.get $a20) (f32x4.mul (local.get $y) (local.get $x0))))
          (local.set $a21 (f32x4.add (local.get $a21) (f32x4.mul (local.get $y) (local.get $x1))))
          (local.set $y (v128.load align=4 (i32.add (local.get $q3) (local.get $i))))
          (local.set $a30 (f32x4.add (local.get $a30) (f32x4.mul (local.get $y) (local.get $x0))))
          (local.set $a31 (f32x4.add (local.get $a31) (f32x4.mul (local.get $y) (local.get $x1))))
          (local.set $i (i32.add (local.get $i) (i32.const 16)))
          (br_if $k (i32.lt_u (local.get $i) (local.get $n4))))))
    (f32.store align=4 (local.get $o)
      (call $tailDot (call $hsumF32 (local.get $a00)) (local.get $q0) (local.get $d0) (local.get $n4) (local.get $nb)))
    (f32.store offset=4 align=4 (local.get $o)
      (call $tailDot (call $hsumF32 (local.get $a01)) (local.get $q0) (local.get $d1) (local.get $n4) (local.get $nb)))
    (local.set $o (i32.add (local.get $o) (local.get $ostride)))
    (f32.store align=4 (local.get $o)
      (call $tailDot (call $hsumF32 (local.get $a10)) (local.get $q1) (local.get $d0) (local.get $n4) (local.get $nb)))
    (f32.store offset=4 align=4 (local.get $o)
      (call $tailDot (call $hsumF32 (local.get $a11)) (local.get $q1) (local.get $d1) (local.get $n4) (local.get $nb)))
    (local.set $o (i32.add (local.get $o) (local.get $ostride)))
    (f32.store align=4 (local.get $o)
      (call $tailDot (call $hsumF32 (local.get $a20)) (local.get $q2) (local.get $d0) (local.get $n4) (local.get $nb)))
    (f32.store offset=4 align=4 (local.get $o)
      (call $tailDot (call $hsumF32 (local.get $a21)) (local.get $q2) (local.get $d1) (local.get $n4) (local.get $nb)))
    (local.set $o (i32.add (local.get $o) (local.get $ostride)))
    (f32.store align=4 (local.get $o)
      (call $tailDot (call $hsumF32 (local.get $a30)) (local.get $q3) (local.get $d0) (local.get $n4) (local.get $nb)))
    (f32.store offset=4 align=4 (local.get $o)
      (call $tailDot (call $hsumF32 (local.get $a31)) (local.get $q3) (local.get $d1) (local.get $n4) (local.get $nb))))

  (func (export "dotBatch") (param $qs i32) (param $nq i32) (param $ds i32) (param $nd i32)
    (param $dim i32) (param $out i32)
    (local $row i32) (local $ostride i32) (local $blockDocs i32) (local $nq4 i32)
    (local $db i32) (local $dbEnd i32) (local $q i32) (local $d i32) (local $j i32)
    (local.set $row (i32.shl (local.get $dim) (i32.const 2)))
    (local.set $ostride (i32.shl (local.get $nd) (i32.const 2)))
    (local.set $blockDocs (i32.and (i32.div_u (i32.const 196608) (select (local.get $row) (i32.const 1) (local.get $row))) (i32.const -2)))
    (if (i32.lt_u (local.get $blockDocs) (i32.const 2)) (then (local.set $blockDocs (i32.const 2))))
    (local.set $nq4 (i32.and (local.get $nq) (i32.const -4)))
    (block $docsDone
      (loop $docBlock
        (br_if $docsDone (i32.ge_u (local.get $db) (local.get $nd)))
        (local.set $dbEnd
          (select
            (local.get $nd)
            (i32.add (local.get $db) (local.get $blockDocs))
            (i32.lt_u (i32.sub (local.get $nd) (local.get $db)) (local.get $blockDocs))))
        (local.set $q (i32.const 0))
        (block $q4Done
          (loop $q4
            (br_if $q4Done (i32.ge_u (local.get $q) (local.get $nq4)))
            (local.set $d (local.get $db))
            (block $pairsDone
              (loop $pair
                (br_if $pairsDone (i32.gt_u (i32.add (local.get $d) (i32.const 2)) (local.get $dbEnd)))
                (call $tile4x2
                  (i32.add (local.get $qs) (i32.mul (local.get $q) (local.get $row)))
                  (local.get $row)
                  (i32.add (local.get $ds) (i32.mul (local.get $d) (local.get $row)))
                  (local.get $dim)
                  (i32.add (local.get $out)
                    (i32.shl (i32.add (i32.mul (local.get $q) (local.get $nd)) (local.get $d)) (i32.const 2)))
                  (local.get $ostride))
                (local.set $d (i32.add (local.get $d) (i32.const 2)))
                (br $pair)))
            (if (i32.lt_u (local.get $d) (local.get $dbEnd))
              (then
                (local.set $j (i32.const 0))
                (loop $lastDoc
                  (f32.store align=4
                    (i32.add (local.get $out)
                      (i32.shl
                        (i32.add (i32.mul (i32.add (local.get $q) (local.get $j)) (local.get $nd)) (local.get $d))
                        (i32.const 2)))
                    (call $dot
                      (i32.add (local.get $qs) (i32.mul (i32.add (local.get $q) (local.get $j)) (local.get $row)))
                      (i32.add (local.get $ds) (i32.mul (local.get $d) (local.get $row)))
                      (local.get $dim)))
                  (local.set $j (i32.add (local.get $j) (i32.const 1)))
                  (br_if $lastDoc (i32.lt_u (local.get $j) (i32.const 4))))))
            (local.set $q (i32.add (local.get $q) (i32.const 4)))
            (br $q4)))
        (block $qRestDone
          (loop $qRest
            (br_if $qRestDone (i32.ge_u (local.get $q) (local.get $nq)))
            (local.set $d (local.get $db))
            (block $dRestDone
              (loop $dRest
                (br_if $dRestDone (i32.ge_u (local.get $d) (local.get $dbEnd)))
                (f32.store align=4
                  (i32.add (local.get $out)
                    (i32.shl (i32.add (i32.mul (local.get $q) (local.get $nd)) (local.get $d)) (i32.const 2)))
                  (call $dot
                    (i32.add (local.get $qs) (i32.mul (local.get $q) (local.get $row)))
                    (i32.add (local.get $ds) (i32.mul (local.get $d) (local.get $row)))
                    (local.get $dim)))
                (local.set $d (i32.add (local.get $d) (i32.const 1)))
                (br $dRest)))
            (local.set $q (i32.add (local.get $q) (i32.const 1)))
            (br $qRest)))
        (local.set $db (local.get $dbEnd))
        (br $docBlock))))
  ;; =========================================================================================
  ;; MULTI-BIT ENCODINGS (issue 15): Lucene's estimator for DIBIT_QUERY_NIBBLE (2-bit docs, 4-bit
  ;; transposed query), PACKED_NIBBLE (4 x 4 bits) and SEVEN_BIT / UNSIGNED_BYTE (7 x 7, 8 x 8
  ;; bits). Everything in this section is new and self-contained; it only calls $bitDot and
  ;; $padPlanes from above.
  ;; =========================================================================================

  ;; qc for 2-bit docs: the doc's low plane (planeBytes at $d) and high plane (at $d + planeBytes)
  ;; against the 4 query planes padded to $stride (see $padPlanes): bitDot(low) + 2 bitDot(high).
  ;; $bitDot reads whole 16-byte chunks: past the low plane it meets the high plane's bytes and past
  ;; the high plane the record's corrections, both against zero query padding, so they add nothing
  ;; and every load stays inside the record (code + 16 bytes).
  (func $dibitDot (param $pad i32) (param $stride i32) (param $d i32) (param $planeBytes i32) (result i32)
    (i32.add
      (call $bitDot (local.get $pad) (local.get $stride) (local.get $d) (local.get $stride))
      (i32.shl
        (call $bitDot (local.get $pad) (local.get $stride) (i32.add (local.get $d) (local.get $planeBytes)) (local.get $stride))
        (i32.const 1))))

  ;; qc for packed nibbles: doc byte i holds component i (high nibble) and i + half (low nibble);
  ;; the query is one byte per component (q[0 .. 2 half)). 16 doc bytes per step, products of
  ;; u8 lanes (<= 15 x 15) widened to u16 and pairwise into u32; the tail is scalar, so no load
  ;; reads past the code.
  (func $nibbleDot (param $q i32) (param $d i32) (param $half i32) (result i32)
    (local $i i32) (local $acc v128) (local $dv v128) (local $hi v128) (local $lo v128)
    (local $qa v128) (local $qb v128) (local $sum i32) (local $b i32)
    (block $done
      (loop $chunk
        (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $half)))
        (local.set $dv (v128.load align=1 (i32.add (local.get $d) (local.get $i))))
        (local.set $hi (i8x16.shr_u (local.get $dv) (i32.const 4)))
        (local.set $lo (v128.and (local.get $dv) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15)))
        (local.set $qa (v128.load align=1 (i32.add (local.get $q) (local.get $i))))
        (local.set $qb (v128.load align=1 (i32.add (local.get $q) (i32.add (local.get $i) (local.get $half)))))
        (local.set $acc
          (i32x4.add (local.get $acc)
            (i32x4.add
              (i32x4.add
                (i32x4.extadd_pairwise_i16x8_u (i16x8.extmul_low_i8x16_u (local.get $hi) (local.get $qa)))
                (i32x4.extadd_pairwise_i16x8_u (i16x8.extmul_high_i8x16_u (local.get $hi) (local.get $qa))))
              (i32x4.add
                (i32x4.extadd_pairwise_i16x8_u (i16x8.extmul_low_i8x16_u (local.get $lo) (local.get $qb)))
                (i32x4.extadd_pairwise_i16x8_u (i16x8.extmul_high_i8x16_u (local.get $lo) (local.get $qb)))))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $chunk)))
    (local.set $sum (call $hsumI32 (local.get $acc)))
    (block $tailDone
      (loop $tail
        (br_if $tailDone (i32.ge_u (local.get $i) (local.get $half)))
        (local.set $b (i32.load8_u (i32.add (local.get $d) (local.get $i))))
        (local.set $sum
          (i32.add (local.get $sum)
            (i32.add
              (i32.mul (i32.shr_u (local.get $b) (i32.const 4)) (i32.load8_u (i32.add (local.get $q) (local.get $i))))
              (i32.mul (i32.and (local.get $b) (i32.const 15))
                (i32.load8_u (i32.add (local.get $q) (i32.add (local.get $i) (local.get $half))))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $tail)))
    (local.get $sum))

  ;; qc for one byte per component (7 and 8 bits): u8 x u8 products (<= 65025) in u16 lanes,
  ;; pairwise into u32; scalar tail.
  (func $byteDot (param $q i32) (param $d i32) (param $n i32) (result i32)
    (local $i i32) (local $acc v128) (local $a v128) (local $b v128) (local $sum i32)
    (block $done
      (loop $chunk
        (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $n)))
        (local.set $a (v128.load align=1 (i32.add (local.get $d) (local.get $i))))
        (local.set $b (v128.load align=1 (i32.add (local.get $q) (local.get $i))))
        (local.set $acc
          (i32x4.add (local.get $acc)
            (i32x4.add
              (i32x4.extadd_pairwise_i16x8_u (i16x8.extmul_low_i8x16_u (local.get $a) (local.get $b)))
              (i32x4.extadd_pairwise_i16x8_u (i16x8.extmul_high_i8x16_u (local.get $a) (local.get $b))))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $chunk)))
    (local.set $sum (call $hsumI32 (local.get $acc)))
    (block $tailDone
      (loop $tail
        (br_if $tailDone (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $sum
          (i32.add (local.get $sum)
            (i32.mul (i32.load8_u (i32.add (local.get $d) (local.get $i))) (i32.load8_u (i32.add (local.get $q) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $tail)))
    (local.get $sum))

  ;; osqScoreEncoded: Lucene's estimator (as osqScore above) for n records of the multi-bit
  ;; encodings, written as f32 to out[k]; record k is ords[k] when ords != 0, else start + k.
  ;;   docBits 2: query = 4 planes of planeBytes at $query (copied padded to $pad, 4 x stride bytes),
  ;;              doc code = 2 planes of planeBytes
  ;;   docBits 4: query = 2 half bytes (one per component), doc code = half bytes of nibble pairs
  ;;   docBits 7, 8: query and doc one byte per component, codeBytes each
  ;; lx = (ux - ax) * lxScale (Lucene's 1f / (2^docBits - 1)); ly = (uy - ay) * queryScale is
  ;; passed in; the sum and the final score are osqScore's, float32, in Lucene's order.
  (func (export "osqScoreEncoded")
    (param $query i32) (param $docBits i32) (param $codeBytes i32) (param $planeBytes i32) (param $pad i32)
    (param $records i32) (param $recordSize i32)
    (param $ords i32) (param $start i32) (param $n i32) (param $out i32)
    (param $ay f32) (param $ly f32) (param $lxScale f32) (param $df f32) (param $y1f f32) (param $corrY f32)
    (param $sim i32) (param $centroidDP f32)
    (local $stride i32)
    (if (i32.eq (local.get $docBits) (i32.const 2))
      (then (local.set $stride (call $padPlanes (local.get $query) (local.get $planeBytes) (local.get $pad)))))
    (call $encodedRecords (local.get $query) (local.get $docBits) (local.get $codeBytes) (local.get $planeBytes)
      (local.get $stride) (local.get $pad) (local.get $records) (local.get $recordSize)
      (local.get $ords) (local.get $start) (local.get $n) (local.get $out)
      (local.get $ay) (local.get $ly) (local.get $lxScale) (local.get $df) (local.get $y1f) (local.get $corrY)
      (local.get $sim) (local.get $centroidDP)))

  ;; Random ords: touch every cache line of the n records first, so their misses overlap (as in
  ;; $osqRecords; multi-bit records are 2-8x larger, so more lines per record are in flight).
  (func $touchRecords (param $records i32) (param $recordSize i32) (param $ords i32) (param $n i32)
    (local $k i32) (local $rec i32) (local $p i32) (local $touch i32)
    (loop $touchRecord
      (local.set $rec
        (i32.add (local.get $records)
          (i32.mul (local.get $recordSize)
            (i32.load (i32.add (local.get $ords) (i32.shl (local.get $k) (i32.const 2)))))))
      (local.set $p (i32.const 0))
      (loop $touchLine
        (local.set $touch (i32.add (local.get $touch) (i32.load8_u (i32.add (local.get $rec) (local.get $p)))))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (br_if $touchLine (i32.lt_u (local.get $p) (local.get $recordSize))))
      (local.set $touch
        (i32.add (local.get $touch)
          (i32.load8_u (i32.sub (i32.add (local.get $rec) (local.get $recordSize)) (i32.const 1)))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $touchRecord (i32.lt_u (local.get $k) (local.get $n))))
    (global.set $touchSink (local.get $touch)))

  ;; The record loop of osqScoreEncoded (and of hnswSearchL0 on a multi-bit segment); for 2 doc
  ;; bits the query planes are already padded at $pad with $stride bytes per plane.
  (func $encodedRecords
    (param $query i32) (param $docBits i32) (param $codeBytes i32) (param $planeBytes i32)
    (param $stride i32) (param $pad i32) (param $records i32) (param $recordSize i32)
    (param $ords i32) (param $start i32) (param $n i32) (param $out i32)
    (param $ay f32) (param $ly f32) (param $lxScale f32) (param $df f32) (param $y1f f32) (param $corrY f32)
    (param $sim i32) (param $centroidDP f32)
    (local $k i32) (local $rec i32) (local $cor i32) (local $qc i32)
    (local $ax f32) (local $lx f32) (local $cx f32) (local $s f32) (local $r f32)
    (if (i32.le_s (local.get $n) (i32.const 0)) (then (return)))
    (if (i32.and (i32.ne (local.get $ords) (i32.const 0)) (i32.gt_s (local.get $n) (i32.const 1)))
      (then (call $touchRecords (local.get $records) (local.get $recordSize) (local.get $ords) (local.get $n))))
    (loop $record
      (local.set $rec
        (i32.add (local.get $records)
          (i32.mul (local.get $recordSize)
            (if (result i32) (local.get $ords)
              (then (i32.load (i32.add (local.get $ords) (i32.shl (local.get $k) (i32.const 2)))))
              (else (i32.add (local.get $start) (local.get $k)))))))
      (local.set $qc
        (if (result i32) (i32.eq (local.get $docBits) (i32.const 2))
          (then (call $dibitDot (local.get $pad) (local.get $stride) (local.get $rec) (local.get $planeBytes)))
          (else
            (if (result i32) (i32.eq (local.get $docBits) (i32.const 4))
              (then (call $nibbleDot (local.get $query) (local.get $rec) (local.get $codeBytes)))
              (else (call $byteDot (local.get $query) (local.get $rec) (local.get $codeBytes)))))))
      (local.set $cor (i32.add (local.get $rec) (local.get $codeBytes)))
      (local.set $ax (f32.load align=1 (local.get $cor)))
      (local.set $lx (f32.mul (f32.sub (f32.load offset=4 align=1 (local.get $cor)) (local.get $ax)) (local.get $lxScale)))
      (local.set $cx (f32.load offset=8 align=1 (local.get $cor)))
      (local.set $s
        (f32.add
          (f32.add
            (f32.add
              (f32.mul (f32.mul (local.get $ax) (local.get $ay)) (local.get $df))
              (f32.mul (f32.mul (local.get $ay) (local.get $lx))
                (f32.convert_i32_s (i32.load offset=12 align=1 (local.get $cor)))))
            (f32.mul (f32.mul (local.get $ax) (local.get $ly)) (local.get $y1f)))
          (f32.mul (f32.mul (local.get $lx) (local.get $ly)) (f32.convert_i32_s (local.get $qc)))))
      (if (i32.eqz (local.get $sim))
        (then
          (local.set $r
            (f32.div (f32.const 1)
              (f32.add (f32.const 1)
                (f32.max
                  (f32.sub (f32.add (local.get $corrY) (local.get $cx)) (f32.mul (f32.const 2) (local.get $s)))
                  (f32.const 0))))))
        (else
          (local.set $s
            (f32.add (local.get $s) (f32.sub (f32.add (local.get $corrY) (local.get $cx)) (local.get $centroidDP))))
          (if (i32.eq (local.get $sim) (i32.const 3))
            (then
              (local.set $r
                (if (result f32) (f32.lt (local.get $s) (f32.const 0))
                  (then (f32.div (f32.const 1) (f32.sub (f32.const 1) (local.get $s))))
                  (else (f32.add (local.get $s) (f32.const 1))))))
            (else
              (local.set $r
                (f32.div
                  (f32.add (f32.const 1) (f32.min (f32.max (local.get $s) (f32.const -1)) (f32.const 1)))
                  (f32.const 2)))))))
      (f32.store align=1 (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 2))) (local.get $r))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $record (i32.lt_u (local.get $k) (local.get $n)))))
)
