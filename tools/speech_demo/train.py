#!/usr/bin/env python3
"""Trains the demo speech model: a small English-only Whisper (WhisperForConditionalGeneration) on
fortunes read by espeak-ng, on a GPU machine, in minutes. Writes a Hugging Face folder that
`wgx transcribe --model OUT` loads, with a sample WAV and the held-out word error rate.

    python3 tools/speech_demo/train.py SENTENCES_DIR OUT_DIR [--minutes 10] [--espeak espeak-ng]

SENTENCES_DIR is tools/speech_demo/sentences.py's output (train.txt, heldout.txt). Each training
step synthesizes its batch: every sentence read by espeak-ng with a random voice, speed and pitch
(22,050 Hz), resampled to 16 kHz (a windowed-sinc filter), white noise added at 15-40 dB SNR, then
transformers' WhisperFeatureExtractor. The tokenizer is a byte-level BPE of 2,000 ids trained on
the sentences, then Whisper's special tokens for an English-only model (<|endoftext|>,
<|startoftranscript|>, <|translate|>, <|transcribe|>, <|startoflm|>, <|startofprev|>,
<|nospeech|>, <|notimestamps|>, 1501 timestamps). The decoder learns
<|startoftranscript|><|notimestamps|> text <|endoftext|>.

Needs torch, transformers, tokenizers, numpy and espeak-ng (Debian's espeak-ng package; with
--espeak a binary elsewhere, e.g. unpacked from the .deb with ESPEAK_DATA_PATH set).
"""
import argparse
import io
import json
import math
import os
import random
import subprocess
import sys
import time
import wave
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

VOICES = ["en-us", "en-gb", "en-us+f2", "en-us+m3", "en-gb+f3", "en-gb+m7", "en-us+f4", "en-gb-scotland",
          "en-gb-x-rp", "en-us+m1"]
HELD_OUT_VOICES = ["en-us", "en-gb+f3"]  # the word error rate is measured on these, at speed 160


def speak(espeak, text, voice, speed, pitch):
    """espeak-ng's WAV of `text` as float samples at 22,050 Hz."""
    wav = subprocess.run([espeak, "-v", voice, "-s", str(speed), "-p", str(pitch), "--stdout", text],
                         check=True, capture_output=True).stdout
    with wave.open(io.BytesIO(wav)) as w:
        rate = w.getframerate()
        x = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32) / 32768
    return x, rate


def resample_to_16k(x, rate):
    """Windowed-sinc resampling: a Kaiser window (beta 8) over 32 input samples each side, the
    cutoff at 0.95 x 8 kHz."""
    if rate == 16000:
        return x
    n_out = int(round(len(x) * 16000 / rate))
    t = np.arange(n_out) * (rate / 16000)
    cutoff = 0.95 * 8000 / rate  # cycles per input sample
    half, beta = 32, 8.0
    base = np.floor(t).astype(np.int64)
    out = np.zeros(n_out, dtype=np.float64)
    for k in range(-half + 1, half + 1):
        idx = base + k
        valid = (idx >= 0) & (idx < len(x))
        d = t - idx
        window = np.i0(beta * np.sqrt(np.clip(1 - (d / half) ** 2, 0, 1))) / np.i0(beta)
        h = 2 * cutoff * np.sinc(2 * cutoff * d) * window
        out[valid] += x[idx[valid]] * h[valid]
    return out.astype(np.float32)


def utterance(espeak, text, rng, voice=None, speed=None, noise=True):
    voice = voice or rng.choice(VOICES)
    speed = speed or rng.randint(130, 200)
    x, rate = speak(espeak, text, voice, speed, rng.randint(30, 70))
    x = resample_to_16k(x, rate)[: 30 * 16000]
    if noise:
        snr = rng.uniform(15, 40)
        power = float(np.mean(x ** 2)) + 1e-12
        x = x + np.random.default_rng(rng.randint(0, 2 ** 31)).standard_normal(x.size).astype(np.float32) * math.sqrt(power / 10 ** (snr / 10))
    return x


def make_tokenizer(lines, vocab_size):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    # Whisper's text starts with a space: train on it that way.
    tok.train_from_iterator([" " + l for l in lines], trainer)
    specials = ["<|endoftext|>", "<|startoftranscript|>", "<|translate|>", "<|transcribe|>", "<|startoflm|>",
                "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"]
    specials += [f"<|{i * 0.02:.2f}|>" for i in range(1501)]
    tok.add_special_tokens(specials)
    return tok


def words(text):
    """Lower case, apostrophes dropped ("it's" is "its"), other punctuation a word break."""
    return "".join(c.lower() if c.isalnum() or c == " " else "" if c == "'" else " " for c in text).split()


