"""The sandbox's small value types, shared by its modules: :class:`Limits` (what a bot is
given, checked at the edge), :class:`Check` (one capability of this machine, a line of
``arena doctor``) and :class:`SandboxError` (the one error of setting a sandbox up).  Pure:
nothing here probes the machine or starts a process.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

from arena.errors import ArenaError, ConfigError


class SandboxError(ArenaError):
    """A sandbox could not be set up (a cgroup or a temporary folder could not be made)."""


@dataclass(frozen=True)
class Limits:
    """Per-bot resource limits.

    ``memory_mb`` and ``pids`` (processes *and* threads) are enforced by cgroups where they
    are writable; ``open_files``, ``file_size_mb`` and ``cpu_s`` (a per-process CPU-time
    backstop, far above any game's budget) are rlimits; ``tmp_mb`` sizes bwrap's private
    ``/tmp``.  ``RLIMIT_AS`` is never used: it kills node and java at modest sizes.
    """

    memory_mb: int = 1024
    pids: int = 128
    open_files: int = 1024
    file_size_mb: int = 256
    cpu_s: int = 1800
    tmp_mb: int = 64

    def __post_init__(self) -> None:
        from arena.ranges import LIMITS

        for f in fields(self):
            LIMITS[f.name].check(getattr(self, f.name), f.name)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], path: str = "limits") -> Limits:
        """Limits from a YAML mapping; unknown keys and bad values name their key path.

        :raises ConfigError: not a mapping, an unknown key or a bad value.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"expected a mapping, got {type(data).__name__}", path)
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise ConfigError(f"unknown key (known: {', '.join(sorted(known))})",
                                  f"{path}.{key}")
        try:
            return cls(**dict(data))
        except ConfigError as e:
            raise ConfigError(str(e).split(": ", 1)[-1], f"{path}.{e.path}") from None


@dataclass(frozen=True)
class Check:
    """One capability: its name, whether it is usable, and why (a short phrase)."""

    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        """``name: detail`` as ``arena doctor`` prints it."""
        return f"{self.name}: {self.detail}"


__all__ = ["SandboxError", "Limits", "Check"]
