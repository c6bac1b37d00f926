// The weight layouts: each program is compiled for one (WTYPE_*), and these macros give
// the rest of the source its blocks as floats (UNPACK, LOAD_BLOCK, ROW_DOT) or as integer
// levels against the input rounded to 8 bits (UNPACKI, IDOT, quantize_q8: the INT_DOT path).
//
// Weight layouts on the device (repacked at load time from the GGUF blocks, every byte
// kept, scales in their stored fp16; see the UNPACK macros below):
//   Q4_0, Q4_1: qs uchar[rows][cols/32][16] (byte j: weight j in the low nibble, weight j+16
//        in the high nibble, as in GGUF), wd half[rows][cols/32] (d) or [..][2] (d, m).
//   Q5_0: qs as Q4_0; per row, d half[cols/32] (padded to even) then the fifth bits uint[cols/32].
//   Q8_0: qs char[rows][cols/32][32], wd half[rows][cols/32].
//   Q4_K: the file's 144-byte blocks as stored. Q6_K: ql|qh per block, then per row scales|d.
//   F16:  half[rows][cols] (qs), F32: float[rows][cols] (qs); wd unused.

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

// One row's dot product with the private copy xv of the input and its block sums xs:
// sum_c (da q_c + mo) x_c = da (q . x) + mo sum(x), the offsets' share computed once per block.
#if defined(WTYPE_Q4_K) || defined(WTYPE_Q6_K)
// 256-weight blocks: the eight 32-weight sub-blocks of a block unrolled, so that the
// sub-block's place (which scale bits, which nibbles) is a constant, not computed per block.
#define ROW_DOT(r, out)                                                               \
    {                                                                                 \
        float8 acc = 0.0f;                                                            \
        float macc = 0.0f;                                                            \
        for (int b8 = 0; b8 < nb; b8 += 8) {                                          \
            _Pragma("unroll")                                                         \
            for (int jj = 0; jj < 8; jj++) {                                          \
                const int b = b8 + jj, jsub = jj;                                     \
                UNPACK(r, b)                                                          \
                acc += (q0 * xv[4 * b] + q1 * xv[4 * b + 1]) * da + (q2 * xv[4 * b + 2] + q3 * xv[4 * b + 3]) * db; \
                macc += mo * xs[b];                                                   \
            }                                                                         \
        }                                                                             \
        out = hsum8(acc) + macc;                                                      \
    }
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
#ifndef INT_DOT_HELPERS  // once per program: the decode chain's compiles this file per layout
typedef char v32c __attribute__((ext_vector_type(32)));
typedef uchar v32u __attribute__((ext_vector_type(32)));
typedef char g32c __attribute__((vector_size(32)));
typedef short g16s __attribute__((vector_size(32)));
typedef int g8i __attribute__((vector_size(32)));

// With VNNI (INT_VNNI: the host's CPU has it, programs.py) one vpdpbusd does both steps: the
// same sums (no 16-bit pair can saturate: |x| <= 127 and levels <= 128), a decode step 1 to 3 %
// faster on an AVX-512 host (the products are what a chained step spends its time on); in
// assembly, as products.cl's dpbusd, because PoCL's target may lack the instruction.
inline int8 dot_us(const v32u w, const v32c x) {
#ifdef INT_VNNI
    int8 acc = 0;
    __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(w), "v"(x));
    return acc;
#else
    const g16s p = __builtin_ia32_pmaddubsw256(__builtin_astype(w, g32c), __builtin_astype(x, g32c));
    return __builtin_astype(__builtin_ia32_pmaddwd256(p, (g16s){1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}), int8);
#endif
}

// signed levels: |w| (w signed by itself) times x carrying w's sign (vpmaddubsw's first
// operand is unsigned; llama.cpp's mul_sum_i8_pairs)
inline int8 dot_ss(const v32c w, const v32c x) {
    const g32c gw = __builtin_astype(w, g32c);
    return dot_us(__builtin_astype(__builtin_ia32_psignb256(gw, gw), v32u),
                  __builtin_astype(__builtin_ia32_psignb256(__builtin_astype(x, g32c), gw), v32c));
}

