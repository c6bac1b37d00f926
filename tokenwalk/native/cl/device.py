"""One OpenCL device: choosing it, its context and queue, and its buffers.

The device is chosen once: "platform:device" indices (as PYOPENCL_CTX), else the first CPU
device (PoCL), else the first device found, skipping any whose compiler cannot build a
trivial kernel. Buffers hold float32 (or raw bytes); sizes are bytes, counts are floats.
Nothing here knows a model.
"""

from __future__ import annotations

import mmap
import os

import numpy as np

from tokenwalk.errors import TokenwalkError

HUGE_PAGE_BYTES = 2 << 20  # x86-64's transparent huge page
# Buffers this large on a CPU device live in host memory of our own, asked for in huge pages
# (below); smaller ones stay PoCL's.
HOST_PAGES_MIN_BYTES = HUGE_PAGE_BYTES


def huge_page_memory(nbytes: int) -> np.ndarray:
    """``nbytes`` of zeroed host memory (uint8) starting on a 2 MiB boundary, from an anonymous
    mapping the kernel is asked to back with transparent huge pages (madvise MADV_HUGEPAGE,
    where the system offers it: Linux's default THP mode, "madvise", gives them to no one who
    does not ask). On PoCL's CPU device a buffer is host memory read through the TLB, and a
    decode step streams hundreds of megabytes: in 4 KiB pages that is a page walk every 4 KiB,
    in 2 MiB pages one every 2 MiB (the read probe over 178 MiB: 26 GB/s in PoCL's own pages,
    33 in these, same machine, alternating). The array keeps the mapping alive."""
    region = mmap.mmap(-1, int(nbytes) + HUGE_PAGE_BYTES, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is not None:
        try:
            region.madvise(advice)
        except OSError:  # a kernel without transparent huge pages: ordinary pages
            pass
    whole = np.frombuffer(region, dtype=np.uint8)
    start = -whole.ctypes.data % HUGE_PAGE_BYTES
    return whole[start:start + int(nbytes)]


def opencl():
    """The pyopencl module, or a one-line TokenwalkError saying what to install."""
    try:
        import pyopencl as cl
    except ImportError as error:  # pragma: no cover - the native extra installs it
        raise TokenwalkError(f"pyopencl is not installed ({error}); install tokenwalk[native]") from None
    return cl


_PROBE_KERNEL = "__kernel void probe(__global float *x) { x[get_global_id(0)] *= 2.0f; }"


def _build_error(cl, dev) -> str | None:
    """None when ``dev`` compiles a trivial kernel, else the compiler's first error line.
    The PoCL in pocl-binary-distribution 3.0 (LLVM 14) fails every build on CPUs newer than
    its LLVM ("unknown target CPU 'generic'", e.g. Zen 5); Debian's pocl-opencl-icd, which
    the Makefile installs and the ICD loader lists beside it, builds for a fixed variant."""
    try:
        cl.Program(cl.Context([dev]), _PROBE_KERNEL).build()
        return None
    except cl.Error as error:
        lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()] or [type(error).__name__]
        return next((ln for ln in lines if ln.lower().startswith("error")), lines[0])


def create_context(device: str | None = None):
    """An OpenCL context: ``device`` ("platform:device" indices, as PYOPENCL_CTX), else
    PYOPENCL_CTX, else the first CPU device (PoCL), else the first device found, skipping
    devices whose compiler cannot build a trivial kernel."""
    cl = opencl()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    if not platforms:
        raise TokenwalkError("no OpenCL platform found; install PoCL (pip install 'tokenwalk[native]' brings "
                             "pocl-binary-distribution) or your GPU's OpenCL driver")
    choice = device or os.environ.get("PYOPENCL_CTX")
    if choice:
        try:
            p_idx, _, d_idx = str(choice).partition(":")
            plat = platforms[int(p_idx or 0)]
            dev = plat.get_devices()[int(d_idx or 0)]
        except (ValueError, IndexError, cl.Error):
            raise TokenwalkError(f"OpenCL device {choice!r} not found (use PLATFORM:DEVICE indices, e.g. 0:0; "
                                 f"platforms: {', '.join(p.name for p in platforms)})") from None
        return cl.Context([dev])
    devices = [d for p in platforms for d in p.get_devices()]
    if not devices:
        raise TokenwalkError("the OpenCL platforms have no devices; install PoCL or a GPU driver")
    cpu = [d for d in devices if d.type & cl.device_type.CPU]
    failed = []
    for dev in cpu + [d for d in devices if d not in cpu]:
        error = _build_error(cl, dev)
        if error is None:
            return cl.Context([dev])
        failed.append(f"{dev.name.strip()} ({dev.platform.version.split('  ')[0].strip()}): {error}")
    raise TokenwalkError("no OpenCL device can compile kernels: " + "; ".join(failed)
                         + " (on Debian: apt-get install pocl-opencl-icd, as make setup does)")


