# The models the suite shares: loading (building the kernels) is the slow part on SwiftShader, so
# each is loaded once. ctest sets the paths (python/CMakeLists.txt); run by hand from the
# repository, the defaults find them:
#   PYTHONPATH=build/release/python /usr/bin/python3 -m pytest python/tests
import json
import os
import pathlib

import pytest

import wgx

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEMO = os.environ.get("WGX_DEMO_MODEL", str(ROOT / "models" / "demo"))
GREEDY = os.environ.get("WGX_DEMO_GREEDY", str(ROOT / "tests" / "models" / "data" / "demo" / "greedy.json"))
SMALL_CONTEXT = 32


@pytest.fixture(scope="session")
def engine():
    return wgx.Engine(announce=False)


@pytest.fixture(scope="session")
def demo(engine):
    """The demo model as most users load it: q4 weights, an f16 KV cache."""
    return wgx.Model(DEMO, engine=engine)


@pytest.fixture(scope="session")
def demo_f32(engine):
    """The demo model in f32 (weights and cache), as transformers' references were made."""
    return wgx.Model(DEMO, weights="f32", kv="f32", engine=engine)


@pytest.fixture(scope="session")
def small(engine):
    """The demo model with a context of SMALL_CONTEXT tokens, and the load's progress stages."""
    stages = []

    def progress(p):
        assert isinstance(p, wgx.LoadProgress)
        if not stages or stages[-1] != p.stage:
            stages.append(p.stage)

    model = wgx.Model(DEMO, context=SMALL_CONTEXT, on_progress=progress, engine=engine)
    return model, stages


@pytest.fixture(scope="session")
def greedy_cases():
    with open(GREEDY, encoding="utf-8") as f:
        return json.load(f)["cases"]



SPEECH = os.environ.get("WGX_SPEECH_MODEL", str(ROOT / "models" / "speech"))
SPEECH_REFERENCE = ROOT / "tests" / "models" / "data" / "speech_demo" / "reference.json"


@pytest.fixture(scope="session")
def speech(engine):
    """The demo speech model (a small English-only Whisper)."""
    return wgx.SpeechModel(SPEECH, engine=engine)


@pytest.fixture(scope="session")
def speech_reference():
    """Held-out files and transformers' greedy transcripts of them."""
    with open(SPEECH_REFERENCE, encoding="utf-8") as f:
        ref = json.load(f)
    return [(ROOT / path, text) for path, text in zip(ref["files"], ref["transformers"])]
