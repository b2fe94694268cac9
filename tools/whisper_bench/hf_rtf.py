#!/usr/bin/env python3
"""transformers' time for make_turbo.py's 60 s: two 30 s windows one after the other, features then
generate(language="en", N new tokens, at least N), fp16, eager and SDPA attention, three runs each.

    python3 tools/whisper_bench/hf_rtf.py TURBO_DIR N"""
import sys, time, wave, numpy as np, torch
from transformers import WhisperForConditionalGeneration, WhisperFeatureExtractor
d, n = sys.argv[1], int(sys.argv[2])
with wave.open(d + "/a60.wav") as w:
    a = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32) / 32768
fe = WhisperFeatureExtractor.from_pretrained(d)
for impl in ["eager", "sdpa"]:
    m = WhisperForConditionalGeneration.from_pretrained(d, dtype=torch.float16, attn_implementation=impl).cuda().eval()
    from transformers import GenerationConfig
    m.generation_config = GenerationConfig(
        decoder_start_token_id=50258, eos_token_id=50257, pad_token_id=50257, bos_token_id=50257, max_length=448,
        suppress_tokens=[], begin_suppress_tokens=[220, 50257], no_timestamps_token_id=50364,
        lang_to_id={"<|en|>": 50259}, task_to_id={"transcribe": 50360, "translate": 50359}, is_multilingual=True,
        max_initial_timestamp_index=50, prev_sot_token_id=50362, forced_decoder_ids=None, return_timestamps=False)
    for rep in range(3):
        torch.cuda.synchronize(); t0 = time.perf_counter(); toks = 0
        for s in (0, 480000):
            f = fe(a[s:s + 480000], sampling_rate=16000, return_tensors="pt").input_features.cuda().half()
            with torch.no_grad():
                o = m.generate(f, language="en", task="transcribe", max_new_tokens=n, min_new_tokens=n, do_sample=False,
                               num_beams=1, return_dict_in_generate=True)
            toks += o.sequences.shape[1] - 4
        torch.cuda.synchronize(); dt = time.perf_counter() - t0
        print(f"transformers fp16 {impl}: 60 s in {dt:.3f} s (RTF {dt/60:.4f}), {toks} tokens (rep {rep})")
