#!/usr/bin/env python3
"""A random-weight Whisper folder at large-v3-turbo's geometry (128 mel bins, d_model 1280, 32 encoder and
4 decoder layers) and 60 s of audio (a60.wav), for timing `wgx transcribe` against transformers.

    python3 tools/whisper_bench/make_turbo.py OUT_DIR

Needs torch, transformers and numpy; the tokenizer is the tiny test checkpoint's (the text of random
weights means nothing). PERFORMANCE.md, "Whisper, first numbers", has the commands."""
import json, shutil, sys, numpy as np, torch, wave
from transformers import WhisperConfig, WhisperForConditionalGeneration, WhisperFeatureExtractor
out = sys.argv[1]
c = WhisperConfig(vocab_size=51866, num_mel_bins=128, d_model=1280, encoder_layers=32, decoder_layers=4,
                  encoder_attention_heads=20, decoder_attention_heads=20, encoder_ffn_dim=5120, decoder_ffn_dim=5120,
                  max_source_positions=1500, max_target_positions=448, decoder_start_token_id=50258,
                  eos_token_id=50257, pad_token_id=50257, bos_token_id=50257, begin_suppress_tokens=[220, 50257],
                  suppress_tokens=[])
torch.manual_seed(0)
m = WhisperForConditionalGeneration(c).eval()
g = m.generation_config
for k, v in dict(lang_to_id={"<|en|>": 50259}, task_to_id={"transcribe": 50360, "translate": 50359},
                 no_timestamps_token_id=50364, is_multilingual=True, decoder_start_token_id=50258,
                 eos_token_id=50257, suppress_tokens=[], begin_suppress_tokens=[220, 50257],
                 max_initial_timestamp_index=50, prev_sot_token_id=50362).items():
    setattr(g, k, v)
m.save_pretrained(out)
WhisperFeatureExtractor(feature_size=128).save_pretrained(out)
shutil.copy("tests/models/data/hf/tiny_whisper/tokenizer.json", out)
rng = np.random.default_rng(0)
t = np.arange(60 * 16000) / 16000
x = 0.2 * np.sin(2 * np.pi * (150 + 50 * np.sin(t)) * t) + 0.02 * rng.standard_normal(t.size)
with wave.open(out + "/a60.wav", "wb") as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
    w.writeframes(np.round(x * 32767).astype(np.int16).tobytes())
print("saved", out)
