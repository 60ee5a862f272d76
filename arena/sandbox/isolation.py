"""How bots are isolated in a game or tournament: :class:`Isolation` (a level, limits, extra
read-only paths, cgroups on or off), read once at the edge (a tournament file's ``isolation:``
key, ``--isolation``, the ``MORRIS_ARENA_ISOLATION`` variable), and the factory of the
per-bot :class:`~arena.sandbox.core.Sandbox`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, Mapping, Optional

from arena.errors import ConfigError
from arena.sandbox.core import Sandbox
from arena.sandbox.levels import Level, best_level, parse_level
from arena.sandbox.values import Limits

#: the environment variable that overrides the default isolation level (none/basic/bwrap/best)
LEVEL_VARIABLE = "MORRIS_ARENA_ISOLATION"


@dataclass(frozen=True)
class Isolation:
    """How bots are isolated in a game or tournament: a level (default: the best available),
    limits, extra read-only paths.

    ``read_only`` paths are mounted read-only for bwrap bots (for a runtime installed outside
    the standard places, e.g. ``/opt/java``).  ``cgroups: false`` turns cgroups off even
    where they are writable (limits then rest on rlimits, CPU time on process times).
    """

    level: Level = field(default_factory=lambda: best_level())
    limits: Limits = field(default_factory=Limits)
    read_only: tuple[str, ...] = ()
    cgroups: bool = True

    @classmethod
    def best(cls, limits: Optional[Limits] = None) -> Isolation:
        """The best level this machine supports, with ``limits`` (default limits if None)."""
        return cls(best_level(), limits or Limits())

    @classmethod
    def default(cls) -> Isolation:
        """What bots get when nothing is configured: the level named by the environment
        variable ``MORRIS_ARENA_ISOLATION`` if set, else the best available; default limits.

        :raises ConfigError: the variable names an unknown or unavailable level.
        """
        return cls(parse_level(os.environ.get(LEVEL_VARIABLE), LEVEL_VARIABLE))

    @classmethod
    def parse(cls, data: object, path: str = "isolation") -> Isolation:
        """From config: a level name (``bwrap``) or a mapping ``{level: ..., limits: {...},
        read_only: [...], cgroups: true}``; ``None`` means the best available.

        :raises ConfigError: naming the key path that is wrong.
        """
        if data is None or isinstance(data, (str, Level)):
            return cls(parse_level(data, path))
        if not isinstance(data, Mapping):
            raise ConfigError(f"expected a level name or a mapping, got {data!r}", path)
        for key in data:
            if key not in ("level", "limits", "read_only", "cgroups"):
                raise ConfigError("unknown key (known: level, limits, read_only, cgroups)",
                                  f"{path}.{key}")
        level = parse_level(data.get("level"), f"{path}.level")
        limits = Limits.from_mapping(data.get("limits") or {}, f"{path}.limits")
        ro = data.get("read_only") or []
        if not isinstance(ro, list) or not all(isinstance(p, str) and os.path.isabs(p) for p in ro):
            raise ConfigError("expected a list of absolute paths", f"{path}.read_only")
        use_cgroups = data.get("cgroups", True)
        if not isinstance(use_cgroups, bool):
            raise ConfigError(f"expected true or false, got {use_cgroups!r}", f"{path}.cgroups")
        return cls(level, limits, tuple(ro), use_cgroups)

    def sandbox(self, folder: str | os.PathLike[str], *, cwd: Optional[str] = None,
                label: str = "") -> Sandbox:
        """A :class:`Sandbox` for one bot process living in ``folder``."""
        return Sandbox(self.level, folder, cwd=cwd, limits=self.limits, label=label,
                       read_only=self.read_only, cgroups=self.cgroups)

    def to_dict(self) -> dict[str, Any]:
        """A plain form for records and reports."""
        return {"level": self.level.value,
                "limits": {f.name: getattr(self.limits, f.name) for f in fields(self.limits)},
                "read_only": list(self.read_only), "cgroups": self.cgroups}


__all__ = ["Isolation", "LEVEL_VARIABLE"]
