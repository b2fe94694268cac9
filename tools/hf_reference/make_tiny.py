#!/usr/bin/env python3
"""Hugging Face reference checkpoints and logits for wgx's parity tests (tests/models/test_hf_parity.cpp).

Writes, under OUT_DIR:

  tiny_llama/   LlamaForCausalLM: GQA (4 query heads over 2 kv heads), head_dim 64, untied lm_head,
                llama3 rope scaling with a short original context (so its three frequency bands all
                occur), float32 weights, one model.safetensors.
  tiny_qwen3/   Qwen3ForCausalLM: head_dim 128 > hidden / heads, q_norm / k_norm, tied embeddings,
                float32 weights saved in small shards (model.safetensors.index.json, as
                save_pretrained writes it).
  full/llama_3.2_1b_shape/, full/qwen3_0.6b_shape/ (unless --skip-full): the real geometries with
                random weights rounded to bf16 and saved as bf16 (several shards), computed in float32.

Each folder holds config.json (+ generation_config.json), the safetensors and reference.json:
  tiny: for each of 3 fixed prompts (token ids) HF's float32 logits at every position, 8 greedy
        continuation tokens and the last-position logits that chose each one;
  full: for each prompt the last position's logits, their largest values, and 8 greedy tokens.

The vocabulary of the tiny models is 2000 ids (the real tokenizers' 128256 / 151936 would make
the embedding alone 65-150 MB); no tokenizer is needed since prompts are token ids. With
--llama-tokenizer / --qwen3-tokenizer DIR the tokenizer files in DIR are copied next to the tiny
checkpoint and its vocabulary is sized to them (the checkpoint then is far larger: not for
committing).

Deterministic: weights come from a seeded torch.Generator on the CPU, tiny models are evaluated on
the CPU, full ones on CUDA when present with TF32 off and eager attention.

Usage: make_tiny.py OUT_DIR [--skip-full] [--seed N] [--llama-tokenizer DIR] [--qwen3-tokenizer DIR]
Then copy OUT_DIR/tiny_llama and OUT_DIR/tiny_qwen3 to tests/models/data/hf/; run the full ones with
WGX_HF_FULL_DIR=OUT_DIR/full test_models --gtest_filter='*HfParity*'.
"""

import argparse
import inspect
import json
import math
import os
import shutil
import sys
import time

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, LlamaConfig, Qwen3Config

# Fixed prompts (token ids < 2000, valid in every vocabulary here). The last is a single token:
# a prefill of one.
PROMPTS = [
    [1, 9, 87, 215, 644, 1023, 1999],
    [17, 17, 17, 301, 5, 5, 1200, 42, 42, 800, 3],
    [1500],
]
GREEDY_STEPS = 8
TINY_VOCAB = 2000

TINY_LLAMA = dict(
    arch="llama", vocab_size=TINY_VOCAB, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
    num_attention_heads=4, num_key_value_heads=2, head_dim=64, rms_norm_eps=1e-5, rope_theta=500000.0,
    rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                      original_max_position_embeddings=256),
    tie_word_embeddings=False, max_position_embeddings=1024, bos_token_id=1, eos_token_id=2,
)
TINY_QWEN3 = dict(
    arch="qwen3", vocab_size=TINY_VOCAB, hidden_size=128, intermediate_size=384, num_hidden_layers=2,
    num_attention_heads=4, num_key_value_heads=2, head_dim=128, rms_norm_eps=1e-6, rope_theta=1000000.0,
    rope_scaling=None, tie_word_embeddings=True, max_position_embeddings=1024, bos_token_id=1, eos_token_id=2,
)
LLAMA_32_1B = dict(
    arch="llama", vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
    num_attention_heads=32, num_key_value_heads=8, head_dim=64, rms_norm_eps=1e-5, rope_theta=500000.0,
    rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                      original_max_position_embeddings=8192),
    tie_word_embeddings=True, max_position_embeddings=131072, bos_token_id=128000, eos_token_id=128001,
)
QWEN3_06B = dict(
    arch="qwen3", vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
    num_attention_heads=16, num_key_value_heads=8, head_dim=128, rms_norm_eps=1e-6, rope_theta=1000000.0,
    rope_scaling=None, tie_word_embeddings=True, max_position_embeddings=40960, bos_token_id=151643,
    eos_token_id=151645,
)


