#!/usr/bin/env python3
"""Tiny random Whisper checkpoints and transformers' outputs for wgx's speech parity tests.

    python3 tools/hf_reference/make_tiny_whisper.py OUT_DIR

Writes OUT_DIR/tiny_whisper/ (80 mel bins, float32 weights, 5 languages) and
OUT_DIR/tiny_whisper_v3/ (128 mel bins as large-v3, float16 weights, 3 languages), each a
Hugging Face folder as save_pretrained writes it (config.json, generation_config.json,
model.safetensors, preprocessor_config.json) plus:

  tokenizer.json  a byte-level BPE trained here on a few sentences, then Whisper's special tokens
                  in Whisper's order: <|endoftext|>, <|startoftranscript|>, the languages,
                  <|translate|>, <|transcribe|>, <|startoflm|>, <|startofprev|>, <|nospeech|>,
                  <|notimestamps|>, and the 1501 timestamps <|0.00|> .. <|30.00|>
  sample.wav      4.5 s of a synthetic voiced sound (16 kHz, 16-bit mono, seeded)
  features.f32    transformers' WhisperFeatureExtractor output for sample.wav: float32 little-endian
                  [n_mels, 3000]
  encoder.f32     the encoder's last_hidden_state rows 0..255: float32 [256, d_model]
  reference.json  the teacher-forced decoder logits of a fixed prefix at every position, detected
                  language, greedy tokens on the full forward pass (forward_greedy: the tests'
                  reference; transcribe in English, in the detected language, translate from German,
                  and with timestamps) and generate()'s (without and with timestamps)

Weights are drawn at 1/sqrt(fan_in) (token embeddings N(0, 0.25), positions N(0, 0.5), norms U(0.7, 1.3), biases U(-0.1, 0.1))
instead of HF's std 0.02, which makes attention near-uniform and hides mistakes. Needs torch,
transformers, tokenizers and numpy; no network; seconds on a CPU.
"""
import argparse
import json
import math
import struct
import sys
import wave
from pathlib import Path

import numpy as np

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "A journey of a thousand miles begins with a single step.",
    "You will meet a tall dark stranger.",
    "Never trust a computer you cannot throw out a window.",
    "It is a truth universally acknowledged that time flies.",
    "Speech recognition turns sound into text, one word at a time.",
]

SPECS = {
    "tiny_whisper": dict(num_mel_bins=80, d_model=64, encoder_layers=2, decoder_layers=2, heads=4, ffn=128,
                         max_target_positions=64, languages=["en", "de", "fr", "es", "ja"], dtype="float32",
                         seed=1),
    "tiny_whisper_v3": dict(num_mel_bins=128, d_model=96, encoder_layers=1, decoder_layers=2, heads=3, ffn=160,
                            max_target_positions=48, languages=["en", "zh", "de"], dtype="float16", seed=2),
}


def make_tokenizer(languages):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=[])
    tok.train_from_iterator(SENTENCES * 4, trainer)
    specials = ["<|endoftext|>", "<|startoftranscript|>"] + [f"<|{l}|>" for l in languages]
    specials += ["<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>",
                 "<|notimestamps|>"]
    specials += [f"<|{i * 0.02:.2f}|>" for i in range(1501)]
    tok.add_special_tokens(specials)
    return tok


def make_audio(seed, seconds=4.5, rate=16000):
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    f0 = 120 + 40 * np.sin(2 * np.pi * 0.7 * t)  # a gliding pitch
    phase = 2 * np.pi * np.cumsum(f0) / rate
    voiced = sum(np.sin(k * phase) / k for k in range(1, 12))
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 2.3 * t) ** 2
    x = 0.25 * voiced * envelope + 0.02 * rng.standard_normal(t.size)
    x[: rate // 4] *= np.linspace(0, 1, rate // 4)
    return np.clip(np.round(x * 32767), -32768, 32767).astype(np.int16)


def write_wav(path, pcm, rate=16000):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())