class DeviceMemoryError(TokenwalkError):
    """A buffer the device could not allocate (the message is OpenCL's)."""


class Device:
    """A context and an in-order queue on one device, and the buffers made on it.

    Transfers to the device never wait (``write``); ``read`` waits for the queue, which is
    the one wait of a decode step.
    """

    def __init__(self, device: str | None = None):
        self.cl = opencl()
        self.context = create_context(device)
        self.device = self.context.devices[0]
        self.queue = self.cl.CommandQueue(self.context)

    @property
    def is_cpu(self) -> bool:
        """Whether the device runs on this machine's cores (PoCL's CPU device)."""
        return bool(self.device.type & self.cl.device_type.CPU)

    @property
    def compute_units(self) -> int:
        return int(self.device.max_compute_units)

    def name(self, more: str = "") -> str:
        """The device in words: name, platform and compute units (then ``more``, in the brackets)."""
        d = self.device
        return f"{d.name.strip()} ({d.platform.name.strip()}, {d.max_compute_units} compute units{more})"

    def short_name(self) -> str:
        """The device's own name, as its driver reports it."""
        return self.device.name.strip()

    def upload(self, array):
        """A read-only buffer holding a copy of ``array``'s items in C order, or of a tuple of
        arrays one after the other. A strided view (the packed values of a memory-mapped weight
        matrix) or a tuple is copied once, straight into the mapped buffer, never first into a
        contiguous array on the host."""
        mf = self.cl.mem_flags
        parts = array if isinstance(array, tuple) else (array,)
        nbytes = sum(p.nbytes for p in parts)
        if self._host_pages(nbytes):
            host = huge_page_memory(nbytes)
            at = 0
            for p in parts:
                np.copyto(host[at:at + p.nbytes].view(p.dtype).reshape(p.shape), p)
                at += p.nbytes
            return self.cl.Buffer(self.context, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=host)
        if len(parts) == 1 and (array.flags.c_contiguous or nbytes == 0):
            return self.cl.Buffer(self.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(array))
        buf = self.cl.Buffer(self.context, mf.READ_ONLY | mf.ALLOC_HOST_PTR, size=nbytes)
        mapped, _ = self.cl.enqueue_map_buffer(self.queue, buf, self.cl.map_flags.WRITE_INVALIDATE_REGION, 0,
                                               (nbytes,), np.uint8)
        at = 0
        for p in parts:
            if p.nbytes:
                np.copyto(mapped[at:at + p.nbytes].view(p.dtype).reshape(p.shape), p)
            at += p.nbytes
        mapped.base.release(self.queue)
        return buf

    def zeros(self, n_floats: int):
        """A read-write buffer of ``n_floats`` float32 zeros (at least one); DeviceMemoryError
        where the device cannot hold it."""
        size = max(4, int(n_floats) * 4)
        if self._host_pages(size):
            return self.empty(size)  # huge-page memory: anonymous pages come zeroed
        try:
            buf = self.cl.Buffer(self.context, self.cl.mem_flags.READ_WRITE, size=size)
            self.cl.enqueue_fill_buffer(self.queue, buf, np.float32(0), 0, size)
        except self.cl.Error as error:
            raise DeviceMemoryError(str(error)) from None
        return buf

    def empty(self, n_bytes: int, read_only: bool = False):
        """An uninitialised buffer of ``n_bytes`` (read-only for kernels if ``read_only``)."""
        mf = self.cl.mem_flags
        access = mf.READ_ONLY if read_only else mf.READ_WRITE
        if self._host_pages(int(n_bytes)):
            return self.cl.Buffer(self.context, access | mf.USE_HOST_PTR, hostbuf=huge_page_memory(int(n_bytes)))
        return self.cl.Buffer(self.context, access, size=int(n_bytes))

    def _host_pages(self, nbytes: int) -> bool:
        """Whether a buffer of ``nbytes`` lives in huge-page host memory of our own
        (``huge_page_memory``): on CPU devices, from HOST_PAGES_MIN_BYTES on; GPUs keep
        their own memory."""
        return self.is_cpu and nbytes >= HOST_PAGES_MIN_BYTES and not os.environ.get("TOKENWALK_NO_HUGE_PAGES")

    def write(self, buf, host: np.ndarray):
        """Queue a copy of ``host`` into ``buf`` without waiting (keep ``host`` alive until
        the queue has run it)."""
        self.cl.enqueue_copy(self.queue, buf, host, is_blocking=False)

    def read(self, out: np.ndarray, buf) -> np.ndarray:
        """Wait for the queue, then copy ``buf`` into ``out``."""
        self.cl.enqueue_copy(self.queue, out, buf)
        return out

    def copy(self, dst, src, src_offset: int, n_bytes: int):
        """Queue a device-side copy of ``n_bytes`` from ``src`` at ``src_offset``."""
        self.cl.enqueue_copy(self.queue, dst, src, src_offset=int(src_offset), byte_count=int(n_bytes))

    def finish(self):
        self.queue.finish()
