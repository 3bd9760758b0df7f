#!/usr/bin/env python3
"""Validate what-if calibration files (schema "gpuscope-calibration/1").

Usage: bench/whatif/check_calibration.py [--strict] FILE...

Prints one line per problem, "FILE: message", and exits 1 when a file has one.
Checked: the required top-level keys and their types, each curve's points
([x, ratio, lo, hi], all finite and > 0, sorted by x, lo <= ratio <= hi), each
cost's value/lo/hi/unit/what.  A curve, cost or peak id of the lists below that
is missing (skipped or failed on the GPU), fewer than MIN_POINTS points, an id not
in the lists: warnings ("FILE: warning: ..."), problems with --strict.
Runs under plain python3; needs no torch (calibrate.py imports the lists).
"""
import json
import math
import re
import sys

SCHEMA = "gpuscope-calibration/1"

# The one list of curve ids: id -> one line of what the ratio means (new / base).
CURVES = {
    "gemm_fp32_to_bf16": "GEMM kernels, fp32 (TF32 off) -> bf16 autocast; nn.Linear fwd+bwd",
    "gemm_tf32_to_bf16": "GEMM kernels, fp32 with TF32 -> bf16 autocast; nn.Linear fwd+bwd",
    "gemm_fp32_to_tf32": "GEMM kernels, fp32 (TF32 off) -> fp32 with TF32; nn.Linear fwd+bwd",
    "conv_fp32_to_bf16": "conv kernels, NCHW fp32 (cuDNN TF32) -> NCHW bf16 autocast; nn.Conv2d fwd+bwd",
    "conv_nchw_to_nhwc_fp32": "conv kernels, NCHW -> channels_last, fp32; nn.Conv2d fwd+bwd",
    "conv_nchw_to_nhwc_bf16": "conv kernels, NCHW -> channels_last, bf16 autocast; nn.Conv2d fwd+bwd",
    "batchnorm_nchw_to_nhwc": "batchnorm kernels, NCHW -> channels_last, fp32; BatchNorm2d fwd+bwd",
    "groupnorm_nchw_to_nhwc": "groupnorm kernels, NCHW -> channels_last, fp32; GroupNorm(32) fwd+bwd",
    "batchnorm_fp32_to_bf16": "batchnorm kernels, fp32 -> bf16 input under autocast; BatchNorm2d fwd+bwd",
    "groupnorm_fp32_to_bf16": "groupnorm kernels, fp32 -> bf16 input under autocast; GroupNorm(32) fwd+bwd",
    "layernorm_fp32_to_bf16": "layernorm kernels, fp32 -> bf16 input under autocast; LayerNorm fwd+bwd",
    "elementwise_fp32_to_bf16": "ATen elementwise kernels, fp32 -> bf16 tensors; add/mul/gelu/relu fwd+bwd",
    "rnn_fp32_to_bf16": "all kernels of a 2-layer nn.LSTM fwd+bwd, fp32 -> bf16 autocast",
    "chain_fusion": "x = chain length k; one torch.compile'd kernel / k eager elementwise kernels",
    "optimizer_fused": "x = parameters (millions); AdamW fused=True step / foreach step, GPU time",
}