// Q5_0's fifth bits: 16 where bit i of hb is set, for weight i, else 0 (llama.cpp's
// bytes_from_bits_32): hb in every 32-bit lane, byte k of it spread over bytes 8k..8k+7
// (vpshufb), each byte ORed with all bits but its own, and compared with all ones. Built
// from OpenCL vectors, the same test compiled to byte-by-byte inserts, several times slower.
inline v32u fifth_bits(const uint hb) {
    const g32c spread = __builtin_ia32_pshufb256(__builtin_astype((uint8)hb, g32c),
        (g32c){0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3});
    const g32c others = __builtin_astype((ulong4)0x7fbfdfeff7fbfdfeUL, g32c);
    return __builtin_astype((spread | others) == __builtin_astype((int8)-1, g32c), v32u) & (v32u)16;
}

#endif

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
        const uint hb = ((global const uint *)(rowd + 2 * ((nb + 1) & ~1)))[b];       \
        v32u wu;                                                                      \
        wu.lo = q & (uchar16)15;                                                      \
        wu.hi = q >> (uchar16)4;                                                      \
        wu |= fifth_bits(hb);
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
#ifndef INT_DOT_HELPERS
// Eight blocks' integer dot products summed to one lane each (vphaddd): the eight-block paths
// below (Q4_0, Q4_1, Q5_0, Q8_0, and Q4_K's eight sub-blocks; Q6_K's sixteen halves) scale them
// in one multiply.
inline int8 hadd8(const int8 a, const int8 b) {
    return __builtin_astype(__builtin_ia32_phaddd256(__builtin_astype(a, g8i), __builtin_astype(b, g8i)), int8);
}
inline int8 block_sums8(const int8 v0, const int8 v1, const int8 v2, const int8 v3,
                        const int8 v4, const int8 v5, const int8 v6, const int8 v7) {
    const int8 t0 = hadd8(hadd8(v0, v1), hadd8(v2, v3));
    const int8 t1 = hadd8(hadd8(v4, v5), hadd8(v6, v7));
    return (int8)(t0.lo, t1.lo) + (int8)(t0.hi, t1.hi);
}
#endif
#if defined(WTYPE_Q4_0) || defined(WTYPE_Q4_1) || defined(WTYPE_Q5_0) || defined(WTYPE_Q8_0)
// Eight blocks at a time: their sums (block_sums8), then the eight blocks' scales applied in
// one vector multiply, where the per-block path converts, broadcasts and multiplies once per block.
#if defined(WTYPE_Q4_0)
#define SCALES8(r, b8) const float8 d8 = h2f8(vload8(0, wd + (size_t)(r) * nb + (b8))); const float8 m8 = -8.0f * d8;
#elif defined(WTYPE_Q4_1)
#define SCALES8(r, b8) const ushort16 dm = vload16(0, wd + 2 * ((size_t)(r) * nb + (b8))); \
                       const float8 d8 = h2f8(dm.even); const float8 m8 = h2f8(dm.odd);
#elif defined(WTYPE_Q5_0)
#define SCALES8(r, b8) const float8 d8 = h2f8(vload8(0, (global const ushort *)(wd + (size_t)(r) * (2 * ((nb + 1) & ~1) + 4 * nb)) + (b8))); \
                       const float8 m8 = -16.0f * d8;
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
// v0..v7: the integer dot products of the eight 32-weight sub-blocks of the 256-weight block
// that starts at block b8 of row r, each sub-block's place (jsub) a constant
#define SUBBLOCK_IDOTS(r, b8)                                                         \
    int8 v0, v1, v2, v3, v4, v5, v6, v7;                                              \
    { const int jsub = 0; const int b = (b8); UNPACKI(r, b) v0 = IDOT(b); }           \
    { const int jsub = 1; const int b = (b8) + 1; UNPACKI(r, b) v1 = IDOT(b); }       \
    { const int jsub = 2; const int b = (b8) + 2; UNPACKI(r, b) v2 = IDOT(b); }       \
    { const int jsub = 3; const int b = (b8) + 3; UNPACKI(r, b) v3 = IDOT(b); }       \
    { const int jsub = 4; const int b = (b8) + 4; UNPACKI(r, b) v4 = IDOT(b); }       \
    { const int jsub = 5; const int b = (b8) + 5; UNPACKI(r, b) v5 = IDOT(b); }       \
    { const int jsub = 6; const int b = (b8) + 6; UNPACKI(r, b) v6 = IDOT(b); }       \
    { const int jsub = 7; const int b = (b8) + 7; UNPACKI(r, b) v7 = IDOT(b); }
