# wgx.SpeechModel: the demo speech model's transcripts equal transformers' greedy ones, from a
# file and from samples, and its beam search's; bad input raises the error that says what is wrong.
import array
import json
import wave

import pytest

import wgx
from conftest import ROOT, SPEECH


def samples_of(path):
    """A 16 kHz mono 16-bit WAV's samples as float32 in [-1, 1] (array.array, no numpy)."""
    with wave.open(str(path)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
        pcm = array.array("h", w.readframes(w.getnframes()))
    return array.array("f", (x / 32768 for x in pcm))


def test_info(speech):
    info = speech.info
    assert (info.mel_bins, info.encoder_layers, info.decoder_layers, info.d_model) == (80, 4, 2, 192)
    assert info.languages == []  # English-only
    assert info.vocab_size == 2509
    assert wgx.SpeechModel.is_speech_model(SPEECH)
    assert "4+2 layers" in repr(speech)


def test_file_and_samples_give_transformers_text(speech, speech_reference):
    path, text = speech_reference[1]  # models/speech/sample.wav
    t = speech.transcribe_file(path)
    assert t.text == text
    assert str(t) == text
    assert t.language == ""
    assert t.windows == 1 and len(t.segments) == 1
    assert t.segments[0].text == text and t.segments[0].start == 0
    assert t.audio_seconds == pytest.approx(len(samples_of(path)) / 16000)
    assert 0 < t.encode_seconds + t.decode_seconds <= t.seconds
    # The same audio as samples (a float32 buffer) gives the same text.
    assert speech.transcribe(samples_of(path)).text == text


def test_beams_give_transformers_text(speech):
    # Two beams make this file's text differ from the greedy one (beams.json has both).
    with open(ROOT / "tests" / "models" / "data" / "speech_demo" / "beams.json", encoding="utf-8") as f:
        ref = json.load(f)
    i = ref["files"].index("tests/models/data/speech_demo/0_000.wav")
    greedy, two = ref["beams"]["1"][i]["text"], ref["beams"]["2"][i]["text"]
    assert greedy != two
    assert speech.transcribe_file(ROOT / ref["files"][i], beams=2, max_new_tokens=64).text == two


def test_bad_input(speech, engine, tmp_path):
    with pytest.raises(wgx.BadArgumentError, match="not an audio file"):
        speech.transcribe_file(SPEECH + "/config.json")
    with pytest.raises(wgx.BadArgumentError, match="not an audio file"):
        speech.transcribe_bytes(b"RIFF, but not really")
    with pytest.raises(wgx.BadArgumentError, match="English-only"):
        speech.transcribe([0.0] * 1600, language="de")
    with pytest.raises(wgx.BadArgumentError, match="no translate task"):
        speech.transcribe([0.0] * 1600, task="translate")
    with pytest.raises(wgx.BadArgumentError, match='task must be "transcribe" or "translate"'):
        speech.transcribe([0.0] * 1600, task="summarize")
    with pytest.raises(wgx.BadArgumentError, match="no samples"):
        speech.transcribe([])
    with pytest.raises(wgx.BadArgumentError, match="beams must be 1"):
        speech.transcribe([0.0] * 1600, beams=0)
    with pytest.raises(TypeError, match="1-D float32 buffer or a sequence"):
        speech.transcribe("abc")
    with pytest.raises(wgx.BadArgumentError, match='weights must be "f32" or "q4"'):
        wgx.SpeechModel(SPEECH, weights="f16", engine=engine)
    with pytest.raises(wgx.InvalidModelError):
        wgx.SpeechModel(str(tmp_path / "none"), engine=engine)


def test_stream(speech, speech_reference):
    # A step longer than the sample: nothing is final before finish(), which transcribes it all.
    path, text = speech_reference[1]
    samples = samples_of(path)
    s = speech.stream(step=5.0)
    assert s.push(samples[:16000]) == "" and s.push(samples[16000:]) == ""
    assert s.windows == 0
    assert s.finish() == text
    assert s.text == text and s.windows == 1 and s.language == ""
    assert s.audio_seconds == pytest.approx(len(samples) / 16000)
    with pytest.raises(wgx.BadArgumentError, match="finished"):
        s.push([0.0])
    with pytest.raises(wgx.BadArgumentError, match="step"):
        speech.stream(step=0)