# The one list of cost ids: id -> (unit, one line of what it is).
COSTS = {
    "eager_op_cpu_us": ("us", "CPU time of one eager op (torch.add of tiny CUDA tensors)"),
    "eager_linear_cpu_us": ("us", "CPU time of a tiny nn.Linear forward (grad enabled)"),
    "autocast_op_cpu_us": ("us", "extra CPU time of a tiny nn.Linear forward under bf16 autocast"),
    "launch_api_us": ("us", "CPU time of the cheapest eager launch (in-place add_ on a tiny tensor)"),
    "cast_kernel_us_per_mb": ("us", "fp32->bf16 cast kernel time per MB of fp32 input (slope)"),
    "cast_kernel_floor_us": ("us", "fp32->bf16 cast kernel time on a tiny tensor"),
    "graph_launch_cpu_us": ("us", "CPU time of CUDAGraph.replay() for a 1-node graph"),
    "graph_launch_cpu_us_per_node": ("us", "extra replay() CPU time per node (200-node vs 1-node graph)"),
    "graph_node_gpu_us": ("us", "GPU time per node of a replayed graph of 1000 tiny kernels"),
    "eager_kernel_gap_us": ("us", "GPU time per tiny kernel launched eagerly with the CPU far ahead"),
    "compiled_kernel_cpu_us": ("us", "CPU time per kernel launched by a torch.compile'd function"),
    "compiled_call_cpu_us": ("us", "fixed CPU cost of calling a torch.compile'd function"),
    "pinned_h2d_gbps": ("GB/s", "host-to-device copy bandwidth from pinned memory (64 MB)"),
    "pageable_h2d_gbps": ("GB/s", "host-to-device copy bandwidth from pageable memory (64 MB)"),
    "dataloader_next_us": ("us", "next() on a 4-worker DataLoader whose workers keep up"),
    "foreach_adamw_kernels_per_param_tensor": ("kernels", "kernels per parameter tensor, AdamW foreach step"),
    "fused_adamw_kernels_per_param_tensor": ("kernels", "kernels per parameter tensor, AdamW fused step"),
    "fused_to_foreach_launches": ("ratio", "kernel launches of a fused AdamW step / of a foreach AdamW step"),
    "conv_transpose_share_nchw_fp32": ("fraction", "NCHW<->NHWC transpose kernel time / conv kernel time, NCHW fp32"),
    "conv_transpose_share_nchw_bf16": ("fraction", "NCHW<->NHWC transpose kernel time / conv kernel time, NCHW bf16"),
    "conv_transpose_share_nhwc_fp32": ("fraction", "transpose kernel time / conv kernel time, channels_last fp32"),
    "conv_transpose_share_nhwc_bf16": ("fraction", "transpose kernel time / conv kernel time, channels_last bf16"),
}

PEAKS = ("fp32_simt_tflops", "tf32_tflops", "bf16_tflops", "dram_gbps", "pinned_h2d_gbps", "pageable_h2d_gbps")

