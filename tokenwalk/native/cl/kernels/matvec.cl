// The decode matrix-vector product (matvec_phase) with the norm, the 8-bit rounding of its
// input and the output mode fused in, and the waits between decode_chain's phases. A program
// of one weight layout compiles it once (products.cl's matvec kernel launches it); the
// decode chain's program compiles it once per layout of the model, each a section of its own
// (CHAIN_SECTION n: the layout's product renamed matvec_phase_n, and matvec_layout_n taking
// its weights as bytes, for decode_chain.cl's matvec_any; tokenwalk/native/cl/programs.py).
// What does not depend on the layout is compiled once (MATVEC_SHARED).

#ifndef MATVEC_SHARED
#define MATVEC_SHARED 1
// matvec's output modes (tokenwalk/native/cl/ops.py has the same numbers)
#define MODE_WRITE 0
#define MODE_ACCUMULATE 1
#define MODE_SWIGLU 2
#define MODE_GEGLU 3

// decode_chain's phases (decode_chain.cl): waiting for one, and counting its finished work.
// Waiting for a phase: spin a little, then sleep on the done counter (a futex) until the
// work-item finishing the phase wakes the sleepers. On a machine shared with other work, the
// work-item that holds the rest of a phase may be waiting for a core: a waiter that spun (or
// yielded) there kept taking the core from it (measured at load 9 on 2 cores: chained decode
// 25 % slower than a launch per product, as PoCL's idle workers sleep between launches).
// x86-64 Linux system calls (PoCL links no libc): futex (202), wait and wake, process-private.
// Elsewhere the wait spins. The sleep ends after 1 ms at the latest, whatever happens.
#if defined(__x86_64__)
#define CHAIN_FUTEX 1
inline void futex_wait(global int *word, const int value) {
    long ts[2] = {0, 1000000};  // struct timespec: 1 ms
    long ret;
    __asm__ volatile("mov %5, %%r10\n\tsyscall" : "=a"(ret) : "0"(202L), "D"(word), "S"(128L), "d"((long)value),
                     "r"((long)(size_t)ts) : "rcx", "r10", "r11", "memory");
}
inline void futex_wake(global int *word) {
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "0"(202L), "D"(word), "S"(129L), "d"(0x7fffffffL)
                     : "rcx", "r11", "memory");
}
#endif

// wait until `total` units of the phase counted at `done` are finished (null: no phase
// before); `sleepers` counts the work-items asleep on the chain's done counters
inline void wait_for_phase(global int *done, const int total, global int *sleepers) {
    if (!done) return;
    for (int spins = 0;; spins++) {
        const int seen = *(volatile global int *)done;
        if (seen >= total) break;
#ifdef CHAIN_FUTEX
        if (spins >= 2000) {  // ~10-20 us of spinning: a short wait never sleeps
            atomic_inc(sleepers);
            if (*(volatile global int *)done == seen) futex_wait(done, seen);
            atomic_dec(sleepers);
        } else {
            __builtin_ia32_pause();
        }
#endif
    }
    mem_fence(CLK_GLOBAL_MEM_FENCE);  // the phase's results are read after the count
}

// count `n` finished units of a phase at `done`, waking the work-items asleep on it
inline void phase_done(global int *done, const int n, global int *sleepers) {
    atomic_add(done, n);
#ifdef CHAIN_FUTEX
    if (*(volatile global int *)sleepers) futex_wake(done);
#endif
}
#endif  // MATVEC_SHARED