#if defined(WTYPE_Q4_K)
// A 256-weight block's eight sub-blocks at once, as the eight-block path above: their integer
// sums gathered into one vector, times the eight 6-bit scales (d x sc) in one multiply and the
// minimums (dmin x mn) against the sub-blocks' input sums in another (llama.cpp's
// get_scale_min_k4, eight at a time).
#define ROW_DOT(r, out)                                                               \
    {                                                                                 \
        float8 acc = 0.0f;                                                            \
        for (int b8 = 0; b8 < nb; b8 += 8) {                                          \
            global const uchar *s8 = wq + ((size_t)(r) * (nb >> 3) + (b8 >> 3)) * 144; \
            const uchar4 lo = vload4(0, s8 + 4), mid = vload4(0, s8 + 8), hi = vload4(0, s8 + 12); \
            const int8 sc = convert_int8((uchar8)(lo & (uchar4)63, (hi & (uchar4)15) | ((lo >> (uchar4)6) << (uchar4)4))); \
            const int8 mn = convert_int8((uchar8)(mid & (uchar4)63, (hi >> (uchar4)4) | ((mid >> (uchar4)6) << (uchar4)4))); \
            SUBBLOCK_IDOTS(r, b8)                                                     \
            const int8 sums = block_sums8(v0, v1, v2, v3, v4, v5, v6, v7);            \
            const float dd = h2f(((global const ushort *)s8)[0]), dm = h2f(((global const ushort *)s8)[1]); \
            acc += convert_float8(sums) * (dd * convert_float8(sc)) * vload8(0, xd + b8) \
                   - (dm * convert_float8(mn)) * vload8(0, xs + b8);                  \
        }                                                                             \
        out = hsum8(acc);                                                             \
    }
#else
// A 256-weight block's sixteen 16-weight groups at once: two rounds of vphaddd turn the eight
// sub-blocks' integer dot products into the sums over their halves (lanes 0-3 of IDOT hold
// weights 0-15, lanes 4-7 weights 16-31), h0 = halves (a, a, a, a, b, b, b, b) of sub-blocks
// 0-3 and h1 of 4-7, which meet the sixteen 8-bit scales (even: first halves, odd: second)
// in two multiplies, where the per-sub-block path converts and scales eight times.
#define ROW_DOT(r, out)                                                               \
    {                                                                                 \
        float8 acc = 0.0f;                                                            \
        global const uchar *rowd6 = wd + (size_t)(r) * 18 * (nb >> 3);               \
        for (int b8 = 0; b8 < nb; b8 += 8) {                                          \
            SUBBLOCK_IDOTS(r, b8)                                                     \
            const int8 h0 = hadd8(hadd8(v0, v1), hadd8(v2, v3));                      \
            const int8 h1 = hadd8(hadd8(v4, v5), hadd8(v6, v7));                      \
            const char16 sc = vload16(0, (global const char *)rowd6 + 2 * b8);        \
            const float d = h2f(((global const ushort *)(rowd6 + 16 * (nb >> 3)))[b8 >> 3]); \
            const float4 xa = vload4(0, xd + b8), xb = vload4(0, xd + b8 + 4);        \
            acc += (convert_float8(h0) * convert_float8((char8)(sc.even.lo, sc.odd.lo)) * (float8)(xa, xa) \
                    + convert_float8(h1) * convert_float8((char8)(sc.even.hi, sc.odd.hi)) * (float8)(xb, xb)) * d; \
        }                                                                             \
        out = hsum8(acc);                                                             \
    }
#endif
#endif

// The input of a matrix-vector product rounded to 8 bits, 32 values per scale (llama.cpp's
// quantize_row_q8_0): xd[b] = max |x| / 127 over block b, xq[b] = round(x / xd[b]), and the
// block's sum as rounded, xs[b] = xd[b] sum xq[b] (as q8_1 keeps it), so that the offsets'
// share mo * xs and the levels' share see the same input (Q4_0 and Q5_0 offset their levels
// by -8 and -16: their rounding errors then partly cancel, as in the float reference).
// vmaxps and vcvtps2dq (round to nearest even, the default rounding mode) as builtins: PoCL
// expands fmax and convert_int8_rte into NaN and tie checks, ~140 instructions a block, and
// every work-item of every product runs this.
#ifndef INT_DOT_HELPERS
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
#define INT_DOT_HELPERS 1
#endif
#endif