def randomize(model, seed):
    import torch

    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "layer_norm" in name and name.endswith("weight"):
                p.copy_(torch.rand(p.shape, generator=g) * 0.6 + 0.7)
            elif name.endswith("bias"):
                p.copy_(torch.rand(p.shape, generator=g) * 0.2 - 0.1)
            elif "embed_tokens" in name:
                # Small, so that the tied lm_head does not just repeat the last token.
                p.copy_(torch.randn(p.shape, generator=g) * 0.25)
            elif "embed_positions" in name:
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
            else:
                fan_in = p.shape[1] * (p.shape[2] if p.dim() == 3 else 1)
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(fan_in))


def build(name, spec, out):
    import torch
    import transformers
    from transformers import GenerationConfig, WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration
    from transformers.generation.logits_process import WhisperTimeStampLogitsProcessor

    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    langs = spec["languages"]
    tok = make_tokenizer(langs)
    tok.save(str(folder / "tokenizer.json"))
    vocab = tok.get_vocab_size()
    ids = lambda s: tok.token_to_id(s)
    eot, sot = ids("<|endoftext|>"), ids("<|startoftranscript|>")
    no_ts = ids("<|notimestamps|>")

    config = WhisperConfig(
        vocab_size=vocab, num_mel_bins=spec["num_mel_bins"], d_model=spec["d_model"],
        encoder_layers=spec["encoder_layers"], decoder_layers=spec["decoder_layers"],
        encoder_attention_heads=spec["heads"], decoder_attention_heads=spec["heads"],
        encoder_ffn_dim=spec["ffn"], decoder_ffn_dim=spec["ffn"], max_source_positions=1500,
        max_target_positions=spec["max_target_positions"], pad_token_id=eot, bos_token_id=eot, eos_token_id=eot,
        decoder_start_token_id=sot, begin_suppress_tokens=[ids("Ġ") or 220, eot], suppress_tokens=[],
        tie_word_embeddings=True)
    torch.manual_seed(spec["seed"])
    model = WhisperForConditionalGeneration(config).eval()
    randomize(model, spec["seed"])
    dtype = getattr(torch, spec["dtype"])
    model.to(dtype)
    # Symbols that are not speech, a few ids of the trained vocabulary: suppressed at every step.
    suppress = sorted({ids(s) for s in ["!", '"', "#", "(", ")", "*"] if ids(s) is not None})
    gen = GenerationConfig(
        decoder_start_token_id=sot, eos_token_id=eot, pad_token_id=eot, bos_token_id=eot,
        max_length=spec["max_target_positions"], suppress_tokens=suppress,
        begin_suppress_tokens=config.begin_suppress_tokens, no_timestamps_token_id=no_ts,
        lang_to_id={f"<|{l}|>": ids(f"<|{l}|>") for l in langs},
        task_to_id={"transcribe": ids("<|transcribe|>"), "translate": ids("<|translate|>")},
        is_multilingual=True, max_initial_timestamp_index=50, prev_sot_token_id=ids("<|startofprev|>"),
        forced_decoder_ids=None, return_timestamps=False)
    model.generation_config = gen
    model.save_pretrained(folder, safe_serialization=True)
    gen.save_pretrained(folder)
    fe = WhisperFeatureExtractor(feature_size=spec["num_mel_bins"])
    fe.save_pretrained(folder)

    pcm = make_audio(spec["seed"])
    write_wav(folder / "sample.wav", pcm)
    audio = pcm.astype(np.float32) / 32768.0
    feats = fe(audio, sampling_rate=16000, return_tensors="pt").input_features  # [1, n_mels, 3000]
    feats.numpy()[0].astype("<f4").tofile(folder / "features.f32")

    # The reference runs in float32 whatever the file's dtype (as wgx computes).
    model = WhisperForConditionalGeneration.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    with torch.no_grad():
        enc = model.model.encoder(feats).last_hidden_state
        enc[0, :256].numpy().astype("<f4").tofile(folder / "encoder.f32")
        rng = np.random.default_rng(spec["seed"])
        text = [int(v) for v in rng.integers(1, eot, size=8)]
        prefix = [sot, ids("<|en|>"), ids("<|transcribe|>"), no_ts] + text
        logits = model(encoder_outputs=(enc,), decoder_input_ids=torch.tensor([prefix])).logits[0]
        lang_logits = model(encoder_outputs=(enc,), decoder_input_ids=torch.tensor([[sot]])).logits[0, -1]
        lang_ids = [ids(f"<|{l}|>") for l in langs]
        detected = langs[int(torch.argmax(lang_logits[lang_ids]))]
        # generate() with return_dict_in_generate: sequences[0] is the decoder prompt (start, language,
        # task[, no timestamps]) then the new tokens up to and with the end token.
        def greedy_run(**kw):
            out = model.generate(feats, task="transcribe", do_sample=False, num_beams=1, return_dict_in_generate=True,
                                 **kw)
            seq = out["sequences"] if isinstance(out, dict) else out.sequences  # a dict with timestamps
            return [int(v) for v in seq[0]]
        greedy = {"plain": greedy_run(language="en", max_new_tokens=24),
                  "timestamps": greedy_run(language="en", return_timestamps=True, max_new_tokens=24)}
        detected_gen = greedy_run(max_new_tokens=8)

        # Greedy decoding on the model's full forward pass (no cache): the argmax of each step's
        # last logits after suppress_tokens (and begin_suppress_tokens at the first step). This
        # is the reference wgx's tests use: with transformers 5.17, generate() above departs from
        # it after a few tokens on these checkpoints, its step scores differing from the forward
        # pass's logits for the same tokens.
        # With timestamps, transformers' own WhisperTimeStampLogitsProcessor comes first, as in
        # generate(return_timestamps=True).
        def forward_greedy(prompt, n, timestamps=False):
            seq = list(prompt)
            rules = WhisperTimeStampLogitsProcessor(gen, begin_index=len(prompt)) if timestamps else None
            for i in range(n):
                lg = model(encoder_outputs=(enc,), decoder_input_ids=torch.tensor([seq])).logits[0, -1].clone()
                if rules is not None:
                    lg = rules(torch.tensor([seq]), lg[None].clone())[0]
                lg[gen.suppress_tokens] = -float("inf")
                if i == 0:
                    lg[gen.begin_suppress_tokens] = -float("inf")
                seq.append(int(torch.argmax(lg)))
                if seq[-1] == eot:
                    break
            return seq
        task = ids("<|transcribe|>")
        forward = {"plain": forward_greedy([sot, ids("<|en|>"), task, no_ts], 24),
                   "detected": forward_greedy([sot, ids(f"<|{detected}|>"), task, no_ts], 8),
                   "translate": forward_greedy([sot, ids("<|de|>"), ids("<|translate|>"), no_ts], 16),
                   "timestamps": forward_greedy([sot, ids("<|en|>"), task], 24, timestamps=True)}

    ref = {
        "about": "tools/hf_reference/make_tiny_whisper.py: transformers' float32 outputs for this folder",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "vocab_size": vocab,
        "features_shape": list(feats.shape[1:]),
        "encoder_rows": 256,
        "prefix": prefix,
        "logits": [[round(float(v), 6) for v in row] for row in logits],
        "language_logits": [round(float(lang_logits[i]), 6) for i in lang_ids],
        "detected_language": detected,
        "generate_detect_language": detected_gen,
        "greedy": greedy,
        "greedy_text": {k: tok.decode([i for i in v if i < eot], skip_special_tokens=True) for k, v in greedy.items()},
        "forward_greedy": forward,
        "forward_greedy_text": {k: tok.decode([i for i in v if i < eot], skip_special_tokens=True)
                                for k, v in forward.items()},
    }
    (folder / "reference.json").write_text(json.dumps(ref, indent=1) + "\n")
    print(f"{name}: vocab {vocab}, detected {detected}, greedy {greedy}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    for name, spec in SPECS.items():
        build(name, spec, args.out)


if __name__ == "__main__":
    main()
