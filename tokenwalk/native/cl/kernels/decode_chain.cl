// A run of a decode step's launches as one launch (CPU devices): up to two matrix-vector
// products, decode attention, then up to three more products, as llama.cpp's graph runs a
// layer's nodes back to back on its threads. PoCL wakes its worker threads for every launch,
// and a worker that comes late to a short launch finds its work taken (or takes it late), so
// a step of 100-150 launches of 20-100 us spent a good part of its time starting launches; a
// layer in one launch starts once. Each product may have a weight layout of its own: this
// file is compiled into the chain's program, after a section per layout of the model
// (matvec.cl's matvec_layout_n; tokenwalk/native/cl/programs.py, chain_source), and a
// product's `layout` picks its section.
//
// The work-items (one per compute unit) go through the phases in order. In each they take
// work from the phase's counter (rows of a product, (KV head, key range) units of attention)
// and count what they have finished in the phase's done counter; before a phase a work-item
// waits until the previous phase's work is all done. It waits only for work that a running
// work-item has taken, so the launch completes whether its work-items run at the same time
// or one after another. Counters: per phase p, [slot + 2p] hands out, [slot + 2p + 1] counts
// what is done, and [slot + 12] counts the work-items asleep waiting (matvec.cl,
// wait_for_phase); the step's first launch zeroes them all (tokenwalk/native/cl/ops.py).

// the product of section `layout` (0 to CHAIN_LAYOUTS - 1), matvec_phase's other parameters
#define MATVEC_ANY_CASE(n)                                                                \
    case n:                                                                               \
        matvec_layout_##n(wq, wd, x, y, rows, cols, rpi, mode, nw, eps, yoff, splits, rt, rw, ro, take, done, sleepers); \
        break;
inline void matvec_any(const int layout, global const uchar *wq, global const uchar *wd, global const float *x,
                       global float *y, const int rows, const int cols, const int rpi, const int mode,
                       global const float *nw, const float eps, const int yoff, const int splits,
                       global const float *rt, global const float *rw, global float *ro, global int *take,
                       global int *done, global int *sleepers) {
    switch (layout) {
        MATVEC_ANY_CASE(0)
#if CHAIN_LAYOUTS > 1
        MATVEC_ANY_CASE(1)
#endif
#if CHAIN_LAYOUTS > 2
        MATVEC_ANY_CASE(2)
#endif
#if CHAIN_LAYOUTS > 3
        MATVEC_ANY_CASE(3)
#endif
#if CHAIN_LAYOUTS > 4
        MATVEC_ANY_CASE(4)
#endif
#if CHAIN_LAYOUTS > 5
        MATVEC_ANY_CASE(5)
#endif
#if CHAIN_LAYOUTS > 6
        MATVEC_ANY_CASE(6)
#endif
#if CHAIN_LAYOUTS > 7
        MATVEC_ANY_CASE(7)
#endif
#if CHAIN_LAYOUTS > 8
#error "decode_chain.cl: at most eight weight layouts in a chain's program"
#endif
    }
}

// the parameters of one matrix-vector phase n (matvec_phase's; rows 0: no such phase)
#define MV_PARAMS(n)                                                                      \
    const int layout##n, global const uchar *wq##n, global const uchar *wd##n, global const float *x##n, global float *y##n, \
    const int rows##n, const int cols##n, const int rpi##n, const int mode##n, global const float *nw##n, \
    const int yoff##n, const int splits##n, global const float *rt##n, global const float *rw##n, global float *ro##n

// phase p: the product of parameters n, after the phase before it
#define MV_RUN(n, p)                                                                      \
    if (rows##n > 0) {                                                                    \
        wait_for_phase(prev_done, prev_total, sleepers);                                           \
        matvec_any(layout##n, wq##n, wd##n, x##n, y##n, rows##n, cols##n, rpi##n, mode##n, nw##n, mv_eps, yoff##n, \
                   splits##n, rt##n, rw##n, ro##n, counters + slot + 2 * (p), counters + slot + 2 * (p) + 1, sleepers); \
        prev_done = counters + slot + 2 * (p) + 1;                                       \
        prev_total = rows##n;                                                             \
    }

kernel void decode_chain(global int *counters, const int slot, const float mv_eps, MV_PARAMS(0), MV_PARAMS(1),
                         global const float *qkv, global const float *rope, global ushort *k_cache,
                         global ushort *v_cache, global float *part, global const int *state, const int heads,
                         const int kv_heads, const int rows, const float scale, const int splits,
                         const int window ATTN_EXTRA_PARAMS, MV_PARAMS(2), MV_PARAMS(3), MV_PARAMS(4)) {
    global int *sleepers = counters + slot + 12;  // work-items asleep in wait_for_phase
    global int *prev_done = 0;
    int prev_total = 0;
    MV_RUN(0, 0)
    MV_RUN(1, 1)
    if (kv_heads > 0) {  // attention: (KV head, key range) units
        wait_for_phase(prev_done, prev_total, sleepers);
        global int *take = counters + slot + 4, *done = counters + slot + 5;
        const int units = kv_heads * splits;
        for (int u = atomic_add(take, 1); u < units; u = atomic_add(take, 1)) {
            attention_unit(u / splits, u % splits, qkv, rope, k_cache, v_cache, part, state, heads, kv_heads, rows,
                           scale, splits, window ATTN_EXTRA_ARGS);
            phase_done(done, 1, sleepers);
        }
        prev_done = done;
        prev_total = units;
    }
    MV_RUN(2, 3)
    MV_RUN(3, 4)
    MV_RUN(4, 5)
}
