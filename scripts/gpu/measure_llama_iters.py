#!/usr/bin/env python3
"""Measure a Llama-3.1-8B-shaped forward pass and KV swaps on a real GPU.

Prints, as JSON, the iteration samples (engine/sim IterSample: prefill tokens,
Σ prefill·context, decodes, Σ decode context, seconds) and swap samples that
`go test ./engine/sim -run TestMeasuredProfile` fits the simulator's profile to.
It needs PyTorch with CUDA; it runs on the device machine, never in `make test`.

What is measured: the GPU time of one engine iteration of the model's shapes
(32 layers, 4096 hidden, 32 query / 8 KV heads of 128, FFN 14336, vocabulary
128256, bf16, random weights) -- RMSNorm, fused QKV, rotary, attention through
PyTorch's scaled_dot_product_attention (flash / memory-efficient kernels),
output projection, SwiGLU MLP, logits and argmax for the rows that sample, and
the KV writes of the new tokens -- timed back to back with CUDA events after
warm-up. Not measured: an engine's own per-step CPU work (scheduling, input
preparation); the script reports when the CPU could not keep the GPU fed.
"""
import json
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

# The shapes measured, by --model NAME (default llama3-8b). vicuna-13b is
# Llama-2-13B's shape (multi-head attention, 40 layers); gptj-6b is GPT-J 6B's
# (multi-head attention with 256-wide heads, rotary on the first 64 dims,
# LayerNorm, a GELU MLP in parallel with attention). Random weights: the time
# of an iteration depends on the shapes, not the values. The KV buffers hold
# what an 80 GB card holds after the weights (the profile's capacity).
MODELS = {
    # layers, hidden, query heads, KV heads, head dim, FFN, vocabulary, rotary dims,
    # rope theta, style, KV tokens, dtype
    "llama3-8b": (32, 4096, 32, 8, 128, 14336, 128256, 128, 500000.0, "llama", 262144, torch.bfloat16),
    "vicuna-13b": (40, 5120, 40, 40, 128, 13824, 32000, 128, 10000.0, "llama", 40960, torch.float16),
    "gptj-6b": (28, 4096, 16, 16, 256, 16384, 50400, 64, 10000.0, "gptj", 98304, torch.float16),
}
MODEL = sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else "llama3-8b"
L, HID, NH, KVH, HD, FF, VOCAB, ROT, THETA, STYLE, MAX_KV_TOKENS, DT = MODELS[MODEL]
GROUP = NH // KVH
DEV = "cuda"
BLOCK = 16  # tokens per KV block, as the profile


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Model:
    def __init__(self):
        g = torch.Generator(device=DEV).manual_seed(1)

        def w(*shape):
            return (torch.randn(*shape, generator=g, device=DEV, dtype=DT) * 0.02)

        self.embed = w(VOCAB, HID)
        self.lm_head = w(HID, VOCAB)
        self.layers = []
        for _ in range(L):
            self.layers.append(dict(
                norm1=torch.ones(HID, device=DEV, dtype=DT),
                wqkv=w(HID, (NH + 2 * KVH) * HD),
                wo=w(NH * HD, HID),
                norm2=torch.ones(HID, device=DEV, dtype=DT),
                # SwiGLU's gate and up projections in one matrix; GPT-J's fc_in alone.
                wgu=w(HID, 2 * FF if STYLE == "llama" else FF),
                wdown=w(FF, HID),
                k=torch.empty(MAX_KV_TOKENS * KVH * HD, device=DEV, dtype=DT),
                v=torch.empty(MAX_KV_TOKENS * KVH * HD, device=DEV, dtype=DT),
            ))
        self.final_norm = torch.ones(HID, device=DEV, dtype=DT)
        inv = 1.0 / (THETA ** (torch.arange(0, ROT, 2, device=DEV, dtype=torch.float32) / ROT))
        pos = torch.arange(0, 131072, device=DEV, dtype=torch.float32)
        ang = torch.outer(pos, inv)
        self.cos = torch.cos(ang).to(DT)
        self.sin = torch.sin(ang).to(DT)
        self.gqa_path = None

    def rope(self, x, pos):
        # x [T, heads, HD]; rotate-half form on the first ROT dims (all of them
        # but for GPT-J, which rotates 64 of 256).
        c = self.cos[pos].unsqueeze(1)
        s = self.sin[pos].unsqueeze(1)
        r, rest = x[..., :ROT], x[..., ROT:]
        x1, x2 = r[..., : ROT // 2], r[..., ROT // 2:]
        out = torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)
        return torch.cat((out, rest), dim=-1) if ROT < HD else out

    def norm(self, x, w):
        if STYLE == "llama":
            return F.rms_norm(x, (HID,), w, 1e-5)
        return F.layer_norm(x, (HID,), w, None, 1e-5)

    def mlp(self, h, ly):
        gu = h @ ly["wgu"]
        if STYLE == "llama":
            return (F.silu(gu[:, :FF]) * gu[:, FF:]) @ ly["wdown"]
        return F.gelu(gu, approximate="tanh") @ ly["wdown"]

    def prefill_attn(self, q, kc, vc):
        # q [1, NH, Lp, HD]; kc, vc [1, KVH, S+Lp, HD]: bottom-right causal.
        lp, ctx = q.shape[2], kc.shape[2]
        mask = causal_lower_right(lp, ctx)
        if self.gqa_path in (None, "enable_gqa"):
            try:
                with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION]):
                    out = F.scaled_dot_product_attention(q, kc, vc, attn_mask=mask, enable_gqa=True)
                self.gqa_path = "enable_gqa"
                return out
            except Exception as e:  # noqa: BLE001 - fall back, and say so
                if self.gqa_path is None:
                    log("enable_gqa path failed (%s); expanding K/V" % e)
                self.gqa_path = "expand"
        kc = kc.repeat_interleave(GROUP, dim=1)
        vc = vc.repeat_interleave(GROUP, dim=1)
        return F.scaled_dot_product_attention(q, kc, vc, attn_mask=mask)

    def step(self, tokens, lp, start, nd, ctx):
        """One iteration: a prefill chunk of lp tokens at position start (lp may
        be 0) and nd decodes each at context ctx (the new token included)."""
        t = lp + nd
        x = self.embed[tokens]  # [t, HID]
        pos_p = torch.arange(start, start + lp, device=DEV)
        pos_d = torch.full((nd,), ctx - 1, device=DEV, dtype=torch.long)
        pos = torch.cat((pos_p, pos_d))
        for ly in self.layers:
            h = self.norm(x, ly["norm1"])
            qkv = h @ ly["wqkv"]
            q = qkv[:, : NH * HD].view(t, NH, HD)
            k = qkv[:, NH * HD: (NH + KVH) * HD].view(t, KVH, HD)
            v = qkv[:, (NH + KVH) * HD:].view(t, KVH, HD)
            q = self.rope(q, pos)
            k = self.rope(k, pos)
            outs = []
            if lp:
                kc = ly["k"][: (start + lp) * KVH * HD].view(1, KVH, start + lp, HD)
                vc = ly["v"][: (start + lp) * KVH * HD].view(1, KVH, start + lp, HD)
                kc[0, :, start:start + lp].copy_(k[:lp].transpose(0, 1))
                vc[0, :, start:start + lp].copy_(v[:lp].transpose(0, 1))
                qp = q[:lp].transpose(0, 1).unsqueeze(0)  # [1, NH, lp, HD]
                o = self.prefill_attn(qp, kc, vc)
                outs.append(o[0].transpose(0, 1).reshape(lp, NH * HD))
            if nd:
                base = (start + lp) * KVH * HD if lp else 0
                kd = ly["k"][base: base + nd * KVH * ctx * HD].view(nd, KVH, ctx, HD)
                vd = ly["v"][base: base + nd * KVH * ctx * HD].view(nd, KVH, ctx, HD)
                kd[:, :, ctx - 1].copy_(k[lp:])
                vd[:, :, ctx - 1].copy_(v[lp:])
                # GQA decode: a group's query heads are rows against one KV head.
                qd = q[lp:].view(nd, KVH, GROUP, HD)
                o = F.scaled_dot_product_attention(qd, kd, vd)
                outs.append(o.reshape(nd, NH * HD))
            a = torch.cat(outs) if len(outs) > 1 else outs[0]
            if STYLE == "gptj":  # attention and MLP read the same normed input
                x = x + a @ ly["wo"] + self.mlp(h, ly)
                continue
            x = x + a @ ly["wo"]
            x = x + self.mlp(self.norm(x, ly["norm2"]), ly)
        rows = x[lp - 1:] if lp else x  # last prefill position + decodes sample
        rows = self.norm(rows, self.final_norm)
        return torch.argmax(rows @ self.lm_head, dim=-1)


