// The matrix products: prefill's matrix-matrix, float (matmul) and integer (quantize_tiles,
// matmul_q8); decode's matrix-vector as a launch of its own (matvec, matvec.cl's product);
// and what the host asks of a program (matmul_q8_shape, decode_rounds_input). The weights
// come through quants.cl's macros.

// One matrix-vector product as a launch of its own (matvec_phase; counters: null, or the
// step's counters, this launch's at counter_slot).
kernel void matvec(global const WQ_T *wq, global const WD_T *wd, global const float *x,
                   global float *y, const int rows, const int cols, const int rows_per_item,
                   const int mode, global const float *norm_w, const float eps,
                   const int yoff, const int splits, global const float *res_t,
                   global const float *res_w, global float *res_out, global int *counters,
                   const int counter_slot) {
    matvec_phase(wq, wd, x, y, rows, cols, rows_per_item, mode, norm_w, eps, yoff, splits, res_t, res_w, res_out,
                 counters ? counters + counter_slot : 0, 0, 0, get_global_id(0));
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
// Without VNNI a group's four products take two instructions: vpmaddubsw (level x input, pairs
// summed to 16 bits, which cannot overflow: |input| <= 127) and vpmaddwd by ones (pairs to 32
// bits). Both run on the one vector multiply port of the cores here, so the 16-bit sums of
// SUM16 groups are added first (vpaddw) and widened once: a 16-bit lane of one group is at most
// 2 x 127 x the largest level, 3,810 for 4-bit levels (eight groups: 30,480), 7,874 for Q5_0's
// 5 bits (four: 31,496), 16,002 for Q6_K's 6 bits (two: 32,004), all below 32,767, so the
// integer sums are the same as widening each group; 10 multiplies a tile of 4-bit levels
// instead of 16. (Q8_0's levels, shifted to 0..255, run here only with VNNI.)
#define PAIRS16(w, x) PMADDUBSW_X(__builtin_astype(w, gXC), __builtin_astype(x, gXC))
#define TO32(p) __builtin_astype(PMADDWD_X((p), (gXS)ONES_X), XI)
#if defined(WTYPE_Q6_K)
#define SUM16 2
#elif defined(WTYPE_Q5_0)
#define SUM16 4
#else
#define SUM16 8
#endif
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

// MM_ROWS rows at a time: each tile's input groups, loaded once, meet the levels of every row
// (a work-item's input is more than the L1 cache holds: QTILES x 512 bytes a block). With
// AVX-512's 32 vector registers two rows: pp512 24 to 31 % faster on the three models on a Zen 4
// host, alternating in one process; with AVX2's 16, one (two ran 2 % slower to 11 % faster,
// compiled for 256-bit vectors there). A last row without a partner is computed twice and kept
// once. The integer sums are the same; the float scaling of Q4_K's blocks came out up to 1.6e-7
// (relative) away from one row at a time (how the compiler fuses it), the other layouts the
// same bits.
#if defined(__AVX512F__) && !defined(INT_YMM)
#define MM_ROWS 2
#else
#define MM_ROWS 1
#endif

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
    for (int r = r0; r < r1; r += MM_ROWS) {
        const int nr = r + MM_ROWS <= r1 ? MM_ROWS : r1 - r;
        XF acc[MM_ROWS][QTILES];
#pragma unroll
        for (int h = 0; h < MM_ROWS; h++)
#pragma unroll
            for (int i = 0; i < QTILES; i++) acc[h][i] = 0.0f;
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
            uint8 wv2[MM_ROWS];
            float da2[MM_ROWS], db2[MM_ROWS], mo2[MM_ROWS];
#pragma unroll
            for (int h = 0; h < MM_ROWS; h++) {  // h, not k: Q6_K's QBLOCK declares a k
                const int rk = r + (h < nr ? h : 0);
                UNPACKU(rk, b)
                wv2[h] = __builtin_astype(wu, uint8);
                da2[h] = da;
                db2[h] = db;
#if defined(WTYPE_Q6_K)
                mo2[h] = 0.0f;  // its levels' offset is in the formula below
#else
                mo2[h] = MO;
#endif
            }
#pragma unroll
            for (int i = 0; i < QTILES; i++) {
                const size_t tb = (size_t)(tile0 + i) * nb + b;
                global const XI *xp = xq + tb * 8;
                global const XF *fp = xf + tb * 3;
                const XI x0 = xp[0], x1 = xp[1], x2 = xp[2], x3 = xp[3], x4 = xp[4], x5 = xp[5], x6 = xp[6], x7 = xp[7];
#pragma unroll
                for (int h = 0; h < MM_ROWS; h++) {
                    const uint8 wv = wv2[h];
                    const XU w0 = wv.s0, w1 = wv.s1, w2 = wv.s2, w3 = wv.s3;
                    const XU w4 = wv.s4, w5 = wv.s5, w6 = wv.s6, w7 = wv.s7;
#ifdef INT_VNNI
                    XI sa = 0;
                    sa = DPBUSD(sa, w0, x0);
                    sa = DPBUSD(sa, w1, x1);
                    sa = DPBUSD(sa, w2, x2);
                    sa = DPBUSD(sa, w3, x3);
                    XI sb = 0;  // two chains of four dependent instructions rather than one of eight
                    sb = DPBUSD(sb, w4, x4);
                    sb = DPBUSD(sb, w5, x5);
                    sb = DPBUSD(sb, w6, x6);
                    sb = DPBUSD(sb, w7, x7);
#else
                    const gXS p0 = PAIRS16(w0, x0), p1 = PAIRS16(w1, x1), p2 = PAIRS16(w2, x2),
                              p3 = PAIRS16(w3, x3), p4 = PAIRS16(w4, x4), p5 = PAIRS16(w5, x5),
                              p6 = PAIRS16(w6, x6), p7 = PAIRS16(w7, x7);
#if SUM16 == 2
                    const XI sa = TO32(p0 + p1) + TO32(p2 + p3), sb = TO32(p4 + p5) + TO32(p6 + p7);
#elif SUM16 == 4
                    const XI sa = TO32(p0 + p1 + p2 + p3), sb = TO32(p4 + p5 + p6 + p7);
#else
                    const XI sa = TO32(((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7))), sb = 0;
#endif
#endif
#if defined(WTYPE_Q6_K)
                    // levels 0..63 stand for level - 32: minus 32 times each half's input sum
                    const XF xh = fp[2];
                    acc[h][i] += (__builtin_convertvector(sa, XF) * da2[h] + __builtin_convertvector(sb, XF) * db2[h]) * fp[0]
                                 - 32.0f * (da2[h] * xh + db2[h] * (fp[1] - xh));
#else
                    acc[h][i] += __builtin_convertvector(sa + sb, XF) * (fp[0] * da2[h]) + mo2[h] * fp[1];
#endif
                }
            }
        }
        for (int h = 0; h < nr; h++) {
            const int rk = r + h;
#pragma unroll
            for (int i = 0; i < QTILES; i++) {
                xfu o;
                o.v = acc[h][i];
#pragma unroll
                for (int t = 0; t < XL; t++) ybuf[i * XL + t][(rk - r0) & 15] = o.a[t];
            }
            if (((rk - r0) & 15) == 15 || rk == r1 - 1) {
                const int rg = rk - ((rk - r0) & 15), n = rk - rg + 1;
                for (int t = 0; t < nt; t++) {
                    global float *yp = y + (size_t)(tile0 * XL + t) * ldy + yoff + rg;
                    if (n == 16) {
                        const float16 v = *(const float16 *)ybuf[t];
                        *(global uf16 *)yp = accumulate ? *(global uf16 *)yp + v : v;
                    } else {
                        for (int j = 0; j < n; j++) yp[j] = accumulate ? yp[j] + ybuf[t][j] : ybuf[t][j];
                    }
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

// out[0] = 1 where this program's matrix-vector product rounds its input to 8 bits (INT_DOT).
kernel void decode_rounds_input(global int *out) {
#ifdef INT_DOT
    out[0] = 1;
#else
    out[0] = 0;
#endif
}
