// Kernels of the llama forward pass, written for CPU OpenCL (PoCL) first:
// every work-item owns a contiguous chunk of rows (strided GPU-style loops read slowly on
// a CPU), inner loops use 8-wide float vectors (AVX2), and nothing needs local memory.
//
// Compile-time macros (set by tokenwalk/native/cl/programs.py):
//   WTYPE_Q4_0 | WTYPE_Q4_1 | WTYPE_Q5_0 | WTYPE_Q8_0 | WTYPE_Q4_K | WTYPE_Q6_K | WTYPE_F16 | WTYPE_F32
//                 the weight layout of this program
//   HD            head size (multiple of 8)
//   TT            tokens per tile of the matrix-matrix kernel
//   QT            query tokens per work-item of the prefill attention
//   GROUP         query heads per KV head (grouped-query attention)
//   QK_NORM       queries and keys are RMS-normed per head and rotated in NEOX order
//                 (Gemma 3: attention_decode does it; prefill runs norm_rope_store first)
//   QKV_BIAS      queries, keys and values have biases and rotate in NEOX order (Qwen2:
//                 attention_decode adds them; prefill runs bias_rope_store first)
//
// Weight layouts on the device (repacked at load time from the GGUF blocks, every byte
// kept, scales in their stored fp16; see the UNPACK macros below):
//   Q4_0, Q4_1: qs uchar[rows][cols/32][16] (byte j: weight j in the low nibble, weight j+16
//        in the high nibble, as in GGUF), wd half[rows][cols/32] (d) or [..][2] (d, m).
//   Q5_0: qs as Q4_0; per row, d half[cols/32] (padded to even) then the fifth bits uint[cols/32].
//   Q8_0: qs char[rows][cols/32][32], wd half[rows][cols/32].
//   Q4_K: the file's 144-byte blocks as stored. Q6_K: ql|qh per block, then per row scales|d.
//   F16:  half[rows][cols] (qs), F32: float[rows][cols] (qs); wd unused.


// PoCL calls most built-ins (vload8, vload_half, fma, ...) as out-of-line functions, one
// call per use, which costs more than the arithmetic: loads are pointer casts to vector
// types (the layouts keep them aligned), fp16 scales are converted with integer operations
// and a * b + c is left to the compiler's contraction (-cl-mad-enable).

#ifndef GROUP
#define GROUP 1
#endif
#ifndef QT
#define QT 8
#endif

// fp16 bits -> float (scales are kept in the file's fp16 and converted per block: PoCL has
// no half loads, and a block's 32 or 256 weights amortise the few integer operations).
#if defined(__x86_64__) && defined(__F16C__)
// x86 with F16C (PoCL's CPU targets since Ivy Bridge): one vcvtph2ps, subnormals included.
typedef short h2f_v8s __attribute__((vector_size(16)));
inline float h2f(const ushort h) {
    const float4 f = __builtin_ia32_vcvtph2ps((h2f_v8s){(short)h, 0, 0, 0, 0, 0, 0, 0});
    return f.s0;
}
inline float8 h2f8(const ushort8 h) {
    return __builtin_astype(__builtin_ia32_vcvtph2ps256(__builtin_astype(h, h2f_v8s)), float8);
}
#else
// elsewhere: exponent and mantissa moved into place, rebiased by a multiply by 2^112.
inline float h2f(const ushort h) {
    const uint u = h;
    const float mag = (u & 0x7c00u) ? as_float((u & 0x7fffu) << 13) * 5.192296858534828e33f
                                    : (float)(u & 0x3ffu) * 5.9604644775390625e-8f;  // subnormal: m 2^-24
    return as_float(as_uint(mag) | ((u & 0x8000u) << 16));
}
inline float8 h2f8(const ushort8 h) {
    const uint8 u = convert_uint8(h);
    return as_float8(as_uint8(as_float8((u & 0x7fffu) << 13) * 5.192296858534828e33f) | ((u & 0x8000u) << 16));
}
#endif

// Quantized layouts: UNPACK(r, b) gives the 32 weights of block b (32 consecutive columns)
// of row r as integer levels q0..q3 (float8 each, columns 0-7, 8-15, 16-23, 24-31 of the
// block) with weight = q * da + mo for q0, q1 and q * db + mo for q2, q3.
#if defined(WTYPE_Q4_0) || defined(WTYPE_Q4_1)
#define QUANT 1
#define WQ_T uchar
#define WD_T ushort
#if defined(WTYPE_Q4_0)
#define Q4_SCALES(blk) const float da = h2f(wd[blk]); const float db = da; const float mo = -8.0f * da;
#else
#define Q4_SCALES(blk) const float da = h2f(wd[2 * (blk)]); const float db = da; const float mo = h2f(wd[2 * (blk) + 1]);
#endif
// QBLOCK(r, b): the block's place, its packed levels and its scales, shared by UNPACK and
// the integer path's UNPACKI.
#define QBLOCK(r, b)                                                                   \
        const size_t blk = (size_t)(r) * nb + (b);                                    \
        const uchar16 q = *(global const uchar16 *)(wq + blk * 16);                   \
        Q4_SCALES(blk)
#define UNPACK(r, b)                                                                  \
        QBLOCK(r, b)                                                                   \
        const float8 q0 = convert_float8(q.lo & (uchar8)15);                          \
        const float8 q1 = convert_float8(q.hi & (uchar8)15);                          \
        const float8 q2 = convert_float8(q.lo >> (uchar8)4);                          \
        const float8 q3 = convert_float8(q.hi >> (uchar8)4);
#elif defined(WTYPE_Q5_0)
// qs uchar[rows][nb][16] as Q4_0; per row, d half[nb] (padded to an even count) then qh uint[nb].
#define QUANT 1
#define WQ_T uchar
#define WD_T uchar
#define QBLOCK(r, b)                                                                   \
        const size_t blk = (size_t)(r) * nb + (b);                                    \
        const uchar16 q = *(global const uchar16 *)(wq + blk * 16);                   \
        global const uchar *rowd = wd + (size_t)(r) * (2 * ((nb + 1) & ~1) + 4 * nb);  \
        const float da = h2f(((global const ushort *)rowd)[b]);                       \
        const float db = da;                                                          \
        const float mo = -16.0f * da;
#define UNPACK(r, b)                                                                  \
        QBLOCK(r, b)                                                                   \
        const uint hb = ((global const uint *)(rowd + 2 * ((nb + 1) & ~1)))[b];       \
        const uint8 sh = (uint8)(0, 1, 2, 3, 4, 5, 6, 7);                             \
        const uint8 hv = (uint8)hb;                                                   \
        const float8 q0 = convert_float8(convert_uint8(q.lo & (uchar8)15) | (((hv >> sh) & 1u) << 4));       \
        const float8 q1 = convert_float8(convert_uint8(q.hi & (uchar8)15) | (((hv >> (sh + 8u)) & 1u) << 4)); \
        const float8 q2 = convert_float8(convert_uint8(q.lo >> (uchar8)4) | (((hv >> (sh + 16u)) & 1u) << 4)); \
        const float8 q3 = convert_float8(convert_uint8(q.hi >> (uchar8)4) | (((hv >> (sh + 24u)) & 1u) << 4));
#elif defined(WTYPE_Q8_0)
#define QUANT 1
#define WQ_T char
#define WD_T ushort
#define QBLOCK(r, b)                                                                   \
        const size_t blk = (size_t)(r) * nb + (b);                                    \
        const float da = h2f(wd[blk]);                                                \
        const float db = da;                                                          \
        const float mo = 0.0f;
#define UNPACK(r, b)                                                                  \
        QBLOCK(r, b)                                                                   \
        global const char8 *qp = (global const char8 *)(wq + blk * 32);              \
        const float8 q0 = convert_float8(qp[0]);                                      \
        const float8 q1 = convert_float8(qp[1]);                                      \
        const float8 q2 = convert_float8(qp[2]);                                      \
        const float8 q3 = convert_float8(qp[3]);
#elif defined(WTYPE_Q4_K)
// The file's own blocks, unchanged: 144 bytes per 256 weights, d and dmin (fp16), twelve
// bytes of 6-bit sub-block scales and minimums, then 128 bytes of 4-bit levels (sub-blocks
// 2i and 2i+1 in the low and high nibbles of bytes 32i..32i+31). wd unused.
#define QUANT 1
#define WQ_T uchar
#define WD_T uchar
#define QBLOCK(r, b)                                                                   \
        global const uchar *sb = wq + ((size_t)(r) * (nb >> 3) + ((b) >> 3)) * 144;   \
        const int j = jsub;                                                           \
        global const uchar *scm = sb + 4;                                             \
        const uint sc = j < 4 ? scm[j] & 63u : (scm[j + 4] & 15u) | ((scm[j - 4] >> 6) << 4); \
        const uint mn = j < 4 ? scm[j + 4] & 63u : (scm[j + 4] >> 4) | ((scm[j] >> 6) << 4);  \
        const float da = h2f(((global const ushort *)sb)[0]) * (float)sc;             \
        const float db = da;                                                          \
        const float mo = -h2f(((global const ushort *)sb)[1]) * (float)mn;            \
        global const uchar16 *qp = (global const uchar16 *)(sb + 16 + 32 * (j >> 1));
#define UNPACK(r, b)                                                                  \
        QBLOCK(r, b)                                                                   \
        const uchar16 qa = qp[0] >> (uchar16)(4 * (j & 1));                           \
        const uchar16 qb = qp[1] >> (uchar16)(4 * (j & 1));                           \
        const float8 q0 = convert_float8(qa.lo & (uchar8)15);                         \
        const float8 q1 = convert_float8(qa.hi & (uchar8)15);                         \
        const float8 q2 = convert_float8(qb.lo & (uchar8)15);                         \
        const float8 q3 = convert_float8(qb.hi & (uchar8)15);
