"""Collects the English fortunes that Debian's `fortunes` and `fortunes-min` packages ship into one
training text (the demo model's corpus): one fortune per paragraph, ASCII-art files left out.

    python3 tools/demo_model/prepare_text.py OUT.txt [/usr/share/games/fortunes]
"""
import glob
import os
import sys

SKIP = {"art", "ascii-art", "off"}  # pictures, and the offensive collection


def fortune_pieces(root):
    """Every fortune under `root` as the file has it (the speech demo's sentences.py reads them too)."""
    for path in sorted(glob.glob(os.path.join(root, "*"))):
        name = os.path.basename(path)
        if "." in name or name in SKIP or os.path.isdir(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            yield from f.read().split("\n%\n")


def main() -> None:
    out = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/games/fortunes"
    texts = []
    for piece in fortune_pieces(root):
        piece = piece.strip("%\n ").replace("\t", "    ")
        if 20 <= len(piece) <= 1200:
            texts.append(piece)
    if not texts:
        sys.exit(f"no fortunes under {root}: install them with `apt-get install fortunes fortunes-min`")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n\n".join(texts))
    print(f"{len(texts)} fortunes, {sum(map(len, texts))} characters -> {out}")


if __name__ == "__main__":
    main()
