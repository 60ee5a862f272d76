"""Variants as data: presets, parameters as text, YAML loading and its error key paths."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from arena.errors import ArenaError, ConfigError
from arena.variants import ALIASES, PRESETS, Variant, get_variant, load_variant

DOCS = Path(__file__).resolve().parent.parent / "docs" / "RULES.md"
PARAMETERS = [f.name for f in dataclasses.fields(Variant) if f.name not in ("name", "source")]


def test_presets_are_named_sourced_and_valid() -> None:
    for name, v in PRESETS.items():
        assert v.name == name and v.source
        assert dataclasses.replace(v) == v  # validation passes again


def test_aliases_point_at_presets() -> None:
    for alias, target in ALIASES.items():
        assert get_variant(alias) is PRESETS[target]
    with pytest.raises(KeyError, match="nine-mens-morris"):
        get_variant("chess")


def test_presets_follow_their_seeds() -> None:
    nine = get_variant("nine-mens-morris")
    assert (nine.board, nine.men, nine.flying, nine.fly_at, nine.mill_capture, nine.lose_below,
            nine.blocked) == ("standard", 9, True, 3, "last-resort", 3, "lose")
    assert not get_variant("no-flying").flying
    options = get_variant("options")
    assert (options.optional_capture, options.multi_mill_captures, options.no_immediate_reform,
            options.three_three_draw) == (True, 2, True, 10)
    assert get_variant("diagonals").board == "diagonals"
    assert get_variant("3mm").mill_wins and get_variant("lasker").move_in_placement


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_parameters_round_trip_as_text(name: str) -> None:
    v = PRESETS[name]
    params = v.to_params()
    assert set(params) == set(PARAMETERS)
    assert all(isinstance(text, str) and " " not in text for text in params.values())
    assert Variant.from_params(name, params) == v
    assert v.to_dict()["name"] == name and "source" not in v.to_dict()


def test_from_params_errors_name_the_parameter() -> None:
    with pytest.raises(ConfigError) as info:
        Variant.from_params("x", {"colour": "red"})
    assert info.value.path == "colour"
    with pytest.raises(ConfigError, match="flying: expected true or false"):
        Variant.from_params("x", {"flying": "maybe"})
    with pytest.raises(ConfigError, match="men: expected an integer"):
        Variant.from_params("x", {"men": "nine"})
    assert Variant.from_params("x", {"flying": "off", "men": "12", "board": "diagonals"}).men == 12


def test_yaml_mapping_base_plus_overrides() -> None:
    v = Variant.from_mapping({"base": "12mm", "flying": False, "three_three_draw": 10})
    base = get_variant("twelve-mens-morris")
    assert v.name == "twelve-mens-morris-custom"
    assert dataclasses.replace(v, name=base.name, flying=True, three_three_draw=0) == base
    assert Variant.from_mapping({"base": "nmm"}) == get_variant("nine-mens-morris")
    assert Variant.from_mapping({"base": "nmm", "name": "mine", "men": 10}).name == "mine"
    assert Variant.from_mapping({"men": 10}) == Variant(men=10)
    assert Variant.from_mapping("lasker") is get_variant("lasker-morris")


@pytest.mark.parametrize("data,path,message", [
    ({"base": "nmm", "colour": "red"}, "variant.colour", "unknown key"),
    ({"base": "nope"}, "variant.base", "unknown variant"),
    ("nope", "variant", "unknown variant"),
    ([1, 2], "variant", "expected a preset name or a mapping"),
    ({"men": "nine"}, "variant.men", "expected an integer"),
    ({"men": True}, "variant.men", "expected an integer"),
    ({"flying": "yes"}, "variant.flying", "expected true or false"),
    ({"board": 3}, "variant.board", "expected a string"),
    ({"men": 30}, "variant.men", "expected 1..24"),
    ({"men": 0}, "variant.men", "expected 1..24"),
    ({"fly_at": 10}, "variant.fly_at", "expected 0..men"),
    ({"multi_mill_captures": 4}, "variant.multi_mill_captures", "expected 1, 2 or 3"),
    ({"lose_below": 12}, "variant.lose_below", "expected 0..men"),
    ({"three_three_draw": -1}, "variant.three_three_draw", "expected 0"),
    ({"no_capture_draw": -5}, "variant.no_capture_draw", "expected 0"),
    ({"repetition": 1}, "variant.repetition", "at least 2"),
    ({"repetition": 0, "no_capture_draw": 0}, "variant.repetition", "games must end"),
    ({"mill_capture": "sometimes"}, "variant.mill_capture", "expected one of"),
    ({"blocked": "win"}, "variant.blocked", "expected one of"),
    ({"board_full": "win"}, "variant.board_full", "expected one of"),
    ({"board": "hex"}, "variant.board", "unknown board"),
    ({"board": "three", "men": 10}, "variant.men", "expected 1..9"),
    ({"name": "two words"}, "variant.name", "without spaces"),
])
def test_yaml_errors_name_the_key_path(data: Any, path: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        Variant.from_mapping(data)
    assert info.value.path == path
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)
    assert "\n" not in str(info.value)


def test_error_paths_start_where_the_caller_says() -> None:
    with pytest.raises(ConfigError) as info:
        Variant.from_mapping({"base": "nmm", "men": 40}, path="variants[2]")
    assert info.value.path == "variants[2].men"


def test_a_bad_variant_is_an_arena_error() -> None:
    with pytest.raises(ArenaError):
        Variant(mill_capture="sometimes")  # type: ignore[arg-type]


def test_load_variant_by_name_alias_and_file(tmp_path: Path) -> None:
    assert load_variant("nine-mens-morris") is load_variant("nmm")
    f = tmp_path / "mine.yaml"
    f.write_text("base: nine-mens-morris\nname: mine\nflying: false\nno_capture_draw: 50\n")
    v = load_variant(str(f))
    assert (v.name, v.flying, v.no_capture_draw, v.men) == ("mine", False, 50, 9)
    bare = tmp_path / "bare.yml"
    bare.write_text("six-mens-morris\n")
    assert load_variant(str(bare)) is get_variant("six-mens-morris")


def test_load_variant_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("base: [nine\n")
    with pytest.raises(ConfigError, match="broken.yaml: broken YAML"):
        load_variant(str(broken))
    with pytest.raises(ConfigError, match="cannot read"):
        load_variant(str(tmp_path / "missing.yaml"))
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("base: nine-mens-morris\nmen: [1]\n")
    with pytest.raises(ConfigError) as info:
        load_variant(str(wrong))
    assert info.value.path == "wrong.yaml.men"
    with pytest.raises(ConfigError, match="unknown variant 'chess'"):
        load_variant("chess")


def test_rules_doc_covers_every_parameter_and_preset() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name in PARAMETERS:
        assert f"`{name}`" in text, name
    for name in PRESETS:
        assert f"`{name}`" in text, name
    for value in ("last-resort", "never", "always", "lose", "draw", "capture", "hand", "mark",
                  "count", "remove-both", "remove-and-move"):
        assert f"`{value}`" in text


def test_sanmill_parameters_default_off_and_read_from_text_and_yaml(tmp_path: Path) -> None:
    nine = get_variant("nine-mens-morris")
    assert (nine.placement_mill, nine.one_time_mill, nine.second_moves_first) == ("capture", False, False)
    v = Variant.from_params("x", {"placement_mill": "hand", "one_time_mill": "true",
                                  "second_moves_first": "true"})
    assert (v.placement_mill, v.one_time_mill, v.second_moves_first) == ("hand", True, True)
    assert Variant.from_params("x", v.to_params()) == v
    with pytest.raises(ConfigError, match="placement_mill: expected one of capture, hand, mark, count, got .board."):
        Variant.from_params("x", {"placement_mill": "board"})
    path = tmp_path / "dooz.yaml"
    path.write_text("base: twelve-mens-morris\nplacement_mill: hand\nboard_full: lose\n")
    dooz = load_variant(str(path))
    assert (dooz.board, dooz.men, dooz.placement_mill, dooz.board_full) == ("diagonals", 12, "hand", "lose")
    path.write_text("base: nine-mens-morris\none_time_mill: yes please\n")
    with pytest.raises(ConfigError) as info:
        load_variant(str(path))
    assert info.value.path == "dooz.yaml.one_time_mill"


def test_removal_rules_are_parameters_in_any_combination(tmp_path: Path) -> None:
    """Zhi Qi's and El Filja's rules: off by default, read from protocol text and YAML, checked."""
    nine = get_variant("nine-mens-morris")
    assert (nine.blocked, nine.board_full, nine.placement_mill) == ("lose", "draw", "capture")
    v = Variant.from_params("x", {"blocked": "remove-and-move", "board_full": "remove-both",
                                  "placement_mill": "count", "second_moves_first": "true"})
    assert (v.blocked, v.board_full, v.placement_mill) == ("remove-and-move", "remove-both", "count")
    assert Variant.from_params("x", v.to_params()) == v
    assert "blocked=remove-and-move" in " ".join(f"{k}={t}" for k, t in v.to_params().items())
    with pytest.raises(ConfigError, match="blocked: expected one of lose, draw, remove-and-move"):
        Variant.from_params("x", {"blocked": "remove"})
    with pytest.raises(ConfigError, match="board_full: expected one of draw, lose, remove-both"):
        Variant.from_params("x", {"board_full": "remove-one"})
    path = tmp_path / "filja.yaml"
    path.write_text("base: six-mens-morris\nmen: 8\nplacement_mill: count\nboard_full: remove-both\n"
                    "blocked: remove-and-move\n")
    mine = load_variant(str(path))
    assert (mine.board, mine.men, mine.placement_mill, mine.board_full, mine.blocked) == (
        "six", 8, "count", "remove-both", "remove-and-move")
    path.write_text("base: el-filja\nboard_full: everyone-removes\n")
    with pytest.raises(ConfigError) as info:
        load_variant(str(path))
    assert info.value.path == "filja.yaml.board_full"


def test_sanmill_presets_follow_its_rule_table() -> None:
    """The six presets against Sanmill's C++ preset table (src/rule.cpp), field by field."""
    expect = {  # board, men, flying, mill_capture, placement_mill, second, one_time, full, blocked
        "russian-mill": ("standard", 9, True, "last-resort", "capture", False, True, "draw", "lose"),
        "dooz": ("diagonals", 12, True, "last-resort", "hand", False, False, "lose", "lose"),
        "cheng-san-qi": ("standard", 9, False, "last-resort", "mark", False, False, "draw", "lose"),
        "da-san-qi": ("diagonals", 12, False, "always", "mark", True, False, "lose", "lose"),
        "zhi-qi": ("diagonals", 12, True, "last-resort", "capture", False, False, "remove-both",
                   "remove-and-move"),
        "el-filja": ("standard", 12, False, "always", "count", False, False, "remove-both", "lose"),
    }
    for name, fields in expect.items():
        v = get_variant(name)
        assert (v.board, v.men, v.flying, v.mill_capture, v.placement_mill, v.second_moves_first,
                v.one_time_mill, v.board_full, v.blocked) == fields, name
        # the parameters every Sanmill preset shares with nine men's morris
        assert (v.fly_at, v.lose_below, v.multi_mill_captures, v.optional_capture,
                v.no_immediate_reform, v.repetition, v.no_capture_draw) == (3, 3, 1, False, False, 3, 100)
        assert "Sanmill" in v.source and "src/rule.cpp" in v.source
