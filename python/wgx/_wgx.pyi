"""Type hints for wgx's native part (python/wgx_module.cpp); the package re-exports all of it."""

import os
from typing import Callable, Iterator, Mapping, Optional, Sequence, Union

_Path = Union[str, os.PathLike]
_Message = Mapping[str, str]  # {"role": "system" | "user" | "assistant", "content": str}

def version() -> str: ...

class Error(Exception):
    """Every failure of wgx: the subclass says what happened, the message what to do."""

class BadArgumentError(Error, ValueError):
    kind: str  # "bad argument"

class InvalidModelError(Error):
    kind: str  # "invalid model"

class ContextFullError(Error):
    kind: str  # "context full"

class OutOfMemoryError(Error, MemoryError):
    kind: str  # "out of memory"

class DeviceLostError(Error):
    kind: str  # "device lost"

class NoAdapterError(Error):
    kind: str  # "no adapter"

class InternalError(Error):
    kind: str  # "internal error"

class AdapterInfo:
    name: str
    backend: str
    type: str
    vendor: str
    is_cpu: bool
    shader_f16: bool
    subgroups: bool
    timestamps: bool
    max_buffer_size: int
    max_storage_binding_size: int

class Engine:
    def __init__(
        self,
        *,
        adapter: Optional[str] = None,
        toggles: Sequence[str] = [],
        options: Mapping[str, str] = {},
        announce: bool = True,
    ) -> None: ...
    @property
    def adapter(self) -> AdapterInfo: ...

class Tokenizer:
    def __init__(self, path: _Path) -> None: ...
    def encode(self, text: str, *, add_special_tokens: bool = True, parse_special: bool = True) -> list[int]: ...
    def decode(self, ids: Sequence[int], *, skip_special: bool = False) -> str: ...
    def token_id(self, token: str) -> Optional[int]: ...
    def token(self, id: int) -> Optional[str]: ...
    def is_special(self, id: int) -> bool: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def bos_id(self) -> Optional[int]: ...
    @property
    def eos_id(self) -> Optional[int]: ...
    def __len__(self) -> int: ...

class LoadProgress:
    stage: str  # "reading", "converting", "building", "done"
    step: str  # "layer 3/16", or ""
    seconds: float

class ModelMemory:
    weights: int
    state: int
    activations: int
    total: int

class ModelInfo:
    path: str
    architecture: str  # "llama", "qwen3"
    weights: str  # "q4", "f16", "f32"
    kv_cache: str  # "f16", "f32"
    chat_template: str  # "qwen3", "llama3", or "" for none
    adapter: str
    context: int
    max_prefill: int
    vocab_size: int
    layers: int
    eos_ids: list[int]
    memory: ModelMemory
    load_seconds: float
    read_seconds: float
    build_seconds: float
    kernels: int
    description: str

class Stats:
    prompt_tokens: int
    generated_tokens: int
    prefill_steps: int
    prefill_seconds: float
    first_token_seconds: float
    decode_seconds: float
    pipelined: bool
    drawn_on_device: bool
    dispatches_per_step: int
    decode_cpu_seconds: float
    decode_thread_cpu_seconds: float
    @property
    def prefill_tokens_per_second(self) -> float: ...
    @property
    def decode_tokens_per_second(self) -> float: ...

