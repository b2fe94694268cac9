"""wgx: run Hugging Face language models (Llama 3, Qwen3) on the GPU through WebGPU.

    import wgx
    m = wgx.Model("models/demo")
    for piece in m.session().generate("Hello", max_tokens=32):
        print(piece, end="", flush=True)

    s = m.session(system_prompt="Be brief.", thinking=False)
    reply = s.chat("Hi!", max_tokens=64, temperature=0.7, seed=1)
    print(reply.text, reply.stop_reason, reply.stats.decode_tokens_per_second)

    speech = wgx.SpeechModel("models/speech")       # a Whisper folder
    print(speech.transcribe_file("models/speech/sample.wav").text)

A Model loads a Hugging Face folder or a .wgx file onto the GPU; its sessions are conversations.
generate() and chat() return a Generation that runs on a thread of its own: iterate it for the text
as it streams, or read its text (which waits for the end). Every failure is a wgx.Error, of the
subclass that says what happened. docs/python.md in the repository describes it all.
"""

from ._wgx import (
    AdapterInfo,
    BadArgumentError,
    ContextFullError,
    DeviceLostError,
    Engine,
    Error,
    Generation,
    InternalError,
    InvalidModelError,
    LoadProgress,
    Model,
    ModelInfo,
    ModelMemory,
    NoAdapterError,
    OutOfMemoryError,
    Session,
    SpeechModel,
    SpeechModelInfo,
    SpeechStream,
    Stats,
    Tokenizer,
    Transcript,
    TranscriptSegment,
    convert,
    version,
)

__version__ = version()

# The classes say they are wgx's (wgx.Model, not wgx._wgx.Model) in reprs and tracebacks.
for _name in dir():
    if isinstance(globals()[_name], type) and globals()[_name].__module__ == "wgx._wgx":
        globals()[_name].__module__ = __name__
del _name

__all__ = [
    "AdapterInfo",
    "BadArgumentError",
    "ContextFullError",
    "DeviceLostError",
    "Engine",
    "Error",
    "Generation",
    "InternalError",
    "InvalidModelError",
    "LoadProgress",
    "Model",
    "ModelInfo",
    "ModelMemory",
    "NoAdapterError",
    "OutOfMemoryError",
    "Session",
    "SpeechModel",
    "SpeechModelInfo",
    "SpeechStream",
    "Stats",
    "Tokenizer",
    "Transcript",
    "TranscriptSegment",
    "convert",
    "version",
]