def make_config(spec):
    """A LlamaConfig / Qwen3Config from `spec`, in transformers 5's rope_parameters layout when the
    class has it, else the older rope_theta + rope_scaling."""
    cls = LlamaConfig if spec["arch"] == "llama" else Qwen3Config
    fields = {k: v for k, v in spec.items() if k not in ("arch", "rope_theta", "rope_scaling")}
    fields["hidden_act"] = "silu"
    fields["attention_bias"] = False
    if spec["arch"] == "qwen3":
        fields["use_sliding_window"] = False
    rope = dict(spec["rope_scaling"] or {"rope_type": "default"})
    params = inspect.signature(cls.__init__).parameters
    annotations = getattr(cls, "__annotations__", {})
    if "rope_parameters" in params or "rope_parameters" in annotations:
        rope["rope_theta"] = spec["rope_theta"]
        config = cls(rope_parameters=rope, **fields)
    else:
        config = cls(rope_theta=spec["rope_theta"], rope_scaling=spec["rope_scaling"], **fields)
    try:
        config._attn_implementation = "eager"  # the plain reference path; no fused kernels
    except AttributeError:
        pass  # from_config's attn_implementation argument sets it
    return config


def expected_inv_freq(spec):
    """transformers' default / llama3 inverse frequencies, recomputed to check the config took."""
    d = spec["head_dim"]
    inv = 1.0 / (spec["rope_theta"] ** (np.arange(0, d, 2, dtype=np.float64) / d))
    s = spec["rope_scaling"]
    if not s:
        return inv
    old = s["original_max_position_embeddings"]
    low_wavelen = old / s["low_freq_factor"]
    high_wavelen = old / s["high_freq_factor"]
    wavelen = 2 * math.pi / inv
    scaled = np.where(wavelen > low_wavelen, inv / s["factor"], inv)
    smooth = (old / wavelen - s["low_freq_factor"]) / (s["high_freq_factor"] - s["low_freq_factor"])
    smoothed = (1 - smooth) * scaled / s["factor"] + smooth * scaled
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, smoothed, scaled)


def build_model(spec, seed):
    config = make_config(spec)
    torch.manual_seed(seed)
    try:
        model = AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    except (TypeError, ValueError):
        model = AutoModelForCausalLM.from_config(config)
    model = model.to(torch.float32).eval()
    # HF's own init (normal, std 0.02) gives near-uniform attention and tiny logits; weights at
    # 1/sqrt(fan_in) and norms around 1 make every part of the model show in the logits.
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda np_: np_[0]):
            if name.endswith("norm.weight"):
                p.copy_(torch.rand(p.shape, generator=gen) * 0.6 + 0.7)
            elif name.endswith("embed_tokens.weight"):
                p.copy_(torch.randn(p.shape, generator=gen))
            elif p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(p.shape[1]))
            else:
                raise SystemExit(f"unexpected parameter {name} {tuple(p.shape)}")
    rotary = getattr(getattr(model, "model", None), "rotary_emb", None)
    if rotary is not None and hasattr(rotary, "inv_freq"):
        got = rotary.inv_freq.double().cpu().numpy()
        want = expected_inv_freq(spec)
        if not np.allclose(got, want, rtol=1e-5, atol=0):  # HF computes them in float32
            raise SystemExit(f"the model's rope frequencies differ from the config's: {got[:4]} vs {want[:4]}")
    else:
        print("  note: no rotary_emb.inv_freq to check the rope configuration against", file=sys.stderr)
    return model


@torch.no_grad()
def logits_of(model, ids, device):
    out = model(input_ids=torch.tensor([ids], dtype=torch.long, device=device), use_cache=False)
    return out.logits[0].float().cpu().numpy()


def rounded(values):
    """float32 values as JSON numbers with 9 significant digits (enough to round-trip f32)."""
    return [float(f"{v:.9g}") for v in np.asarray(values, dtype=np.float32).ravel().tolist()]


def top_margin(row):
    top2 = np.partition(row, -2)[-2:]
    return float(abs(top2[1] - top2[0]))


