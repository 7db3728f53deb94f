"""The one atomic writer: every output of the package (tables, JSON, figures) goes through
:func:`write_atomic`, which writes a temporary file next to the target and renames it over the
target, never over an input.

Outputs are checked before anything is written (:func:`check_outputs` for a command's outputs
together): an output naming an input, two outputs naming one file (after resolving links), a
directory, a special file (FIFO, device) or a place that cannot be written are refused with the
option's name. A symbolic link is written through: the link stays and its target receives the
new content, atomically.

Where the system allows it (Linux: ``O_TMPFILE`` and ``/proc``), the temporary file has no name
until it is complete; then it is linked as ``.NAME.*.tmp`` and renamed over the target. A
writer killed at any moment (even by ``SIGKILL``) leaves the old content or the new; only a
kill between the link and the rename (two system calls) leaves that complete temporary file
beside it. Elsewhere a named temporary file ``.NAME.*.tmp`` is used and removed on every error
the process survives. :func:`file_lock` serialises read-modify-write cycles of
one file (e.g. the index registry) across processes.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import os
import shutil
import stat
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import pandas as pd

from ratings.core.errors import OutputError
from ratings.io.cells import escape_formulas
from ratings.io.readers import format_of

__all__ = ["check_outputs", "file_lock", "output_target", "same_file", "write_atomic"]

#: ``write(path)`` creates the file at ``path`` (e.g. ``lambda p: fig.savefig(p, format="png")``).
#: It must not infer anything from the name of ``path``: it may be ``/proc/self/fd/N``.
FileWriter = Callable[[str], None]


def write_atomic(
    frame_or_text: pd.DataFrame | str | FileWriter,
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    csv_escape: bool = True,
) -> None:
    """Write a DataFrame, text or a file writer's output to ``path`` atomically: a temporary
    file in the target's directory, flushed to disk, then renamed over the target.

    Parameters
    ----------
    frame_or_text : pandas.DataFrame, str or callable
        A DataFrame is written by the extension of ``path``: ``.csv`` / ``.tsv`` (no index,
        optionally ``.gz``, ``.bz2``, ``.xz``), ``.json`` (a list of records, indented),
        ``.jsonl`` (JSON Lines) or ``.parquet``. Text is written as UTF-8, as is. A callable
        ``write(tmp_path)`` creates the file itself (e.g. a figure's ``savefig``).
    path : path
        The destination. Its directory must exist. An existing file keeps its permissions; a
        symbolic link is followed (the link stays, its target gets the new content).
    inputs : iterable of path, optional
        Files this output was computed from; writing over one of them is refused.
    csv_escape : bool, default=True
        CSV / TSV only: text cells a spreadsheet would run as a formula (starting with ``=``,
        ``+``, ``-``, ``@``, tab or carriage return) get a leading ``'``
        (:func:`ratings.io.cells.escape_formulas`; numbers are never touched). The package's
        readers remove it again.

    Raises
    ------
    ValueError
        ``path`` is one of ``inputs``, or the extension is not supported for a DataFrame.
    FileNotFoundError
        The directory of ``path`` does not exist.
    OutputError
        ``path`` is a directory or a special file, or cannot be written (permissions, a full
        disk, ...); the message names the reason.

    Notes
    -----
    If anything fails, an existing file at ``path`` is left as it was and no temporary file
    remains (see the module notes for a killed process).
    """
    target = output_target(path)
    for item in inputs:
        if item is not None and same_file(target, item):
            raise ValueError(
                f"refusing to overwrite the input file {os.fspath(item)!r} with output "
                f"{os.fspath(path)!r}; write the output to another path."
            )
    if csv_escape and isinstance(frame_or_text, pd.DataFrame):
        if format_of(target.name)[0] == "csv":
            frame_or_text = escape_formulas(frame_or_text)
    writer, suffix = _writer(frame_or_text, target)
    mode = target.stat().st_mode & 0o7777 if target.exists() else _default_mode()
    try:
        with _temporary(target, suffix, mode) as tmp:
            writer(tmp)
    except OSError as exc:
        if isinstance(exc, OutputError):
            raise
        raise OutputError(f"Cannot write {os.fspath(path)!r}: {_reason(exc)}. Nothing was "
                          "written; an existing file there is unchanged.",
                          os.fspath(path)) from exc  # fmt: skip


def output_target(path: str | os.PathLike[str]) -> Path:
    """The file an output at ``path`` is written to (a symbolic link resolved), after checking
    that it can be: not a directory, not a special file, in an existing, writable directory,
    and not a read-only file.

    Raises
    ------
    FileNotFoundError
        The directory does not exist.
    OutputError
        Any other reason ``path`` cannot receive an output.
    """
    name = os.fspath(path)
    target = Path(os.path.realpath(name))
    if name.endswith((os.sep, "/")) or target.is_dir():
        raise OutputError(f"{name!r} is a directory; name a file inside it instead.", name)
    if target.exists() and not target.is_file():
        kind = _special_kind(target)
        raise OutputError(
            f"{name!r} is a {kind}, not a regular file; outputs are written as files, "
            "atomically (to print a table, leave the output option out).", name)  # fmt: skip
    parent = target.parent
    if not parent.exists():
        raise FileNotFoundError(
            f"Cannot write {name!r}: directory {str(parent)!r} does not exist."
        )
    if not parent.is_dir():
        raise OutputError(f"Cannot write {name!r}: {str(parent)!r} is not a directory.", name)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"Cannot write {name!r}: directory {str(parent)!r} is not writable.",
                          name)  # fmt: skip
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputError(
            f"Cannot write {name!r}: the file is read-only. Make it writable (chmod u+w) or "
            "choose another path.", name)  # fmt: skip
    return target


def check_outputs(
    outputs: Mapping[str, str | os.PathLike[str] | None],
    inputs: Mapping[str, Iterable[str | os.PathLike[str]] | str | os.PathLike[str] | None],
) -> None:
    """Check a command's outputs before any work: each can be written (:func:`output_target`),
    none is an input and no two name the same file, links resolved.

    Parameters
    ----------
    outputs : mapping of label to path or None
        ``{"--out": "r.csv", "--rejected": None, ...}``; labels name the options in messages.
    inputs : mapping of label to path(s) or None
        ``{"VERDICTS": "v.csv", "--judge-quality": ["a.json", "b.json"]}``.

    Raises
    ------
    ValueError
        An output is an input, or two outputs name one file.
    OutputError, FileNotFoundError
        An output cannot be written (see :func:`output_target`); the message starts with its
        label.
    """
    given = {label: os.fspath(p) for label, p in outputs.items() if p is not None}
    for label, p in given.items():
        try:
            output_target(p)
        except OutputError as exc:
            raise OutputError(f"`{label}`: {exc}", p) from None
        except FileNotFoundError as exc:
            raise FileNotFoundError(f"`{label}`: {exc}") from None
    labels = list(given)
    for k, a in enumerate(labels):
        for b in labels[k + 1:]:
            if same_file(given[a], given[b]):
                raise ValueError(
                    f"`{a}` and `{b}` name the same file ({given[a]!r} and {given[b]!r}): one "
                    "output would overwrite the other. Nothing was written; give each output "
                    "its own path.")  # fmt: skip
    for in_label, paths in inputs.items():
        if paths is None:
            continue
        items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
        for item in items:
            for label, p in given.items():
                if same_file(p, item):
                    raise ValueError(
                        f"refusing to overwrite the input file {os.fspath(item)!r} ({in_label}) "
                        f"with `{label}` {p!r}; nothing was written. Choose another path.")


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Do ``a`` and ``b`` name the same file (the same inode, or the same resolved path when
    either does not exist yet)? Symbolic links are followed."""
    a, b = Path(os.fspath(a)), Path(os.fspath(b))
    with contextlib.suppress(OSError):
        if os.path.samefile(a, b):
            return True
    return a.resolve() == b.resolve()


# ----------------------------------------------------------------------------------------------
# The temporary file
# ----------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _temporary(target: Path, suffix: str, mode: int) -> Iterator[str]:
    """Yield a path to write; on success the file written there replaces ``target``.

    An unnamed ``O_TMPFILE`` file (reached through ``/proc/self/fd``) is given a name only once
    complete, just before the rename; a named temporary file is the fallback.
    """
    fd = _unnamed(target.parent)
    if fd is None:
        with _named(target, suffix, mode) as tmp:
            yield tmp
        return
    try:
        yield f"/proc/self/fd/{fd}"
        os.fsync(fd)  # on disk before the rename makes it visible
        os.fchmod(fd, mode)
        try:
            _link_and_replace(fd, target)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EACCES, errno.ENOENT,
                                 errno.EOPNOTSUPP):  # fmt: skip
                raise
            # The system would not name the file (e.g. protected links): copy it instead.
            with _named(target, suffix, mode) as tmp, open(f"/proc/self/fd/{fd}", "rb") as src, \
                    open(tmp, "wb") as dst:  # fmt: skip
                shutil.copyfileobj(src, dst)
    finally:
        os.close(fd)
    _sync_directory(target.parent)


