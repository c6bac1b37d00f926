// The memory-bandwidth probe (tokenwalk/native/cl/ops.py, read_bandwidth_gbs).

// Read a buffer once, each work-item a contiguous chunk: the memory-bandwidth probe.
kernel void read_bandwidth(global const float8 *data, global float *sink, const int per_item) {
    const size_t i0 = (size_t)get_global_id(0) * per_item;
    float8 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;  // four chains hide the add latency
    for (int i = 0; i < per_item; i += 4) {
        a0 += data[i0 + i];
        a1 += data[i0 + i + 1];
        a2 += data[i0 + i + 2];
        a3 += data[i0 + i + 3];
    }
    sink[get_global_id(0)] = hsum8(a0 + a1 + a2 + a3);
}