@torch.no_grad()
def reference(model, device, full):
    prompts = []
    for ids in PROMPTS:
        logits = logits_of(model, ids, device)
        entry = {"ids": ids}
        if full:
            last = logits[-1]
            order = np.argsort(-last, kind="stable")[:10]
            entry["last_logits"] = rounded(last)
            entry["top"] = [[int(i), float(f"{last[i]:.9g}")] for i in order]
            entry["max_abs_logit"] = float(np.abs(last).max())
        else:
            entry["logits"] = [rounded(row) for row in logits]
        # Greedy continuation, recomputing the whole sequence each step (no cache involved).
        seq = list(ids)
        greedy, greedy_logits, margins = [], [], []
        row = logits[-1]
        for step in range(GREEDY_STEPS):
            if step > 0:
                row = logits_of(model, seq, device)[-1]
            token = int(np.argmax(row))  # the first of equal maxima, as torch.argmax
            greedy.append(token)
            margins.append(top_margin(row))
            if not full:
                greedy_logits.append(rounded(row))
            seq.append(token)
        entry["greedy"] = greedy
        entry["greedy_margins"] = margins
        if not full:
            entry["greedy_logits"] = greedy_logits
        prompts.append(entry)
    return prompts


def copy_tokenizer(src, dst, spec):
    """Copies the tokenizer files and sizes the vocabulary to cover every id they use."""
    with open(os.path.join(src, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    ids = list(tok["model"]["vocab"].values()) + [t["id"] for t in tok.get("added_tokens", [])]
    spec = dict(spec, vocab_size=max(ids) + 1)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if os.path.exists(os.path.join(src, name)):
            shutil.copy(os.path.join(src, name), os.path.join(dst, name))
    return spec


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))


def make(name, spec, out, seed, full, tokenizer=None, shard=None):
    start = time.time()
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    if tokenizer:
        spec = copy_tokenizer(tokenizer, folder, spec)
    model = build_model(spec, seed)
    if full:
        # bf16 weights, float32 compute: round every weight once, so the bf16 file holds exactly
        # the weights the logits were computed with.
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.to(torch.bfloat16).to(torch.float32))
    device = "cuda" if full and torch.cuda.is_available() else "cpu"
    model.to(device)
    prompts = reference(model, device, full)
    model.to("cpu")
    if full:
        model.to(torch.bfloat16)
    kwargs = {"safe_serialization": True}
    if shard:
        kwargs["max_shard_size"] = shard
    try:
        model.save_pretrained(folder, **kwargs)
    except TypeError:  # transformers versions where safetensors is the only format
        kwargs.pop("safe_serialization")
        model.save_pretrained(folder, **kwargs)
    ref = {
        "name": name,
        "architecture": type(model).__name__,
        "seed": seed,
        "full_geometry": full,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "compute": "float32, eval, eager attention" + (" (weights rounded to bf16)" if full else ""),
        "device": device,
        "prompts": prompts,
    }
    with open(os.path.join(folder, "reference.json"), "w", encoding="utf-8") as f:
        json.dump(ref, f, separators=(",", ":"))
    params = sum(p.numel() for p in model.parameters())
    margin = min(min(p["greedy_margins"]) for p in prompts)
    print(f"{name}: {type(model).__name__}, {params / 1e6:.2f}M parameters, {folder_bytes(folder) / 2**20:.1f} MiB "
          f"on disk, {time.time() - start:.1f} s")
    for p in prompts:
        print(f"  prompt {p['ids']} -> greedy {p['greedy']}")
    warn = "  (under 1e-3: a near tie, greedy parity may be fragile)" if margin < 1e-3 else ""
    print(f"  smallest greedy margin {margin:.4g}{warn}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="output folder")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--skip-full", action="store_true", help="only the tiny models")
    ap.add_argument("--llama-tokenizer", help="folder with Llama 3.x tokenizer.json to size tiny_llama's vocab to")
    ap.add_argument("--qwen3-tokenizer", help="folder with Qwen3 tokenizer.json to size tiny_qwen3's vocab to")
    args = ap.parse_args()

    # Exact float32 on CUDA: no TF32 in matmuls or convolutions.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    torch.use_deterministic_algorithms(True, warn_only=True)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

    print(f"torch {torch.__version__}, transformers {transformers.__version__}, seed {args.seed}")
    make("tiny_llama", TINY_LLAMA, args.out, args.seed, False, args.llama_tokenizer)
    make("tiny_qwen3", TINY_QWEN3, args.out, args.seed + 1, False, args.qwen3_tokenizer, shard="200KB")
    if not args.skip_full:
        full = os.path.join(args.out, "full")
        make("llama_3.2_1b_shape", LLAMA_32_1B, full, args.seed + 2, True, shard="1GB")
        make("qwen3_0.6b_shape", QWEN3_06B, full, args.seed + 3, True, shard="500MB")
    print(f"copy {os.path.join(args.out, 'tiny_llama')} and {os.path.join(args.out, 'tiny_qwen3')} to "
          "tests/models/data/hf/")


if __name__ == "__main__":
    main()
