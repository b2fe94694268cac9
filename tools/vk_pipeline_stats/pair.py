#!/usr/bin/env python3
"""Pairs `wgx: pipeline <label>` lines (WGX_LOG_PIPELINES=1) with the layer's statistics line
that follows each, and prints one row per pipeline: registers, shared memory, local memory
(spills), and how many 256-invocation workgroups an SM could hold by registers and by shared
memory (H100/H200: 65,536 registers and 228 KiB per SM, at most 2,048 invocations).

usage: pair.py LOG   (the run's stderr, with the layer writing to stderr)"""
import re
import sys

REGS_PER_SM, SMEM_PER_SM, THREADS_PER_SM = 65536, 228 * 1024, 2048


def stats_of(text):
    out = {}
    for part in text.split(", "):
        name, _, value = part.rpartition(" ")
        try:
            out[name] = int(value)
        except ValueError:
            out[name] = value
    return out


def main():
    label = None
    rows = []
    for line in open(sys.argv[1], errors="replace"):
        m = re.match(r"wgx: pipeline (.*)$", line.rstrip("\n"))
        if m:
            label = m.group(1)
            continue
        m = re.match(r"pipeline 0x[0-9a-f]+: (.*)$", line.rstrip("\n"))
        if m:
            rows.append((label or "(not wgx's)", stats_of(m.group(1))))
            label = None
    print(f"{'regs':>4} {'smem':>6} {'local':>5} {'wg/SM by regs':>13} {'by smem':>7}  pipeline")
    for label, s in rows:
        regs = s.get("Register Count", 0)
        smem = s.get("Shared Memory Size", 0)
        local = s.get("Local Memory Size", 0) & 0xFFFFFFFF  # the driver sets bits above 32
        by_regs = REGS_PER_SM // max(1, ((regs + 7) // 8 * 8) * 256) if regs else 8
        by_smem = SMEM_PER_SM // smem if smem else 32
        print(f"{regs:>4} {smem:>6} {local:>5} {min(by_regs, THREADS_PER_SM // 256):>13} {by_smem:>7}  {label}")


if __name__ == "__main__":
    main()