def _unnamed(directory: Path) -> int | None:
    """A writable file descriptor of an unnamed file in ``directory``, or None when the system
    has no ``O_TMPFILE`` (or no ``/proc``) there."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(directory, flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None
        raise


def _link_and_replace(fd: int, target: Path) -> None:
    """Give the unnamed file a temporary name next to ``target``, then rename it over it."""
    dirfd = os.open(target.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for _ in range(100):
            tmp = f".{target.name}.{uuid.uuid4().hex[:12]}.tmp"
            try:
                # dir fds make os.link use linkat(AT_SYMLINK_FOLLOW), which links the file
                # /proc/self/fd/N points at (plain link() would link the magic link itself).
                os.link(f"/proc/self/fd/{fd}", tmp, src_dir_fd=dirfd, dst_dir_fd=dirfd,
                        follow_symlinks=True)  # fmt: skip
            except FileExistsError:
                continue
            try:
                os.replace(tmp, target.name, src_dir_fd=dirfd, dst_dir_fd=dirfd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dirfd)
                raise
            return
        raise FileExistsError(f"no free temporary name next to {str(target)!r}")
    finally:
        os.close(dirfd)


@contextlib.contextmanager
def _named(target: Path, suffix: str, mode: int) -> Iterator[str]:
    """A named temporary file next to ``target``, removed on any error."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".tmp{suffix}",
                               dir=target.parent)  # fmt: skip
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:  # flush to disk before the rename makes it visible
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _sync_directory(directory: Path) -> None:
    """Flush the rename itself (the directory entry) to disk, where the system allows it."""
    with contextlib.suppress(OSError):
        dirfd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)