#elif defined(WTYPE_Q6_K)
// qs uchar[rows][cols/256][192]: the file's ql (128 bytes) and qh (64) of each 256-weight
// block; per row, the 8-bit scales char[cols/256][16] then d half[cols/256]. Levels are
// 6 bits minus 32; each 16 weights have their own scale.
#define QUANT 1
#define WQ_T uchar
#define WD_T uchar
#define QBLOCK(r, b)                                                                   \
        const int nsb = nb >> 3, s = (b) >> 3, j = jsub, hf = j >> 2, k = j & 3; \
        global const uchar *sb = wq + ((size_t)(r) * nsb + s) * 192;                  \
        global const uchar16 *lp = (global const uchar16 *)(sb + 64 * hf + 32 * (k & 1)); \
        global const uchar16 *hp = (global const uchar16 *)(sb + 128 + 32 * hf);     \
        const uchar16 la = lp[0] >> (uchar16)(4 * (k >> 1)), lb = lp[1] >> (uchar16)(4 * (k >> 1)); \
        const uchar16 ha = hp[0] >> (uchar16)(2 * k), hb = hp[1] >> (uchar16)(2 * k);  \
        global const uchar *rowd = wd + (size_t)(r) * 18 * nsb;                        \
        global const char *scs = (global const char *)rowd + 16 * s + 2 * j;          \
        const float d = h2f(((global const ushort *)(rowd + 16 * nsb))[s]);           \
        const float da = d * (float)scs[0];                                           \
        const float db = d * (float)scs[1];                                           \
        const float mo = 0.0f;
#define UNPACK(r, b)                                                                  \
        QBLOCK(r, b)                                                                   \
        const float8 q0 = convert_float8(convert_int8((la.lo & (uchar8)15) | ((ha.lo & (uchar8)3) << (uchar8)4))) - 32.0f; \
        const float8 q1 = convert_float8(convert_int8((la.hi & (uchar8)15) | ((ha.hi & (uchar8)3) << (uchar8)4))) - 32.0f; \
        const float8 q2 = convert_float8(convert_int8((lb.lo & (uchar8)15) | ((hb.lo & (uchar8)3) << (uchar8)4))) - 32.0f; \
        const float8 q3 = convert_float8(convert_int8((lb.hi & (uchar8)15) | ((hb.hi & (uchar8)3) << (uchar8)4))) - 32.0f;
#elif defined(WTYPE_F16)
#define WQ_T half
#define WD_T float
#define LOAD_BLOCK(r, b)                                                              \
    {                                                                                 \
        const size_t off = (size_t)(r) * cols + (size_t)(b) * 32;                     \
        w0 = vload_half8(0, wq + off); w1 = vload_half8(1, wq + off);                 \
        w2 = vload_half8(2, wq + off); w3 = vload_half8(3, wq + off);                 \
    }
#else
#define WQ_T float
#define WD_T float
#define LOAD_BLOCK(r, b)                                                              \
    {                                                                                 \
        global const float8 *wp = (global const float8 *)(wq + (size_t)(r) * cols + (size_t)(b) * 32); \
        w0 = wp[0]; w1 = wp[1]; w2 = wp[2]; w3 = wp[3];                               \
    }
#endif

#ifdef QUANT
#define LOAD_BLOCK(r, b)                                                              \
    {                                                                                 \
        const int jsub = (b) & 7; /* the sub-block of a 256-weight block (K-quants) */ \
        UNPACK(r, b)                                                                  \
        w0 = q0 * da + mo; w1 = q1 * da + mo; w2 = q2 * db + mo; w3 = q3 * db + mo;   \
    }
#endif

// The x vectors that multiply w0..w3: same order for every layout (Q4 high nibbles hold
// weights 16..31 of the block, which the loaders place in w2, w3). xp: 32-byte aligned.
#define DOT_BLOCK(xp) (w0 * ((global const float8 *)(xp))[0] + w1 * ((global const float8 *)(xp))[1] \
                       + w2 * ((global const float8 *)(xp))[2] + w3 * ((global const float8 *)(xp))[3])

inline float hsum8(float8 v) {
    float4 s = v.lo + v.hi;
    float2 t = s.lo + s.hi;
    return t.x + t.y;
}

// One row's dot product with the private copy xv of the input and its block sums xs:
// sum_c (da q_c + mo) x_c = da (q . x) + mo sum(x), the offsets' share computed once per block.
#if defined(WTYPE_Q4_K) || defined(WTYPE_Q6_K)
// 256-weight blocks: the eight 32-weight sub-blocks of a block unrolled, so that the
// sub-block's place (which scale bits, which nibbles) is a constant, not computed per block.
// SUBBLOCK_ROW(out, ...): that loop around one sub-block's step (...), which adds to acc
// and macc with b and jsub set; the float path here, the integer one below.
#define SUBBLOCK_ROW(out, ...)                                                        \
    {                                                                                 \
        float8 acc = 0.0f;                                                            \
        float macc = 0.0f;                                                            \
        for (int b8 = 0; b8 < nb; b8 += 8) {                                          \
            _Pragma("unroll")                                                         \
            for (int jj = 0; jj < 8; jj++) {                                          \
                const int b = b8 + jj, jsub = jj;                                     \
                __VA_ARGS__                                                           \
                macc += mo * xs[b];                                                   \
            }                                                                         \
        }                                                                             \
        out = hsum8(acc) + macc;                                                      \
    }
#define ROW_DOT(r, out)                                                               \
    SUBBLOCK_ROW(out, UNPACK(r, b)                                                    \
        acc += (q0 * xv[4 * b] + q1 * xv[4 * b + 1]) * da + (q2 * xv[4 * b + 2] + q3 * xv[4 * b + 3]) * db;)
#elif defined(QUANT)
#define ROW_DOT(r, out)                                                               \
    {                                                                                 \
        float8 acc = 0.0f;                                                            \
        float macc = 0.0f;                                                            \
        for (int b = 0; b < nb; b++) {                                                \
            const int jsub = 0; (void)jsub;                                           \
            UNPACK(r, b)                                                              \
            acc += (q0 * xv[4 * b] + q1 * xv[4 * b + 1]) * da + (q2 * xv[4 * b + 2] + q3 * xv[4 * b + 3]) * db; \
            macc += mo * xs[b];                                                       \
        }                                                                             \
        out = hsum8(acc) + macc;                                                      \
    }
#else
#define ROW_DOT(r, out)                                                               \
    {                                                                                 \
        float8 acc = 0.0f, w0, w1, w2, w3;                                            \
        for (int b = 0; b < nb; b++) {                                                \
            LOAD_BLOCK(r, b);                                                         \
            acc += w0 * xv[4 * b] + w1 * xv[4 * b + 1] + w2 * xv[4 * b + 2] + w3 * xv[4 * b + 3]; \
        }                                                                             \
        out = hsum8(acc);                                                             \
    }
#endif

// Integer dot products for the decode matrix-vector product, where the compiler targets x86
// with AVX2 (PoCL's CPU device; its LLVM does not find these instructions in plain integer
// code): as llama.cpp's vec_dot against q8_0 activations, the input is rounded once per
// launch to 8 bits per value with one float scale per 32 (xq, xd), and each weight block's
// levels (4, 5, 6 or 8 bits, unscaled) multiply the 32 int8 values in two instructions
// (vpmaddubsw: unsigned x signed bytes, adjacent pairs summed to 16 bits; vpmaddwd by ones:
// pairs to 32 bits), 32 products where the float path converts and multiplies 8. Lane i of
// the result holds weights 4i..4i+3 of the block. The block's scales then apply once: its
// integer sum times da * xd (Q6_K: da on weights 0-15, db on 16-31), plus its offset mo
// times the sum xs of the block's rounded inputs. Compile with
// -DNO_INT_DOT for the float path on any device.
#if defined(QUANT) && defined(__x86_64__) && defined(__AVX2__) && !defined(NO_INT_DOT)
#define INT_DOT 1
typedef char v32c __attribute__((ext_vector_type(32)));
typedef uchar v32u __attribute__((ext_vector_type(32)));
typedef char g32c __attribute__((vector_size(32)));
typedef short g16s __attribute__((vector_size(32)));
typedef int g8i __attribute__((vector_size(32)));

inline int8 dot_us(const v32u w, const v32c x) {
    const g16s p = __builtin_ia32_pmaddubsw256(__builtin_astype(w, g32c), __builtin_astype(x, g32c));
    return __builtin_astype(__builtin_ia32_pmaddwd256(p, (g16s){1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}), int8);
}

// signed levels: |w| (w signed by itself) times x carrying w's sign (vpmaddubsw's first
// operand is unsigned; llama.cpp's mul_sum_i8_pairs)
inline int8 dot_ss(const v32c w, const v32c x) {
    const g32c gw = __builtin_astype(w, g32c);
    return dot_us(__builtin_astype(__builtin_ia32_psignb256(gw, gw), v32u),
                  __builtin_astype(__builtin_ia32_psignb256(__builtin_astype(x, g32c), gw), v32c));
}

// UNPACKI(r, b): the 32 levels of block b of row r in column order, unsigned in wu (IDOT
// dot_us) or signed in ws (dot_ss), with da, db, mo as UNPACK gives them.
#if defined(WTYPE_Q4_0) || defined(WTYPE_Q4_1)
#define IDOT(b) dot_us(wu, xq[b])
#define UNPACKI(r, b)                                                                 \
        QBLOCK(r, b)                                                                   \
        v32u wu;                                                                      \
        wu.lo = q & (uchar16)15;                                                      \
        wu.hi = q >> (uchar16)4;
