"""Rule variants as data: a frozen set of parameters, named presets, and YAML loading.

Every rule in the seed documents is a parameter here, so a new variant is a few lines of
YAML (``base: nine-mens-morris`` plus overrides), never new code.  The protocol sends every
parameter to the bots (``newgame <name> key=value ...``) so bots need no preset table.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal, Mapping, get_args, get_type_hints

from arena.board import TOPOLOGIES, Topology, get_topology
from arena.errors import ConfigError
from arena.hints import did_you_mean

MillCapture = Literal["last-resort", "never", "always"]
BlockedRule = Literal["lose", "draw", "remove-and-move"]
BoardFullRule = Literal["draw", "lose", "remove-both"]
PlacementMill = Literal["capture", "hand", "mark", "count"]


#: the most turns ``no_capture_draw`` and ``three_three_draw`` may count (games must end)
DRAW_TURNS_MAX = 10_000
#: the largest ``repetition`` count
REPETITION_MAX = 100


@dataclass(frozen=True)
class Variant:
    """The complete rules of one game variant.

    Counts of "turns" are plies: one turn is one player's atomic move (with its captures).
    """

    name: str = "nine-mens-morris"
    #: board topology: ``standard``, ``diagonals``, ``six`` or ``three``
    board: str = "standard"
    #: men each player starts with (in hand)
    men: int = 9
    #: a player reduced to ``fly_at`` men on the board (none in hand) may move to any empty point
    flying: bool = True
    fly_at: int = 3
    #: may men standing in a mill be captured: ``last-resort`` (only when all the opponent's
    #: men are in mills), ``never`` (the capture is lost), ``always``
    mill_capture: MillCapture = "last-resort"
    #: how many men a move that forms two (or more) mills at once captures: 1 or 2
    multi_mill_captures: int = 1
    #: the player may decline a capture (or take fewer than entitled)
    optional_capture: bool = False
    #: a mill broken by a player's move may not be re-formed on that player's next move
    no_immediate_reform: bool = False
    #: draw when both players have exactly three men (none in hand) and this many turns pass
    #: without a capture; 0 = off
    three_three_draw: int = 0
    #: a player with fewer than this many men (on the board plus in hand) has lost
    lose_below: int = 3
    #: a player to move with no legal move: ``lose`` or ``draw``, or ``remove-and-move``
    #: (Zhi Qi, Sanmill's removeOpponentsPieceAndMakeNextMove): the player removes one
    #: opponent man next to one of its own (a removal-only turn, ``xd5``; men in mills too) and
    #: then moves; it loses only if there is no such man
    blocked: BlockedRule = "lose"
    #: the board fills up: ``draw``, the player to move ``lose``s, or ``remove-both`` (Zhi Qi,
    #: Sanmill's firstAndSecondPlayerRemovePiece): white removes a black man, then black a white
    #: man (removal-only turns, by the capture rules), then white moves (black with
    #: ``second_moves_first``)
    board_full: BoardFullRule = "draw"
    #: Lasker morris: while a player still has men in hand, they may move a man instead of placing
    move_in_placement: bool = False
    #: three men's morris: forming a mill wins the game at once (no capture)
    mill_wins: bool = False
    #: what a mill formed by a *placement* captures: ``capture`` (men on the board, as any
    #: mill) or ``hand`` (Dooz: each capture takes a man from the opponent's hand, without a
    #: choice, while it has one; the rest from the board as usual) or ``mark`` (Da San Qi, Cheng
    #: San Qi: the captured man leaves the game at once but its point stays blocked, for
    #: placing and moving alike, until placement ends) or ``count`` (El Filja, Sanmill's
    #: removalBasedOnMillCounts: nothing; when placement ends white, then black, plays one
    #: removal-only turn whose size the mills each then has on the board decide, see
    #: docs/RULES.md; with no mill at all each removes one of its own men)
    placement_mill: PlacementMill = "capture"
    #: Russian mill: each line earns its owner a capture only the first time the owner forms
    #: it; formed again later (by either kind of turn), it captures nothing
    one_time_mill: bool = False
    #: Da San Qi: when placement ends, black makes the first move of the moving phase (even
    #: if black placed the last man); otherwise turns alternate as ever
    second_moves_first: bool = False
    #: the same position (men, hands, side to move) occurring this often is a draw; 0 = off
    repetition: int = 3
    #: this many turns without a capture (counted from the end of placement) is a draw; 0 = off
    no_capture_draw: int = 100
    #: where the rules come from (not a rule; not sent to bots)
    source: str = dataclasses.field(default="", compare=False)

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def topology(self) -> Topology:
        return get_topology(self.board)

    @property
    def placement_turns(self) -> int:
        """The turns of the placement phase (``2 x men``): the most a random opening plays."""
        return 2 * self.men

    # -- parameters as text (protocol, YAML, records) --------------------------------------
    def to_params(self) -> dict[str, str]:
        """Every rule parameter as protocol text (``true``/``false`` for booleans)."""
        out: dict[str, str] = {}
        for f in fields(self):
            if f.name in ("name", "source"):
                continue
            v = getattr(self, f.name)
            out[f.name] = ("true" if v else "false") if isinstance(v, bool) else str(v)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Name and every parameter as plain Python values (for JSON records)."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "source"}
        return d

    @classmethod
    def from_params(cls, name: str, params: Mapping[str, str]) -> Variant:
        """Build a variant from protocol text parameters; missing ones take the defaults."""
        values: dict[str, Any] = {"name": name}
        types = _field_types()
        for key, text in params.items():
            if key not in types:
                raise ConfigError(f"unknown rule parameter (known: {', '.join(types)})", key)
            values[key] = _coerce(text, types[key], key)
        return cls(**values)

    @classmethod
    def from_mapping(cls, data: Any, path: str = "variant") -> Variant:
        """Build a variant from a YAML mapping: ``base`` (a preset name) plus overrides.

        Also accepts a bare preset name.  Errors name the key path.
        """
        if isinstance(data, str):
            try:
                return get_variant(data)
            except KeyError as e:
                raise ConfigError(str(e.args[0]), path) from None
        if not isinstance(data, Mapping):
            raise ConfigError(f"expected a preset name or a mapping, got {type(data).__name__}", path)
        data = dict(data)
        base_name = data.pop("base", None)
        if base_name is not None:
            try:
                base = get_variant(str(base_name))
            except KeyError as e:
                raise ConfigError(str(e.args[0]), f"{path}.base") from None
        else:
            base = Variant()
        values = {f.name: getattr(base, f.name) for f in fields(base)}
        if base_name is not None and "name" not in data:
            values["name"] = f"{base.name}-custom" if data else base.name
        types = _field_types() | {"name": str, "source": str}
        for key, value in data.items():
            if key not in types:
                raise ConfigError(f"unknown key ({did_you_mean(str(key), ['base', *types])}"
                                  f"known: base, {', '.join(types)})", f"{path}.{key}")
            values[key] = _check_type(value, types[key], f"{path}.{key}")
        try:
            return cls(**values)
        except ConfigError as e:
            raise ConfigError(str(e.args[0]).split(": ", 1)[-1], f"{path}.{e.path}") from None


@functools.cache
def _field_types() -> dict[str, Any]:
    """Every rule parameter's type, in field order: :class:`Variant`'s annotations without
    ``name`` and ``source`` (one shared dict: callers do not change it)."""
    return {k: v for k, v in get_type_hints(Variant).items() if k not in ("name", "source")}


def _coerce(text: str, typ: Any, key: str) -> Any:
    if typ is bool:
        low = text.lower()
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise ConfigError(f"expected true or false, got {text!r}", key)
    if typ is int:
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"expected an integer, got {text!r}", key) from None
    return text


def _check_type(value: Any, typ: Any, path: str) -> Any:
    if typ is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"expected true or false, got {value!r}", path)
    elif typ is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"expected an integer, got {value!r}", path)
    elif not isinstance(value, str):
        raise ConfigError(f"expected a string, got {value!r}", path)
    return value


def _validate(v: Variant) -> None:
    def fail(key: str, msg: str) -> None:
        raise ConfigError(msg, key)

    if v.board not in TOPOLOGIES:
        fail("board", f"unknown board {v.board!r} (known: {', '.join(TOPOLOGIES)})")
    for key in ("mill_capture", "blocked", "board_full", "placement_mill"):
        allowed = get_args(_field_types()[key])
        if getattr(v, key) not in allowed:
            fail(key, f"expected one of {', '.join(allowed)}, got {getattr(v, key)!r}")
    size = get_topology(v.board).size
    if not 1 <= v.men <= size:
        fail("men", f"expected 1..{size} on the {v.board} board, got {v.men}")
    if not 0 <= v.fly_at <= v.men:
        fail("fly_at", f"expected 0..men ({v.men}), got {v.fly_at}")
    if v.multi_mill_captures not in (1, 2, 3):
        fail("multi_mill_captures", f"expected 1, 2 or 3, got {v.multi_mill_captures}")
    if not 0 <= v.lose_below <= v.men:
        fail("lose_below", f"expected 0..men ({v.men}), got {v.lose_below}")
    for key in ("three_three_draw", "no_capture_draw"):
        if not 0 <= getattr(v, key) <= DRAW_TURNS_MAX:
            fail(key, f"expected 0 (off) or a positive number of turns up to {DRAW_TURNS_MAX}, "
                      f"got {getattr(v, key)}")
    if v.repetition < 0 or v.repetition == 1 or v.repetition > REPETITION_MAX:
        fail("repetition", f"expected 0 (off) or at least 2 (at most {REPETITION_MAX}), "
                           f"got {v.repetition}")
    if v.repetition == 0 and v.no_capture_draw == 0:
        fail("repetition", "repetition and no_capture_draw cannot both be off: games must end")
    if not v.name or any(c.isspace() for c in v.name):
        fail("name", f"expected a name without spaces, got {v.name!r}")


_NINE = ("Wikipedia's rules (with the flying phase) and a game site's 'Nine Men Morris' "
         "(flying men)")

PRESETS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(name="nine-mens-morris", source=f"Nine men's morris from {_NINE}: 9 men, flying at 3, "
                "men in mills captured only when all are in mills, lose below 3 men or when blocked"),
        Variant(name="nine-mens-morris-no-flying", flying=False,
                source="Nine men's morris without flying: a hobbyist's rules write-up and Masters "
                "Traditional Games' 'The Rules of Merels' (basic game), where flying is only a "
                "variation"),
        Variant(name="nine-mens-morris-diagonals", board="diagonals", flying=False,
                source="Masters Traditional Games, 'The Rules of Merels', alternative board "
                "layouts: the four diagonal lines "
                "are lines for moves and mills; basic Masters rules (no flying)"),
        Variant(name="twelve-mens-morris", board="diagonals", men=12, board_full="draw",
                source="Twelve men's morris (Wikipedia): diagonal board, 12 men, flying at 3; a board "
                "filled during placement is a draw"),
        Variant(name="morabaraba", board="diagonals", men=12, three_three_draw=10,
                source="Morabaraba (Mind Sports South Africa rules as summarised by several "
                "sources): 12 cows, diagonal board, one cow shot even for a double mill, flying at 3, "
                "three cows each and ten turns without a shot is a draw, full board a draw"),
        Variant(name="lasker-morris", men=10, move_in_placement=True,
                source="Lasker morris (Emanuel Lasker): 10 men, a player may move instead of "
                "placing while men remain in hand, flying at 3"),
        Variant(name="six-mens-morris", board="six", men=6, flying=False,
                source="Six men's morris (Wikipedia): 16-point board of two squares, 6 men, "
                "no flying, lose below 3 men or when blocked"),
        Variant(name="three-mens-morris", board="three", men=3, flying=False, mill_wins=True,
                source="Three men's morris (Wikipedia): 9-point board with diagonals, 3 men each, "
                "placed then moved to adjacent points; the first to make a line wins"),
        Variant(name="nine-mens-morris-options", optional_capture=True, multi_mill_captures=2,
                no_immediate_reform=True, three_three_draw=10,
                source="A game site's 'Nine Men Morris' rules with every option: the player may "
                "skip a capture, a double mill "
                "captures up to two men, a mill broken on a turn may not be re-formed on the "
                "player's next turn, three men each and ten turns without a capture is a draw"),
        Variant(name="russian-mill", one_time_mill=True,
                source="Russian mill as Sanmill plays it (its C++ preset table, src/rule.cpp "
                "'Russian Mill': oneTimeUseMill): nine men's morris where each line earns its "
                "owner a capture only the first time the owner forms it; no published rules "
                "found; Sanmill's app also lets men in mills be captured (mill_capture=always)"),
        Variant(name="dooz", board="diagonals", men=12, placement_mill="hand", board_full="lose",
                source="Dooz (Iran) as Sanmill plays it (C++ preset table, src/rule.cpp 'Dooz': "
                "removeOpponentsPieceFromHandThenOpponentsTurn, firstPlayerLose): diagonal board, "
                "12 men, flying at 3; a mill formed by placing takes a man from the opponent's "
                "hand (x*), from the board once that hand is empty; a full board (no mill during "
                "placement) loses for white, the player then to move. No published rules found; "
                "Sanmill's app preset instead lets men in mills be captured and makes the side to "
                "move remove a man on a full board"),
        Variant(name="cheng-san-qi", flying=False, placement_mill="mark",
                source="Cheng San Qi (China), published rules (encyclopaedia summary, "
                "jxshyzhx.com/dt/202407/486916.html): 9 men, a man captured while placing leaves "
                "its point blocked until the moving phase, last-resort captures, no flying; as "
                "Sanmill's app plays it (markAndDelayRemovingPieces, no flying). Sanmill's C++ "
                "table (src/rule.cpp 'Cheng San Qi') has only no flying: that is "
                "nine-mens-morris-no-flying"),
        Variant(name="da-san-qi", board="diagonals", men=12, flying=False, placement_mill="mark",
                second_moves_first=True, mill_capture="always", board_full="lose",
                source="Da San Qi (China) as Sanmill plays it (C++ preset table, src/rule.cpp "
                "'Da San Qi': markAndDelayRemovingPieces, isDefenderMoveFirst, "
                "mayRemoveFromMillsAlways, no flying, firstPlayerLose): diagonal board, 12 men, "
                "captures while placing leave blocked points until placement ends, black moves "
                "first after placement, men in mills may be captured, a full board loses for "
                "white; no published rules found. Sanmill's app also sets mayRemoveMultiple "
                "(multi_mill_captures=3)"),
        Variant(name="zhi-qi", board="diagonals", men=12, board_full="remove-both",
                blocked="remove-and-move",
                source="Zhi Qi (China, twelve men on the diagonal board) as Sanmill plays it (C++ "
                "preset table, src/rule.cpp 'Zhi Qi': firstAndSecondPlayerRemovePiece, "
                "removeOpponentsPieceAndMakeNextMove): flying at 3; a board filled by placement "
                "(no mill while placing) makes white, then black, remove a man (xg7) before white "
                "moves; a blocked player removes an enemy man next to one of its own and moves "
                "on. No published rules found (zh.wikipedia's 十二子直棋 gives only history). "
                "Sanmill's app preset is another game: mark-and-delay, no flying, men in mills "
                "capturable, blocked loses (placement_mill=mark flying=false "
                "mill_capture=always blocked=lose)"),
        Variant(name="el-filja", men=12, flying=False, placement_mill="count",
                mill_capture="always", board_full="remove-both",
                source="El Filja (Algeria, Morocco) as Sanmill plays it (C++ table and app agree, "
                "src/rule.cpp 'El Filja': removalBasedOnMillCounts, mayRemoveFromMillsAlways, "
                "no flying): 12 men on the standard board; mills formed while placing capture "
                "nothing; on the full board at the end of placement white, then black, removes "
                "men by the mills each holds (none: each removes one of its own), then white "
                "moves; men in mills may be captured. No published rules found"),
    )
}

ALIASES: dict[str, str] = {
    "standard": "nine-mens-morris", "nmm": "nine-mens-morris", "9mm": "nine-mens-morris",
    "no-flying": "nine-mens-morris-no-flying", "diagonals": "nine-mens-morris-diagonals",
    "12mm": "twelve-mens-morris", "lasker": "lasker-morris", "6mm": "six-mens-morris",
    "3mm": "three-mens-morris", "options": "nine-mens-morris-options",
}


def get_variant(name: str) -> Variant:
    """A preset by name or alias; raises ``KeyError`` listing the presets."""
    key = ALIASES.get(name, name)
    try:
        return PRESETS[key]
    except KeyError:
        raise KeyError(f"unknown variant {name!r} (presets: {', '.join(PRESETS)})") from None


def load_variant(spec: str) -> Variant:
    """A preset name, or the path of a YAML file holding one variant mapping."""
    if spec in PRESETS or spec in ALIASES:
        return get_variant(spec)
    p = Path(spec)
    if p.suffix in (".yaml", ".yml") or p.exists():
        import yaml  # local: the rules engine proper never needs it

        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except OSError as e:
            raise ConfigError(f"cannot read variant file: {e.strerror}", str(p)) from None
        except yaml.YAMLError as e:
            raise ConfigError(f"broken YAML: {str(e).splitlines()[0]}", str(p)) from None
        return Variant.from_mapping(data, path=p.name)
    try:
        return get_variant(spec)
    except KeyError as e:
        raise ConfigError(str(e.args[0])) from None
