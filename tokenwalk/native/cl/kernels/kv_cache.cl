// The KV cache's layout and number format, shared by the kernels that write it (norm_rope.cl,
// attention.cl's decode) and those that read it (attention.cl).
//
// Cache of one layer: `rows` cells per KV head (a multiple of 16, set by the host,
// tokenwalk/native/kv_cache.py), position pos in cell pos % rows. A global layer has a cell
// for every position of the context, so pos % rows is pos; a sliding-window layer has fewer,
// a ring (as llama.cpp's SWA cache: the window plus a prefill chunk, padded), and a position
// overwrites the one rows back, which no query of the chunk sees any more. Values
// [kv_heads][cell][HD]; keys by groups of eight cells, [kv_heads][cell / 8][HD][8], so that
// the scores of one query against eight keys are one float8 accumulated over the HD
// dimensions, with no horizontal sums. A group of eight (or sixteen) positions that starts at
// a multiple of 8 (16) lies in consecutive cells, as rows is a multiple of 16.

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

// the fp16 bits of dimension d of the key in cell `cell`, and the first of the value's
#define K_AT(kvh, cell, d, rows) \
    (((size_t)(kvh) * (rows) + ((cell) & ~7)) * HD + (size_t)(d) * 8 + ((cell) & 7))
#define V_AT(kvh, cell, rows) (((size_t)(kvh) * (rows) + (cell)) * HD)
