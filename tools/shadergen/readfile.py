"""Reading input files: raw bytes (as hashed) and their UTF-8 text, errors as ShaderGenError."""
from pathlib import Path

from errors import ShaderGenError


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise ShaderGenError(f"{path}: cannot read: {e.strerror or e}") from None


def decode_utf8(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ShaderGenError(f"{path}: not UTF-8 (byte {e.start})") from None