MIN_POINTS = 5          # fewer is a warning (the analyzer interpolates in log x)
REQUIRED = {"schema": str, "device": str, "match": str, "torch": str, "date": str, "command": str,
            "peaks": dict, "curves": dict, "costs": dict, "errors": dict, "skipped": list}


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def validate(doc, strict=False):
    """Return (problems, warnings): lists of messages for one parsed file."""
    probs, warns = [], []
    if not isinstance(doc, dict):
        return ["top level is not an object"], warns
    for key, typ in REQUIRED.items():
        if key not in doc:
            probs.append(f"missing key '{key}'")
        elif not isinstance(doc[key], typ):
            probs.append(f"key '{key}' is not a {typ.__name__}")
    if doc.get("schema") not in (None, SCHEMA) and isinstance(doc.get("schema"), str):
        probs.append(f"schema is '{doc['schema']}', expected '{SCHEMA}'")
    for key in ("sm_count", "cuda"):
        if key not in doc:
            probs.append(f"missing key '{key}'")
    if "sm_count" in doc and doc["sm_count"] is not None and not isinstance(doc["sm_count"], int):
        probs.append("sm_count is not an integer or null")
    if isinstance(doc.get("date"), str) and not re.fullmatch(r"\d{4}-\d\d-\d\d", doc["date"]):
        probs.append(f"date '{doc['date']}' is not YYYY-MM-DD")

    peaks = doc.get("peaks") if isinstance(doc.get("peaks"), dict) else {}
    for k, v in peaks.items():
        if v is not None and (not _num(v) or v <= 0):
            probs.append(f"peaks.{k} = {v!r} is not a positive number")
    for k in PEAKS:
        if peaks.get(k) is None:
            warns.append(f"peaks.{k} missing")

    curves = doc.get("curves") if isinstance(doc.get("curves"), dict) else {}
    for cid, c in curves.items():
        where = f"curves.{cid}"
        if cid not in CURVES:
            warns.append(f"{where}: unknown curve id")
        if not isinstance(c, dict):
            probs.append(f"{where} is not an object")
            continue
        if not isinstance(c.get("what"), str) or not c.get("what"):
            probs.append(f"{where}.what missing or empty")
        pts = c.get("points")
        if not isinstance(pts, list):
            probs.append(f"{where}.points missing or not a list")
            continue
        if len(pts) < MIN_POINTS:
            warns.append(f"{where}: {len(pts)} point(s), fewer than {MIN_POINTS}")
        prev = None
        for i, p in enumerate(pts):
            if not isinstance(p, list) or len(p) != 4 or not all(_num(v) for v in p):
                probs.append(f"{where}.points[{i}] = {p!r} is not [x, ratio, lo, hi] of finite numbers")
                prev = None
                continue
            x, ratio, lo, hi = p
            if min(p) <= 0:
                probs.append(f"{where}.points[{i}] = {p!r} has a value <= 0")
            tol = 1e-9 * max(abs(ratio), 1.0)
            if not (lo - tol <= ratio <= hi + tol):
                probs.append(f"{where}.points[{i}] = {p!r}: not lo <= ratio <= hi")
            if prev is not None:
                if x < prev:
                    probs.append(f"{where}.points[{i}]: x = {x} after x = {prev}, not sorted by x")
                elif x == prev:
                    warns.append(f"{where}.points[{i}]: x = {x} repeated")
            prev = x
    for cid in CURVES:
        if cid not in curves:
            warns.append(f"curve '{cid}' missing")

    costs = doc.get("costs") if isinstance(doc.get("costs"), dict) else {}
    for cid, c in costs.items():
        where = f"costs.{cid}"
        if cid not in COSTS:
            warns.append(f"{where}: unknown cost id")
        if not isinstance(c, dict):
            probs.append(f"{where} is not an object")
            continue
        vals = [c.get(k) for k in ("value", "lo", "hi")]
        if not all(_num(v) for v in vals):
            probs.append(f"{where}: value/lo/hi = {vals!r} not all finite numbers")
        else:
            v, lo, hi = vals
            tol = 1e-9 * max(abs(v), 1.0)
            if not (lo - tol <= v <= hi + tol):
                probs.append(f"{where}: not lo <= value <= hi ({lo}, {v}, {hi})")
        for k in ("unit", "what"):
            if not isinstance(c.get(k), str) or not c.get(k):
                probs.append(f"{where}.{k} missing or empty")
        if cid in COSTS and isinstance(c.get("unit"), str) and c["unit"] != COSTS[cid][0]:
            probs.append(f"{where}.unit is '{c['unit']}', expected '{COSTS[cid][0]}'")
    for cid in COSTS:
        if cid not in costs:
            warns.append(f"cost '{cid}' missing")

    errs = doc.get("errors") if isinstance(doc.get("errors"), dict) else {}
    for k, v in errs.items():
        if not isinstance(v, str):
            probs.append(f"errors.{k} is not a string")
    sk = doc.get("skipped") if isinstance(doc.get("skipped"), list) else []
    if not all(isinstance(s, str) for s in sk):
        probs.append("skipped holds a non-string")
    if strict:
        probs.extend(warns)
        warns = []
    return probs, warns


def main(argv):
    strict = "--strict" in argv
    files = [a for a in argv if a != "--strict"]
    if not files or any(a.startswith("-") for a in files):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    bad = False
    for f in files:
        try:
            with open(f) as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as e:
            print(f"{f}: cannot read: {e}")
            bad = True
            continue
        probs, warns = validate(doc, strict)
        for w in warns:
            print(f"{f}: warning: {w}")
        for p in probs:
            print(f"{f}: {p}")
        bad = bad or bool(probs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
