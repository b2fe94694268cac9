"""Writing generated files so that a failed run leaves the previous ones as they were.

All new contents are known before anything is touched. Changed files go to temp files beside
their targets (same folder, so the rename cannot cross file systems) and are then renamed into
place. Unchanged files are not rewritten, which keeps their timestamps and spares a recompile.
"""
import os
import tempfile
from pathlib import Path

from errors import ShaderGenError


def _read_if_present(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ShaderGenError(f"{path}: cannot read: {e.strerror or e}") from None


def stale(outputs: dict[Path, bytes]) -> list[Path]:
    """The outputs that are missing or differ from `outputs`, in path order."""
    return [p for p in sorted(outputs) if _read_if_present(p) != outputs[p]]


def _file_mode() -> int:
    # mkstemp creates 0600 files; generated sources should get the usual mode of new files.
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _write_temp(path: Path, data: bytes, mode: int) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())  # the rename must never expose a file whose bytes are not on disk
        os.chmod(temp, mode)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def _restore(replaced: list[Path], previous: dict[Path, bytes | None], mode: int) -> list[Path]:
    """Puts back what `replaced` held before; returns the files it could not put back."""
    failed = []
    for path in replaced:
        try:
            if previous[path] is None:
                path.unlink(missing_ok=True)
            else:
                os.replace(_write_temp(path, previous[path], mode), path)
        except OSError:
            failed.append(path)
    return failed


def write_all(outputs: dict[Path, bytes]) -> list[Path]:
    """Writes every changed output or none of them; returns the ones it wrote."""
    previous = {p: _read_if_present(p) for p in outputs}
    changed = [p for p in sorted(outputs) if previous[p] != outputs[p]]
    mode = _file_mode()
    temps: dict[Path, Path] = {}
    replaced: list[Path] = []
    path = None
    try:
        for path in changed:
            path.parent.mkdir(parents=True, exist_ok=True)
            temps[path] = _write_temp(path, outputs[path], mode)
        for path in changed:
            os.replace(temps[path], path)
            del temps[path]
            replaced.append(path)
    except OSError as e:
        message = f"{path}: cannot write: {e.strerror or e}"
        lost = _restore(replaced, previous, mode)
        if lost:
            message += "; could not restore " + ", ".join(map(str, lost))
        raise ShaderGenError(message) from None
    finally:
        for temp in temps.values():
            temp.unlink(missing_ok=True)
    return changed