#elif defined(WTYPE_Q5_0)
#define IDOT(b) dot_us(wu, xq[b])
#define UNPACKI(r, b)                                                                 \
        QBLOCK(r, b)                                                                   \
        const uchar4 hb = as_uchar4(((global const uint *)(rowd + 2 * ((nb + 1) & ~1)))[b]); \
        /* the fifth bits, bit i of hb for weight i: each byte of hb broadcast to eight */ \
        /* bytes, tested against bits 0-7 (llama.cpp's bytes_from_bits_32) */             \
        const uchar16 bit = (uchar16)(1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128); \
        const uchar16 hlo = (uchar16)((uchar8)hb.s0, (uchar8)hb.s1);                  \
        const uchar16 hhi = (uchar16)((uchar8)hb.s2, (uchar8)hb.s3);                  \
        v32u wu;                                                                      \
        wu.lo = (q & (uchar16)15) | (as_uchar16((hlo & bit) == bit) & (uchar16)16);   \
        wu.hi = (q >> (uchar16)4) | (as_uchar16((hhi & bit) == bit) & (uchar16)16);
#elif defined(WTYPE_Q8_0)
#define IDOT(b) dot_ss(ws, xq[b])
#define UNPACKI(r, b)                                                                 \
        QBLOCK(r, b)                                                                   \
        global const char16 *qp = (global const char16 *)(wq + blk * 32);            \
        v32c ws;                                                                      \
        ws.lo = qp[0];                                                                \
        ws.hi = qp[1];
#elif defined(WTYPE_Q4_K)
#define IDOT(b) dot_us(wu, xq[b])
#define UNPACKI(r, b)                                                                 \
        QBLOCK(r, b)                                                                   \
        v32u wu;                                                                      \
        wu.lo = (qp[0] >> (uchar16)(4 * (j & 1))) & (uchar16)15;                      \
        wu.hi = (qp[1] >> (uchar16)(4 * (j & 1))) & (uchar16)15;
#elif defined(WTYPE_Q6_K)
#define IDOT(b) dot_ss(ws, xq[b])
#define UNPACKI(r, b)                                                                 \
        QBLOCK(r, b)                                                                   \
        v32c ws;                                                                      \
        ws.lo = as_char16((la & (uchar16)15) | ((ha & (uchar16)3) << (uchar16)4)) - (char16)32; \
        ws.hi = as_char16((lb & (uchar16)15) | ((hb & (uchar16)3) << (uchar16)4)) - (char16)32;
#endif

#undef ROW_DOT
#if defined(WTYPE_Q4_0) || defined(WTYPE_Q4_1) || defined(WTYPE_Q8_0)
// Eight blocks at a time: their integer dot products summed to one lane each (vphaddd),
// then the eight blocks' scales applied in one vector multiply, where the per-block path
// converts, broadcasts and multiplies once per block.
inline int8 hadd8(const int8 a, const int8 b) {
    return __builtin_astype(__builtin_ia32_phaddd256(__builtin_astype(a, g8i), __builtin_astype(b, g8i)), int8);
}
inline int8 block_sums8(const int8 v0, const int8 v1, const int8 v2, const int8 v3,
                        const int8 v4, const int8 v5, const int8 v6, const int8 v7) {
    const int8 t0 = hadd8(hadd8(v0, v1), hadd8(v2, v3));
    const int8 t1 = hadd8(hadd8(v4, v5), hadd8(v6, v7));
    return (int8)(t0.lo, t1.lo) + (int8)(t0.hi, t1.hi);
}
#if defined(WTYPE_Q4_0)
#define SCALES8(r, b8) const float8 d8 = h2f8(vload8(0, wd + (size_t)(r) * nb + (b8))); const float8 m8 = -8.0f * d8;
#elif defined(WTYPE_Q4_1)
#define SCALES8(r, b8) const ushort16 dm = vload16(0, wd + 2 * ((size_t)(r) * nb + (b8))); \
                       const float8 d8 = h2f8(dm.even); const float8 m8 = h2f8(dm.odd);
#else
#define SCALES8(r, b8) const float8 d8 = h2f8(vload8(0, wd + (size_t)(r) * nb + (b8))); const float8 m8 = 0.0f;
#endif
#define IDOT_AT(r, b, v) { UNPACKI(r, b) v = IDOT(b); }
#define ROW_DOT(r, out)                                                               \
    {                                                                                 \
        float8 acc = 0.0f;                                                            \
        float macc = 0.0f;                                                            \
        int b = 0;                                                                    \
        for (; b + 8 <= nb; b += 8) {                                                 \
            int8 v0, v1, v2, v3, v4, v5, v6, v7;                                      \
            IDOT_AT(r, b, v0) IDOT_AT(r, b + 1, v1) IDOT_AT(r, b + 2, v2) IDOT_AT(r, b + 3, v3) \
            IDOT_AT(r, b + 4, v4) IDOT_AT(r, b + 5, v5) IDOT_AT(r, b + 6, v6) IDOT_AT(r, b + 7, v7) \
            SCALES8(r, b)                                                             \
            acc += convert_float8(block_sums8(v0, v1, v2, v3, v4, v5, v6, v7)) * d8 * vload8(0, xd + b) \
                   + m8 * vload8(0, xs + b);                                          \
        }                                                                             \
        for (; b < nb; b++) {                                                         \
            UNPACKI(r, b)                                                             \
            acc += convert_float8(IDOT(b)) * (da * xd[b]);                            \
            macc += mo * xs[b];                                                       \
        }                                                                             \
        out = hsum8(acc) + macc;                                                      \
    }
#elif defined(WTYPE_Q4_K) || defined(WTYPE_Q6_K)
#define ROW_DOT(r, out)                                                               \
    SUBBLOCK_ROW(out, UNPACKI(r, b)                                                   \
        acc += convert_float8(IDOT(b)) * ((float8)(da, da, da, da, db, db, db, db) * xd[b]);)
#else
#define ROW_DOT(r, out)                                                               \
    {                                                                                 \
        float8 acc = 0.0f;                                                            \
        float macc = 0.0f;                                                            \
        for (int b = 0; b < nb; b++) {                                                \
            UNPACKI(r, b)                                                             \
            acc += convert_float8(IDOT(b)) * (da * xd[b]);                            \
            macc += mo * xs[b];                                                       \
        }                                                                             \
        out = hsum8(acc) + macc;                                                      \
    }
#endif

// The input of a matrix-vector product rounded to 8 bits, 32 values per scale (llama.cpp's
// quantize_row_q8_0): xd[b] = max |x| / 127 over block b, xq[b] = round(x / xd[b]), and the
// block's sum as rounded, xs[b] = xd[b] sum xq[b] (as q8_1 keeps it), so that the offsets'
// share mo * xs and the levels' share see the same input (Q4_0 and Q5_0 offset their levels
// by -8 and -16: their rounding errors then partly cancel, as in the float reference).
// vmaxps and vcvtps2dq (round to nearest even, the default rounding mode) as builtins: PoCL
// expands fmax and convert_int8_rte into NaN and tie checks, ~140 instructions a block, and
// every work-item of every product runs this.
typedef float g8f __attribute__((vector_size(32)));
inline void quantize_q8(const float8 *xv, const int nb, v32c *xq, float *xd, float *xs) {
    const uint8 absmask = (uint8)0x7fffffffu;
    for (int b = 0; b < nb; b++) {
        const float8 a0 = xv[4 * b], a1 = xv[4 * b + 1], a2 = xv[4 * b + 2], a3 = xv[4 * b + 3];
        const g8f m8 = __builtin_ia32_maxps256(
            __builtin_ia32_maxps256(__builtin_astype(as_uint8(a0) & absmask, g8f), __builtin_astype(as_uint8(a1) & absmask, g8f)),
            __builtin_ia32_maxps256(__builtin_astype(as_uint8(a2) & absmask, g8f), __builtin_astype(as_uint8(a3) & absmask, g8f)));
        const float8 m = __builtin_astype(m8, float8);
        const float4 m4 = fmax(m.lo, m.hi);
        const float2 m2 = fmax(m4.lo, m4.hi);
        const float amax = fmax(m2.x, m2.y);
        const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
        xd[b] = amax / 127.0f;
        const int8 i0 = __builtin_astype(__builtin_ia32_cvtps2dq256(__builtin_astype(a0 * id, g8f)), int8);
        const int8 i1 = __builtin_astype(__builtin_ia32_cvtps2dq256(__builtin_astype(a1 * id, g8f)), int8);
        const int8 i2 = __builtin_astype(__builtin_ia32_cvtps2dq256(__builtin_astype(a2 * id, g8f)), int8);
        const int8 i3 = __builtin_astype(__builtin_ia32_cvtps2dq256(__builtin_astype(a3 * id, g8f)), int8);
        v32c q;
        q.lo.lo = convert_char8(i0);
        q.lo.hi = convert_char8(i1);
        q.hi.lo = convert_char8(i2);
        q.hi.hi = convert_char8(i3);
        xq[b] = q;
        xs[b] = hsum8(convert_float8(i0 + i1 + i2 + i3)) * xd[b];
    }
}
#endif

// exp(x) for x <= 0 (softmax weights: scores minus their running maximum), inline: PoCL's
// exp is an out-of-line call that costs about as much as a score. Cephes' expf: x = n ln2 + r,
// |r| <= ln2/2, a degree-6 polynomial for e^r (relative error ~1e-7), 2^n from the exponent
// bits. x below -87 is clamped (e^-87 ~ 1.6e-38: weight 0 next to the maximum's weight 1).
// One definition for each vector width N (8 here, 16 for the AVX-512 prefill attention).
#define EXP_NONPOS(N)                                                                 \
    inline float##N exp_nonpos##N(float##N x) {                                       \
        x = x < (float##N)-87.0f ? (float##N)-87.0f : x;                              \
        const int##N n = convert_int##N(x * 1.44269504088896341f - 0.5f); /* round(x / ln2), x <= 0 */ \
        const float##N fn = convert_float##N(n);                                      \
        const float##N r = x - fn * 0.693359375f + fn * 2.12194440e-4f;               \
        float##N y = 1.9875691500e-4f;                                                \
        y = y * r + 1.3981999507e-3f;                                                 \
        y = y * r + 8.3334519073e-3f;                                                 \
        y = y * r + 4.1665795894e-2f;                                                 \
        y = y * r + 1.6666665459e-1f;                                                 \
        y = y * r + 5.0000001201e-1f;                                                 \
        y = y * r * r + r + 1.0f;                                                     \
        return y * as_float##N((n + 127) << 23);                                      \
    }
