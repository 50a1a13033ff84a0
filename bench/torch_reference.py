#!/usr/bin/env python3
"""bench/torch_reference.py: the layer stack of a pplan.model/1 file in plain
PyTorch, as `pplan exec` runs it, timed on one device: the PyTorch figure
bench/gpu-check.sh holds pplan exec's step time against (issue 21).

The same computation as pplan exec (exec/, kernels/): token embedding; per
layer RMSNorm or LayerNorm (eps 1e-5), one QKV projection with GQA, causal
attention through scaled_dot_product_attention, the output projection and
a residual, the norm, a SwiGLU or GeLU MLP and a residual; the final norm,
the LM head and cross-entropy; no position encoding unless the model has
learned positions.  Weights as exec/params.c draws them: normal(0, 0.02),
0.02 / sqrt(2 layers) for the two output projections, norms 1, biases 0.
Mixed precision as pplan's: fp32 master weights and gradients, bf16 GEMMs
and attention (autocast); AdamW lr 3e-4, betas (0.9, 0.95), eps 1e-8,
weight decay 0.1 on matrices and embeddings only, gradients clipped at
norm 1 (exec/bringup.c, exec/grads.c, kernels/cpu_optim.c).  One step is
gbs / mbs micro-batches of mbs sequences, their gradients accumulated.
Random tokens (the timing does not depend on them).

Prints one JSON object (also to --out): the median step time and tokens/s
over the timed steps, the losses, and torch.matmul's rate on two random
N x N bf16 matrices (--matmul N; 0 to skip).  Python and PyTorch are only
this reference's needs: pplan's build and tests never run it.

Usage: python3 bench/torch_reference.py --model bench/models/llama-1b-gqa.json
       [--mbs 1] [--gbs 8] [--seq N] [--layers N] [--steps 10] [--warmup 3]
       [--device cuda|cpu] [--dtype bf16|fp32] [--matmul 8192] [--out FILE]
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def load_model(path):
    with open(path) as f:
        m = json.load(f)
    heads = m["num_attention_heads"]
    cfg = {
        "name": m.get("name", path),
        "layers": m["num_layers"],
        "hidden": m["hidden_size"],
        "ffn": m.get("ffn_hidden_size") or 4 * m["hidden_size"],
        "heads": heads,
        "kv_heads": m.get("num_kv_heads") or heads,
        "vocab": m["vocab_size"],
        "seq": m["seq_length"],
        "mlp": m.get("mlp", "gelu"),
        "norm": m.get("norm", "layernorm"),
        "tied": bool(m.get("tie_word_embeddings", False)),
        "bias": bool(m.get("linear_bias", True)),
        "pos": int(m.get("pos_embedding") or 0),
    }
    cfg["head_dim"] = m.get("head_dim") or cfg["hidden"] // heads
    if m.get("moe"):
        sys.exit("torch_reference: mixture-of-experts models are not modelled (neither does pplan exec run them)")
    return cfg


class Norm(torch.nn.Module):
    def __init__(self, c, rms):
        super().__init__()
        self.rms = rms
        self.weight = torch.nn.Parameter(torch.ones(c))
        self.bias = None if rms else torch.nn.Parameter(torch.zeros(c))

    def forward(self, x):
        if self.rms:
            return F.rms_norm(x, (x.shape[-1],), self.weight, 1e-5)
        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, 1e-5)


class Layer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        C, D = c["hidden"], c["head_dim"]
        self.H, self.G, self.D = c["heads"], c["kv_heads"], D
        self.gated = c["mlp"] in ("swiglu", "geglu")
        self.ln1 = Norm(C, c["norm"] == "rmsnorm")
        self.qkv = torch.nn.Linear(C, (self.H + 2 * self.G) * D, bias=c["bias"])
        self.proj = torch.nn.Linear(self.H * D, C, bias=c["bias"])
        self.ln2 = Norm(C, c["norm"] == "rmsnorm")
        self.fc1 = torch.nn.Linear(C, (2 if self.gated else 1) * c["ffn"], bias=c["bias"])
        self.fc2 = torch.nn.Linear(c["ffn"], C, bias=c["bias"])
        self.act = c["mlp"]

    def forward(self, x):
        B, S, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split([self.H * self.D, self.G * self.D, self.G * self.D], -1)
        q = q.view(B, S, self.H, self.D).transpose(1, 2)
        k = k.view(B, S, self.G, self.D).transpose(1, 2)
        v = v.view(B, S, self.G, self.D).transpose(1, 2)
        if self.G != self.H:
            k = k.repeat_interleave(self.H // self.G, dim=1)
            v = v.repeat_interleave(self.H // self.G, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, S, self.H * self.D))
        h = self.fc1(self.ln2(x))
        if self.gated:
            g, u = h.chunk(2, dim=-1)
            h = (F.silu(g) if self.act == "swiglu" else F.gelu(g, approximate="tanh")) * u
        else:
            h = F.gelu(h, approximate="tanh")
        return x + self.fc2(h)


class Stack(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = torch.nn.Embedding(c["vocab"], c["hidden"])
        self.wpe = torch.nn.Embedding(c["pos"], c["hidden"]) if c["pos"] else None
        self.layers = torch.nn.ModuleList(Layer(c) for _ in range(c["layers"]))
        self.lnf = Norm(c["hidden"], c["norm"] == "rmsnorm")
        self.head = None if c["tied"] else torch.nn.Linear(c["hidden"], c["vocab"], bias=False)
        out_std = 0.02 / math.sqrt(2 * c["layers"])
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() < 2:
                    if name.endswith("bias"):
                        p.zero_()
                    continue
                p.normal_(0, out_std if name.endswith(("proj.weight", "fc2.weight")) else 0.02)

    def forward(self, tokens, labels):
        x = self.wte(tokens)
        if self.wpe is not None:
            x = x + self.wpe(torch.arange(tokens.shape[1], device=tokens.device))
        for layer in self.layers:
            x = layer(x)
        x = self.lnf(x)
        logits = self.head(x) if self.head is not None else x @ self.wte.weight.t()
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.view(-1))


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def matmul_rate(n, dev, dtype, reps=20):
    """torch.matmul of two random n x n matrices, two pairs in turn (so that
    no product reads the cache the last one filled); the median of reps."""
    pairs = [(torch.randn(n, n, device=dev, dtype=dtype), torch.randn(n, n, device=dev, dtype=dtype))
             for _ in range(2)]
    out = torch.empty(n, n, device=dev, dtype=dtype)
    for i in range(3):
        torch.matmul(*pairs[i % 2], out=out)
    sync(dev)
    times = []
    for i in range(reps):
        t0 = time.perf_counter()
        torch.matmul(*pairs[i % 2], out=out)
        sync(dev)
        times.append(time.perf_counter() - t0)
    t = statistics.median(times)
    return {"n": n, "dtype": str(dtype).replace("torch.", ""), "median_s": t, "tflops": 2.0 * n ** 3 / t / 1e12}


def attention_rates(c, seqs, dev, dtype, reps=10):
    """F.scaled_dot_product_attention, causal, at the shapes pplan calibrate
    measures its own fused attention (batch 1, at most 16 query heads, the
    model's KV share of them and head width): forward, and backward as the
    forward-and-backward time less the forward's, medians of reps; TFLOP/s
    counted as calibrate counts them (the whole s x s square: 4 b h s^2 d
    forward, twice that backward)."""
    H = min(c["heads"], 16)
    G = max(1, c["kv_heads"] * H // c["heads"])
    while H % G:
        G -= 1
    D = c["head_dim"]
    rows = []
    for T in seqs:
        q = torch.randn(1, H, T, D, device=dev, dtype=dtype, requires_grad=True)
        k = torch.randn(1, G, T, D, device=dev, dtype=dtype, requires_grad=True)
        v = torch.randn(1, G, T, D, device=dev, dtype=dtype, requires_grad=True)
        go = torch.randn(1, H, T, D, device=dev, dtype=dtype)

        def fwd():
            with torch.no_grad():
                F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=G != H)

        def both():
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=G != H)
            o.backward(go)

        med = []
        for fn in (fwd, both):
            for _ in range(3):
                fn()
            sync(dev)
            ts = []
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                sync(dev)
                ts.append(time.perf_counter() - t0)
            med.append(statistics.median(ts))
        flops = 4.0 * H * T * T * D
        bwd = max(med[1] - med[0], 1e-9)
        rows.append({"seq": T, "heads": H, "kv_heads": G, "head_dim": D, "fwd_s": med[0],
                     "fwd_tflops": flops / med[0] / 1e12, "bwd_s": bwd, "bwd_tflops": 2 * flops / bwd / 1e12})
        del q, k, v, go
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--mbs", type=int, default=1)
    ap.add_argument("--gbs", type=int, default=8)
    ap.add_argument("--seq", type=int, default=0, help="tokens per sequence (default: the model's)")
    ap.add_argument("--layers", type=int, default=0, help="fewer layers (default: the model's)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16")
    ap.add_argument("--matmul", type=int, default=8192, help="N of the N^3 matmul rate (0: skip)")
    ap.add_argument("--attention", default="", help="sequence lengths of the attention rates, comma-separated (default: none)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.gbs % a.mbs:
        sys.exit("torch_reference: --gbs must be a multiple of --mbs")

    c = load_model(a.model)
    if a.seq:
        c["seq"] = a.seq
    if a.layers:
        c["layers"] = a.layers
    dev = torch.device(a.device)
    torch.manual_seed(a.seed)
    model = Stack(c).to(dev)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    fused = {"fused": True} if dev.type == "cuda" else {}
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=3e-4, betas=(0.9, 0.95), eps=1e-8, **fused)
    n_micro = a.gbs // a.mbs
    gen = torch.Generator(device=dev).manual_seed(a.seed)
    batches = [torch.randint(0, c["vocab"], (a.mbs, c["seq"] + 1), device=dev, generator=gen)
               for _ in range(n_micro)]
    amp = torch.autocast(device_type=dev.type, dtype=torch.bfloat16, enabled=a.dtype == "bf16")

    losses, times = [], []
    for s in range(a.warmup + a.steps):
        sync(dev)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for b in batches:
            with amp:
                loss = model(b[:, :-1], b[:, 1:]) / n_micro
            loss.backward()
            total += loss.detach()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sync(dev)
        dt = time.perf_counter() - t0
        losses.append(float(total))
        if s >= a.warmup:
            times.append(dt)
        print(f"# step {s + 1}: loss {losses[-1]:.5f}, {dt:.4f} s{'' if s >= a.warmup else ' (warm-up)'}",
              file=sys.stderr)

    med = statistics.median(times)
    res = {
        "schema": "pplan.torch_reference/1",
        "model": c["name"], "layers": c["layers"], "seq": c["seq"], "mbs": a.mbs, "gbs": a.gbs,
        "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
        "dtype": a.dtype, "torch": torch.__version__,
        "params": sum(p.numel() for p in model.parameters()),
        "step": {"median_s": med, "min_s": min(times), "max_s": max(times),
                 "tokens_per_s": a.gbs * c["seq"] / med, "steps": a.steps, "warmup": a.warmup},
        "losses": losses,
        "memory_gib_peak": torch.cuda.max_memory_allocated(dev) / 2 ** 30 if dev.type == "cuda" else None,
    }
    del model, opt, batches
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    res["matmul"] = matmul_rate(a.matmul, dev, torch.bfloat16 if a.dtype == "bf16" else torch.float32) \
        if a.matmul > 0 else None
    res["attention"] = attention_rates(c, [int(x) for x in a.attention.split(",") if x],
                                       dev, torch.bfloat16 if a.dtype == "bf16" else torch.float32) \
        if a.attention else None
    text = json.dumps(res, indent=2)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
