// What every kernel file uses: the compile-time defaults, fp16 -> float, horizontal sums
// and maxima, an inline exp for softmax weights.
//
// The kernels of the forward pass are written for CPU OpenCL (PoCL) first: every work-item
// owns a contiguous chunk of rows (strided GPU-style loops read slowly on a CPU), inner loops
// use 8-wide float vectors (AVX2), and nothing needs local memory. programs.py joins the
// files into one source, this one first (KERNEL_FILES there).
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

inline float hsum8(float8 v) {
    float4 s = v.lo + v.hi;
    float2 t = s.lo + s.hi;
    return t.x + t.y;
}

// the larger of a and b, element-wise on vectors
#define VMAX(a, b) ((a) > (b) ? (a) : (b))

inline float vmax8(const float8 v) {
    const float4 m4 = VMAX(v.lo, v.hi);
    const float2 m2 = VMAX(m4.lo, m4.hi);
    return VMAX(m2.x, m2.y);
}

// a float8 read lane by lane
typedef union {
    float8 v;
    float a[8];
} f8u;

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
