# Chat on the demo model, whose tokenizer has ChatML's tokens (so its template is Qwen3's): the
# replies are fortunes more than answers, but a deterministic function of the conversation.
import pytest

import wgx

SYSTEM = {"role": "system", "content": "Be brief."}
USER = {"role": "user", "content": "Hi!"}


def test_chat_streams_and_keeps_the_history(demo):
    s = demo.session(system_prompt="Be brief.", thinking=False)
    g = s.chat("Hi!", max_tokens=6, temperature=0)
    pieces = list(g)
    assert "".join(pieces) == g.text
    assert 0 < len(g.tokens) <= 6
    assert g.stop_reason in ("max tokens", "eos")
    assert s.history == [SYSTEM, USER, {"role": "assistant", "content": g.text}]
    rendered = demo.render_chat([SYSTEM, USER], thinking=False)
    assert rendered == ("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n"
                        "<|im_start|>assistant\n<think>\n\n</think>\n\n")
    prompt = demo.tokenizer.encode(rendered, add_special_tokens=False)
    assert s.tokens[:len(prompt)] == prompt
    assert g.stats.prompt_tokens == len(prompt)


def test_a_conversation_of_messages_equals_the_same_turns(demo):
    turns = demo.session(system_prompt="Be brief.", thinking=False)
    first = turns.chat("Hi!", max_tokens=3, temperature=0)
    second = turns.chat("Tell me more.", max_tokens=3, temperature=0)
    whole = demo.session(thinking=False)
    messages = [SYSTEM, USER, {"role": "assistant", "content": first.text}, {"role": "user", "content": "Tell me more."}]
    reply = whole.chat(messages, max_tokens=3, temperature=0)
    assert reply.tokens == second.tokens
    assert whole.history == turns.history == messages + [{"role": "assistant", "content": second.text}]


def test_bad_messages(demo):
    s = demo.session()
    with pytest.raises(wgx.BadArgumentError, match="content"):
        s.chat([{"role": "user"}])
    with pytest.raises(TypeError):
        s.chat(["Hi!"])
    with pytest.raises(TypeError):
        s.chat([{"role": "user", "content": 3}])
    with pytest.raises(TypeError):
        s.chat(42)
    with pytest.raises(wgx.BadArgumentError):
        s.chat([{"role": "wizard", "content": "Hi!"}]).text
    assert s.history == [] and s.context_used == 0
