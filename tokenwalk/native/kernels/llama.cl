// Kernels of the llama forward pass, written for CPU OpenCL (PoCL) first:
// every work-item owns a contiguous chunk of rows (strided GPU-style loops read slowly on
// a CPU), inner loops use 8-wide float vectors (AVX2), and nothing needs local memory.
//
// Compile-time macros (set by engine.py):
//   WTYPE_Q4_1 | WTYPE_Q8_0 | WTYPE_F16 | WTYPE_F32   the weight layout of this program
//   HD            head size (multiple of 8)
//   TT            tokens per tile of the matrix-matrix kernel
//
// Weight layouts on the device (repacked at load time, still quantized):
//   Q4_1 (Q4_0 too, with m = -8 d): qs uchar[rows][cols/32][16] (byte j: weight j in the low
//        nibble, weight j+16 in the high nibble, as in GGUF), dm half[rows][cols/32][2] = (d, m);
//        weight = d * q + m.
//   Q8_0: qs char[rows][cols/32][32], d half[rows][cols/32]; weight = d * q.
//   F16:  half[rows][cols] (qs), F32: float[rows][cols] (qs); d unused.

#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#if defined(WTYPE_Q4_1)
#define WQ_T uchar
#define LOAD_BLOCK(r, b)                                                              \
    {                                                                                 \
        const size_t blk = (size_t)(r) * nb + (b);                                    \
        const uchar8 qa = vload8(0, wq + blk * 16);                                   \
        const uchar8 qb = vload8(1, wq + blk * 16);                                   \
        const float2 dm = vload_half2(blk, wd);                                       \
        w0 = fma(convert_float8(convert_int8(qa & (uchar8)15)), (float8)dm.x, (float8)dm.y); \
        w1 = fma(convert_float8(convert_int8(qb & (uchar8)15)), (float8)dm.x, (float8)dm.y); \
        w2 = fma(convert_float8(convert_int8(qa >> (uchar8)4)), (float8)dm.x, (float8)dm.y); \
        w3 = fma(convert_float8(convert_int8(qb >> (uchar8)4)), (float8)dm.x, (float8)dm.y); \
    }
#elif defined(WTYPE_Q8_0)
#define WQ_T char
#define LOAD_BLOCK(r, b)                                                              \
    {                                                                                 \
        const size_t blk = (size_t)(r) * nb + (b);                                    \
        const float d = vload_half(blk, wd);                                          \
        w0 = convert_float8(convert_int8(vload8(0, wq + blk * 32))) * d;              \
        w1 = convert_float8(convert_int8(vload8(1, wq + blk * 32))) * d;              \
        w2 = convert_float8(convert_int8(vload8(2, wq + blk * 32))) * d;              \
        w3 = convert_float8(convert_int8(vload8(3, wq + blk * 32))) * d;              \
    }
#elif defined(WTYPE_F16)
#define WQ_T half
#define LOAD_BLOCK(r, b)                                                              \
    {                                                                                 \
        const size_t off = (size_t)(r) * cols + (size_t)(b) * 32;                     \
        w0 = vload_half8(0, wq + off); w1 = vload_half8(1, wq + off);                 \
        w2 = vload_half8(2, wq + off); w3 = vload_half8(3, wq + off);                 \
    }
#else
#define WQ_T float
#define LOAD_BLOCK(r, b)                                                              \
    {                                                                                 \
        const size_t off = (size_t)(r) * cols + (size_t)(b) * 32;                     \
        w0 = vload8(0, wq + off); w1 = vload8(1, wq + off);                           \
        w2 = vload8(2, wq + off); w3 = vload8(3, wq + off);                           \
    }
#endif

// The x vectors that multiply w0..w3: same order for every layout (Q4 high nibbles hold
// weights 16..31 of the block, which the loaders place in w2, w3).
#define DOT_BLOCK(xp) (w0 * vload8(0, xp) + w1 * vload8(1, xp) + w2 * vload8(2, xp) + w3 * vload8(3, xp))

inline float hsum8(float8 v) {
    float4 s = v.lo + v.hi;
    float2 t = s.lo + s.hi;
    return t.x + t.y;
}

// y[t][r] (+)= sum_c W[r][c] * x[t][c] for one token: the decode matrix-vector product.
// Work-item i owns rows [i*rows_per_item, (i+1)*rows_per_item).
kernel void matvec(global const WQ_T *wq, global const half *wd, global const float *x,
                   global float *y, const int rows, const int cols, const int rows_per_item,
                   const int accumulate) {
    const int r0 = get_global_id(0) * rows_per_item;
    const int r1 = min(r0 + rows_per_item, rows);
    const int nb = cols / 32;
    float8 w0, w1, w2, w3;
    for (int r = r0; r < r1; r++) {
        float8 acc = 0.0f;
        for (int b = 0; b < nb; b++) {
            LOAD_BLOCK(r, b);
            acc += DOT_BLOCK(x + b * 32);
        }
        const float s = hsum8(acc);
        y[r] = accumulate ? y[r] + s : s;
    }
}