EXP_NONPOS(8)

inline float exp_nonpos(const float x) { return exp_nonpos8((float8)x).s0; }

#define MODE_WRITE 0
#define MODE_ACCUMULATE 1
#define MODE_SWIGLU 2
#define MODE_GEGLU 3

// SiLU, s * sigmoid(s), through exp_nonpos (PoCL's exp is a call): with e = e^-|s|,
// sigmoid(s) = 1 / (1 + e) for s >= 0 and e / (1 + e) below.
inline float silu(const float s) {
    const float e = exp_nonpos(-fabs(s));
    return s * (s >= 0.0f ? 1.0f : e) / (1.0f + e);
}

// GELU, tanh form (as ggml_gelu): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). The same
// through exp_nonpos was faster but moves Gemma 3's logits by ~1e-6, enough to flip an 8-bit
// rounding and a reference near-tie (tests/test_engine_peer.py): the library tanh stays.
inline float gelu(const float x) {
    return 0.5f * x * (1.0f + tanh(0.7978845608028654f * x * (1.0f + 0.044715f * x * x)));
}

// The decode matrix-vector product, y = W x, with what surrounds it fused in: optionally
// a normed residual add first (res, below), then RMSNorm of x (norm != 0: x / rms(x) * norm_w), then MODE_WRITE y[r] = s,
// MODE_ACCUMULATE y[r] += s (the residual add), or MODE_SWIGLU y[r] = silu(s_r) * s_{r+rows}
// (MODE_GEGLU: gelu(s_r) * s_{r+rows}) over a fused [gate | up] matrix of 2 rows rows.
// y is written from float yoff on. Each work-item keeps a private copy of the (normalised)
// input, read from its L1 cache for every row, and takes rows rows_per_item at a time (below).
kernel void matvec(global const WQ_T *wq, global const WD_T *wd, global const float *x,
                   global float *y, const int rows, const int cols, const int rows_per_item,
                   const int mode, const int norm, global const float *norm_w, const float eps,
                   const int yoff, const int splits, const int res, global const float *res_t,
                   global const float *res_w, global float *res_out, global int *counters,
                   const int counter_slot) {
    global int *row_counter = counters ? counters + counter_slot : 0;
    const int nb = cols / 32;
    global const float8 *x8 = (global const float8 *)x;
    float8 xv[MAX_BLOCKS * 4];
    y += yoff;
    if (splits > 0) {
        // x is attention_decode's partial softmaxes: merge them here rather than in a launch of
        // their own: out_h = sum_s e^(m_s - M) acc_s / sum_s e^(m_s - M) l_s. Every work-item
        // merges all heads (a few thousand floats, from its cache).
        for (int h = 0; h < cols / HD; h++) {
            global const float *pp = x + (size_t)h * splits * (HD + 8);
            float mx = -1e30f;
            for (int sp = 0; sp < splits; sp++) mx = pp[sp * (HD + 8) + HD] > mx ? pp[sp * (HD + 8) + HD] : mx;
            float l = 0.0f;
            for (int i = 0; i < HD / 8; i++) xv[h * (HD / 8) + i] = 0.0f;
            for (int sp = 0; sp < splits; sp++) {
                global const float *ps = pp + sp * (HD + 8);
                const float w = exp_nonpos(ps[HD] - mx);
                l += w * ps[HD + 1];
                for (int i = 0; i < HD / 8; i++) xv[h * (HD / 8) + i] += w * ((global const float8 *)ps)[i];
            }
            const float inv = 1.0f / l;
            for (int i = 0; i < HD / 8; i++) xv[h * (HD / 8) + i] *= inv;
        }
    } else {
        for (int i = 0; i < nb * 4; i++) xv[i] = x8[i];
        if (res) {
            // the input is x + RMSNorm(res_t) * res_w: the residual add of the block before,
            // after its own norm (Gemma's post-attention and post-MLP norms), done here rather
            // than in a launch of its own; work-item 0 keeps the sum in res_out (another
            // buffer than x, which the other work-items are still reading).
            global const float8 *t8 = (global const float8 *)res_t;
            global const float8 *w8 = (global const float8 *)res_w;
            float8 ts = 0.0f;
            for (int i = 0; i < nb * 4; i++) ts += t8[i] * t8[i];
            const float tscale = rsqrt(hsum8(ts) / cols + eps);
            for (int i = 0; i < nb * 4; i++) xv[i] += t8[i] * tscale * w8[i];
            if (get_global_id(0) == 0)
                for (int i = 0; i < nb * 4; i++) ((global float8 *)res_out)[i] = xv[i];
        }
        if (norm) {
            float8 ss = 0.0f;
            for (int i = 0; i < nb * 4; i++) ss += xv[i] * xv[i];
            const float scale = rsqrt(hsum8(ss) / cols + eps);
            global const float8 *g8 = (global const float8 *)norm_w;
            for (int i = 0; i < nb * 4; i++) xv[i] = xv[i] * scale * g8[i];
        }
    }
#ifdef QUANT
    float xs[MAX_BLOCKS];
    for (int b = 0; b < nb; b++) xs[b] = hsum8(xv[4 * b] + xv[4 * b + 1] + xv[4 * b + 2] + xv[4 * b + 3]);
#endif
#ifdef INT_DOT
    v32c xq[MAX_BLOCKS];
    float xd[MAX_BLOCKS];
    quantize_q8(xv, nb, xq, xd, xs);
#endif
    // Rows are handed out rows_per_item at a time from the launch's counter (zeroed before the
    // step), so each work-item prepares its input once and a work-item on a busy core takes
    // fewer rows; without counters (null), work-item i owns the i-th range.
    for (int first = row_counter ? atomic_add(row_counter, rows_per_item) : get_global_id(0) * rows_per_item;
         first < rows;
         first = row_counter ? atomic_add(row_counter, rows_per_item) : rows) {
        const int last = first + rows_per_item < rows ? first + rows_per_item : rows;
        for (int r = first; r < last; r++) {
            float s;
            ROW_DOT(r, s);
            if (mode >= MODE_SWIGLU) {
                float u;
                ROW_DOT(r + rows, u);
                y[r] = (mode == MODE_SWIGLU ? silu(s) : gelu(s)) * u;
            } else {
                y[r] = mode == MODE_ACCUMULATE ? y[r] + s : s;
            }
        }
    }
}

// The prefill matrix-matrix product: a work-item owns a chunk of rows and a tile of TT
// tokens, so each dequantized weight block is used TT times. x has room for a whole tile
// (the host pads it), rows of tokens past ntok are computed but not written. Token t's
// outputs go to y[t * ldy + yoff + r].
kernel void matmul(global const WQ_T *wq, global const WD_T *wd, global const float *x,
                   global float *y, const int rows, const int cols, const int rows_per_item,
                   const int accumulate, const int ntok, const int ldy, const int yoff) {
    const int r0 = get_global_id(0) * rows_per_item;
    const int r1 = r0 + rows_per_item < rows ? r0 + rows_per_item : rows;
    const int t0 = get_global_id(1) * TT;
    const int nt = TT < ntok - t0 ? TT : ntok - t0;
    const int nb = cols / 32;
    float8 w0, w1, w2, w3;
    for (int r = r0; r < r1; r++) {
        float8 acc[TT];
#pragma unroll
        for (int i = 0; i < TT; i++) acc[i] = 0.0f;
        for (int b = 0; b < nb; b++) {
            LOAD_BLOCK(r, b);
            global const float *xp = x + (size_t)t0 * cols + b * 32;
#pragma unroll
            for (int i = 0; i < TT; i++) acc[i] += DOT_BLOCK(xp + (size_t)i * cols);
        }
        for (int i = 0; i < nt; i++) {
            const float s = hsum8(acc[i]);
            global float *yp = y + (size_t)(t0 + i) * ldy + yoff + r;
            *yp = accumulate ? *yp + s : s;
        }
    }
}