def time_iter(m, lp, start, nd, ctx, reps):
    """GPU seconds per iteration replayed from a CUDA graph (as engines run
    their steps, without per-kernel launch gaps), and eagerly for comparison,
    with the eager loop's CPU enqueue time."""
    tokens = torch.randint(0, VOCAB, (lp + nd,), device=DEV)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            m.step(tokens, lp, start, nd, ctx)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    c0 = time.perf_counter()
    e0.record()
    for _ in range(reps):
        m.step(tokens, lp, start, nd, ctx)
    e1.record()
    c1 = time.perf_counter()
    torch.cuda.synchronize()
    eager = e0.elapsed_time(e1) / 1e3 / reps
    cpu = (c1 - c0) / reps
    graph = None
    try:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            m.step(tokens, lp, start, nd, ctx)
        g.replay()
        torch.cuda.synchronize()
        e0.record()
        for _ in range(reps):
            g.replay()
        e1.record()
        torch.cuda.synchronize()
        graph = e0.elapsed_time(e1) / 1e3 / reps
        del g
    except Exception as e:  # noqa: BLE001 - report, keep the eager figure
        log("graph capture failed: %s" % e)
    torch.cuda.empty_cache()
    return graph, eager, cpu


def configs():
    out = []
    for b in (1, 4, 16, 32, 64, 128, 256):  # pure decode
        for c in (256, 1024, 4096, 16384):
            if b * c <= MAX_KV_TOKENS:
                out.append((0, 0, b, c))
    for lp in (64, 256, 512, 1024, 2048):  # pure prefill
        for s in (0, 2048, 8192, 32768):
            out.append((lp, s, 0, 0))
    mixed = ((512, 0, 32, 1024), (1024, 4096, 64, 2048), (256, 8192, 128, 512),
             (2048, 0, 16, 4096), (128, 1024, 200, 1024), (1536, 16384, 8, 8192))
    if MAX_KV_TOKENS < 262144:  # the same shapes, batches cut to what the card holds
        mixed = ((512, 0, 16, 1024), (1024, 4096, 8, 2048), (256, 8192, 32, 512),
                 (2048, 0, 4, 4096), (128, 1024, 24, 1024), (1536, 16384, 2, 8192))
    for lp, s, b, c in mixed:
        assert s + lp + b * c <= MAX_KV_TOKENS
        out.append((lp, s, b, c))  # mixed: checks that costs add
    return out