class Generation(Iterator[str]):
    def __iter__(self) -> "Generation": ...
    def __next__(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def tokens(self) -> list[int]: ...
    @property
    def stop_reason(self) -> str: ...  # "eos", "stop string", "max tokens", "cancelled"
    @property
    def seed(self) -> int: ...
    @property
    def stats(self) -> Stats: ...
    @property
    def done(self) -> bool: ...
    def wait(self) -> "Generation": ...
    def cancel(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Generation": ...
    def __exit__(self, *args: object) -> None: ...

class Session:
    def generate(
        self,
        prompt: Union[str, Sequence[int]],
        *,
        max_tokens: int = 256,
        temperature: float = 0.8,
        top_k: int = 40,
        top_p: float = 0.95,
        min_p: float = 0.05,
        repetition_penalty: float = 1.0,
        seed: Optional[int] = None,
        stop: Union[None, str, Sequence[str]] = None,
        ignore_eos: bool = False,
        skip_special: bool = False,
        add_special_tokens: bool = True,
        in_flight: int = 6,
        steps_per_submit: int = 3,
        host_sampling: bool = False,
    ) -> Generation: ...
    def chat(
        self,
        message: Union[str, Sequence[_Message]],
        *,
        max_tokens: int = 256,
        temperature: float = 0.8,
        top_k: int = 40,
        top_p: float = 0.95,
        min_p: float = 0.05,
        repetition_penalty: float = 1.0,
        seed: Optional[int] = None,
        stop: Union[None, str, Sequence[str]] = None,
        ignore_eos: bool = False,
        skip_special: bool = False,
        add_special_tokens: bool = True,
        in_flight: int = 6,
        steps_per_submit: int = 3,
        host_sampling: bool = False,
    ) -> Generation: ...
    def cancel(self) -> None: ...
    def reset(self) -> None: ...
    @property
    def tokens(self) -> list[int]: ...
    @property
    def context_used(self) -> int: ...
    @property
    def context_size(self) -> int: ...
    @property
    def history(self) -> list[dict[str, str]]: ...

class Model:
    def __init__(
        self,
        path: _Path,
        *,
        weights: Optional[str] = None,  # "q4" (default), "f16", "f32"
        kv: Optional[str] = None,  # "f16" (default), "f32"
        context: Optional[int] = None,  # default 4096, at most the model's
        max_prefill: int = 512,
        on_progress: Optional[Callable[[LoadProgress], object]] = None,
        engine: Optional[Engine] = None,
    ) -> None: ...
    @staticmethod
    def synthetic(
        name: str,
        *,
        engine: Optional[Engine] = None,
        seed: int = 1,
        weights: Optional[str] = None,
        kv: Optional[str] = None,
        context: Optional[int] = None,
        max_prefill: int = 512,
    ) -> "Model": ...
    @staticmethod
    def synthetic_names() -> list[str]: ...
    def session(self, *, system_prompt: str = "", thinking: bool = True) -> Session: ...
    @property
    def tokenizer(self) -> Tokenizer: ...
    @property
    def info(self) -> ModelInfo: ...
    def render_chat(self, messages: Sequence[_Message], *, thinking: bool = True) -> str: ...

def convert(
    folder: _Path,
    output: _Path,
    *,
    weights: Optional[str] = None,
    kv: Optional[str] = None,
    context: Optional[int] = None,
    max_prefill: int = 512,
    on_progress: Optional[Callable[[LoadProgress], object]] = None,
) -> None: ...

class TranscriptSegment:
    start: float  # seconds from the audio's start
    end: float
    text: str

class Transcript:
    text: str  # every segment's text, joined (Whisper's text starts with a space)
    language: str  # given or detected; "" for an English-only model
    segments: list[TranscriptSegment]
    windows: int  # 30 s windows decoded
    tokens: int
    audio_seconds: float
    seconds: float
    encode_seconds: float
    decode_seconds: float

class SpeechModelInfo:
    path: str
    adapter: str
    mel_bins: int
    encoder_layers: int
    decoder_layers: int
    d_model: int
    vocab_size: int
    languages: list[str]  # empty for an English-only model
    load_seconds: float

class SpeechModel:
    def __init__(
        self,
        path: _Path,
        *,
        weights: Optional[str] = None,  # "f32" (default), "q4"
        on_progress: Optional[Callable[[LoadProgress], object]] = None,
        engine: Optional[Engine] = None,
    ) -> None: ...
    @staticmethod
    def is_speech_model(path: _Path) -> bool: ...
    # Options of every transcribe call: language ("en", ...; default detected), task ("transcribe"
    # or "translate"), timestamps, max_new_tokens (per 30 s window; 0: the model's default), beams
    # (1: greedy; 2 to 16: beam search, as transformers' num_beams).
    def transcribe_file(
        self, path: _Path, *, language: Optional[str] = None, task: str = "transcribe", timestamps: bool = False,
        max_new_tokens: int = 0, beams: int = 1,
    ) -> Transcript: ...
    def transcribe_bytes(
        self, data: bytes, *, language: Optional[str] = None, task: str = "transcribe", timestamps: bool = False,
        max_new_tokens: int = 0, beams: int = 1,
    ) -> Transcript: ...
    def transcribe(
        self, samples: Sequence[float], *, language: Optional[str] = None, task: str = "transcribe",
        timestamps: bool = False, max_new_tokens: int = 0, beams: int = 1,
    ) -> Transcript: ...  # mono, 16 kHz, in [-1, 1]: a float32 buffer (numpy, array("f")) or numbers
    @property
    def info(self) -> SpeechModelInfo: ...
    def stream(
        self, *, language: Optional[str] = None, task: str = "transcribe", max_new_tokens: int = 0, beams: int = 1,
        step: float = 1.0, max_buffer: float = 24.0,
    ) -> SpeechStream: ...

class SpeechStream:
    def push(self, samples: Sequence[float]) -> str: ...  # mono 16 kHz -> the words that became final
    def finish(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def audio_seconds(self) -> float: ...
    @property
    def windows(self) -> int: ...
