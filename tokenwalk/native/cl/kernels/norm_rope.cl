// Norms and rotary position embeddings: RMSNorm over rows, the post-norm with its residual
// add, and RoPE on queries and keys, with the kernels that rope a prefill chunk's keys and
// write them and the values into the cache (kv_cache.cl's layout).

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

// RoPE (adjacent pairs, llama.cpp's "normal" mode) on the q and k parts of the fused
// QKV output, then k and v written into this layer's cache at positions pos0 + t
// (rows: the layer's cells per KV head, kv_cache.cl).
// qkv: [ntok][(heads + 2 kv_heads) * HD].
// rope: [ntok][HD] = cos(angle_i) for i < HD/2, then sin(angle_i), angle_i = pos base^(-2i/HD),
// computed by the host in double precision (PoCL's sin and cos are slow out-of-line calls).

kernel void rope_store(global float *qkv, global const float *rope, global ushort *k_cache,
                       global ushort *v_cache, global const int *state, const int heads,
                       const int kv_heads, const int rows) {
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
        global ushort *kd = k_cache + K_AT(kvh, pos % rows, 0, rows);
        global ushort *vd = v_cache + V_AT(kvh, pos % rows, rows);
        global const float8 *vs = (global const float8 *)(qkv + (size_t)t * width + (heads + kv_heads + kvh) * HD);
        global const float *vsf = (global const float *)vs;
        for (int d = 0; d < HD; d++) {
            kd[8 * d] = f2h(v[d]);
            vd[d] = f2h(vsf[d]);
        }
    }
}

// decode's RoPE: the rotation of eight values of a head (the llama graph)
inline float8 rope8(const float8 a, global const float *cs, const int k) {
    // pairs 4k..4k+3 of a head: (a[2i], a[2i+1]) rotated by angle_i; cs = cos[HD/2] | sin[HD/2]
    const float4 c = *(global const float4 *)(cs + 4 * k);
    const float4 s = *(global const float4 *)(cs + HD / 2 + 4 * k);
    const float4 e = a.even * c - a.odd * s;
    const float4 o = a.even * s + a.odd * c;
    return (float8)(e.s0, o.s0, e.s1, o.s1, e.s2, o.s2, e.s3, o.s3);
}

// decode's query and key heads with their norms (QK_NORM) or biases (QKV_BIAS), for attention_decode
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

// Gemma 3's query and key preparation, one work-item per (head, token) of the fused
// [Q | K | V] rows: RMSNorm over the head with its weights (attn_q_norm / attn_k_norm), then
// RoPE in NEOX order (pairs i and i + HD/2, llama.cpp's LLAMA_ROPE_TYPE_NEOX), in place; key
// heads then write key and value into the cache at positions pos0 + t. ldq: floats per token row.
kernel void norm_rope_store(global float *qkv, global const float *rope, global ushort *k_cache,
                            global ushort *v_cache, global const int *state, const int heads,
                            const int kv_heads, const int rows, global const float *q_norm,
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
        global ushort *kd = k_cache + K_AT(kvh, pos % rows, 0, rows);
        global ushort *vd = v_cache + V_AT(kvh, pos % rows, rows);
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
                            const int kv_heads, const int rows, global const float *bias, const int ldq) {
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
        global ushort *kd = k_cache + K_AT(kvh, pos % rows, 0, rows);
        global ushort *vd = v_cache + V_AT(kvh, pos % rows, rows);
        global const float *vsf = qkv + (size_t)t * ldq + (heads + kv_heads + kvh) * HD;
        global const float *vb = bias + (heads + kv_heads + kvh) * HD;
        for (int d = 0; d < HD; d++) {
            kd[8 * d] = f2h(v[d]);
            vd[d] = f2h(vsf[d] + vb[d]);
        }
    }
}
