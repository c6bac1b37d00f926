// The KV cache's layout and number format, shared by the kernels that write it (norm_rope.cl,
// attention.cl's decode) and those that read it (attention.cl).
//
// Cache of one layer, CACHE_ROWS(ctx) positions (8
// spare, a multiple of 8): values [kv_heads][position][HD]; keys by groups of eight
// positions, [kv_heads][position / 8][HD][8], so that the scores of one query against eight
// keys are one float8 accumulated over the HD dimensions, with no horizontal sums.

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
// the fp16 bits of dimension d of position pos's key
#define K_AT(kvh, pos, d, ctx) \
    (((size_t)(kvh) * CACHE_ROWS(ctx) + ((pos) & ~7)) * HD + (size_t)(d) * 8 + ((pos) & 7))
