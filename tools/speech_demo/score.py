#!/usr/bin/env python3
"""Scores `wgx transcribe` on train.py's evaluation folder: every WAV transcribed in one run of
wgx, the word error rate against refs.json, and the worst transcripts.

    python3 tools/speech_demo/score.py EVAL_DIR --model DIR [--wgx build/release/bin/wgx] [--adapter gpu]

Prints `WER x` last; --json FILE writes the transcripts too.
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train import wer  # noqa: E402  (the same normalization as training's report)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("eval", type=Path)
    ap.add_argument("--model", required=True)
    ap.add_argument("--wgx", default="build/release/bin/wgx")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--adapter", help="wgx's --adapter (default: wgx's own choice)")
    args = ap.parse_args()
    refs = json.loads((args.eval / "refs.json").read_text())
    files = [str(args.eval / f) for f in refs["files"]]
    t0 = time.time()
    adapter = ["--adapter", args.adapter] if args.adapter else []
    out = subprocess.run([args.wgx, *adapter, "transcribe", "--model", args.model, "--language", "en", "--max-new-tokens", "120", "--json",
                          *files], capture_output=True, text=True)
    if out.returncode not in (0, 2):
        sys.exit(f"wgx exited with {out.returncode}:\n{out.stderr[-2000:]}")
    seconds = time.time() - t0
    results, text, at, decoder = [], out.stdout, 0, json.JSONDecoder()
    while True:  # one object a file (a line each when there are several)
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            break
        obj, at = decoder.raw_decode(text, at)
        results.append(obj)
    failed = [r for r in results if "error" in r]
    if failed:
        sys.exit(f"wgx failed on {len(failed)} files: {failed[0]['error']}")
    if len(results) != len(files):
        sys.exit(f"wgx gave {len(results)} transcripts for {len(files)} files")
    hyps = [r["text"] for r in results]
    audio = sum(r["audio_seconds"] for r in results)
    busy = sum(r["seconds"] for r in results)
    worst = sorted(((wer([r], [h]), r, h) for r, h in zip(refs["texts"], hyps)), reverse=True)[:5]
    for w, r, h in worst:
        print(f"{w:.2f}  ref: {r}\n      wgx: {h.strip()}")
    score = wer(refs["texts"], hyps)
    print(f"{len(files)} files, {audio:.1f} s of audio transcribed in {busy:.2f} s (real-time factor {busy / audio:.4f}); "
          f"wgx ran {seconds:.1f} s in all")
    if args.json:
        args.json.write_text(json.dumps({"wer": score, "files": refs["files"], "refs": refs["texts"], "hyps": hyps},
                                        indent=0) + "\n")
    print(f"WER {score:.4f}")


if __name__ == "__main__":
    main()
