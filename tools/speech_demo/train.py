#!/usr/bin/env python3
"""Trains the demo speech model: a small English-only Whisper (WhisperForConditionalGeneration) on
fortunes read by espeak-ng, on one GPU, in minutes. Writes a Hugging Face folder that
`wgx transcribe --model OUT` loads, and an evaluation folder of held-out WAVs with their texts.

    python3 tools/speech_demo/train.py SENTENCES_DIR OUT_DIR EVAL_DIR [--minutes 7]

SENTENCES_DIR is tools/speech_demo/sentences.py's output (train.txt, heldout.txt).

Audio: worker processes read training sentences with espeak-ng (a random English voice and
variant, speed 120-210 words a minute, pitch 20-80) at 22,050 Hz and resample them to 16 kHz
(band-limited, through the FFT). A ring of recent clips keeps the GPU busy when synthesis falls
behind: each step takes the fresh clips and fills the batch from the ring. On the GPU each clip
gets a random gain, up to 1 s of leading silence and white noise at 10-40 dB SNR (a fifth of
them none); then the log-mel spectrogram exactly as transformers' WhisperFeatureExtractor
(checked against it at the start). An auxiliary CTC loss on the encoder's output (weight 0.3,
its head not saved) speeds up learning the alignment.

Text: a byte-level BPE of 1,000 ids trained on the training sentences, then Whisper's special
tokens for an English-only model (<|endoftext|>, <|startoftranscript|>, <|translate|>,
<|transcribe|>, <|startoflm|>, <|startofprev|>, <|nospeech|>, <|notimestamps|> and the 1,501
timestamps). The decoder learns <|startoftranscript|><|notimestamps|> text <|endoftext|>.

Evaluation: the held-out sentences read by two voices at speed 160 without noise, decoded
greedily; the word error rate (lower case, punctuation dropped) goes to OUT_DIR/training.json.
EVAL_DIR gets the same audio as WAVs and refs.json, for `wgx transcribe` to be scored on.

Needs torch, transformers, tokenizers, numpy and espeak-ng (Debian's espeak-ng package; elsewhere
--espeak names the binary, with ESPEAK_DATA_PATH set where its data is not installed).
"""
import argparse
import io
import json
import math
import multiprocessing as mp
import os
import random
import subprocess
import sys
import time
import wave
from collections import deque
from pathlib import Path

import numpy as np

BASES = ["en-us", "en-gb", "en-gb-scotland", "en-gb-x-gbclan", "en-gb-x-rp", "en-gb-x-gbcwmd", "en-029",
         "en-us-nyc"]
VARIANTS = [""] + [f"+f{i}" for i in range(1, 6)] + [f"+m{i}" for i in range(1, 8)]
HELD_OUT_VOICES = ["en-us", "en-gb+f3"]  # the word error rate is measured on these, at speed 160
RATE = 16000
WINDOW = 30 * RATE


def speak(espeak, text, voice, speed, pitch):
    """espeak-ng's reading of `text` as float samples, and their rate (22,050 Hz)."""
    wav = subprocess.run([espeak, "-v", voice, "-s", str(speed), "-p", str(pitch), "--stdout"],
                         input=text.encode(), check=True, capture_output=True).stdout
    with wave.open(io.BytesIO(wav)) as w:  # a piped header has no length: read to the end
        rate = w.getframerate()
        x = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32) / 32768
    return x, rate


def resample_to_16k(x, rate):
    """Band-limited resampling through the FFT: the spectrum cut (or padded) at 8 kHz."""
    if rate == RATE:
        return x
    n_out = int(round(len(x) * RATE / rate))
    spectrum = np.fft.rfft(x)
    out = np.zeros(n_out // 2 + 1, dtype=spectrum.dtype)
    m = min(len(out), len(spectrum))
    out[:m] = spectrum[:m]
    return (np.fft.irfft(out, n_out) * (n_out / len(x))).astype(np.float32)


def clip(job):
    """A worker's task: (espeak, text, voice, speed, pitch) -> 16 kHz samples, at most 29 s."""
    espeak, text, voice, speed, pitch = job
    x, rate = speak(espeak, text, voice, speed, pitch)
    return resample_to_16k(x, rate)[: 29 * RATE]


def jobs(espeak, sentences, seed, scrambled):
    """(text, synthesis job) forever: a training sentence, or (a `scrambled` share) 4 to 16 words
    drawn from all the sentences at random, so that the decoder cannot lean on remembered text."""
    rng = random.Random(seed)
    vocabulary = sorted({w.strip(",.;:?!") for s in sentences for w in s.split()} - {""})
    while True:
        if rng.random() < scrambled:
            text = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(4, 16)))
            text = text[0].upper() + text[1:] + "."
        else:
            text = rng.choice(sentences)
        voice = rng.choice(BASES) + rng.choice(VARIANTS)
        yield text, (espeak, text, voice, rng.randint(120, 210), rng.randint(20, 80))