def wer(refs, hyps):
    errors = total = 0
    for r, h in zip(refs, hyps):
        r, h = words(r), words(h)
        d = list(range(len(h) + 1))
        for i in range(1, len(r) + 1):
            prev, d[0] = d[0], i
            for j in range(1, len(h) + 1):
                cur = min(d[j] + 1, d[j - 1] + 1, prev + (r[i - 1] != h[j - 1]))
                prev, d[j] = d[j], cur
        errors += d[len(h)]
        total += len(r)
    return errors / max(total, 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sentences", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--espeak", default="espeak-ng")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--heldout", type=int, default=200, help="held-out sentences to measure the WER on")
    args = ap.parse_args()

    import torch
    import transformers
    from transformers import GenerationConfig, WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration

    train = [l.strip() for l in (args.sentences / "train.txt").read_text().splitlines() if l.strip()]
    held = [l.strip() for l in (args.sentences / "heldout.txt").read_text().splitlines() if l.strip()][: args.heldout]
    args.out.mkdir(parents=True, exist_ok=True)
    tok = make_tokenizer(train, args.vocab)
    tok.save(str(args.out / "tokenizer.json"))
    ids = tok.token_to_id
    eot, sot, no_ts = ids("<|endoftext|>"), ids("<|startoftranscript|>"), ids("<|notimestamps|>")
    vocab = tok.get_vocab_size()
    encoded = [tok.encode(" " + s).ids for s in train]

    config = WhisperConfig(
        vocab_size=vocab, num_mel_bins=80, d_model=args.d_model, encoder_layers=args.layers,
        decoder_layers=args.layers, encoder_attention_heads=args.d_model // 64, decoder_attention_heads=args.d_model // 64,
        encoder_ffn_dim=4 * args.d_model, decoder_ffn_dim=4 * args.d_model, max_source_positions=1500,
        max_target_positions=128, pad_token_id=eot, bos_token_id=eot, eos_token_id=eot, decoder_start_token_id=sot,
        begin_suppress_tokens=[ids("Ġ"), eot], suppress_tokens=[], tie_word_embeddings=True)
    model = WhisperForConditionalGeneration(config).cuda()
    fe = WhisperFeatureExtractor(feature_size=80)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters, vocabulary {vocab}", file=sys.stderr)

    rng = random.Random(0)
    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 8)

    def batch_of(indices, seed):
        r = random.Random(seed)
        seeds = [r.randint(0, 2 ** 31) for _ in indices]
        audio = list(pool.map(lambda a: utterance(args.espeak, train[a[0]], random.Random(a[1])), zip(indices, seeds)))
        feats = fe(audio, sampling_rate=16000, return_tensors="pt", device="cuda").input_features.cuda()
        seqs = [[sot, no_ts] + encoded[i][: 120] + [eot] for i in indices]
        n = max(map(len, seqs))
        labels = torch.full((len(seqs), n - 1), -100, dtype=torch.long)
        dec_in = torch.full((len(seqs), n - 1), eot, dtype=torch.long)
        for k, s in enumerate(seqs):
            dec_in[k, : len(s) - 1] = torch.tensor(s[:-1])
            labels[k, : len(s) - 1] = torch.tensor(s[1:])
        return feats, dec_in.cuda(), labels.cuda()

    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.98), weight_decay=0.01)
    warmup, step, t0 = 300, 0, time.time()
    budget = args.minutes * 60
    nxt = pool.submit(batch_of, rng.sample(range(len(train)), args.batch), rng.randint(0, 2 ** 31))
    model.train()
    while time.time() - t0 < budget:
        feats, dec_in, labels = nxt.result()
        nxt = pool.submit(batch_of, rng.sample(range(len(train)), args.batch), rng.randint(0, 2 ** 31))
        frac = (time.time() - t0) / budget
        lr = 1e-3 * min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0)))
        for g in opt.param_groups:
            g["lr"] = lr
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_features=feats, decoder_input_ids=dec_in, labels=labels).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0:
            print(f"step {step}, {time.time() - t0:.0f} s, loss {loss.item():.3f}, lr {lr:.2e}", file=sys.stderr)
        step += 1

    model.eval()
    gen = GenerationConfig(decoder_start_token_id=sot, eos_token_id=eot, pad_token_id=eot, bos_token_id=eot,
                           max_length=128, suppress_tokens=[], begin_suppress_tokens=config.begin_suppress_tokens,
                           no_timestamps_token_id=no_ts, is_multilingual=False, max_initial_timestamp_index=50,
                           prev_sot_token_id=ids("<|startofprev|>"), forced_decoder_ids=None)
    model.generation_config = gen
    model.to(torch.float16).save_pretrained(args.out, safe_serialization=True)
    gen.save_pretrained(args.out)
    fe.save_pretrained(args.out)
    model = WhisperForConditionalGeneration.from_pretrained(args.out, dtype=torch.float32).cuda().eval()

    # Held-out sentences, voices and speed fixed, no noise: greedy transcripts and their WER.
    hyps, refs = [], []
    for voice in HELD_OUT_VOICES:
        audio = [utterance(args.espeak, s, random.Random(0), voice=voice, speed=160, noise=False) for s in held]
        for i in range(0, len(audio), 32):
            feats = fe(audio[i: i + 32], sampling_rate=16000, return_tensors="pt").input_features.cuda()
            with torch.no_grad():
                out = model.generate(feats, max_new_tokens=120, do_sample=False, num_beams=1)
            hyps += tok.decode_batch([[t for t in seq.tolist() if t < eot] for seq in out], skip_special_tokens=True)
        refs += held
    score = wer(refs, hyps)
    sample = utterance(args.espeak, held[0], random.Random(0), voice="en-us", speed=160, noise=False)
    with wave.open(str(args.out / "sample.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(np.clip(np.round(sample * 32767), -32768, 32767).astype(np.int16).tobytes())
    report = {"steps": step, "minutes": args.minutes, "wer": score, "heldout": len(refs),
              "voices": HELD_OUT_VOICES, "sample_text": held[0], "transformers": transformers.__version__,
              "torch": torch.__version__, "examples": [{"ref": r, "hyp": h} for r, h in list(zip(refs, hyps))[:10]]}
    (args.out / "training.json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"held-out WER {score:.3f} over {len(refs)} utterances after {step} steps", file=sys.stderr)


if __name__ == "__main__":
    main()