// The decode matrix-vector product, y = W x, with what surrounds it fused in: optionally
// a normed residual add first (res_t, below), then RMSNorm of x (norm_w not null: x / rms(x) * norm_w), then MODE_WRITE y[r] = s,
// MODE_ACCUMULATE y[r] += s (the residual add), or MODE_SWIGLU y[r] = silu(s_r) * s_{r+rows}
// (MODE_GEGLU: gelu(s_r) * s_{r+rows}) over a fused [gate | up] matrix of 2 rows rows.
// y is written from float yoff on. Each work-item keeps a private copy of the (normalised)
// input, read from its L1 cache for every row, and takes rows rows_per_item at a time (below).
// One phase of a work-item: the matvec kernel runs one, decode_chain (decode_chain.cl) several.
// row_counter: where the rows are handed out (null: work-item `item` owns the item-th range);
// done (or null): where the rows this work-item has finished are counted, for the next phase
// (sleepers: decode_chain's count of work-items waiting for it).
inline void matvec_phase(global const WQ_T *wq, global const WD_T *wd, global const float *x,
                         global float *y, const int rows, const int cols, const int rows_per_item,
                         const int mode, global const float *norm_w, const float eps, const int yoff,
                         const int splits, global const float *res_t, global const float *res_w,
                         global float *res_out, global int *row_counter, global int *done,
                         global int *sleepers, const int item) {
    // the first rows are taken before the input is prepared: a work-item that comes when every
    // row is gone (a core that joins a launch late) prepares nothing
    int first = row_counter ? atomic_add(row_counter, rows_per_item) : item * rows_per_item;
    if (first >= rows) return;
    const int nb = cols / 32;
    global const float8 *x8 = (global const float8 *)x;
    float8 xv[MAX_BLOCKS * 4];
    y += yoff;
    if (splits > 0) {
        // x is attention_decode's partial softmaxes: merge them here rather than in a launch of
        // their own: out_h = sum_s e^(m_s - M) acc_s / sum_s e^(m_s - M) l_s. Every work-item
        // merges all heads (a few thousand floats, from its cache).
        for (int h = 0; h < cols / HD; h++) {
            global const float *pp = x + (size_t)h * splits * (HD + 8);
            float mx = -1e30f;
            for (int sp = 0; sp < splits; sp++) mx = pp[sp * (HD + 8) + HD] > mx ? pp[sp * (HD + 8) + HD] : mx;
            float l = 0.0f;
            for (int i = 0; i < HD / 8; i++) xv[h * (HD / 8) + i] = 0.0f;
            for (int sp = 0; sp < splits; sp++) {
                global const float *ps = pp + sp * (HD + 8);
                const float w = exp_nonpos(ps[HD] - mx);
                l += w * ps[HD + 1];
                for (int i = 0; i < HD / 8; i++) xv[h * (HD / 8) + i] += w * ((global const float8 *)ps)[i];
            }
            const float inv = 1.0f / l;
            for (int i = 0; i < HD / 8; i++) xv[h * (HD / 8) + i] *= inv;
        }
    } else {
        for (int i = 0; i < nb * 4; i++) xv[i] = x8[i];
        if (res_t) {
            // the input is x + RMSNorm(res_t) * res_w: the residual add of the block before,
            // after its own norm (Gemma's post-attention and post-MLP norms), done here rather
            // than in a launch of its own; the work-item with the first rows keeps the sum in
            // res_out (another buffer than x, which the other work-items are still reading).
            global const float8 *t8 = (global const float8 *)res_t;
            global const float8 *w8 = (global const float8 *)res_w;
            float8 ts = 0.0f;
            for (int i = 0; i < nb * 4; i++) ts += t8[i] * t8[i];
            const float tscale = rsqrt(hsum8(ts) / cols + eps);
            for (int i = 0; i < nb * 4; i++) xv[i] += t8[i] * tscale * w8[i];
            if (first == 0)
                for (int i = 0; i < nb * 4; i++) ((global float8 *)res_out)[i] = xv[i];
        }
        if (norm_w) {
            float8 ss = 0.0f;
            for (int i = 0; i < nb * 4; i++) ss += xv[i] * xv[i];
            const float scale = rsqrt(hsum8(ss) / cols + eps);
            global const float8 *g8 = (global const float8 *)norm_w;
            for (int i = 0; i < nb * 4; i++) xv[i] = xv[i] * scale * g8[i];
        }
    }
#ifdef QUANT
    float xs[MAX_BLOCKS];
    for (int b = 0; b < nb; b++) xs[b] = hsum8(xv[4 * b] + xv[4 * b + 1] + xv[4 * b + 2] + xv[4 * b + 3]);
#endif
#ifdef INT_DOT
    v32c xq[MAX_BLOCKS];
    float xd[MAX_BLOCKS];
    quantize_q8(xv, nb, xq, xd, xs);
#endif
    // Rows are handed out rows_per_item at a time from the launch's counter (zeroed before the
    // step), so each work-item prepares its input once and a work-item on a busy core takes
    // fewer rows; without counters (null), work-item i owns the i-th range.
    for (; first < rows; first = row_counter ? atomic_add(row_counter, rows_per_item) : rows) {
        const int last = first + rows_per_item < rows ? first + rows_per_item : rows;
        for (int r = first; r < last; r++) {
            float s;
            ROW_DOT(r, s);
            if (mode >= MODE_SWIGLU) {
                float u;
                ROW_DOT(r + rows, u);
                y[r] = (mode == MODE_SWIGLU ? silu(s) : gelu(s)) * u;
            } else {
                y[r] = mode == MODE_ACCUMULATE ? y[r] + s : s;
            }
        }
        if (done) phase_done(done, last - first, sleepers);  // after the rows' writes: the next phase reads them
    }
}

#ifdef CHAIN_SECTION
#define MATVEC_CAT2(a, b) a##b
#define MATVEC_CAT(a, b) MATVEC_CAT2(a, b)
// this section's product with its weights as bytes (decode_chain.cl, matvec_any)
inline void MATVEC_CAT(matvec_layout_, CHAIN_SECTION)(
        global const uchar *wq, global const uchar *wd, global const float *x, global float *y, const int rows,
        const int cols, const int rows_per_item, const int mode, global const float *norm_w, const float eps,
        const int yoff, const int splits, global const float *res_t, global const float *res_w,
        global float *res_out, global int *row_counter, global int *done, global int *sleepers) {
    matvec_phase((global const WQ_T *)wq, (global const WD_T *)wd, x, y, rows, cols, rows_per_item, mode, norm_w,
                 eps, yoff, splits, res_t, res_w, res_out, row_counter, done, sleepers, 0);
}
#undef MATVEC_CAT
#undef MATVEC_CAT2
#endif
