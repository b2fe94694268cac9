# The module, its models and tokenizer, keyword validation and the errors.
import os
import re

import pytest

import wgx
from conftest import DEMO, SMALL_CONTEXT


def test_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", wgx.version())
    assert wgx.__version__ == wgx.version()
    if "WGX_EXPECTED_VERSION" in os.environ:
        assert wgx.version() == os.environ["WGX_EXPECTED_VERSION"]


def test_error_classes():
    kinds = {
        wgx.BadArgumentError: "bad argument",
        wgx.InvalidModelError: "invalid model",
        wgx.ContextFullError: "context full",
        wgx.OutOfMemoryError: "out of memory",
        wgx.DeviceLostError: "device lost",
        wgx.NoAdapterError: "no adapter",
        wgx.InternalError: "internal error",
    }
    for cls, kind in kinds.items():
        assert issubclass(cls, wgx.Error)
        assert cls.kind == kind
        assert cls.__module__ == "wgx"
    assert issubclass(wgx.Error, Exception)
    assert issubclass(wgx.BadArgumentError, ValueError)
    assert issubclass(wgx.OutOfMemoryError, MemoryError)
    assert not issubclass(wgx.ContextFullError, ValueError)


def test_model_info(demo):
    info = demo.info
    assert info.architecture == "llama"
    assert info.weights == "q4"
    assert info.kv_cache == "f16"
    assert info.context == 1024  # the demo's max_position_embeddings
    assert info.vocab_size == 2048
    assert info.layers == 4
    assert info.chat_template == "qwen3"  # its tokenizer has ChatML's tokens
    assert info.eos_ids == [0]
    assert info.memory.weights > 0
    assert info.memory.total >= info.memory.weights + info.memory.state
    assert info.kernels > 0
    assert info.build_seconds <= info.load_seconds
    assert info.description in repr(demo)
    assert wgx.Model.__module__ == "wgx"


def test_load_progress_and_context(small):
    model, stages = small
    assert stages == ["converting", "building", "done"]
    assert model.info.context == SMALL_CONTEXT
    assert model.session().context_size == SMALL_CONTEXT


def test_an_exception_in_on_progress_propagates_as_itself(engine):
    class Stop(Exception):
        pass

    def progress(p):
        raise Stop(p.stage)

    with pytest.raises(Stop, match="converting"):
        wgx.Model(DEMO, engine=engine, on_progress=progress)


def test_tokenizer_round_trip(demo, greedy_cases):
    tok = demo.tokenizer
    text = "Hello, world! Ünïcödé too."
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert tok.vocab_size == len(tok) == 2048
    # The ids of transformers' tokenizer(prompt).
    for case in greedy_cases:
        assert tok.encode(case["prompt"]) == case["prompt_ids"]
    # A tokenizer of its own, from the folder, agrees.
    assert wgx.Tokenizer(DEMO).encode(text) == ids
    end = tok.token_id("<|endoftext|>")
    assert end == 0 and tok.is_special(end) and not tok.is_special(ids[0])
    assert tok.token(end) == "<|endoftext|>"
    assert tok.eos_id == end
    assert tok.token_id("no such token") is None
    assert tok.token(10**6) is None
    assert tok.encode("<|endoftext|>") == [end]
    assert len(tok.encode("<|endoftext|>", parse_special=False)) > 1
    assert tok.decode([*ids, end]) == text + "<|endoftext|>"
    assert tok.decode([*ids, end], skip_special=True) == text
    with pytest.raises(TypeError):
        tok.decode("not ids")


def test_keyword_validation(demo):
    s = demo.session()
    with pytest.raises(TypeError):
        s.generate("x", max_tokns=3)  # a misspelt keyword
    with pytest.raises(TypeError):
        s.generate("x", 3)  # the settings are keywords only
    with pytest.raises(TypeError):
        s.generate("x", temperature="hot")
    with pytest.raises(TypeError):
        s.generate("x", stop=5)
    with pytest.raises(TypeError):
        s.generate("x", stop=["ok", 5])
    with pytest.raises(TypeError):
        s.generate(b"bytes")
    with pytest.raises(TypeError):
        s.generate([1, "two"])
    with pytest.raises(TypeError):
        s.generate([2**40])  # not a 32-bit token id
    with pytest.raises(TypeError):
        s.chat("x", colour="blue")
    with pytest.raises(TypeError):
        wgx.Model(DEMO, colour="blue")
    with pytest.raises(TypeError):
        demo.session(system="x")
    assert s.context_used == 0  # nothing ran


def test_bad_values_are_bad_argument_errors(demo):
    with pytest.raises(wgx.BadArgumentError, match="weights"):
        wgx.Model(DEMO, weights="q8")
    with pytest.raises(ValueError, match="kv"):
        wgx.Model(DEMO, kv="f64")
    with pytest.raises(wgx.BadArgumentError):
        wgx.Engine(adapter="quantum", announce=False)
    s = demo.session()
    # The generation's own checks come from its thread, at the first piece or its result.
    with pytest.raises(wgx.BadArgumentError):
        s.generate("x", top_p=0).text
    with pytest.raises(wgx.BadArgumentError, match="max_tokens"):
        next(s.generate("x", max_tokens=-1))
    with pytest.raises(wgx.BadArgumentError):
        list(s.generate([5000], max_tokens=2))  # beyond the vocabulary
    g = s.generate("x", top_k=-3)
    for _ in range(2):  # a failed generation says so every time it is asked
        with pytest.raises(wgx.BadArgumentError) as e:
            g.tokens
        assert str(e.value)
    assert s.context_used == 0 and s.tokens == []


def test_a_missing_model_is_an_invalid_model_error(engine, tmp_path):
    with pytest.raises(wgx.InvalidModelError, match="no such file or folder") as e:
        wgx.Model(tmp_path / "nowhere", engine=engine)
    assert isinstance(e.value, wgx.Error) and not isinstance(e.value, ValueError)
    (tmp_path / "config.json").write_text("{ not json")
    (tmp_path / "tokenizer.json").write_text((open(os.path.join(DEMO, "tokenizer.json")).read()))
    with pytest.raises(wgx.InvalidModelError):
        wgx.Model(str(tmp_path), engine=engine)
    with pytest.raises(wgx.InvalidModelError):
        wgx.Tokenizer(tmp_path / "nowhere.json")


def test_context_full_leaves_the_conversation_as_it_was(demo, small):
    s = demo.session()
    first = s.generate("Once upon a time", max_tokens=3, temperature=0)
    assert len(first.tokens) == 3
    before = s.tokens
    with pytest.raises(wgx.ContextFullError, match="context"):
        s.generate(" again", max_tokens=2000, temperature=0).text
    assert s.tokens == before
    # A prompt longer than a small context.
    model, _ = small
    t = model.session()
    with pytest.raises(wgx.ContextFullError):
        t.generate("and the " * SMALL_CONTEXT, max_tokens=1).text
    assert t.context_used == 0
    # Both go on afterwards.
    assert len(s.generate(" again", max_tokens=2, temperature=0, ignore_eos=True).tokens) == 2
    assert len(t.generate("Love is", max_tokens=2, temperature=0, ignore_eos=True).tokens) == 2