// The integer prefill matrix-matrix product (INT_DOT programs): as llama.cpp's CPU backend
// computes a prompt, the chunk's input is rounded once per launch group to 8 bits per value,
// 32 values per scale (quantize_tiles, with quantize_q8's rounding, so that prefill and
// decode see the same input), and each weight block's integer levels multiply XL tokens at
// once. The rounded input is stored transposed by tiles of XL tokens: for tile T, block b and
// group g (columns 4g..4g+3 of the block), the four bytes of each of the XL tokens side by
// side, xq[T][b][g][lane][4]; the float record of (T, b) is xf[T][b][3][XL] = the scale xd,
// the block's rounded sum xs (xd sum q, as quantize_q8 keeps it) and its first half's xh.
// A weight group's four levels, broadcast to every lane, then multiply XL tokens' groups in
// one instruction (vpdpbusd, or vpmaddubsw and vpmaddwd without VNNI), and lane t of the
// integer sum is token t's dot product over the block, with no horizontal sums: the layout
// of llama.cpp's repacked gemm kernels, with tokens in the lanes instead of weight rows,
// so the weights keep the layout that decode reads. Weight levels are unsigned (offsets and
// minimums in mo, as UNPACK gives them; Q8_0's levels are shifted by 128 and Q6_K's are used
// before their -32), the input signed.
// XL: 16 tokens (512-bit vectors) where the compiler targets AVX-512BW, else 8; QTILES
// tiles of XL tokens per work-item share each unpacked weight block.
#if defined(INT_DOT) && (defined(INT_VNNI) || !defined(WTYPE_Q8_0))
#define INT_MATMUL 1
#ifndef QTILES
#define QTILES 2
#endif
#if defined(__AVX512BW__) && !defined(INT_YMM)
#define XL 16
#define PMADDUBSW_X __builtin_ia32_pmaddubsw512
#define PMADDWD_X __builtin_ia32_pmaddwd512
#define ONES_X ONES16X2
#else
#define XL 8
#define PMADDUBSW_X __builtin_ia32_pmaddubsw256
#define PMADDWD_X __builtin_ia32_pmaddwd256
#define ONES_X ONES16
#endif
typedef int XI __attribute__((ext_vector_type(XL)));
typedef uint XU __attribute__((ext_vector_type(XL)));
typedef float XF __attribute__((ext_vector_type(XL)));
typedef int gXI __attribute__((vector_size(4 * XL)));
typedef char gXC __attribute__((vector_size(4 * XL)));
typedef short gXS __attribute__((vector_size(4 * XL)));
#ifndef INT_VNNI
#define DPBUSD(acc, w, x) ((acc) + __builtin_astype(PMADDWD_X(PMADDUBSW_X(__builtin_astype(w, gXC), __builtin_astype(x, gXC)), (gXS)ONES_X), XI))
#endif
#define ONES16 {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
#define ONES16X2 {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
#ifdef INT_VNNI
// vpdpbusd: acc += the four products of unsigned w and signed x bytes, per 32-bit lane. In
// assembly: PoCL inlines every function into its work-group loop, whose target (PoCL's CPU
// name for the host, skylake-avx512 here) may lack VNNI, so the compiler's builtin cannot be
// selected there; the assembler takes the instruction whatever the target. The host checks
// the CPU's flags (INT_VNNI, tokenwalk/native/cl/programs.py).
inline XI dpbusd(XI acc, const XU w, const XI x) {
    __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(w), "v"(x));
    return acc;
}
#define DPBUSD(acc, w, x) dpbusd(acc, w, x)
#endif

typedef union {
    XF v;
    float a[XL];
} xfu;
typedef float uf16 __attribute__((ext_vector_type(16), aligned(4)));  // 16 floats at any float's address

// UNPACKU(r, b): the 32 levels of block b of row r, unsigned, in column order (wu), with da
// (weights 0-15), db (16-31) and the offset mo: weight = level * da + mo (db).
#if defined(WTYPE_Q8_0)
#define UNPACKU(r, b)                                                                 \
        UNPACKI(r, b)                                                                  \
        const v32u wu = __builtin_astype(ws, v32u) ^ (v32u)128;                       \
        const float mo8 = -128.0f * da;
#define MO mo8
#elif defined(WTYPE_Q6_K)
#define UNPACKU(r, b)                                                                 \
        QBLOCK(r, b)                                                                   \
        v32u wu;                                                                      \
        wu.lo = (la & (uchar16)15) | ((ha & (uchar16)3) << (uchar16)4);               \
        wu.hi = (lb & (uchar16)15) | ((hb & (uchar16)3) << (uchar16)4);
#elif defined(WTYPE_Q5_0) && defined(__AVX512BW__) && defined(__AVX512VL__)
// the fifth bits: bit i of the block's 32-bit word set -> byte i = 0xff (vpmovm2b), & 16
#define UNPACKU(r, b)                                                                 \
        QBLOCK(r, b)                                                                   \
        const uint hb = ((global const uint *)(rowd + 2 * ((nb + 1) & ~1)))[b];       \
        const v32u hi = __builtin_astype(__builtin_ia32_cvtmask2b256(hb), v32u) & (v32u)16; \
        v32u wu;                                                                      \
        wu.lo = q & (uchar16)15;                                                      \
        wu.hi = q >> (uchar16)4;                                                      \
        wu |= hi;
#define MO mo
#else
#define UNPACKU(r, b) UNPACKI(r, b)
#define MO mo
#endif

// x * id rounded to the nearest integer, ties to even: vcvtps2dq in the default rounding mode,
// what convert_int8_rte computes (PoCL's convert_int8_rte is a dozen instructions of emulation)
typedef float gq8f __attribute__((vector_size(32)));
inline int8 rint8(const float8 v) {
    return __builtin_astype(__builtin_ia32_cvtps2dq256(__builtin_astype(v, gq8f)), int8);
}

// The chunk's input rounded for matmul_q8: one work-item per token of the padded chunk
// (tokens from ntok on are zeros), x: [tokens][cols] floats. Each block is rounded exactly as
// quantize_q8 rounds it (the same operations; rint8 for convert_int8_rte), so that a token's
// products see the same input in prefill and decode.
kernel void quantize_tiles(global const float *x, global int *xq, global float *xf, const int cols,
                           const int ntok) {
    const int t = get_global_id(0);
    const int tile = t / XL, lane = t % XL;
    const int nb = cols / 32;
    global const float8 *x8 = (global const float8 *)(x + (size_t)t * cols);
    const uint8 mask = (uint8)0x7fffffffu;
    for (int b = 0; b < nb; b++) {
        float8 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
        if (t < ntok) {
            a0 = x8[4 * b]; a1 = x8[4 * b + 1]; a2 = x8[4 * b + 2]; a3 = x8[4 * b + 3];
        }
        const float8 m8 = fmax(fmax(as_float8(as_uint8(a0) & mask), as_float8(as_uint8(a1) & mask)),
                               fmax(as_float8(as_uint8(a2) & mask), as_float8(as_uint8(a3) & mask)));
        const float4 m4 = fmax(m8.lo, m8.hi);
        const float2 m2 = fmax(m4.lo, m4.hi);
        const float amax = fmax(m2.x, m2.y);
        const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
        const float d = amax / 127.0f;
        const int8 i0 = rint8(a0 * id), i1 = rint8(a1 * id), i2 = rint8(a2 * id), i3 = rint8(a3 * id);
        v32c q;
        q.lo.lo = convert_char8(i0);
        q.lo.hi = convert_char8(i1);
        q.hi.lo = convert_char8(i2);
        q.hi.hi = convert_char8(i3);
        const int8 qi = __builtin_astype(q, int8);
        global int *qp = xq + ((size_t)tile * nb + b) * 8 * XL + lane;
        qp[0] = qi.s0; qp[XL] = qi.s1; qp[2 * XL] = qi.s2; qp[3 * XL] = qi.s3;
        qp[4 * XL] = qi.s4; qp[5 * XL] = qi.s5; qp[6 * XL] = qi.s6; qp[7 * XL] = qi.s7;
        global float *fp = xf + ((size_t)tile * nb + b) * 3 * XL + lane;
        fp[0] = d;
        fp[XL] = hsum8(convert_float8(i0 + i1 + i2 + i3)) * d;  // quantize_q8's xs
        fp[2 * XL] = hsum8(convert_float8(i0 + i1)) * d;  // the first 16 values' share
    }
}

