// The MLP's activations: SiLU and GELU for the decode product's fused output (matvec.cl,
// matvec's MODE_SWIGLU and MODE_GEGLU) and the gated kernels prefill runs after gate and up.

// SiLU, s * sigmoid(s), through exp_nonpos (PoCL's exp is a call): with e = e^-|s|,
// sigmoid(s) = 1 / (1 + e) for s >= 0 and e / (1 + e) below.
inline float silu(const float s) {
    const float e = exp_nonpos(-fabs(s));
    return s * (s >= 0.0f ? 1.0f : e) / (1.0f + e);
}

// GELU, tanh form (as ggml_gelu): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). The same
// through exp_nonpos was faster but moves Gemma 3's logits by ~1e-6, enough to flip an 8-bit
// rounding and a reference near-tie (tests/engine/test_engine_peer.py): the library tanh stays.
inline float gelu(const float x) {
    return 0.5f * x * (1.0f + tanh(0.7978845608028654f * x * (1.0f + 0.044715f * x * x)));
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
