#!/usr/bin/env python3
"""transformers' transcripts of WAV files by a Whisper folder, greedy and with beam search, for
wgx's tests (tests/models/data/speech_demo/beams.json):

    python3 tools/speech_demo/beam_reference.py models/speech OUT.json 2,4 WAV...

For each WAV and each beam count N (1 greedy, then the list): generate(num_beams=N,
max_new_tokens=64) in f32, the tokens after the decoder prompt (up to and with <|endoftext|>)
and their text. Needs torch, transformers and numpy."""
import json
import sys
import wave

import numpy as np
import torch
from transformers import WhisperFeatureExtractor, WhisperForConditionalGeneration
from tokenizers import Tokenizer

model_dir, out, beam_list, wavs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
model = WhisperForConditionalGeneration.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
fe = WhisperFeatureExtractor.from_pretrained(model_dir)
tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
eot = model.generation_config.eos_token_id
no_ts = model.generation_config.no_timestamps_token_id
counts = [1] + [int(b) for b in beam_list.split(",")]
result = {"about": "transformers' generate(num_beams=N, max_new_tokens=64) of each file with " + model_dir +
          " in f32 (tools/speech_demo/beam_reference.py): the tokens after the decoder prompt, with "
          "<|endoftext|>, and their text", "files": wavs, "beams": {}}
for n in counts:
    rows = []
    for path in wavs:
        with wave.open(path) as w:
            assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2, path
            audio = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768
        feats = fe(audio, sampling_rate=16000, return_tensors="pt").input_features
        with torch.no_grad():
            out_ = model.generate(feats, num_beams=n, do_sample=False, max_new_tokens=64, return_dict_in_generate=True)
        seq = [int(v) for v in out_.sequences[0]]
        start = seq.index(no_ts) + 1 if no_ts in seq else 1
        gen = seq[start:]
        rows.append({"tokens": gen, "text": tok.decode([i for i in gen if i < eot], skip_special_tokens=True),
                     "prompt": seq[:start]})
        print(n, path, repr(rows[-1]["text"]), file=sys.stderr)
    result["beams"][str(n)] = rows
with open(out, "w") as f:
    json.dump(result, f, indent=1)
