# Generations: streaming, their results, transformers' greedy text, token ids, stop strings,
# sampling seeds and cancelling.
import gc
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import wgx
from conftest import DEMO


def test_streamed_pieces_make_the_text(demo):
    s = demo.session()
    prompt = "Once upon a time"
    g = s.generate(prompt, max_tokens=10, temperature=0, ignore_eos=True)
    assert isinstance(g, wgx.Generation)
    pieces = list(g)
    assert len(pieces) >= 2 and all(isinstance(p, str) and p for p in pieces)
    assert "".join(pieces) == g.text == str(g)
    assert g.done
    assert len(g.tokens) == 10
    assert g.stop_reason == "max tokens"
    assert demo.tokenizer.decode(g.tokens) == g.text
    assert next(g, None) is None  # exhausted
    stats = g.stats
    assert stats.generated_tokens == 10
    assert stats.prompt_tokens == len(demo.tokenizer.encode(prompt))
    assert stats.prefill_seconds > 0 and stats.decode_seconds > 0
    assert stats.prefill_tokens_per_second > 0 and stats.decode_tokens_per_second > 0
    assert s.tokens == demo.tokenizer.encode(prompt) + g.tokens
    assert s.context_used == len(s.tokens)
    assert "10 tokens" in repr(g) and "max tokens" in repr(g)


def test_the_text_without_iterating(demo):
    a = demo.session().generate("Love is", max_tokens=6, temperature=0)
    text = a.text  # waits for the end
    assert a.done and text
    assert "".join(a) == text  # the pieces are still there to take
    b = demo.session().generate("Love is", max_tokens=6, temperature=0)
    assert str(b) == text
    assert b.wait() is b


def test_greedy_text_matches_transformers(demo_f32, greedy_cases):
    case = greedy_cases[0]  # f32 decodes slowly on SwiftShader: one case, 8 tokens
    expected = case["generated_ids"][:8]
    g = demo_f32.session().generate(case["prompt"], max_tokens=8, temperature=0)
    assert g.tokens == expected
    assert g.text == demo_f32.tokenizer.decode(expected)
    assert case["text"].startswith(g.text)


def test_token_ids_in(demo):
    ids = demo.tokenizer.encode("You will meet")
    from_text = demo.session().generate("You will meet", max_tokens=6, temperature=0)
    from_ids = demo.session().generate(ids, max_tokens=6, temperature=0)
    assert from_ids.tokens == from_text.tokens
    assert from_ids.text == from_text.text
    # A tuple does as well as a list; no ids at all go on from where the session is.
    s = demo.session()
    s.generate(tuple(ids), max_tokens=3, temperature=0).wait()
    more = s.generate([], max_tokens=3, temperature=0).tokens
    assert from_text.tokens[:3] + more == from_text.tokens
    assert s.tokens == ids + from_text.tokens


def test_stop_strings(demo):
    prompt = "The meaning of life is"
    full = demo.session().generate(prompt, max_tokens=6, temperature=0, ignore_eos=True).text
    word = full.split()[2]  # a word inside the greedy text
    g = demo.session().generate(prompt, max_tokens=6, temperature=0, ignore_eos=True, stop=["zebra", word])
    assert g.text == full[:full.index(word)]
    assert g.stop_reason == "stop string"
    assert len(g.tokens) < 6
    # One str; the text ends before it even when that leaves none.
    g = demo.session().generate("Love is", max_tokens=4, temperature=0, stop=" ")
    assert g.text == "" and list(g) == []
    assert g.stop_reason == "stop string" and len(g.tokens) == 1


def test_seeded_sampling_repeats(demo):
    a = demo.session().generate("The best way to", max_tokens=6, seed=42, temperature=1.0)
    b = demo.session().generate("The best way to", max_tokens=6, seed=42, temperature=1.0)
    assert a.tokens == b.tokens and len(a.tokens) > 0
    assert a.seed == 42
    c = demo.session().generate("The best way to", max_tokens=1)
    assert isinstance(c.seed, int) and len(c.tokens) == 1


def long_generation(session, prompt="Never trust"):
    return session.generate(prompt, max_tokens=500, ignore_eos=True, temperature=0)


def test_breaking_out_of_the_loop_cancels(demo):
    s = demo.session()
    prompt = len(demo.tokenizer.encode("Never trust"))
    for i, _ in enumerate(long_generation(s)):
        if i == 1:
            break
    gc.collect()  # the loop's generation is gone (at once in CPython), and with it its thread
    assert prompt < s.context_used < prompt + 40
    after = s.generate(" and", max_tokens=3, temperature=0, ignore_eos=True)
    assert len(after.tokens) == 3 and after.stop_reason == "max tokens"


def test_close_and_cancel(demo):
    s = demo.session()
    g = long_generation(s)
    next(g)
    with pytest.raises(RuntimeError, match="generating"):
        s.tokens  # the generation is changing them
    g.close()
    assert g.done and g.stop_reason == "cancelled"
    assert len(g.tokens) < 40
    assert list(g) == []  # a closed generation has no more pieces
    assert s.tokens[-len(g.tokens):] == g.tokens
    # Session.cancel reaches the running generation; its pieces can still be taken.
    g = long_generation(s, " again")
    first = next(g)
    s.cancel()
    assert g.stop_reason == "cancelled" and len(g.tokens) < 40
    assert first + "".join(g) == g.text
    # A context manager closes it.
    with long_generation(s, " and") as h:
        next(h)
    assert h.stop_reason == "cancelled"


def test_a_new_generation_cancels_the_running_one(demo):
    s = demo.session()
    first = long_generation(s)
    next(first)
    second = s.generate(" and", max_tokens=3, temperature=0, ignore_eos=True)
    assert first.done and first.stop_reason == "cancelled"
    assert len(second.tokens) == 3
    assert s.tokens[-3:] == second.tokens
    s.reset()
    assert s.context_used == 0 and s.history == []


def test_interrupts_and_exit_end_running_generations(tmp_path):
    # A child process: Ctrl-C while it iterates cancels its generation; at exit, a generation still
    # running is cancelled and its thread joined before the interpreter goes (the child's own exit
    # handler, registered before wgx's, runs after it and reports). On SwiftShader, so that the
    # generations are still running when the signal comes and when the child leaves, on any machine.
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent("""
        import atexit, sys
        state = {}
        atexit.register(lambda: print("at exit:", state["g"].done, state["g"].stop_reason, flush=True))
        import wgx
        m = wgx.Model(sys.argv[1], context=256, engine=wgx.Engine(adapter="swiftshader", announce=False))
        g = m.session().generate("Never trust", max_tokens=250, ignore_eos=True, temperature=0)
        try:
            for i, piece in enumerate(g):
                if i == 0:
                    print("streaming", flush=True)
        except KeyboardInterrupt:
            g.close()
            print("interrupted:", g.stop_reason, flush=True)
        state["g"] = m.session().generate("And", max_tokens=250, ignore_eos=True, temperature=0)
        next(state["g"])
        print("leaving", flush=True)
    """))
    child = subprocess.Popen([sys.executable, str(script), DEMO], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=dict(os.environ))
    try:
        assert child.stdout.readline() == "streaming\n"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=600)
    finally:
        child.kill()
    assert child.returncode == 0, err
    assert out.splitlines() == ["interrupted: cancelled", "leaving", "at exit: True cancelled"], err
