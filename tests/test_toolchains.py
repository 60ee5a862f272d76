"""Every common toolchain builds in the default sandbox: the toolchain rule
(:mod:`arena.sandbox.paths`: the host's toolchain homes shown read-only, their variables set)
and the example bots of ``docs/examples/`` in compiled languages and Node, each built and
checked by ``arena check`` with its defaults, in a copy (nothing is built in the
repository).  An example whose tool is not installed here, or that needs bubblewrap where it
is not usable, is skipped with the reason (CI has none of these toolchains)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Iterator

import pytest
import yaml
from click.testing import CliRunner

from arena.build import STAMP
from arena.cli import cli
from arena.manifest import load_bot
from arena.sandbox import Level, Sandbox, available_levels, bwrap_status
from arena.sandbox import bwrap as bwrap_module
from arena.sandbox import paths
from arena.sandbox.procs import is_root
from tests.conftest import ROOT

pytestmark = pytest.mark.usefixtures("no_leftover_children")

EXAMPLES = ROOT / "docs" / "examples"
#: the example folders that need a toolchain, and the programs each needs on PATH
TOOLCHAIN_EXAMPLES: dict[str, tuple[str, ...]] = {
    "rust": ("cargo",), "go": ("go",), "cpp": ("g++", "make"), "java": ("javac", "jar", "java"),
    "node": ("node",)}
#: what each example's build leaves in its folder (its program)
PROGRAMS = {"rust": "target/release/rusty", "go": "bot", "cpp": "bot", "java": "bot.jar"}
LEVELS = available_levels()
DEFAULT_VARIANTS = {"nine-mens-morris", "twelve-mens-morris", "six-mens-morris"}


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """pytest's ``tmp_path``, readable by other users (as root, builds and bots run as an
    unprivileged uid, which must read the copy)."""
    tmp_path.chmod(0o755)
    return tmp_path


def _missing(programs: tuple[str, ...]) -> str:
    """Why the programs cannot be used here ("" when they all can)."""
    absent = [p for p in programs if shutil.which(p) is None]
    return f"{', '.join(absent)} not installed here" if absent else ""


def _needs(folder: str) -> None:
    """Skip, with the reason, unless the example's tools and bubblewrap are usable here."""
    why = _missing(TOOLCHAIN_EXAMPLES[folder])
    if why:
        pytest.skip(f"docs/examples/{folder}: {why}")
    if Level.BWRAP not in LEVELS:
        pytest.skip(f"bubblewrap is not usable here: {bwrap_status().detail}")


