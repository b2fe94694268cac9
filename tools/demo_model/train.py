"""Trains wgx's embedded demo model: a small Llama-architecture language model with its own
byte-level BPE tokenizer, on the fortunes text (prepare_text.py), on one GPU in a few minutes.
Writes a Hugging Face model folder (config.json, model.safetensors, tokenizer.json,
tokenizer_config.json, generation_config.json) and prints samples.

    python3 tools/demo_model/train.py TEXT OUT_DIR [--minutes 3] [--seed 1]

Needs torch, transformers and tokenizers. Deterministic given the seed up to GPU nondeterminism.
"""
import argparse
import json
import math
import os
import time

import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import LlamaConfig, LlamaForCausalLM

# The geometry: ~3.7M parameters; GQA (4 heads over 2 KV heads) and head_dim 64 like Llama 3.
GEOMETRY = dict(hidden_size=256, intermediate_size=768, num_hidden_layers=4, num_attention_heads=4,
                num_key_value_heads=2, head_dim=64, max_position_embeddings=1024, rope_theta=10000.0,
                rms_norm_eps=1e-5, tie_word_embeddings=True)
VOCAB = 2048
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Llama 3's pre-tokenizer split (contractions, letters, 1-3 digit numbers, punctuation, spaces).
SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
         r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SEQ = 256
BATCH = 64


def train_tokenizer(text_path: str) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    # Like Llama 3: split with its regex, then map bytes to printable characters.
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train([text_path], trainer)
    return tok


@torch.no_grad()
def validation_loss(model, val_data) -> float:
    """Mean loss over every full window of the held-out tokens."""
    model.eval()
    windows = val_data[: val_data.numel() // SEQ * SEQ].view(-1, SEQ)
    losses = []
    for i in range(0, windows.shape[0], BATCH):
        x = windows[i:i + BATCH]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            losses.append(model(input_ids=x, labels=x).loss.item() * x.shape[0])
    model.train()
    return sum(losses) / windows.shape[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("text")
    ap.add_argument("out")
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    dev = "cuda"
    os.makedirs(args.out, exist_ok=True)

    tok = train_tokenizer(args.text)
    eos = tok.token_to_id("<|endoftext|>")
    paragraphs = open(args.text, encoding="utf-8").read().split("\n\n")
    ids = []
    for p in paragraphs:  # every fortune ends with <|endoftext|>: the model learns to stop
        ids.extend(tok.encode(p).ids)
        ids.append(eos)
    data = torch.tensor(ids, dtype=torch.long, device=dev)
    n_val = len(ids) // 50
    train_data, val_data = data[:-n_val], data[-n_val:]
    print(f"tokens: {len(ids)} ({len(open(args.text, encoding='utf-8').read()) / len(ids):.2f} chars/token)")

    config = LlamaConfig(vocab_size=tok.get_vocab_size(), bos_token_id=eos, eos_token_id=eos, **GEOMETRY)
    model = LlamaForCausalLM(config).to(dev)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"parameters: {n_params / 1e6:.2f} M")
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, betas=(0.9, 0.95), weight_decay=0.1)

    def batch(src):
        starts = torch.randint(0, src.numel() - SEQ - 1, (BATCH,), device=dev)
        x = torch.stack([src[s:s + SEQ] for s in starts.tolist()])
        return x

    start = time.time()
    budget = args.minutes * 60
    step = 0
    best = (float("inf"), 0, None)
    while time.time() - start < budget:
        frac = (time.time() - start) / budget  # cosine schedule over the time budget
        for g in opt.param_groups:
            g["lr"] = 2e-3 * (min(1.0, step / 100) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac))))
        x = batch(train_data)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0:
            val = validation_loss(model, val_data)
            print(f"step {step:5d}  {time.time() - start:6.1f}s  train {loss.item():.3f}  val {val:.3f}", flush=True)
            # The corpus is small (under 1M tokens): keep the weights with the best held-out loss
            # and stop once it has not improved for a while, rather than memorize the text.
            if val < best[0]:
                best = (val, step, {k: v.detach().clone() for k, v in model.state_dict().items()})
            elif step - best[1] >= 1000:
                break
        step += 1
    print(f"best held-out loss {best[0]:.3f} at step {best[1]}")
    model.load_state_dict(best[2])

    model.eval()
    model.to(torch.bfloat16).save_pretrained(args.out, safe_serialization=True)
    tok.save(os.path.join(args.out, "tokenizer.json"))
    with open(os.path.join(args.out, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|endoftext|>",
                   "bos_token": "<|endoftext|>", "model_max_length": GEOMETRY["max_position_embeddings"],
                   "clean_up_tokenization_spaces": False}, f, indent=2)
    with open(os.path.join(args.out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": eos, "eos_token_id": eos, "do_sample": True, "temperature": 0.8,
                   "top_p": 0.95}, f, indent=2)
    model.float()
    for prompt in ["The meaning of life is", "Computers are", "A wise man once said"]:
        x = torch.tensor([tok.encode(prompt).ids], device=dev)
        out = model.generate(x, max_new_tokens=40, do_sample=False, eos_token_id=eos, pad_token_id=eos)
        print(repr(tok.decode(out[0].tolist())))
    print(f"trained {step} steps in {time.time() - start:.0f}s; saved to {args.out}")


if __name__ == "__main__":
    main()
