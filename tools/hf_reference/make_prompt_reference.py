#!/usr/bin/env python3
"""Reference prompts from Hugging Face transformers: what `tokenizer(text).input_ids` gives (with and
without special tokens) for every text of the tokenizer corpus, and the demo model's greedy
continuations of fixed prompts. wgx's tests compare against these files.

    python3 tools/hf_reference/make_prompt_reference.py OUT_DIR \
        --tokenizer demo models/demo --tokenizer llama3_1 DIR --tokenizer qwen3 DIR \
        --demo models/demo

Writes OUT_DIR/<name>.hf_ids.json for each tokenizer and OUT_DIR/demo_greedy.json. Needs
transformers, tokenizers and torch (CPU is enough); no network.
"""
import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Prompts for the demo model (trained on fortunes): a continuation of each, greedy, in float32.
DEMO_PROMPTS = [
    "The meaning of life is",
    "Once upon a time",
    "You will meet",
    "A friend in need",
    "Love is",
    "The best way to",
    "If you want to",
    "Never trust",
    "Computers are",
    "When in doubt,",
    "Q: Why did the chicken cross the road?\nA:",
    "It is a truth universally acknowledged",
]


def tokenizer_ids(name, folder, corpus):
    import tokenizers
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(folder)
    raw = tokenizers.Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
    entries = []
    for e in corpus["entries"]:
        text = e["text"]
        with_special = tok(text).input_ids
        without = tok(text, add_special_tokens=False).input_ids
        # The tokenizers library alone (tokenizer.json, no tokenizer_config.json) must agree:
        # transformers' tokenizer(text) is the file's post-processor here.
        if raw.encode(text).ids != with_special or raw.encode(text, add_special_tokens=False).ids != without:
            print(f"warning: {name}/{e['name']}: transformers and tokenizers disagree", file=sys.stderr)
        entries.append({"name": e["name"], "ids": with_special, "ids_no_special": without})
    return {
        "about": f"tokenizer(text).input_ids and tokenizer(text, add_special_tokens=False).input_ids of the "
        f"{name} tokenizer for every text of tests/tokenizer/data/corpus.json "
        "(tools/hf_reference/make_prompt_reference.py)",
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "entries": entries,
    }


def demo_greedy(folder, max_new_tokens):
    import torch
    import transformers

    torch.manual_seed(0)
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    model.eval()
    cases = []
    for prompt in DEMO_PROMPTS:
        ids = tok(prompt).input_ids
        with torch.no_grad():
            out = model.generate(
                torch.tensor([ids]),
                attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                max_new_tokens=max_new_tokens,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
            )
        new = out[0, len(ids):].tolist()
        eos = model.generation_config.eos_token_id
        eos = set(eos if isinstance(eos, list) else [eos])
        shown = new[:-1] if new and new[-1] in eos else new
        cases.append({
            "prompt": prompt,
            "prompt_ids": ids,
            "generated_ids": new,
            "text": tok.decode(shown, skip_special_tokens=False, clean_up_tokenization_spaces=False),
        })
    return {
        "about": "Greedy float32 continuations of the demo model by transformers' generate() "
        f"(max_new_tokens {max_new_tokens}; prompt ids from tokenizer(prompt)); generated_ids ends with the eos "
        "token when generation stopped there, text leaves it out (tools/hf_reference/make_prompt_reference.py)",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "max_new_tokens": max_new_tokens,
        "cases": cases,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--tokenizer", nargs=2, action="append", default=[], metavar=("NAME", "DIR"))
    ap.add_argument("--corpus", type=Path, default=REPO / "tests/tokenizer/data/corpus.json")
    ap.add_argument("--demo", type=Path, help="the demo model folder: write demo_greedy.json")
    ap.add_argument("--max-new-tokens", type=int, default=40)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    corpus = json.loads(args.corpus.read_text())
    for name, folder in args.tokenizer:
        data = tokenizer_ids(name, folder, corpus)
        (args.out / f"{name}.hf_ids.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        print(f"{name}: {len(data['entries'])} texts")
    if args.demo:
        data = demo_greedy(args.demo, args.max_new_tokens)
        (args.out / "demo_greedy.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        for c in data["cases"]:
            print(f"demo: {c['prompt']!r} -> {c['text']!r}")


if __name__ == "__main__":
    main()
