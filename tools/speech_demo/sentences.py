"""Short sentences for the demo speech model, from the fortunes that Debian's `fortunes` and
`fortunes-min` ship (the demo language model's corpus, tools/demo_model/prepare_text.py): each
fortune split into sentences of 3 to 24 words, kept where they are plain ASCII words and
punctuation without digits (espeak-ng reads "40" as "forty": the text would not say what is
heard), so that espeak-ng reads them as written; a dash is a comma, attributions ("-- Name") go. Prints how many; the last 2% (by a seeded
shuffle) are the held-out set.

    python3 tools/speech_demo/sentences.py OUT_DIR [/usr/share/games/fortunes]

Writes OUT_DIR/train.txt and OUT_DIR/heldout.txt, a sentence a line.
"""
import os
import random
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "demo_model"))
from prepare_text import fortune_pieces  # noqa: E402  (the demo language model's reader)

ALLOWED = re.compile(r"^[A-Za-z ,.;:'?!\-]+$")


ABBREVIATIONS = {"mr.", "mrs.", "ms.", "dr.", "st.", "jr.", "sr.", "vs.", "etc.", "e.g.", "i.e.", "prof.", "gen.", "col."}


def split_sentences(text):
    """At ., ? and ! followed by a space, except after an abbreviation or an initial."""
    out, cur = [], []
    for word in text.split():
        cur.append(word)
        if word[-1] in ".?!" and word.lower() not in ABBREVIATIONS and not re.fullmatch(r"[A-Z]\.", word):
            out.append(" ".join(cur))
            cur = []
    if cur:
        out.append(" ".join(cur))
    return out


def sentences(root):
    out = []
    for piece in fortune_pieces(root):
        text = " ".join(piece.replace("%", " ").split())
        text = re.sub(r"\s*--\s*[A-Z][^.?!]*$", "", text)  # a trailing attribution
        text = re.sub(r"\s*--+\s*", ", ", text)
        for s in split_sentences(text):
            words = s.split()
            if 3 <= len(words) <= 24 and ALLOWED.match(s) and s[0].isalpha():
                out.append(s)
    return sorted(set(out))


def main():
    out_dir = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/games/fortunes"
    all_ = sentences(root)
    if not all_:
        sys.exit(f"no fortunes under {root}: install them with `apt-get install fortunes fortunes-min`")
    random.Random(0).shuffle(all_)
    n_held = max(1, len(all_) // 50)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "heldout.txt"), "w") as f:
        f.write("\n".join(all_[:n_held]) + "\n")
    with open(os.path.join(out_dir, "train.txt"), "w") as f:
        f.write("\n".join(all_[n_held:]) + "\n")
    print(f"{len(all_)} sentences: {len(all_) - n_held} to train on, {n_held} held out")


if __name__ == "__main__":
    main()