def make_tokenizer(lines, vocab_size):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([" " + l for l in lines], trainer)  # Whisper's text starts with a space
    specials = ["<|endoftext|>", "<|startoftranscript|>", "<|translate|>", "<|transcribe|>", "<|startoflm|>",
                "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"]
    specials += [f"<|{i * 0.02:.2f}|>" for i in range(1501)]
    tok.add_special_tokens(specials)
    return tok


def words(text):
    """Lower case, apostrophes dropped ("it's" is "its"), other punctuation a word break."""
    return "".join(c.lower() if c.isalnum() or c == " " else "" if c == "'" else " " for c in text).split()


def wer(refs, hyps):
    """Word error rate: word edits (substitutions, insertions, deletions) over reference words."""
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


def write_wav(path, x):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(np.clip(np.round(x * 32767), -32768, 32767).astype(np.int16).tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sentences", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("eval", type=Path)
    ap.add_argument("--minutes", type=float, default=7)
    ap.add_argument("--espeak", default="espeak-ng")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--init", type=Path, help="start from this model folder (and its tokenizer) instead of from scratch")
    ap.add_argument("--scrambled", type=float, default=0.3, help="share of the clips that read random words")
    ap.add_argument("--warmup", type=int, default=400)
    ap.add_argument("--ctc", type=float, default=0.3, help="weight of the encoder's auxiliary CTC loss")
    ap.add_argument("--d-model", type=int, default=192)
    ap.add_argument("--encoder-layers", type=int, default=4)
    ap.add_argument("--decoder-layers", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--heldout", type=int, default=200, help="held-out sentences to measure the WER on")
    ap.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 4) - 2))
    args = ap.parse_args()
    pool = mp.get_context("fork").Pool(args.workers)  # before CUDA starts: the workers only synthesize

    import torch
    import transformers
    from transformers.modeling_outputs import BaseModelOutput
    from transformers import GenerationConfig, WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration

    torch.manual_seed(0)
    dev = "cuda"
    train = [l.strip() for l in (args.sentences / "train.txt").read_text().splitlines() if l.strip()]
    held = [l.strip() for l in (args.sentences / "heldout.txt").read_text().splitlines() if l.strip()][: args.heldout]
    args.out.mkdir(parents=True, exist_ok=True)
    args.eval.mkdir(parents=True, exist_ok=True)
    if args.init:
        from tokenizers import Tokenizer
        tok = Tokenizer.from_file(str(args.init / "tokenizer.json"))
    else:
        tok = make_tokenizer(train, args.vocab)
    tok.save(str(args.out / "tokenizer.json"))
    ids = tok.token_to_id
    eot, sot, no_ts = ids("<|endoftext|>"), ids("<|startoftranscript|>"), ids("<|notimestamps|>")
    vocab = tok.get_vocab_size()
    longest = max(len(e.ids) for e in tok.encode_batch([" " + s for s in train]))
    print(f"{len(train)} sentences, the longest {longest} tokens", file=sys.stderr)

    config = WhisperConfig(
        vocab_size=vocab, num_mel_bins=80, d_model=args.d_model, encoder_layers=args.encoder_layers,
        decoder_layers=args.decoder_layers, encoder_attention_heads=args.d_model // 64,
        decoder_attention_heads=args.d_model // 64, encoder_ffn_dim=4 * args.d_model, decoder_ffn_dim=4 * args.d_model,
        max_source_positions=1500, max_target_positions=128, pad_token_id=eot, bos_token_id=eot, eos_token_id=eot,
        decoder_start_token_id=sot, begin_suppress_tokens=[ids("Ġ"), eot], suppress_tokens=[],
        tie_word_embeddings=True, dropout=0.0)
    if args.init:
        model = WhisperForConditionalGeneration.from_pretrained(args.init, dtype=torch.float32).to(dev)
        config = model.config
    else:
        model = WhisperForConditionalGeneration(config).to(dev)
    fe = WhisperFeatureExtractor(feature_size=80)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params / 1e6:.2f}M parameters, vocabulary {vocab}", file=sys.stderr)

    window = torch.hann_window(400, device=dev)
    filters = torch.tensor(np.asarray(fe.mel_filters), dtype=torch.float32, device=dev)  # [201, 80]

    def log_mel(audio):
        """[B, 480000] -> [B, 80, 3000], as WhisperFeatureExtractor (per example maximum)."""
        spec = torch.stft(audio, 400, 160, window=window, return_complex=True)[..., :-1].abs() ** 2
        mel = torch.clamp(filters.T @ spec, min=1e-10).log10()
        mel = torch.maximum(mel, mel.amax(dim=(1, 2), keepdim=True) - 8.0)
        return (mel + 4.0) / 4.0

    def padded(clips):
        batch = torch.zeros(len(clips), WINDOW, device=dev)
        for k, x in enumerate(clips):
            batch[k, : len(x)] = torch.from_numpy(x).to(dev)
        return batch

    check = clip((args.espeak, held[0], "en-us", 160, 50))
    ours = log_mel(padded([check]))[0].cpu().numpy()
    theirs = fe([check], sampling_rate=RATE, return_tensors="np").input_features[0]
    gap = float(np.abs(ours - theirs).max())
    print(f"log-mel against WhisperFeatureExtractor: max difference {gap:.2e}", file=sys.stderr)
    assert gap < 1e-3, "the GPU log-mel is not the feature extractor's"

    def augmented(clips, rng):
        """The clips placed in 30 s windows on the GPU: a random gain, up to 1 s of silence ahead,
        and (four times in five) white noise at 10-40 dB SNR up to the clip's end."""
        lengths = np.array([len(x) for x in clips])
        shifts = np.array([rng.randint(0, min(RATE, WINDOW - n)) for n in lengths])
        gains = np.array([rng.uniform(0.3, 1.0) / max(float(np.abs(x).max()), 1e-3) for x in clips], np.float32)
        snr_db = np.array([rng.uniform(10, 40) if rng.random() < 0.8 else np.inf for _ in clips], np.float32)
        flat = torch.from_numpy(np.concatenate(clips)).to(dev, non_blocking=True)
        lens = torch.from_numpy(lengths).to(dev)
        rows = torch.repeat_interleave(torch.arange(len(clips), device=dev), lens)
        starts = torch.repeat_interleave(torch.cumsum(lens, 0) - lens, lens)
        cols = torch.arange(len(flat), device=dev) - starts + torch.from_numpy(shifts).to(dev)[rows]
        batch = torch.zeros(len(clips), WINDOW, device=dev)
        batch[rows, cols] = flat * torch.from_numpy(gains).to(dev)[rows]
        ends = torch.from_numpy(shifts + lengths).to(dev)
        power = (batch ** 2).sum(1) / lens
        scale = torch.sqrt(power / 10 ** (torch.from_numpy(snr_db).to(dev) / 10))
        mask = torch.arange(WINDOW, device=dev)[None, :] < ends[:, None]
        return batch + torch.randn_like(batch) * scale[:, None] * mask, (shifts + lengths) // 320 + 1

    def labels_of(targets):
        seqs = [[sot, no_ts] + t + [eot] for t in targets]
        n = max(map(len, seqs))
        labels = torch.full((len(seqs), n - 1), -100, dtype=torch.long)
        dec_in = torch.full((len(seqs), n - 1), eot, dtype=torch.long)
        for k, s in enumerate(seqs):
            dec_in[k, : len(s) - 1] = torch.tensor(s[:-1])
            labels[k, : len(s) - 1] = torch.tensor(s[1:])
        return dec_in.to(dev), labels.to(dev)

    job_stream = jobs(args.espeak, train, 1, args.scrambled)
    pending = deque()
    ring = deque(maxlen=16384)
    rng = random.Random(2)
    # An auxiliary CTC head on the encoder (dropped when the model is saved) makes the
    # cross-attention find the alignment in hundreds of steps rather than thousands.
    ctc_head = torch.nn.Linear(args.d_model, eot + 1).to(dev)  # the BPE ids, then the blank
    opt = torch.optim.AdamW(list(model.parameters()) + list(ctc_head.parameters()), lr=args.lr, betas=(0.9, 0.98), weight_decay=0.01)
    warmup, step, fresh, t0 = args.warmup, 0, 0, time.time()
    budget = args.minutes * 60
    model.train()
    losses = []
    while time.time() - t0 < budget:
        while len(pending) < 4 * args.workers:
            text, job = next(job_stream)
            pending.append((tok.encode(" " + text).ids[:120], pool.apply_async(clip, (job,))))
        new = []
        while pending and (pending[0][1].ready() or len(ring) < args.batch) and len(new) < args.batch:
            i, r = pending.popleft()
            new.append((i, r.get()))
        ring.extend(new)
        fresh += len(new)
        chosen = new + rng.sample(list(ring), args.batch - len(new)) if len(new) < args.batch else new
        targets = [t for t, _ in chosen]
        clips = [x for _, x in chosen]
        audio, frames = augmented(clips, rng)
        feats = log_mel(audio)
        dec_in, labels = labels_of(targets)
        frac = (time.time() - t0) / budget
        lr = args.lr * min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0)))
        for g in opt.param_groups:
            g["lr"] = lr
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(input_features=feats, decoder_input_ids=dec_in, labels=labels)
            ctc_logits = ctc_head(out.encoder_last_hidden_state).float().log_softmax(-1)
        ctc = torch.nn.functional.ctc_loss(
            ctc_logits.transpose(0, 1), torch.tensor(sum(targets, []), device=dev),
            torch.from_numpy(np.minimum(frames, 1500)).to(dev), torch.tensor([len(t) for t in targets], device=dev),
            blank=eot, zero_infinity=True)
        loss = out.loss + args.ctc * ctc
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0:
            losses.append([step, round(time.time() - t0, 1), round(out.loss.item(), 4), round(ctc.item(), 4)])
            print(f"step {step}, {time.time() - t0:.0f} s, loss {out.loss.item():.3f} (CTC {ctc.item():.3f}), lr {lr:.2e}, "
                  f"{fresh} clips synthesized", file=sys.stderr, flush=True)
        step += 1
    train_seconds = time.time() - t0

    gen = GenerationConfig(decoder_start_token_id=sot, eos_token_id=eot, pad_token_id=eot, bos_token_id=eot,
                           max_length=128, suppress_tokens=[], begin_suppress_tokens=config.begin_suppress_tokens,
                           no_timestamps_token_id=no_ts, is_multilingual=False, max_initial_timestamp_index=50,
                           prev_sot_token_id=ids("<|startofprev|>"))
    model.generation_config = gen
    model.eval()
    model.to(torch.float16).save_pretrained(args.out, safe_serialization=True)
    gen.save_pretrained(args.out)
    fe.save_pretrained(args.out)
    model = WhisperForConditionalGeneration.from_pretrained(args.out, dtype=torch.float32).to(dev).eval()

    @torch.no_grad()
    def greedy(feats, max_new=120):
        enc = BaseModelOutput(last_hidden_state=model.model.encoder(feats).last_hidden_state)
        seq = torch.tensor([[sot, no_ts]] * len(feats), device=dev)
        done = torch.zeros(len(feats), dtype=torch.bool, device=dev)
        for n in range(max_new):
            logits = model(encoder_outputs=enc, decoder_input_ids=seq).logits[:, -1].float()
            if n == 0:
                logits[:, config.begin_suppress_tokens] = -math.inf
            nxt = torch.where(done, eot, logits.argmax(-1))
            seq = torch.cat([seq, nxt[:, None]], 1)
            done |= nxt == eot
            if bool(done.all()):
                break
        return [[t for t in s[2:] if t < eot] for s in seq.tolist()]

    # Held-out sentences, voices and speed fixed, no noise.
    hyps, refs, files = [], [], []
    for v, voice in enumerate(HELD_OUT_VOICES):
        audio = pool.map(clip, [(args.espeak, s, voice, 160, 50) for s in held])
        for k, x in enumerate(audio):
            name = f"{v}_{k:03d}.wav"
            write_wav(args.eval / name, x)
            files.append(name)
        for i in range(0, len(audio), 50):
            hyps += tok.decode_batch(greedy(log_mel(padded(audio[i: i + 50]))), skip_special_tokens=True)
        refs += held
    score = wer(refs, hyps)
    (args.eval / "refs.json").write_text(json.dumps({"files": files, "texts": refs}, indent=0) + "\n")
    report = {"init": str(args.init) if args.init else None, "steps": step, "lr": args.lr, "scrambled": args.scrambled, "train_seconds": round(train_seconds), "clips_synthesized": fresh, "batch": args.batch,
              "parameters": n_params, "wer": round(score, 4), "heldout_utterances": len(refs),
              "voices": HELD_OUT_VOICES, "transformers": transformers.__version__, "torch": torch.__version__,
              "loss": losses, "examples": [{"ref": r, "hyp": h} for r, h in list(zip(refs, hyps))[:8]]}
    (args.out / "training.json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"held-out WER {score:.4f} over {len(refs)} utterances after {step} steps", file=sys.stderr)
    pool.terminate()


if __name__ == "__main__":
    main()