def _reason(exc: OSError) -> str:
    """An OSError as a short reason ("Permission denied", "No space left on device")."""
    if exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _special_kind(path: Path) -> str:
    mode = path.stat().st_mode
    for test, kind in ((stat.S_ISFIFO, "FIFO (named pipe)"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket")):  # fmt: skip
        if test(mode):
            return kind
    return "special file"


def _writer(obj: pd.DataFrame | str | FileWriter, target: Path) -> tuple[FileWriter, str]:
    """A function writing ``obj`` to a path, and the suffix a named temporary file needs.

    The writers take the format and compression from ``target``, never from the path they are
    given (an unnamed temporary file's path has no extension).
    """
    if callable(obj):
        return obj, target.suffix.lower()
    if isinstance(obj, str):

        def write_text(tmp: str) -> None:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(obj)

        return write_text, ""
    if not isinstance(obj, pd.DataFrame):
        raise TypeError(f"Expected a DataFrame, str or callable; got {type(obj).__name__!r}.")
    fmt, sep, compression = format_of(target.name)
    name = target.name.lower()
    suffix = "".join(Path(name).suffixes[-2 if compression else -1:])
    if fmt == "csv":
        # pandas quotes fields holding the delimiter, quotes or '\n', but not a bare '\r',
        # which would split the row when read back: quote every text field then.
        text_cols = obj.select_dtypes(include=["object", "string"]).columns
        bare_cr = any(obj[c].astype(str).str.contains("\r", regex=False).any() for c in text_cols)
        quoting = csv.QUOTE_NONNUMERIC if bare_cr else csv.QUOTE_MINIMAL
        return (lambda tmp: obj.to_csv(tmp, index=False, sep=sep or ",", quoting=quoting,
                                       compression=compression)), suffix  # fmt: skip
    if fmt == "parquet":
        return (lambda tmp: obj.to_parquet(tmp, index=False)), suffix
    if fmt == "jsonl" and name.endswith(".json"):
        return (lambda tmp: obj.to_json(tmp, orient="records", lines=False, indent=2)), suffix
    if fmt == "jsonl":
        return (lambda tmp: obj.to_json(tmp, orient="records", lines=True,
                                        compression=compression)), suffix  # fmt: skip
    raise ValueError(
        f"Cannot tell how to write a DataFrame to {str(target)!r} from its extension. Supported: "
        ".csv, .tsv (optionally .gz, .bz2, .xz), .json, .jsonl, .ndjson, .parquet, .pq."
    )


def _default_mode() -> int:
    """Permissions of a newly created file (0o666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive lock for ``path`` (through links) while the block runs.

    The lock is ``fcntl.flock`` on the directory that holds the real file (nothing is created),
    so read-modify-write cycles of ``path`` by several processes run one after the other
    instead of losing each other's changes (other such cycles in the same directory wait too).
    Where ``fcntl`` does not exist (Windows) the block runs unlocked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        yield
        return
    folder = os.path.dirname(os.path.realpath(os.fspath(path))) or "."
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