def _copy(folder: str, tmp_path: Path) -> Path:
    dst = tmp_path / folder
    shutil.copytree(EXAMPLES / folder, dst, ignore=shutil.ignore_patterns(
        "target", "bot", "bot.jar", "classes", STAMP))
    for path in [dst, *dst.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return dst


def _check(folder: Path, *args: str) -> str:
    """``arena check FOLDER`` with the default isolation; its output, after asserting PASS."""
    result = CliRunner().invoke(cli, ["check", str(folder), *args])
    assert result.exit_code == 0, result.output
    assert "PASS: " in result.output, result.output
    return result.output


def _played(output: str) -> set[str]:
    return set(re.findall(r"^game (\S+?)(?:-kept)?-\d+: ", output, re.M))


# -- the examples ------------------------------------------------------------------------
@pytest.mark.parametrize("folder", sorted(TOOLCHAIN_EXAMPLES))
def test_each_toolchain_example_builds_and_passes_arena_check_with_its_defaults(
        folder: str, tmp_path: Path) -> None:
    """The folder as docs/BOTS.md says to write it: its build in the default sandbox (no
    network, a private HOME), then ``arena check`` with its defaults (three boards)."""
    _needs(folder)
    bot = _copy(folder, tmp_path)
    output = _check(bot)
    assert _played(output) == DEFAULT_VARIANTS
    spec = load_bot(bot)
    if spec.build:
        assert "build: built in " in output
        assert (bot / PROGRAMS[folder]).is_file()
        assert (bot / PROGRAMS[folder]).stat().st_nlink == 1
        stamp = json.loads((bot / STAMP).read_text())
        assert stamp["ok"] and stamp["level"] == "bwrap"
        assert "not copied back" not in stamp["log"], stamp["log"]


def test_the_rust_example_builds_at_basic_too(tmp_path: Path) -> None:
    """At ``basic`` too the build's HOME is private: rustup finds its toolchains only
    through RUSTUP_HOME (as root, also only through the read-only view of it)."""
    why = _missing(("cargo",))
    if why:
        pytest.skip(f"docs/examples/rust: {why}")
    if Level.BASIC not in LEVELS:
        pytest.skip("level basic is not available here")
    bot = _copy("rust", tmp_path)
    output = _check(bot, "--isolation", "basic", "--variant", "nine-mens-morris")
    assert "build: built in " in output and (bot / "target/release/rusty").is_file()


def _distribution_cargo() -> Path | None:
    """A cargo installed by the system's packages (not a rustup proxy), if there is one."""
    for folder in ("/usr/bin", "/usr/local/bin"):
        cargo = Path(folder) / "cargo"
        if cargo.is_file() and Path(os.path.realpath(cargo)).name != "rustup":
            return cargo
    return None


def test_the_rust_example_builds_with_a_distribution_cargo(tmp_path: Path) -> None:
    """Debian's ``cargo`` and ``rustc`` (``apt-get install cargo``), alone on the build's
    PATH: nothing of rustup is needed."""
    cargo = _distribution_cargo()
    if cargo is None:
        pytest.skip("no distribution cargo here (/usr/bin/cargo: apt-get install cargo)")
    if Level.BWRAP not in LEVELS:
        pytest.skip(f"bubblewrap is not usable here: {bwrap_status().detail}")
    bot = _copy("rust", tmp_path)
    manifest = yaml.safe_load((bot / "bot.yaml").read_text())
    manifest["build"] = f"PATH={cargo.parent}:/usr/bin:/bin cargo --version && " \
                        f"PATH={cargo.parent}:/usr/bin:/bin cargo build --release"
    (bot / "bot.yaml").write_text(yaml.safe_dump(manifest))
    output = _check(bot, "--variant", "nine-mens-morris")
    assert "build: built in " in output
    log = json.loads((bot / STAMP).read_text())["log"]
    assert "rustup" not in log and "Finished" in log, log


# -- dependencies: vendored, offline --------------------------------------------------------
def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


#: what ``cargo vendor`` leaves for a crate ``tinydep`` (written by hand: no network here),
#: and the configuration it tells you to add
RUST_VENDORED = {
    "vendor/tinydep/Cargo.toml": '[package]\nname = "tinydep"\nversion = "0.1.0"\n'
                                 'edition = "2021"\n',
    "vendor/tinydep/src/lib.rs": "pub fn first(words: &str) -> &str "
                                 "{ words.split_whitespace().next().unwrap_or(\"\") }\n",
    "vendor/tinydep/.cargo-checksum.json": '{"files":{},"package":"'
                                           + "0" * 64 + '"}',
    ".cargo/config.toml": '[source.crates-io]\nreplace-with = "vendored-sources"\n\n'
                          '[source.vendored-sources]\ndirectory = "vendor"\n'}


def test_a_rust_crate_with_a_dependency_builds_from_vendor_and_fails_at_once_without(
        tmp_path: Path) -> None:
    """No network in the build: a dependency that is not vendored fails at once (offline),
    naming the crate; vendored as ``cargo vendor`` does it, it builds."""
    _needs("rust")
    bot = _copy("rust", tmp_path)
    main = bot / "src" / "main.rs"
    main.write_text(main.read_text().replace(
        'first_move = words.next().unwrap_or("").to_string()',
        'first_move = tinydep::first(&line["legalmoves".len()..]).to_string()'))
    (bot / "Cargo.toml").write_text((bot / "Cargo.toml").read_text().replace(
        "[profile.release]", '[dependencies]\ntinydep = "0.1"\n\n[profile.release]'))
    result = CliRunner().invoke(cli, ["check", str(bot), "--variant", "nine-mens-morris"])
    assert result.exit_code == 1, result.output
    assert "problem: build-failure: build failed (exit 101) after " in result.output
    assert "no matching package named `tinydep` found" in result.output
    assert "offline" in result.output  # said at once: no retries of the network
    _write(bot, RUST_VENDORED)
    output = _check(bot, "--variant", "nine-mens-morris")
    assert "build: built in " in output


def test_a_go_module_with_a_dependency_builds_from_vendor(tmp_path: Path) -> None:
    """``go mod vendor``'s layout (written by hand): GOFLAGS=-mod=vendor builds from it;
    without it the build fails, naming ``go mod vendor``."""
    _needs("go")
    bot = _copy("go", tmp_path)
    (bot / "go.mod").write_text((bot / "go.mod").read_text()
                                + "\nrequire example.com/tiny v0.1.0\n")
    main = bot / "main.go"
    main.write_text(main.read_text().replace('"strings"\n', '"strings"\n\n\t"example.com/tiny"\n')
                    .replace("firstMove = words[1]", "firstMove = tiny.First(words[1:])"))
    result = CliRunner().invoke(cli, ["check", str(bot), "--variant", "nine-mens-morris"])
    assert result.exit_code == 1 and "go mod vendor" in result.output, result.output
    _write(bot, {"vendor/modules.txt": "# example.com/tiny v0.1.0\n## explicit\nexample.com/tiny\n",
                 "vendor/example.com/tiny/tiny.go": "package tiny\n\n// First is the first "
                 "word.\nfunc First(w []string) string {\n\tif len(w) == 0 {\n\t\treturn \"\"\n"
                 "\t}\n\treturn w[0]\n}\n"})
    output = _check(bot, "--variant", "nine-mens-morris")
    assert "build: built in " in output


# -- the rule itself (runs everywhere: fake toolchain homes) -------------------------------
@pytest.fixture
def fake_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """A rustup home, a cargo home (with a credentials file and a config the sandbox must
    not show), a Go root and a JDK, named by the variables the referee reads; the discovery
    is redone for them and again afterwards."""
    base = tmp_path / "host"
    homes = {"rustup": base / "rustup", "cargo": base / "cargo", "go": base / "go",
             "java": base / "jdk"}
    (homes["rustup"] / "toolchains" / "stable" / "bin").mkdir(parents=True)
    (homes["rustup"] / "settings.toml").write_text('default_toolchain = "stable"\n')
    for sub in ("bin", "registry"):
        (homes["cargo"] / sub).mkdir(parents=True)
    (homes["cargo"] / "bin" / "cargo-tool").write_text("#!/bin/sh\necho tool\n")
    (homes["cargo"] / "credentials.toml").write_text('[registry]\ntoken = "SECRET-TOKEN"\n')
    (homes["cargo"] / "config.toml").write_text("[net]\noffline = false\n")
    for home, program in ((homes["go"], "go"), (homes["java"], "java")):
        (home / "bin").mkdir(parents=True)
        (home / "bin" / program).write_text("#!/bin/sh\n")
    for path in [base, *base.rglob("*")]:
        path.chmod(0o755)
    for var, key in (("RUSTUP_HOME", "rustup"), ("CARGO_HOME", "cargo"), ("GOROOT", "go"),
                     ("JAVA_HOME", "java")):
        monkeypatch.setenv(var, str(homes[key]))
    _forget()
    try:
        yield {k: Path(os.path.realpath(v)) for k, v in homes.items()}
    finally:
        monkeypatch.undo()
        _forget()


def _forget() -> None:
    """Find the toolchains again (they are looked for once per process)."""
    paths.toolchains.cache_clear()
    bwrap_module._mounts.cache_clear()


def test_the_toolchains_are_found_from_the_referees_variables(
        fake_homes: dict[str, Path]) -> None:
    found = {t.name: t for t in paths.toolchains()}
    assert found["rustup"].paths == (str(fake_homes["rustup"]),)
    assert dict(found["rustup"].env) == {"RUSTUP_HOME": str(fake_homes["rustup"])}
    cargo = fake_homes["cargo"]
    assert found["cargo"].paths == (str(cargo / "bin"), str(cargo / "registry"))  # no git/
    assert dict(found["cargo"].env) == {"CARGO_HOME": str(cargo), "CARGO_NET_OFFLINE": "true"}
    assert dict(found["go"].env) == {"GOROOT": str(fake_homes["go"]), "GOTOOLCHAIN": "local",
                                     "GOPROXY": "off", "GOFLAGS": "-mod=vendor"}
    assert dict(found["java"].env) == {"JAVA_HOME": str(fake_homes["java"])}
    env = paths.toolchain_env("/usr/bin:/bin")
    assert env["PATH"].split(":")[:2] == ["/usr/bin", "/bin"]  # the host's order first
    assert str(cargo / "bin") in env["PATH"].split(":")
    # a command of a toolchain's home adds no mount of its own (not all of CARGO_HOME)
    shown = paths.bot_paths([str(cargo / "bin" / "cargo-tool")], ())
    assert str(cargo) not in shown and str(cargo / "bin") in shown


def test_no_toolchain_no_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host without rustup or a cargo home shows nothing of theirs and sets no home (a
    distribution's cargo then uses the private HOME's .cargo, offline)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("RUSTUP_HOME", "CARGO_HOME"):
        monkeypatch.delenv(var, raising=False)
    _forget()
    try:
        found = {t.name: t for t in paths.toolchains()}
        assert "rustup" not in found
        if "cargo" in found:  # a cargo on PATH
            assert found["cargo"].paths == () and found["cargo"].home == ""
            assert dict(found["cargo"].env) == {"CARGO_NET_OFFLINE": "true"}
        env = paths.toolchain_env("/usr/bin")
        assert "RUSTUP_HOME" not in env and "CARGO_HOME" not in env
    finally:
        monkeypatch.undo()
        _forget()


PROBE = r"""
import json, os
home = os.environ["CARGO_HOME"]
def can_write(path):
    try:
        open(os.path.join(path, "planted"), "w").close()
    except OSError:
        return False
    return True
print(json.dumps({"env": {k: os.environ.get(k) for k in ("RUSTUP_HOME", "CARGO_HOME",
                  "CARGO_NET_OFFLINE",
                  "GOROOT", "GOTOOLCHAIN", "GOPROXY", "GOFLAGS", "JAVA_HOME")},
                  "cargo": sorted(os.listdir(home)),
                  "tool": open(os.path.join(home, "bin", "cargo-tool")).read(),
                  "settings": open(os.path.join(os.environ["RUSTUP_HOME"],
                                                "settings.toml")).read(),
                  "write": [can_write(p) for p in (home + "/bin", os.environ["RUSTUP_HOME"])],
                  "path": os.environ["PATH"].split(":")}))
"""


@pytest.mark.parametrize("level", [Level.BWRAP, Level.BASIC], ids=lambda lv: lv.value)
def test_a_sandbox_shows_the_toolchains_read_only_and_nothing_else_of_their_homes(
        level: Level, fake_homes: dict[str, Path], tmp_path: Path) -> None:
    """Inside: the variables set, the homes readable and read-only, of CARGO_HOME only
    bin/ and registry/ (never credentials.toml or config.toml)."""
    from tests.hostile.conftest import run_in

    if level not in LEVELS:
        pytest.skip(f"bubblewrap is not usable here: {bwrap_status().detail}"
                    if level is Level.BWRAP else "level basic is not available here")
    if level is Level.BASIC and not is_root():
        pytest.skip("basic confines the file system only when the referee runs as root")
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o755)
    with Sandbox(level, folder) as sb:
        run = run_in(sb, PROBE, timeout=60.0)
    assert run.returncode == 0, run.stderr
    seen = run.json()
    cargo = str(fake_homes["cargo"])
    assert seen["env"] == {"RUSTUP_HOME": str(fake_homes["rustup"]), "CARGO_HOME": cargo,
                           "CARGO_NET_OFFLINE": "true",
                           "GOROOT": str(fake_homes["go"]), "GOTOOLCHAIN": "local",
                           "GOPROXY": "off", "GOFLAGS": "-mod=vendor",
                           "JAVA_HOME": str(fake_homes["java"])}
    assert seen["cargo"] == ["bin", "registry"]  # no credentials.toml, no config.toml
    assert seen["tool"].startswith("#!/bin/sh")
    assert "stable" in seen["settings"]
    assert seen["write"] == [False, False]
    assert cargo + "/bin" in seen["path"]
    assert not (fake_homes["cargo"] / "bin" / "planted").exists()