// The prefill matrix-matrix product: a work-item owns a chunk of rows and a tile of TT
// tokens, so each dequantized weight block is used TT times. x has room for a whole tile
// (the host pads it), rows of tokens past ntok are computed but not written.
kernel void matmul(global const WQ_T *wq, global const half *wd, global const float *x,
                   global float *y, const int rows, const int cols, const int rows_per_item,
                   const int accumulate, const int ntok) {
    const int r0 = get_global_id(0) * rows_per_item;
    const int r1 = min(r0 + rows_per_item, rows);
    const int t0 = get_global_id(1) * TT;
    const int nt = min(TT, ntok - t0);
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
            global float *yp = y + (size_t)(t0 + i) * rows + r;
            *yp = accumulate ? *yp + s : s;
        }
    }
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
// qkv: [ntok][(heads + 2 kv_heads) * HD]; cache: [kv_heads][ctx][HD] for this layer.
// inv_freq[i] = base^(-2i/HD), computed on the host in double precision.
kernel void rope_store(global float *qkv, global const float *inv_freq, global float *k_cache,
                       global float *v_cache, global const int *state, const int heads,
                       const int kv_heads, const int ctx) {
    const int h = get_global_id(0);  // 0..heads+kv_heads-1: query heads, then key heads
    const int t = get_global_id(1);
    const int pos = state[0] + t;
    const int width = (heads + 2 * kv_heads) * HD;
    global float *v = qkv + (size_t)t * width + h * HD;
    for (int i = 0; i < HD / 2; i++) {
        const float angle = pos * inv_freq[i];
        const float c = cos(angle), s = sin(angle);
        const float a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * c - b * s;
        v[2 * i + 1] = a * s + b * c;
    }
    if (h >= heads) {
        const int kvh = h - heads;
        global float *kd = k_cache + ((size_t)kvh * ctx + pos) * HD;
        global float *vd = v_cache + ((size_t)kvh * ctx + pos) * HD;
        global const float *vs = qkv + (size_t)t * width + (heads + kv_heads + kvh) * HD;
        for (int i = 0; i < HD; i += 8) {
            vstore8(vload8(0, v + i), 0, kd + i);
            vstore8(vload8(0, vs + i), 0, vd + i);
        }
    }
}

// Causal attention with an online softmax: one work-item per (query head, token), reading
// the keys 0..pos of its KV head (grouped-query attention: kv = h / (heads / kv_heads)).
kernel void attention(global const float *qkv, global const float *k_cache,
                      global const float *v_cache, global float *out, global const int *state,
                      const int heads, const int kv_heads, const int ctx, const float scale) {
    const int h = get_global_id(0);
    const int t = get_global_id(1);
    const int pos = state[0] + t;
    const int kvh = h / (heads / kv_heads);
    const int width = (heads + 2 * kv_heads) * HD;
    global const float *qp = qkv + (size_t)t * width + h * HD;
    float8 q[HD / 8], acc[HD / 8];
#pragma unroll
    for (int i = 0; i < HD / 8; i++) {
        q[i] = vload8(i, qp) * scale;
        acc[i] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    global const float *kp = k_cache + (size_t)kvh * ctx * HD;
    global const float *vp = v_cache + (size_t)kvh * ctx * HD;
    for (int j = 0; j <= pos; j++) {
        float8 d = 0.0f;
#pragma unroll
        for (int i = 0; i < HD / 8; i++) d += q[i] * vload8(i, kp + (size_t)j * HD);
        const float s = hsum8(d);
        if (s > m) {
            const float c = exp(m - s);
            l *= c;
#pragma unroll
            for (int i = 0; i < HD / 8; i++) acc[i] *= c;
            m = s;
        }
        const float p = exp(s - m);
        l += p;
#pragma unroll
        for (int i = 0; i < HD / 8; i++) acc[i] += p * vload8(i, vp + (size_t)j * HD);
    }
    global float *op = out + (size_t)t * heads * HD + h * HD;
    const float inv = 1.0f / l;
#pragma unroll
    for (int i = 0; i < HD / 8; i++) vstore8(acc[i] * inv, i, op);
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

// Read a buffer once, each work-item a contiguous chunk: the memory-bandwidth probe.
kernel void read_bandwidth(global const float8 *data, global float *sink, const int per_item) {
    const size_t i0 = (size_t)get_global_id(0) * per_item;
    float8 acc = 0.0f;
    for (int i = 0; i < per_item; i++) acc += data[i0 + i];
    sink[get_global_id(0)] = hsum8(acc);
}