def measure_swaps():
    bb = BLOCK * L * 2 * KVH * HD * 2  # bytes per block across layers, K and V
    res = []
    pool_blocks = min(8192, (16 << 30) // bb)  # at most 16 GiB of device pool
    dev = torch.empty(pool_blocks * bb, device=DEV, dtype=torch.uint8).view(pool_blocks, bb)
    for n in [n for n in (1, 4, 16, 64, 256, 1024) if 4 * n <= pool_blocks]:
        host = torch.empty(n * bb, dtype=torch.uint8, pin_memory=True).view(n, bb)
        ids = torch.randperm(pool_blocks, device=DEV)[:n]
        stage = torch.empty(n, bb, device=DEV, dtype=torch.uint8)
        for direction in ("out", "in"):
            def once():
                if direction == "out":  # gather on device, one copy to host
                    torch.index_select(dev, 0, ids, out=stage)
                    host.copy_(stage, non_blocking=True)
                else:  # one copy to device, scatter into the pool
                    stage.copy_(host, non_blocking=True)
                    dev.index_copy_(0, ids, stage)
            for _ in range(2):
                once()
            torch.cuda.synchronize()
            reps = 20 if n <= 64 else 5
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(reps):
                once()
            e1.record()
            torch.cuda.synchronize()
            sec = e0.elapsed_time(e1) / 1e3 / reps
            res.append(dict(direction=direction, blocks=n, bytes=n * bb, seconds=sec))
            log("swap %s %5d blocks %8.3f ms  %6.1f GB/s" % (direction, n, sec * 1e3, n * bb / sec / 1e9))
        del host, stage
    # Per-block, per-layer copies as vLLM's swap_blocks issues them (64 of 32 KiB a block).
    small = BLOCK * KVH * HD * 2
    n = 64
    host = torch.empty(n * L * 2, small, dtype=torch.uint8, pin_memory=True)
    src = dev[:n].view(n * L * 2, small)
    for _ in range(2):
        for i in range(n * L * 2):
            host[i].copy_(src[i], non_blocking=True)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for i in range(n * L * 2):
        host[i].copy_(src[i], non_blocking=True)
    e1.record()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    sec = e0.elapsed_time(e1) / 1e3
    res.append(dict(direction="out-per-layer-copies", blocks=n, bytes=n * bb, seconds=sec, cpu_seconds=t1 - t0))
    log("swap out as %d copies of %d KiB: %.3f ms GPU, %.3f ms CPU" % (n * L * 2, small // 1024, sec * 1e3, (t1 - t0) * 1e3))
    return res


def measure_overlap(m):
    """How much of a swap hides behind an iteration running at the same time
    (the profile's swap.overlap): a decode iteration replayed from a CUDA graph
    on one stream, a gathered swap of blocks on another."""
    bb = BLOCK * L * 2 * KVH * HD * 2
    pool_blocks = min(1024, (4 << 30) // bb)  # at most 4 GiB beside the model
    pool = torch.empty(pool_blocks, bb, device=DEV, dtype=torch.uint8)
    res = []
    shapes = ((64, 1024, 128), (256, 1024, 256), (16, 4096, 64))
    if MAX_KV_TOKENS < 262144:
        shapes = ((16, 1024, 64), (32, 1024, 128), (8, 4096, 32))
    for nd, ctx, nblocks in shapes:
        nblocks = min(nblocks, pool_blocks)
        tokens = torch.randint(0, VOCAB, (nd,), device=DEV)
        for _ in range(3):
            m.step(tokens, 0, 0, nd, ctx)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            m.step(tokens, 0, 0, nd, ctx)
        host = torch.empty(nblocks, bb, dtype=torch.uint8, pin_memory=True)
        stage = torch.empty(nblocks, bb, device=DEV, dtype=torch.uint8)
        ids = torch.randperm(pool_blocks, device=DEV)[:nblocks]
        copy_stream = torch.cuda.Stream()
        for direction in ("out", "in"):
            def swap():
                with torch.cuda.stream(copy_stream):
                    if direction == "out":
                        torch.index_select(pool, 0, ids, out=stage)
                        host.copy_(stage, non_blocking=True)
                    else:
                        stage.copy_(host, non_blocking=True)
                        pool.index_copy_(0, ids, stage)

            def timed(run_iter, run_swap, reps=10):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(reps):
                    if run_swap:
                        copy_stream.wait_stream(torch.cuda.current_stream())
                        swap()
                    if run_iter:
                        g.replay()
                    torch.cuda.current_stream().wait_stream(copy_stream)
                torch.cuda.synchronize()
                return (time.perf_counter() - t0) / reps
            timed(True, True, 2)
            it, sw, both = timed(True, False), timed(False, True), timed(True, True)
            hidden = max(0.0, min(1.0, (it + sw - both) / sw))
            res.append(dict(direction=direction, decodes=nd, context=ctx, blocks=nblocks, iter_seconds=it,
                            swap_seconds=sw, both_seconds=both, hidden_fraction=hidden))
            log("overlap %s: decode %d x %d %.2f ms, swap %d blocks %.2f ms, together %.2f ms: %.0f%% of the swap hidden" % (
                direction, nd, ctx, it * 1e3, nblocks, sw * 1e3, both * 1e3, 100 * hidden))
        del g, host, stage
        torch.cuda.empty_cache()
    del pool
    return res


def main():
    props = torch.cuda.get_device_properties(0)
    meta = dict(model=MODEL, device=props.name, sms=props.multi_processor_count, memory_bytes=props.total_memory,
                torch=torch.__version__, cuda=torch.version.cuda, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    log(json.dumps(meta))
    m = Model()
    torch.cuda.synchronize()
    log("weights + KV buffers: %.1f GiB" % (torch.cuda.memory_allocated() / 2**30))
    iters = []
    for lp, s, b, c in configs():
        reps = 10 if lp + b * c / 1000 < 4096 else 5
        graph, eager, cpu = time_iter(m, lp, s, b, c, reps)
        sec = graph if graph is not None else eager
        rec = dict(prefill_tokens=lp, prefill_attn=lp * (s + lp), decodes=b, decode_ctx=b * c, seconds=sec,
                   config=dict(prefill=lp, start=s, decodes=b, context=c), graph=graph is not None,
                   eager_seconds=eager, enqueue_seconds=cpu)
        iters.append(rec)
        log("prefill %4d@%5d decodes %3d x %5d: graph %s ms, eager %7.3f ms (enqueue %6.3f ms)" % (
            lp, s, b, c, "%7.3f" % (graph * 1e3) if graph is not None else "   n/a", eager * 1e3, cpu * 1e3))
    meta["prefill_attention"] = m.gqa_path
    overlap = measure_overlap(m)
    del m  # the swap pool needs the room
    torch.cuda.empty_cache()
    swaps = measure_swaps()
    json.dump(dict(meta=meta, iters=iters, swaps=swaps, overlap=overlap), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
