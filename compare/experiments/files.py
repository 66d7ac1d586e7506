"""Where an experiment file's `$file:` prompts and `file:` datasets are read from.

The command line reads them relative to the config file, never outside its directory. The web page never reads
the server's disk: it looks them up among the files uploaded with the config, by path or by file name.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Protocol

from django.core.exceptions import ValidationError

from lab import values

from ..datasets.files import MAX_IMPORT_BYTES, decode


class Files(Protocol):
    def read(self, path: str) -> str:
        """The text of `path`; raises FileNotFoundError or ValueError with a message a person can act on."""


class DirectoryFiles:
    """Files relative to a directory (the config file's), for the command line."""

    def __init__(self, base: Path):
        self.base = base

    def read(self, path: str) -> str:
        target = self.base / path
        # A file names what sits beside it: `../secrets` or an absolute path would read anything the command can.
        if not target.resolve().is_relative_to(self.base.resolve()):
            raise ValueError(f"{path} is outside the config file's directory {self.base}")
        if not target.is_file():
            raise FileNotFoundError(f"no file {target}")
        if target.stat().st_size > MAX_IMPORT_BYTES:
            raise ValueError(f"{target} is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MB")
        return _text(target.read_bytes(), str(target))


class UploadedFiles:
    """Files uploaded beside the config: `prompts/a.txt` matches an upload named `prompts/a.txt` or `a.txt`."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files

    def read(self, path: str) -> str:
        name = PurePosixPath(path).name
        content = self.files.get(path, self.files.get(name))
        if content is None:
            uploaded = ", ".join(sorted(self.files)) or "none"
            raise FileNotFoundError(f"{path} was not uploaded with the experiment (uploaded: {uploaded})")
        return _text(content, path)


def _text(content: bytes, name: str) -> str:
    try:
        text = decode(content)
    except ValidationError as exc:
        raise ValueError(f"{name}: {' '.join(exc.messages)}") from None
    if problem := values.text_problem(text):  # a prompt is stored as text: the database refuses a NUL in it
        raise ValueError(f"{name}: {problem}")
    return text