// y (+)= W x for ntok tokens from quantize_tiles' xq, xf: a work-item owns a chunk of rows and
// QTILES tiles of XL tokens (global id 1), so each unpacked weight block serves QTILES * XL
// tokens. Token t's outputs go to y[t * ldy + yoff + r].
kernel void matmul_q8(global const WQ_T *wq, global const WD_T *wd, global const XI *xq,
                      global const XF *xf, global float *y, const int rows, const int cols,
                      const int rows_per_item, const int accumulate, const int ntok, const int ldy,
                      const int yoff) {
    const int r0 = get_global_id(0) * rows_per_item;
    const int r1 = r0 + rows_per_item < rows ? r0 + rows_per_item : rows;
    const int tile0 = get_global_id(1) * QTILES;
    const int nb = cols / 32;
    const int nt = QTILES * XL < ntok - tile0 * XL ? QTILES * XL : ntok - tile0 * XL;
    // the outputs of 16 rows by token, written to y 16 rows (one cache line) at a time: a
    // token's outputs are ldy floats apart, often a multiple of 4 KiB, and a row at a time
    // would write QTILES * XL lines that all fall in the same set of the L1 cache
    float ybuf[QTILES * XL][16] __attribute__((aligned(64)));
    for (int r = r0; r < r1; r++) {
        XF acc[QTILES];
#pragma unroll
        for (int i = 0; i < QTILES; i++) acc[i] = 0.0f;
#if defined(WTYPE_Q4_K) || defined(WTYPE_Q6_K)
        // the eight 32-weight sub-blocks of a 256-weight block unrolled, as ROW_DOT does: the
        // sub-block's place (which scale bits, which nibbles) a constant
        for (int b8 = 0; b8 < nb; b8 += 8)
        _Pragma("unroll")
        for (int jj = 0; jj < 8; jj++) {
            const int b = b8 + jj, jsub = jj;
#else
        for (int b = 0; b < nb; b++) {
            const int jsub = b & 7;
#endif
            UNPACKU(r, b)
            const uint8 wv = __builtin_astype(wu, uint8);
            const XU w0 = wv.s0, w1 = wv.s1, w2 = wv.s2, w3 = wv.s3;
            const XU w4 = wv.s4, w5 = wv.s5, w6 = wv.s6, w7 = wv.s7;
#pragma unroll
            for (int i = 0; i < QTILES; i++) {
                const size_t tb = (size_t)(tile0 + i) * nb + b;
                global const XI *xp = xq + tb * 8;
                global const XF *fp = xf + tb * 3;
                XI sa = 0;
                sa = DPBUSD(sa, w0, xp[0]);
                sa = DPBUSD(sa, w1, xp[1]);
                sa = DPBUSD(sa, w2, xp[2]);
                sa = DPBUSD(sa, w3, xp[3]);
#if defined(WTYPE_Q6_K)
                XI sb = 0;
                sb = DPBUSD(sb, w4, xp[4]);
                sb = DPBUSD(sb, w5, xp[5]);
                sb = DPBUSD(sb, w6, xp[6]);
                sb = DPBUSD(sb, w7, xp[7]);
                // levels 0..63 stand for level - 32: minus 32 times each half's input sum
                const XF xh = fp[2];
                acc[i] += (__builtin_convertvector(sa, XF) * da + __builtin_convertvector(sb, XF) * db) * fp[0]
                          - 32.0f * (da * xh + db * (fp[1] - xh));
#else
                XI sb = 0;  // two chains of four dependent instructions rather than one of eight
                sb = DPBUSD(sb, w4, xp[4]);
                sb = DPBUSD(sb, w5, xp[5]);
                sb = DPBUSD(sb, w6, xp[6]);
                sb = DPBUSD(sb, w7, xp[7]);
                acc[i] += __builtin_convertvector(sa + sb, XF) * (fp[0] * da) + MO * fp[1];
#endif
            }
        }
#pragma unroll
        for (int i = 0; i < QTILES; i++) {
            xfu o;
            o.v = acc[i];
#pragma unroll
            for (int k = 0; k < XL; k++) ybuf[i * XL + k][(r - r0) & 15] = o.a[k];
        }
        if (((r - r0) & 15) == 15 || r == r1 - 1) {
            const int rg = r - ((r - r0) & 15), n = r - rg + 1;
            for (int k = 0; k < nt; k++) {
                global float *yp = y + (size_t)(tile0 * XL + k) * ldy + yoff + rg;
                if (n == 16) {
                    const float16 v = *(const float16 *)ybuf[k];
                    *(global uf16 *)yp = accumulate ? *(global uf16 *)yp + v : v;
                } else {
                    for (int j = 0; j < n; j++) yp[j] = accumulate ? yp[j] + ybuf[k][j] : ybuf[k][j];
                }
            }
        }
    }
}
#endif

// Which prefill product this program runs: out[0] = XL (tokens per tile of matmul_q8) and
// out[1] = QTILES where it has the integer one, 0 and 0 where it runs the float matmul.
kernel void matmul_q8_shape(global int *out) {
#ifdef INT_MATMUL
    out[0] = XL;
    out[1] = QTILES;
#else
    out[0] = 0;
    out[1] = 0;
#endif
}

// RMSNorm of ntok rows of n values: out = x / sqrt(mean(x^2) + eps) * w.
kernel void rms_norm(global const float *x, global const float *w, global float *out, const int n,
                     const float eps) {
    const int t = get_global_id(0);
    global const float *xp = x + (size_t)t * n;
    global float *op = out + (size_t)t * n;
    float8 acc = 0.0f;
    for (int i = 0; i < n; i += 8) {
        const float8 v = vload8(0, xp + i);
        acc += v * v;
    }
    const float scale = rsqrt(hsum8(acc) / n + eps);
    for (int i = 0; i < n; i += 8) vstore8(vload8(0, xp + i) * scale * vload8(0, w + i), 0, op + i);
}

// RoPE (adjacent pairs, llama.cpp's "normal" mode) on the q and k parts of the fused
// QKV output, then k and v written into this layer's cache at positions pos0 + t.
// qkv: [ntok][(heads + 2 kv_heads) * HD]. Cache of one layer, CACHE_ROWS(ctx) positions (8
// spare, a multiple of 8): values [kv_heads][position][HD]; keys by groups of eight
// positions, [kv_heads][position / 8][HD][8], so that the scores of one query against eight
// keys are one float8 accumulated over the HD dimensions, with no horizontal sums.
// rope: [ntok][HD] = cos(angle_i) for i < HD/2, then sin(angle_i), angle_i = pos base^(-2i/HD),
// computed by the host in double precision (PoCL's sin and cos are slow out-of-line calls).
// The KV cache holds fp16 bits (as llama.cpp's default cache): half the bytes a decode step
// reads at a long context. PoCL has no fp16 arithmetic, so conversions are integer code.
// float -> fp16, round to nearest even (values beyond fp16's range do not occur here).
inline ushort f2h(const float f) {
    const uint x = as_uint(f);
    const uint sign = (x >> 16) & 0x8000u;
    const uint ax = x & 0x7fffffffu;
    if (ax < 0x38800000u)  // below 2^-14: fp16 subnormal (or zero), steps of 2^-24
        return (ushort)(sign | (uint)(as_float(ax) * 16777216.0f + 0.5f));
    return (ushort)(sign | ((ax + 0xC8000FFFu + ((ax >> 13) & 1u)) >> 13));
}

#define CACHE_ROWS(ctx) ((((ctx) + 15) / 8) * 8)
#define VMAX(a, b) ((a) > (b) ? (a) : (b))
#define K_AT(kvh, pos, d, ctx) \
    (((size_t)(kvh) * CACHE_ROWS(ctx) + ((pos) & ~7)) * HD + (size_t)(d) * 8 + ((pos) & 7))

kernel void rope_store(global float *qkv, global const float *rope, global ushort *k_cache,
                       global ushort *v_cache, global const int *state, const int heads,
                       const int kv_heads, const int ctx) {
    const int h = get_global_id(0);  // 0..heads+kv_heads-1: query heads, then key heads
    const int t = get_global_id(1);
    const int pos = state[0] + t;
    const int width = (heads + 2 * kv_heads) * HD;
    global float *v = qkv + (size_t)t * width + h * HD;
    global const float *cs = rope + (size_t)t * HD;
    for (int i = 0; i < HD / 2; i++) {
        const float c = cs[i], sn = cs[HD / 2 + i];
        const float a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * c - b * sn;
        v[2 * i + 1] = a * sn + b * c;
    }
    if (h >= heads) {
        const int kvh = h - heads;
        global ushort *kd = k_cache + K_AT(kvh, pos, 0, ctx);
        global ushort *vd = v_cache + ((size_t)kvh * CACHE_ROWS(ctx) + pos) * HD;
        global const float8 *vs = (global const float8 *)(qkv + (size_t)t * width + (heads + kv_heads + kvh) * HD);
        global const float *vsf = (global const float *)vs;
        for (int d = 0; d < HD; d++) {
            kd[8 * d] = f2h(v[d]);
            vd[d] = f2h(vsf[d]);
        }
    }
}


typedef union {
    float8 v;
    float a[8];
} f8u;

// Prefill attention with an online softmax: one work-item per (query head, tile of QT
// tokens), so that each key and value read from the cache serves QT queries (one query per
// work-item read the whole cache once per token: terabytes for a 6,000-token prompt). Keys
// come AW (8, or 16 with AVX-512) at a time, transposed (see rope_store): the AW scores of a
// query are one vector, and one vector exp turns them into weights. Keys past a query's position get the
// score -1e30 (finite: the kernels use fast, finite math), weight ~0. Grouped-query
// attention: query head h reads KV head h / (heads / kv_heads).
inline float vmax8(const float8 v) {
    const float4 m4 = VMAX(v.lo, v.hi);
    const float2 m2 = VMAX(m4.lo, m4.hi);
    return VMAX(m2.x, m2.y);
}

#if defined(__AVX512F__) && HD % 16 == 0 && !defined(ATTN_YMM)
// With AVX-512: sixteen keys at a time (two of the cache's groups of eight) and sixteen
// dimensions of a value, in 512-bit vectors, the cache's fp16 converted by vcvtph2ps (one
// instruction for 16 values, where h2f8's integer code takes six for 8): four times fewer
// instructions per product than the 8-wide loop below, with the same arithmetic per value.
typedef float gf16 __attribute__((vector_size(64)));
typedef short gs16 __attribute__((vector_size(32)));
inline float16 h2f16(const ushort16 h) {
    return __builtin_astype(__builtin_ia32_vcvtph2ps512_mask(__builtin_astype(h, gs16), (gf16){0.0f, 0.0f, 0.0f, 0.0f,
        0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, (ushort)0xffff, 4), float16);
}

EXP_NONPOS(16)

typedef union {
    float16 v;
    float a[16];
} f16u;
#define AW 16
#define floatW float16
#define intW int16
#define ushortW ushort16
#define fWu f16u
#define LANE_W (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define H2F_W h2f16
#define EXP_W exp_nonpos16
#define KEYS_W(d) h2f16((ushort16)(ka[d], ka[(d) + HD]))  // the cache's groups of eight at j0 and j0 + 8
#define MAX_W(v) vmax8(VMAX((v).lo, (v).hi))
#define SUM_W(v) hsum8((v).lo + (v).hi)
#else
// Elsewhere (ATTN_YMM=1 forces it): eight keys and eight dimensions of a value at a time.
#define AW 8
#define floatW float8
#define intW int8
#define ushortW ushort8
#define fWu f8u
#define LANE_W (int8)(0, 1, 2, 3, 4, 5, 6, 7)
#define H2F_W h2f8
#define EXP_W exp_nonpos8
#define KEYS_W(d) h2f8(ka[d])
#define MAX_W(v) vmax8(v)
#define SUM_W(v) hsum8(v)
#endif

kernel void attention(global const float *qkv, global const ushort *k_cache,
                      global const ushort *v_cache, global float *out, global const int *state,
                      const int heads, const int kv_heads, const int ctx, const float scale,
                      const int ntok, const int window) {
    const int h = get_global_id(0);
    const int t0 = get_global_id(1) * QT;
    const int nq = QT < ntok - t0 ? QT : ntok - t0;
    const int pos0 = state[0] + t0;
    const int kvh = h / (heads / kv_heads);
    const int width = (heads + 2 * kv_heads) * HD;
    float q[QT][HD];
    floatW acc[QT][HD / AW];
    float m[QT], l[QT];
    for (int qi = 0; qi < QT; qi++) {
        const int t = t0 + (qi < nq ? qi : nq - 1);
        global const float *qp = qkv + (size_t)t * width + h * HD;
        for (int d = 0; d < HD; d++) q[qi][d] = qp[d] * scale;
        for (int i = 0; i < HD / AW; i++) acc[qi][i] = 0.0f;
        m[qi] = -1e30f;
        l[qi] = 0.0f;
    }
    global const ushort8 *kt = (global const ushort8 *)(k_cache + (size_t)kvh * CACHE_ROWS(ctx) * HD);
    global const ushortW *vp = (global const ushortW *)(v_cache + (size_t)kvh * CACHE_ROWS(ctx) * HD);
    const int n_max = pos0 + nq;
    // a sliding window (window > 0) hides keys more than window - 1 positions back; keys are
    // read AW at a time from a multiple of AW (the cache holds at least ctx + 8 positions,
    // rounded up to 8: enough for the last group of sixteen)
    const int j_first = window > 0 && pos0 + 1 > window ? ((pos0 + 1 - window) & ~(AW - 1)) : 0;
    for (int j0 = j_first; j0 < n_max; j0 += AW) {
        global const ushort8 *ka = kt + (size_t)(j0 / 8) * HD;  // ka[d]: dimension d of keys j0..j0+7
        floatW s[QT];
#pragma unroll
        for (int qi = 0; qi < QT; qi++) s[qi] = 0.0f;
        for (int d = 0; d < HD; d++) {
            const floatW k = KEYS_W(d);
#pragma unroll
            for (int qi = 0; qi < QT; qi++) s[qi] += q[qi][d] * k;
        }
        fWu p[QT];
        float c[QT];
#pragma unroll
        for (int qi = 0; qi < QT; qi++) {
            const int n = pos0 + qi + 1;  // keys 0..n-1 are visible to query qi (n-window.. with a window)
            const intW j = LANE_W + j0;
            const int lo = window > 0 ? n - window : -1;
            const floatW sq = ((j < (intW)n) & (j >= (intW)lo)) ? s[qi] : (floatW)-1e30f;
            const float bm = MAX_W(sq);
            const float mx = bm > m[qi] ? bm : m[qi];
            c[qi] = exp_nonpos(m[qi] - mx);
            p[qi].v = EXP_W(sq - (floatW)mx);
            m[qi] = mx;
            l[qi] = l[qi] * c[qi] + SUM_W(p[qi].v);
        }
        for (int i = 0; i < HD / AW; i++) {
            floatW a[QT];
#pragma unroll
            for (int qi = 0; qi < QT; qi++) a[qi] = acc[qi][i] * c[qi];
#pragma unroll
            for (int jj = 0; jj < AW; jj++) {
                const floatW v = H2F_W(vp[(size_t)(j0 + jj) * (HD / AW) + i]);
#pragma unroll
                for (int qi = 0; qi < QT; qi++) a[qi] += p[qi].a[jj] * v;
            }
#pragma unroll
            for (int qi = 0; qi < QT; qi++) acc[qi][i] = a[qi];
        }
    }
    for (int qi = 0; qi < nq; qi++) {
        global floatW *op = (global floatW *)(out + (size_t)(t0 + qi) * heads * HD + h * HD);
        const float inv = 1.0f / l[qi];
        for (int i = 0; i < HD / AW; i++) op[i] = acc[qi][i] * inv;
    }
}

inline float8 rope8(const float8 a, global const float *cs, const int k) {
    // pairs 4k..4k+3 of a head: (a[2i], a[2i+1]) rotated by angle_i; cs = cos[HD/2] | sin[HD/2]
    const float4 c = *(global const float4 *)(cs + 4 * k);
    const float4 s = *(global const float4 *)(cs + HD / 2 + 4 * k);
    const float4 e = a.even * c - a.odd * s;
    const float4 o = a.even * s + a.odd * c;
    return (float8)(e.s0, o.s0, e.s1, o.s1, e.s2, o.s2, e.s3, o.s3);
}

// Decode attention for one token, with RoPE and the cache write fused in. A work-item owns
// one KV head and one of `splits` ranges of key groups: it serves the GROUP query heads that
// share that KV head, so each cached key and value is read once per token, not once per
// query head (at a long context the cache, not the weights, is most of what decode reads),
// and the splits keep every core busy. Each work-item ropes the KV head's key and writes key
// and value at position pos (the splits of one KV head write identical values, so whichever
// lands last is right, and each reads back its own write), then leaves, per query head, its
// partial softmax (running max m, sum l, weighted values acc) in part[h][split] =
// [acc: HD][m, l, pad: 8], which the next matvec merges (its `splits` argument).
#ifdef QK_NORM
// a head of the fused QKV row, RMS-normed with weights w and rotated in NEOX order, into out
inline void norm_rope_head(global const float *v, global const float *w, global const float *cs,
                           const float eps, const float scale, float *out) {
    float ss = 0.0f;
    for (int i = 0; i < HD; i++) ss += v[i] * v[i];
    const float sc = rsqrt(ss / HD + eps);
    for (int i = 0; i < HD / 2; i++) {
        const float c = cs[i], sn = cs[HD / 2 + i];
        const float a = v[i] * sc * w[i], b = v[i + HD / 2] * sc * w[i + HD / 2];
        out[i] = (a * c - b * sn) * scale;
        out[i + HD / 2] = (a * sn + b * c) * scale;
    }
}
#endif
#ifdef QKV_BIAS
// a head of the fused QKV row plus its bias b, rotated in NEOX order, into out
inline void bias_rope_head(global const float *v, global const float *b, global const float *cs,
                           const float scale, float *out) {
    for (int i = 0; i < HD / 2; i++) {
        const float c = cs[i], sn = cs[HD / 2 + i];
        const float x0 = v[i] + b[i], x1 = v[i + HD / 2] + b[i + HD / 2];
        out[i] = (x0 * c - x1 * sn) * scale;
        out[i + HD / 2] = (x0 * sn + x1 * c) * scale;
    }
}
#endif

kernel void attention_decode(global const float *qkv, global const float *rope, global ushort *k_cache,
                             global ushort *v_cache, global float *part, global const int *state,
                             const int heads, const int kv_heads, const int ctx, const float scale,
                             const int splits, const int window
#ifdef QK_NORM
                             , global const float *q_norm, global const float *k_norm, const float eps
#endif
#ifdef QKV_BIAS
                             , global const float *bias  // [Q | K | V] biases, as a fused QKV row
#endif
                             ) {
    const int kvh = get_global_id(0);
    const int sp = get_global_id(1);
    const int pos = state[0];
    const int n = pos + 1;
    const int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7);
    float q[GROUP][HD];
    float8 acc[GROUP][HD / 8];
    float m[GROUP], l[GROUP];
    global ushort *kw = k_cache + K_AT(kvh, pos, 0, ctx);
    global ushort *vw = v_cache + ((size_t)kvh * CACHE_ROWS(ctx) + pos) * HD;
    global const float *vsf = qkv + (heads + kv_heads + kvh) * HD;
#ifdef QK_NORM
    // Gemma 3: per-head RMSNorm (attn_q_norm, attn_k_norm), then NEOX RoPE
    norm_rope_head(qkv + (heads + kvh) * HD, k_norm, rope, eps, 1.0f, q[0]);
    for (int d = 0; d < HD; d++) {
        kw[8 * d] = f2h(q[0][d]);
        vw[d] = f2h(vsf[d]);
    }
    for (int g = 0; g < GROUP; g++) {
        norm_rope_head(qkv + (kvh * GROUP + g) * HD, q_norm, rope, eps, scale, q[g]);
        for (int i = 0; i < HD / 8; i++) acc[g][i] = 0.0f;
        m[g] = -1e30f;
        l[g] = 0.0f;
    }
#elif defined(QKV_BIAS)
    // Qwen2: Q, K and V plus their biases, then NEOX RoPE of queries and key
    bias_rope_head(qkv + (heads + kvh) * HD, bias + (heads + kvh) * HD, rope, 1.0f, q[0]);
    global const float *vb = bias + (heads + kv_heads + kvh) * HD;
    for (int d = 0; d < HD; d++) {
        kw[8 * d] = f2h(q[0][d]);
        vw[d] = f2h(vsf[d] + vb[d]);
    }
    for (int g = 0; g < GROUP; g++) {
        bias_rope_head(qkv + (kvh * GROUP + g) * HD, bias + (kvh * GROUP + g) * HD, rope, scale, q[g]);
        for (int i = 0; i < HD / 8; i++) acc[g][i] = 0.0f;
        m[g] = -1e30f;
        l[g] = 0.0f;
    }
#else
    global const float8 *ks = (global const float8 *)(qkv + (heads + kvh) * HD);
    for (int i = 0; i < HD / 8; i++) {
        f8u k;
        k.v = rope8(ks[i], rope, i);
        for (int e = 0; e < 8; e++) {
            kw[8 * (8 * i + e)] = f2h(k.a[e]);
            vw[8 * i + e] = f2h(vsf[8 * i + e]);
        }
    }
    for (int g = 0; g < GROUP; g++) {
        global const float8 *qp = (global const float8 *)(qkv + (kvh * GROUP + g) * HD);
        for (int i = 0; i < HD / 8; i++) {
            f8u r;
            r.v = rope8(qp[i], rope, i) * scale;
            for (int e = 0; e < 8; e++) q[g][8 * i + e] = r.a[e];
            acc[g][i] = 0.0f;
        }
        m[g] = -1e30f;
        l[g] = 0.0f;
    }
#endif
    const int nblk = (n + 7) / 8;
    // a sliding window (window > 0) hides keys more than window - 1 positions back
    const int blk_first = window > 0 && n > window ? (n - window) / 8 : 0;
    const int per = (nblk - blk_first + splits - 1) / splits;
    const int b0 = blk_first + sp * per;
    const int b1 = b0 + per < nblk ? b0 + per : nblk;
    global const ushort8 *kt = (global const ushort8 *)(k_cache + (size_t)kvh * CACHE_ROWS(ctx) * HD);
    global const ushort8 *vp = (global const ushort8 *)(v_cache + (size_t)kvh * CACHE_ROWS(ctx) * HD);
    for (int b = b0; b < b1; b++) {
        const int j0 = 8 * b;
        global const ushort8 *kb = kt + (size_t)b * HD;
        f8u p[GROUP];
        float c[GROUP];
        float8 s[GROUP];
#pragma unroll
        for (int g = 0; g < GROUP; g++) s[g] = 0.0f;
        for (int d = 0; d < HD; d++) {
            const float8 k = h2f8(kb[d]);
#pragma unroll
            for (int g = 0; g < GROUP; g++) s[g] += q[g][d] * k;
        }
#pragma unroll
        for (int g = 0; g < GROUP; g++) {
            const int8 j = lane + j0;
            const int lo = window > 0 ? n - window : -1;
            const float8 sq = ((j < (int8)n) & (j >= (int8)lo)) ? s[g] : (float8)-1e30f;
            const float4 m4 = VMAX(sq.lo, sq.hi);
            const float2 m2 = VMAX(m4.lo, m4.hi);
            const float bm = VMAX(m2.x, m2.y);
            const float mx = bm > m[g] ? bm : m[g];
            c[g] = exp_nonpos(m[g] - mx);
            p[g].v = exp_nonpos8(sq - (float8)mx);
            m[g] = mx;
            l[g] = l[g] * c[g] + hsum8(p[g].v);
        }
        for (int i = 0; i < HD / 8; i++) {
            float8 a[GROUP];
#pragma unroll
            for (int g = 0; g < GROUP; g++) a[g] = acc[g][i] * c[g];
#pragma unroll
            for (int jj = 0; jj < 8; jj++) {
                const float8 v = h2f8(vp[(size_t)(j0 + jj) * (HD / 8) + i]);
#pragma unroll
                for (int g = 0; g < GROUP; g++) a[g] += p[g].a[jj] * v;
            }
#pragma unroll
            for (int g = 0; g < GROUP; g++) acc[g][i] = a[g];
        }
    }
    for (int g = 0; g < GROUP; g++) {
        global float *pp = part + ((size_t)(kvh * GROUP + g) * splits + sp) * (HD + 8);
        for (int i = 0; i < HD / 8; i++) ((global float8 *)pp)[i] = acc[g][i];
        pp[HD] = m[g];
        pp[HD + 1] = l[g];
    }
}

// Gemma 3's query and key preparation, one work-item per (head, token) of the fused
// [Q | K | V] rows: RMSNorm over the head with its weights (attn_q_norm / attn_k_norm), then
// RoPE in NEOX order (pairs i and i + HD/2, llama.cpp's LLAMA_ROPE_TYPE_NEOX), in place; key
// heads then write key and value into the cache at positions pos0 + t. ldq: floats per token row.
kernel void norm_rope_store(global float *qkv, global const float *rope, global ushort *k_cache,
                            global ushort *v_cache, global const int *state, const int heads,
                            const int kv_heads, const int ctx, global const float *q_norm,
                            global const float *k_norm, const float eps, const int ldq) {
    const int h = get_global_id(0);  // 0..heads+kv_heads-1: query heads, then key heads
    const int t = get_global_id(1);
    const int pos = state[0] + t;
    global float *v = qkv + (size_t)t * ldq + h * HD;
    global const float *w = h < heads ? q_norm : k_norm;
    global const float *cs = rope + (size_t)t * HD;
    float ss = 0.0f;
    for (int i = 0; i < HD; i++) ss += v[i] * v[i];
    const float sc = rsqrt(ss / HD + eps);
    for (int i = 0; i < HD / 2; i++) {
        const float c = cs[i], sn = cs[HD / 2 + i];
        const float a = v[i] * sc * w[i], b = v[i + HD / 2] * sc * w[i + HD / 2];
        v[i] = a * c - b * sn;
        v[i + HD / 2] = a * sn + b * c;
    }
    if (h >= heads) {
        const int kvh = h - heads;
        global ushort *kd = k_cache + K_AT(kvh, pos, 0, ctx);
        global ushort *vd = v_cache + ((size_t)kvh * CACHE_ROWS(ctx) + pos) * HD;
        global const float *vsf = qkv + (size_t)t * ldq + (heads + kv_heads + kvh) * HD;
        for (int d = 0; d < HD; d++) {
            kd[8 * d] = f2h(v[d]);
            vd[d] = f2h(vsf[d]);
        }
    }
}

// Qwen2's query and key preparation, one work-item per (head, token) of the fused [Q | K | V]
// rows: the head's bias added, then RoPE in NEOX order, in place; key heads then write key
// and value (plus its bias) into the cache at positions pos0 + t. bias: one fused QKV row.
kernel void bias_rope_store(global float *qkv, global const float *rope, global ushort *k_cache,
                            global ushort *v_cache, global const int *state, const int heads,
                            const int kv_heads, const int ctx, global const float *bias, const int ldq) {
    const int h = get_global_id(0);  // 0..heads+kv_heads-1: query heads, then key heads
    const int t = get_global_id(1);
    const int pos = state[0] + t;
    global float *v = qkv + (size_t)t * ldq + h * HD;
    global const float *b = bias + h * HD;
    global const float *cs = rope + (size_t)t * HD;
    for (int i = 0; i < HD / 2; i++) {
        const float c = cs[i], sn = cs[HD / 2 + i];
        const float x0 = v[i] + b[i], x1 = v[i + HD / 2] + b[i + HD / 2];
        v[i] = x0 * c - x1 * sn;
        v[i + HD / 2] = x0 * sn + x1 * c;
    }
    if (h >= heads) {
        const int kvh = h - heads;
        global ushort *kd = k_cache + K_AT(kvh, pos, 0, ctx);
        global ushort *vd = v_cache + ((size_t)kvh * CACHE_ROWS(ctx) + pos) * HD;
        global const float *vsf = qkv + (size_t)t * ldq + (heads + kv_heads + kvh) * HD;
        global const float *vb = bias + (heads + kv_heads + kvh) * HD;
        for (int d = 0; d < HD; d++) {
            kd[8 * d] = f2h(v[d]);
            vd[d] = f2h(vsf[d] + vb[d]);
        }
    }
}

// x += RMSNorm(t) * w over ntok rows of n values (Gemma's norms after attention and MLP,
// before the residual add).
kernel void rms_norm_add(global float *x, global const float *t, global const float *w, const int n,
                         const float eps) {
    const int i0 = get_global_id(0);
    global float *xp = x + (size_t)i0 * n;
    global const float *tp = t + (size_t)i0 * n;
    float8 acc = 0.0f;
    for (int i = 0; i < n; i += 8) {
        const float8 v = vload8(0, tp + i);
        acc += v * v;
    }
    const float scale = rsqrt(hsum8(acc) / n + eps);
    for (int i = 0; i < n; i += 8)
        vstore8(vload8(0, xp + i) + vload8(0, tp + i) * scale * vload8(0, w + i), 0, xp + i);
}

// GEGLU: out[t][i] = gelu(gate[t][i]) * up[t][i], from the fused [gate | up] rows; gelu as
// gelu() computes it, eight at a time, with tanh(z) = sign(z) (1 - e) / (1 + e), e = exp(-2|z|)
// (PoCL's tanh is an out-of-line call per value; this one is within 1e-7 of it).
kernel void geglu(global const float *gu, global float *out, const int ff) {
    const int t = get_global_id(0);
    global const float8 *g = (global const float8 *)(gu + (size_t)t * 2 * ff);
    global const float8 *u = g + ff / 8;
    global float8 *o = (global float8 *)(out + (size_t)t * ff);
    for (int i = 0; i < ff / 8; i++) {
        const float8 x = g[i];
        const float8 z = 0.7978845608028654f * x * (1.0f + 0.044715f * x * x);
        const uint8 sign = as_uint8(z) & 0x80000000u;
        const float8 e = exp_nonpos8(-2.0f * as_float8(as_uint8(z) ^ sign));
        const float8 th = as_float8(as_uint8((1.0f - e) / (1.0f + e)) | sign);
        o[i] = 0.5f * x * (1.0f + th) * u[i];
    }
}

// SwiGLU: out[t][i] = silu(gate[t][i]) * up[t][i], from the fused [gate | up] rows.
kernel void swiglu(global const float *gu, global float *out, const int ff) {
    const int t = get_global_id(0);
    global const float *g = gu + (size_t)t * 2 * ff;
    global const float *u = g + ff;
    global float *o = out + (size_t)t * ff;
    for (int i = 0; i < ff; i += 8) {
        const float8 a = vload8(0, g + i);
        vstore8(a / (1.0f + exp(-a)) * vload8(0, u + i), 0, o + i);
    }
}

// out[0] = 1 where this program's matrix-vector product rounds its input to 8 bits (INT_DOT).
kernel void decode_rounds_input(global int *out) {
#ifdef INT_DOT
    out[0] = 1;
#else
    out[0] = 0;
#endif
}

// Read a buffer once, each work-item a contiguous chunk: the memory-bandwidth probe.
kernel void read_bandwidth(global const float8 *data, global float *sink, const int per_item) {
    const size_t i0 = (size_t)get_global_id(0) * per_item;
    float8 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;  // four chains hide the add latency
    for (int i = 0; i < per_item; i += 4) {
        a0 += data[i0 + i];
        a1 += data[i0 + i + 1];
        a2 += data[i0 + i + 2];
        a3 += data[i0 + i + 3];
    }
    sink[get_global_id(0)] = hsum8(a0 + a1 + a2 + a3);
}
