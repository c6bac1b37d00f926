// Attention over the KV cache (kv_cache.cl's layout), with an online softmax: prefill's
// (attention: a chunk of queries) and decode's (attention_decode: one token, RoPE and the
// cache write fused in, partial softmaxes that the next matvec merges).

// Prefill attention with an online softmax: one work-item per (query head, tile of QT
// tokens), so that each key and value read from the cache serves QT queries (one query per
// work-item read the whole cache once per token: terabytes for a 6,000-token prompt). Keys
// come AW (8, or 16 with AVX-512) at a time, transposed (see rope_store): the AW scores of a
// query are one vector, and one vector exp turns them into weights. Keys past a query's position get the
// score -1e30 (finite: the kernels use fast, finite math) and the weight 0. Grouped-query
// attention: query head h reads KV head h / (heads / kv_heads).

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
                      const int heads, const int kv_heads, const int rows, const float scale,
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
    global const ushort8 *kt = (global const ushort8 *)(k_cache + V_AT(kvh, 0, rows));
    global const ushortW *vp = (global const ushortW *)(v_cache + V_AT(kvh, 0, rows));
    const int n_max = pos0 + nq;
    // a sliding window (window > 0) hides keys more than window - 1 positions back; keys are
    // read AW at a time from a multiple of AW, in consecutive cells from c0 (kv_cache.cl); the
    // cells of a group's hidden keys may hold other positions, which the mask drops
    const int j_first = window > 0 && pos0 + 1 > window ? ((pos0 + 1 - window) & ~(AW - 1)) : 0;
    for (int j0 = j_first; j0 < n_max; j0 += AW) {
        const int c0 = j0 % rows;
        global const ushort8 *ka = kt + (size_t)(c0 / 8) * HD;  // ka[d]: dimension d of keys j0..j0+7
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
            const intW seen = (j < (intW)n) & (j >= (intW)lo);
            const floatW sq = seen ? s[qi] : (floatW)-1e30f;
            const float bm = MAX_W(sq);
            const float mx = bm > m[qi] ? bm : m[qi];
            c[qi] = exp_nonpos(m[qi] - mx);
            // a hidden key's weight is 0, not exp(-87): its cell may hold another position (a ring),
            // whose value must not reach a sum, not even by deciding how a multiply-add rounds
            p[qi].v = seen ? EXP_W(sq - (floatW)mx) : (floatW)0.0f;
            m[qi] = mx;
            l[qi] = l[qi] * c[qi] + SUM_W(p[qi].v);
        }
        for (int i = 0; i < HD / AW; i++) {
            floatW a[QT];
#pragma unroll
            for (int qi = 0; qi < QT; qi++) a[qi] = acc[qi][i] * c[qi];
#pragma unroll
            for (int jj = 0; jj < AW; jj++) {
                const floatW v = H2F_W(vp[(size_t)(c0 + jj) * (HD / AW) + i]);
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

// Decode attention for one token, with RoPE and the cache write fused in. A work-item owns
// one KV head and one of `splits` ranges of key groups: it serves the GROUP query heads that
// share that KV head, so each cached key and value is read once per token, not once per
// query head (at a long context the cache, not the weights, is most of what decode reads),
// and the splits keep every core busy. Each work-item ropes the KV head's key and writes key
// and value at position pos (the splits of one KV head write identical values, so whichever
// lands last is right, and each reads back its own write), then leaves, per query head, its
// partial softmax (running max m, sum l, weighted values acc) in part[h][split] =
// [acc: HD][m, l, pad: 8], which the next matvec merges (its `splits` argument).

// the architecture's extra parameters of decode attention: the query and key norms (QK_NORM)
// or the Q/K/V biases (QKV_BIAS, [Q | K | V] biases as a fused QKV row)
#ifdef QK_NORM
#define ATTN_EXTRA_PARAMS , global const float *q_norm, global const float *k_norm, const float eps
#define ATTN_EXTRA_ARGS , q_norm, k_norm, eps
#elif defined(QKV_BIAS)
#define ATTN_EXTRA_PARAMS , global const float *bias
#define ATTN_EXTRA_ARGS , bias
#else
#define ATTN_EXTRA_PARAMS
#define ATTN_EXTRA_ARGS
#endif

// Two dimensions a step where a KV head serves few query heads (GROUP <= 4, Gemma 3): each
// query head's score and value sums then run as two independent chains of multiply-adds, not
// one, whose latency (not the reads) set the pace of a long context's global layers.
#if GROUP <= 4
#define DU 2
#define KU GROUP
#else
#define DU 1
#define KU 1
#endif

// one (KV head, key range) of decode attention: the attention_decode kernel runs one per
// work-item, decode_chain (decode_chain.cl) hands them out from a counter
inline void attention_unit(const int kvh, const int sp, global const float *qkv, global const float *rope,
                           global ushort *k_cache, global ushort *v_cache, global float *part,
                           global const int *state, const int heads, const int kv_heads, const int rows,
                           const float scale, const int splits, const int window ATTN_EXTRA_PARAMS) {
    const int pos = state[0];
    const int n = pos + 1;
    const int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7);
    float q[GROUP][HD];
    float8 acc[GROUP][HD / 8];
    float m[GROUP], l[GROUP];
    global ushort *kw = k_cache + K_AT(kvh, pos % rows, 0, rows);
    global ushort *vw = v_cache + V_AT(kvh, pos % rows, rows);
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
    global const ushort8 *kt = (global const ushort8 *)(k_cache + V_AT(kvh, 0, rows));
    global const ushort8 *vp = (global const ushort8 *)(v_cache + V_AT(kvh, 0, rows));
    for (int b = b0; b < b1; b++) {
        const int j0 = 8 * b;  // positions j0..j0+7, in cells c0..c0+7 (kv_cache.cl)
        const int c0 = j0 % rows;
        global const ushort8 *kb = kt + (size_t)(c0 / 8) * HD;
        f8u p[GROUP];
        float c[GROUP];
        float8 s[GROUP], s2[KU];
#pragma unroll
        for (int g = 0; g < GROUP; g++) s[g] = 0.0f;
#pragma unroll
        for (int g = 0; g < KU; g++) s2[g] = 0.0f;
        for (int d = 0; d < HD; d += DU) {
            const float8 k = h2f8(kb[d]);
#pragma unroll
            for (int g = 0; g < GROUP; g++) s[g] += q[g][d] * k;
#if DU == 2
            const float8 k2 = h2f8(kb[d + 1]);
#pragma unroll
            for (int g = 0; g < GROUP; g++) s2[g] += q[g][d + 1] * k2;
#endif
        }
#if DU == 2
#pragma unroll
        for (int g = 0; g < GROUP; g++) s[g] += s2[g];
#endif
#pragma unroll
        for (int g = 0; g < GROUP; g++) {
            const int8 j = lane + j0;
            const int lo = window > 0 ? n - window : -1;
            const int8 seen = (j < (int8)n) & (j >= (int8)lo);
            const float8 sq = seen ? s[g] : (float8)-1e30f;
            const float4 m4 = VMAX(sq.lo, sq.hi);
            const float2 m2 = VMAX(m4.lo, m4.hi);
            const float bm = VMAX(m2.x, m2.y);
            const float mx = bm > m[g] ? bm : m[g];
            c[g] = exp_nonpos(m[g] - mx);
            p[g].v = seen ? exp_nonpos8(sq - (float8)mx) : (float8)0.0f;  // hidden keys weigh 0 (as prefill's)
            m[g] = mx;
            l[g] = l[g] * c[g] + hsum8(p[g].v);
        }
#ifdef ATTN_PREFETCH
        // the next block's keys and values (HD / 2 lines of 64 bytes), a line per value step below
        const int cn = (8 * (b + 1)) % rows;
        global const char *kn = (global const char *)(kt + (size_t)(cn / 8) * HD);
        global const char *vn = (global const char *)(vp + (size_t)cn * (HD / 8));
#endif
        for (int i = 0; i < HD / 8; i += DU) {
            float8 a[GROUP], a2[KU];
#pragma unroll
            for (int g = 0; g < GROUP; g++) a[g] = acc[g][i] * c[g];
#if DU == 2
#pragma unroll
            for (int g = 0; g < GROUP; g++) a2[g] = acc[g][i + 1] * c[g];
#endif
#pragma unroll
            for (int jj = 0; jj < 8; jj++) {
#ifdef ATTN_PREFETCH
                {
                    const int li = (i / DU) * 8 + jj;
                    if (li < HD / 4) __builtin_prefetch(kn + 64 * li, 0, 3);
                    else if (li < HD / 2) __builtin_prefetch(vn + 64 * (li - HD / 4), 0, 3);
                }
#endif
                global const ushort8 *vr = vp + (size_t)(c0 + jj) * (HD / 8) + i;
                const float8 v = h2f8(vr[0]);
#if DU == 2
                const float8 v2 = h2f8(vr[1]);
#pragma unroll
                for (int g = 0; g < GROUP; g++) {
                    const float pg = p[g].a[jj];
                    a[g] += pg * v;
                    a2[g] += pg * v2;
                }
#else
#pragma unroll
                for (int g = 0; g < GROUP; g++) a[g] += p[g].a[jj] * v;
#endif
            }
#pragma unroll
            for (int g = 0; g < GROUP; g++) acc[g][i] = a[g];
#if DU == 2
#pragma unroll
            for (int g = 0; g < GROUP; g++) acc[g][i + 1] = a2[g];
#endif
        }
    }
    for (int g = 0; g < GROUP; g++) {
        global float *pp = part + ((size_t)(kvh * GROUP + g) * splits + sp) * (HD + 8);
        for (int i = 0; i < HD / 8; i++) ((global float8 *)pp)[i] = acc[g][i];
        pp[HD] = m[g];
        pp[HD + 1] = l[g];
    }
}

kernel void attention_decode(global const float *qkv, global const float *rope, global ushort *k_cache,
                             global ushort *v_cache, global float *part, global const int *state,
                             const int heads, const int kv_heads, const int rows, const float scale,
                             const int splits, const int window ATTN_EXTRA_PARAMS) {
    attention_unit(get_global_id(0), get_global_id(1), qkv, rope, k_cache, v_cache, part, state, heads, kv_heads,
                   rows, scale, splits, window ATTN_EXTRA_ARGS);
}
