"""Writing files the user did not name as links: configuration files, their backups, tap logs.

Rules it keeps (issue 23, defect 1; docs/security.md, "Files the CLI writes"):

* **No link is followed where the user did not choose one.** A file is
  written inside a folder opened with ``O_DIRECTORY | O_NOFOLLOW``, every
  name in it opened or created with ``O_NOFOLLOW`` relative to that folder;
  a link at a backup's name is removed, never written through.
* **A backup is a new private file**: ``O_CREAT | O_EXCL | O_NOFOLLOW``,
  mode 0600, holding the bytes that were read (not a copy of whatever the
  name points to now); one backup, the last content.
* **The file is replaced atomically**: a new temporary file in the same
  folder (``O_EXCL``, 0600), written, fsynced, given its mode, then
  renamed over the old name (``rename`` replaces a link, it never follows
  one), and the folder fsynced. The mode is the old file's without execute,
  set-id or sticky bits (never wider than it was); 0600 for a new file.
* `links_to_confirm` names the configuration file and its folder when they
  are links, for the caller to ask before writing through them; a caller
  that has the user's yes writes to the resolved path (the link stays).
* A log (`open_log`) is opened with ``O_NOFOLLOW``: a link is followed only
  to something that is not a regular file (a device, a pipe), opened
  without creating or truncating anything; a regular file with other names
  (hard links) is refused before it is truncated. A log file is 0600. The
  system's own links under ``/dev/`` and ``/proc/`` (``/dev/stderr``,
  ``/dev/fd/N``), which only root can plant, are followed whatever they
  reach, in append mode (``--log /dev/stderr 2>>file`` adds to the file).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

__all__ = ["links_to_confirm", "read_no_follow", "replace_file", "open_log", "LinkRefused"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FD = os.open in os.supports_dir_fd and _NOFOLLOW != 0  # POSIX; elsewhere plain paths


class LinkRefused(OSError):
    """A name that is a symbolic link (or a file with other names) where a plain file was expected."""


def links_to_confirm(path: Path) -> list[tuple[Path, str]]:
    """The configuration file and its folder, each with where it points, when it is a symbolic link."""
    found = []
    for candidate in (path.parent, path):
        if candidate.is_symlink():
            found.append((candidate, os.readlink(candidate)))
    return found


def read_no_follow(path: Path) -> bytes | None:
    """The bytes of the regular file ``path``; None when it is missing, a link or not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NOCTTY | _CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def replace_file(path: Path, content: bytes | None, *, backup: bytes | None) -> None:
    """Replace ``path`` with ``content`` (None: remove it); ``backup`` (the bytes read) goes to ``path.bak``.

    OSError (a `LinkRefused` for a link found on the way) when something cannot be done; the
    file is then as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if not _DIR_FD:  # pragma: no cover - Windows: no dir_fd, no O_NOFOLLOW
        _replace_by_path(path, content, backup)
        return
    try:
        folder = os.open(path.parent, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError as exc:
        if path.parent.is_symlink():
            raise LinkRefused(exc.errno, f"{path.parent} is a symbolic link") from None
        raise
    try:
        name = path.name
        mode = 0o600
        try:
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None:
            if stat.S_ISLNK(info.st_mode):
                raise LinkRefused(0, f"{path} is a symbolic link")
            mode = stat.S_IMODE(info.st_mode) & 0o666
        if backup is not None:
            _write_new(folder, name + ".bak", backup, 0o600, replace=True)
        if content is None:
            if info is not None:
                os.unlink(name, dir_fd=folder)
        else:
            temp = f".{name}.{secrets.token_hex(6)}.tmp"
            _write_new(folder, temp, content, mode, replace=False)
            try:
                os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                _unlink_quietly(temp, folder)
                raise
        os.fsync(folder)
    finally:
        os.close(folder)


def _write_new(folder: int, name: str, content: bytes, mode: int, *, replace: bool) -> None:
    """Create ``name`` in ``folder`` (it must not exist; ``replace``: remove what is there first), write, fsync."""
    if replace:
        try:
            os.unlink(name, dir_fd=folder)  # a link at this name goes; its target is untouched
        except FileNotFoundError:
            pass
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(content)
            handle.flush()
        os.fchmod(fd, mode)  # the umask may have narrowed 0600; `mode` is never wider than the old file's
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(name, folder)
        raise
    os.close(fd)


def _unlink_quietly(name: str, folder: int) -> None:
    try:
        os.unlink(name, dir_fd=folder)
    except OSError:
        pass


def _replace_by_path(path: Path, content: bytes | None, backup: bytes | None) -> None:  # pragma: no cover - Windows
    import tempfile

    if path.is_symlink():
        raise LinkRefused(0, f"{path} is a symbolic link")
    mode = stat.S_IMODE(path.stat().st_mode) & 0o666 if path.exists() else 0o600
    if backup is not None:
        bak = path.with_name(path.name + ".bak")
        if bak.is_symlink() or bak.exists():
            bak.unlink()
        fd = os.open(bak, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(backup)
    if content is None:
        if path.exists():
            path.unlink()
        return
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def open_log(path: str) -> int:
    """A file descriptor to write the log ``path`` to (see the rules above); OSError or `LinkRefused`."""
    flags = os.O_WRONLY | _NOCTTY | _CLOEXEC
    if os.path.abspath(path).startswith(("/dev/", "/proc/")):
        return os.open(path, flags | os.O_APPEND)  # the process's own streams; nothing created or truncated
    try:
        fd = os.open(path, flags | os.O_CREAT | _NOFOLLOW, 0o600)
    except OSError as exc:
        if not (_NOFOLLOW and os.path.islink(path)):
            raise
        # A link: follow it only to what is not a regular file, creating and truncating nothing.
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            raise LinkRefused(exc.errno, f"{path} is a symbolic link to a missing file") from None
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise LinkRefused(exc.errno, f"{path} is a symbolic link to a file; name the file itself") from None
        return fd
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            if info.st_nlink > 1:
                raise LinkRefused(0, f"{path} has other names (hard links); not truncating it")
            os.ftruncate(fd, 0)
            os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return fd
