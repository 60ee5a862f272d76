"""The competition server's parts without a server process: safe unpacking of hostile
archives, the settings file, the schema's migrations against its models, the library's
access rules and rate limit on a real SQLite file, and the ``arena server`` commands.
Skipped with a reason where the ``server`` extra is not installed."""

from __future__ import annotations

import io
import os
import re
import stat
import tarfile
import zipfile
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner

pytest.importorskip("sqlalchemy", reason="the server extra is not installed "
                                         "(pip install -e '.[server]')")
pytest.importorskip("alembic", reason="the server extra is not installed")
pytest.importorskip("fastapi", reason="the server extra is not installed")

from arena.cli import cli  # noqa: E402
from arena.errors import ConfigError  # noqa: E402
from arena.server.config import ServerConfig, parse_server_config  # noqa: E402
from arena.server.unpack import UnpackError, safe_unpack  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MB = 1 << 20


def _zip(path: Path, entries: list[tuple[str, bytes, int]]) -> Path:
    """A zip of (name, data, unix mode) entries."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return path


def _tar(path: Path, entries: list[tarfile.TarInfo], data: dict[str, bytes] | None = None
         ) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for info in entries:
            payload = (data or {}).get(info.name)
            tf.addfile(info, io.BytesIO(payload) if payload is not None else None)
    return path


def _reg(name: str, data: bytes) -> tuple[tarfile.TarInfo, dict[str, bytes]]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, {name: data}


BOT_YAML = b"name: tiny\ncommand: \"{python} bot.py\"\n"


def _unpack(archive: Path, dest: Path, max_bytes: int = MB, max_files: int = 50) -> Path:
    return safe_unpack(archive, dest, max_bytes=max_bytes, max_files=max_files)


def _outside_untouched(tmp_path: Path, dest: Path) -> None:
    """Nothing but the archive(s) next to the destination, and the destination is gone."""
    assert not dest.exists()
    assert not (tmp_path / "evil.txt").exists()
    assert not (tmp_path.parent / "evil.txt").exists()


def test_a_good_zip_and_tar_unpack_to_the_bot_folder(tmp_path: Path) -> None:
    z = _zip(tmp_path / "bot.zip", [("mybot/bot.yaml", BOT_YAML, 0o644),
                                    ("mybot/bot.py", b"print()\n", 0o755)])
    folder = _unpack(z, tmp_path / "a")
    assert folder == tmp_path / "a" / "mybot"
    assert (folder / "bot.yaml").read_bytes() == BOT_YAML
    assert os.stat(folder / "bot.py").st_mode & stat.S_IXUSR
    info, data = _reg("bot.yaml", BOT_YAML)
    t = _tar(tmp_path / "bot.tar.gz", [info], data)
    assert _unpack(t, tmp_path / "b") == tmp_path / "b"


@pytest.mark.parametrize("name", ["../evil.txt", "/tmp/evil.txt", "a/../../evil.txt",
                                  "..\\evil.txt"])
def test_zip_slip_is_refused_without_writing_outside(tmp_path: Path, name: str) -> None:
    z = _zip(tmp_path / "slip.zip", [("bot.yaml", BOT_YAML, 0o644), (name, b"x", 0o644)])
    with pytest.raises(UnpackError, match="refused"):
        _unpack(z, tmp_path / "dest")
    _outside_untouched(tmp_path, tmp_path / "dest")


@pytest.mark.parametrize("name", ["../evil.txt", "/tmp/evil.txt"])
def test_tar_slip_is_refused(tmp_path: Path, name: str) -> None:
    info, data = _reg(name, b"x")
    t = _tar(tmp_path / "slip.tar.gz", [info], data)
    with pytest.raises(UnpackError, match="outside"):
        _unpack(t, tmp_path / "dest")
    _outside_untouched(tmp_path, tmp_path / "dest")


def test_links_are_refused(tmp_path: Path) -> None:
    link = tarfile.TarInfo("bot.yaml")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    with pytest.raises(UnpackError, match="link"):
        _unpack(_tar(tmp_path / "sym.tar.gz", [link]), tmp_path / "d1")
    first, data = _reg("a.txt", b"x")
    hard = tarfile.TarInfo("bot.yaml")
    hard.type, hard.linkname = tarfile.LNKTYPE, "a.txt"
    with pytest.raises(UnpackError, match="link"):
        _unpack(_tar(tmp_path / "hard.tar.gz", [first, hard], data), tmp_path / "d2")
    z = _zip(tmp_path / "sym.zip", [("bot.yaml", b"/etc/passwd", stat.S_IFLNK | 0o777)])
    with pytest.raises(UnpackError, match="link"):
        _unpack(z, tmp_path / "d3")
    for d in ("d1", "d2", "d3"):
        assert not (tmp_path / d).exists()


def test_archive_bombs_are_refused_at_the_size_cap(tmp_path: Path) -> None:
    zeros = bytes(20 * MB)  # compresses to ~20 KB
    z = _zip(tmp_path / "bomb.zip", [("bot.yaml", BOT_YAML, 0o644), ("zeros", zeros, 0o644)])
    assert z.stat().st_size < 100_000
    with pytest.raises(UnpackError, match="size limit"):
        _unpack(z, tmp_path / "d1")
    info, data = _reg("zeros", zeros)
    t = _tar(tmp_path / "bomb.tar.gz", [info], data)
    with pytest.raises(UnpackError, match="size limit"):
        _unpack(t, tmp_path / "d2")
    many = _zip(tmp_path / "many.zip", [(f"f{i}", b"", 0o644) for i in range(60)])
    with pytest.raises(UnpackError, match="more than 50 files"):
        _unpack(many, tmp_path / "d3")
    assert not any((tmp_path / d).exists() for d in ("d1", "d2", "d3"))


def test_a_zip_that_lies_about_its_sizes_stops_at_the_cap(tmp_path: Path) -> None:
    """A member whose header claims 10 bytes but holds 2 MB is refused while writing."""
    path = _zip(tmp_path / "liar.zip", [("bot.yaml", BOT_YAML, 0o644),
                                        ("big", bytes(2 * MB), 0o644)])
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        big = zf.getinfo("big")
    # the uncompressed size of "big" in the central directory (offset 24 of its record)
    pos = raw.find(b"PK\x01\x02")
    while pos >= 0:
        name_len = int.from_bytes(raw[pos + 28:pos + 30], "little")
        if raw[pos + 46:pos + 46 + name_len] == b"big":
            raw[pos + 24:pos + 28] = (10).to_bytes(4, "little")
        pos = raw.find(b"PK\x01\x02", pos + 4)
    assert big.file_size == 2 * MB
    path.write_bytes(bytes(raw))
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("big").file_size == 10
    with pytest.raises(UnpackError):
        _unpack(path, tmp_path / "d", max_bytes=MB)
    assert not (tmp_path / "d").exists()


def test_not_an_archive_or_no_manifest(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"this is not an archive")
    with pytest.raises(UnpackError, match="not a .zip or .tar.gz"):
        _unpack(junk, tmp_path / "d1")
    z = _zip(tmp_path / "empty.zip", [("readme.txt", b"hi", 0o644)])
    with pytest.raises(UnpackError, match="no bot.yaml"):
        _unpack(z, tmp_path / "d2")


# ---- malformed archives: always an UnpackError, never another exception ----------------


def _raw_zip(entries: list[tuple[str, bytes]], method: int = zipfile.ZIP_STORED) -> bytes:
    """A zip of (name, data) entries as bytes; names may repeat (zipfile warns)."""
    import warnings

    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name"
        with zipfile.ZipFile(buf, "w", method) as zf:
            for name, data in entries:
                zf.writestr(name, data)
    return buf.getvalue()


def _patch_headers(raw: bytes, local: int, central: int, value: bytes) -> bytes:
    """``value`` written at offset ``local`` of every local file header and ``central`` of
    every central directory record (the two copies of an entry's fields)."""
    out = bytearray(raw)
    for signature, offset in ((b"PK\x03\x04", local), (b"PK\x01\x02", central)):
        pos = out.find(signature)
        while pos >= 0:
            out[pos + offset:pos + offset + len(value)] = value
            pos = out.find(signature, pos + 4)
    return bytes(out)


def _refused(tmp_path: Path, data: bytes, match: str, suffix: str = ".zip") -> str:
    """``data`` unpacked: refused with one line matching ``match``, nothing left behind."""
    archive = tmp_path / f"a{suffix}"
    archive.write_bytes(data)
    dest = tmp_path / "dest"
    with pytest.raises(UnpackError) as e:
        _unpack(archive, dest)
    message = str(e.value)
    assert message.startswith("refused: ") and "\n" not in message, message
    assert re.search(match, message), message
    assert not dest.exists()
    return message


def _tar_bytes(entries: list[tuple[tarfile.TarInfo, bytes | None]], **kwargs: Any) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", **kwargs) as tf:
        for info, data in entries:
            if data is not None:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def _dir(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    return info


@pytest.mark.parametrize("entries", [
    [("bot.yaml", BOT_YAML), ("bot.yaml", BOT_YAML)],          # the same file twice
    [("a/", b""), ("a/", b""), ("bot.yaml", BOT_YAML)],        # the same folder twice
    [("bot.yaml", BOT_YAML), ("./bot.yaml", BOT_YAML)],        # twice, spelled apart
])
def test_a_zip_with_an_entry_twice_is_refused(tmp_path: Path,
                                              entries: list[tuple[str, bytes]]) -> None:
    _refused(tmp_path, _raw_zip(entries), "twice")


@pytest.mark.parametrize("entries", [
    [("bot.yaml", BOT_YAML), ("a", b"x"), ("a/b", b"y")],      # a file, then inside it
    [("bot.yaml", BOT_YAML), ("a/b", b"y"), ("a", b"x")],      # inside it, then the file
    [("bot.yaml", BOT_YAML), ("a/", b""), ("a", b"x")],        # a folder, then a file
    [("bot.yaml", BOT_YAML), ("a", b"x"), ("a/", b"")],        # a file, then a folder
    [("bot.yaml", BOT_YAML), ("a", b"x"), ("a/b/c/d", b"y")],  # deep below it
])
def test_a_name_that_is_a_file_and_a_folder_is_refused(
        tmp_path: Path, entries: list[tuple[str, bytes]]) -> None:
    _refused(tmp_path, _raw_zip(entries), "both a file and a folder")
    tar = [(_dir(n.rstrip("/")) if n.endswith("/") else tarfile.TarInfo(n),
            None if n.endswith("/") else d) for n, d in entries]
    _refused(tmp_path, _tar_bytes(tar), "both a file and a folder", ".tar.gz")


def test_a_tar_with_a_member_twice_is_refused(tmp_path: Path) -> None:
    entries = [(tarfile.TarInfo("bot.yaml"), BOT_YAML), (tarfile.TarInfo("bot.yaml"), b"x")]
    _refused(tmp_path, _tar_bytes(entries), "twice", ".tar.gz")


def test_the_usual_tar_of_a_folder_still_unpacks(tmp_path: Path) -> None:
    """``tar czf bot.tgz -C folder .``: "./" first, every name below "./"."""
    entries = [(_dir("."), None), (tarfile.TarInfo("./bot.yaml"), BOT_YAML),
               (_dir("./lib"), None), (tarfile.TarInfo("./lib/x.py"), b"")]
    archive = tmp_path / "ok.tar.gz"
    archive.write_bytes(_tar_bytes(entries))
    assert _unpack(archive, tmp_path / "d") == tmp_path / "d"
    assert (tmp_path / "d" / "lib" / "x.py").is_file()


@pytest.mark.parametrize("method", [1, 6, 9, 97, 99])  # shrunk, imploded, deflate64, ..., AES
def test_unsupported_compression_methods_are_refused(tmp_path: Path, method: int) -> None:
    raw = _raw_zip([("bot.yaml", BOT_YAML)])
    _refused(tmp_path, _patch_headers(raw, 8, 10, method.to_bytes(2, "little")),
             f"compression method {method}")


def test_encrypted_zip_entries_are_refused(tmp_path: Path) -> None:
    raw = _raw_zip([("bot.yaml", BOT_YAML)])
    _refused(tmp_path, _patch_headers(raw, 6, 8, b"\x01\x00"), "encrypted")


def test_damaged_and_cut_short_archives_are_refused(tmp_path: Path) -> None:
    data = bytes(range(256)) * 40
    stored = _raw_zip([("bot.yaml", BOT_YAML), ("data", data)])
    at = stored.find(bytes(range(256)))  # a byte of the stored data: a wrong CRC
    flipped = stored[:at + 100] + bytes([stored[at + 100] ^ 0xFF]) + stored[at + 101:]
    _refused(tmp_path, flipped, "damaged.*CRC")
    deflated = _raw_zip([("bot.yaml", BOT_YAML), ("data", data)], zipfile.ZIP_DEFLATED)
    start = deflated.find(b"data", 30) + 4  # the deflate stream of "data"
    garbled = deflated[:start + 5] + b"\xff" * 40 + deflated[start + 45:]
    _refused(tmp_path, garbled, "damaged")
    # the headers' sizes say more than there is: the data ends before the entry does
    bigger = _raw_zip([("bot.yaml", BOT_YAML)])
    for local, central in ((18, 20), (22, 24)):  # compressed and uncompressed sizes
        bigger = _patch_headers(bigger, local, central, (10 ** 5).to_bytes(4, "little"))
    _refused(tmp_path, bigger, "damaged or cut short")
    # cut short: a zip without its end (not a zip at all), a tar.gz cut in a member's data
    _refused(tmp_path, stored[:len(stored) // 2], "not a .zip or .tar.gz")
    tgz = _tar_bytes([(tarfile.TarInfo("bot.yaml"), BOT_YAML),
                      (tarfile.TarInfo("big"), os.urandom(50_000))])
    _refused(tmp_path, tgz[:len(tgz) // 2], "damaged or cut short", ".tar.gz")
    packed = _tar_bytes([(tarfile.TarInfo("bot.yaml"), BOT_YAML),
                         (tarfile.TarInfo("bot.py"), b"print(1)\n" * 5000)])
    broken = packed[:40] + b"\xff" * 30 + packed[70:]  # a garbled deflate stream
    _refused(tmp_path, broken, "damaged|not a .zip", ".tar.gz")
    _refused(tmp_path, b"\x1f\x8b\x08\x00" + b"\x00" * 20, "refused", ".tar.gz")
    _refused(tmp_path, b"", "not a .zip or .tar.gz", ".tar.gz")


def test_names_that_are_not_utf8_or_hold_control_characters_are_refused(
        tmp_path: Path) -> None:
    raw = _raw_zip([("bot.yaml", BOT_YAML), ("\u00e9t\u00e9.txt", b"x")])  # UTF-8 flag set
    bad_utf8 = raw.replace("\u00e9t\u00e9".encode(), b"\xff\xfet\xe9\xe9")  # 5 bytes too
    _refused(tmp_path, bad_utf8, "not valid UTF-8")
    # without the flag (CP437): UTF-8 bytes are taken as UTF-8, anything else refused
    unflagged = _patch_headers(raw, 6, 8, b"\x00\x00")
    archive = tmp_path / "utf8.zip"
    archive.write_bytes(unflagged)
    assert (_unpack(archive, tmp_path / "ok") / "\u00e9t\u00e9.txt").read_bytes() == b"x"
    _refused(tmp_path, _patch_headers(bad_utf8, 6, 8, b"\x00\x00"), "not valid UTF-8")
    for name in ("a\nb.txt", "tab\there", "del\x7f", "c1\x85"):
        _refused(tmp_path, _raw_zip([("bot.yaml", BOT_YAML), (name, b"x")]),
                 "control characters")
    _refused(tmp_path, _raw_zip([("bot.yaml", BOT_YAML), ("x" * 300, b"x")]), "255 bytes")
    # a tar name of bytes that are not UTF-8 (read back with surrogate escapes)
    tar = _tar_bytes([(tarfile.TarInfo("bot.yaml"), BOT_YAML),
                      (tarfile.TarInfo(b"\xff\xfe.txt".decode("utf-8", "surrogateescape")),
                       b"x")], format=tarfile.GNU_FORMAT, encoding="utf-8",
                     errors="surrogateescape")
    _refused(tmp_path, tar, "not valid UTF-8", ".tar.gz")


def test_no_mangled_archive_raises_anything_but_unpack_error(tmp_path: Path) -> None:
    """Good archives with bytes changed, cut or repeated at random: each unpacks or is
    refused with an :class:`UnpackError`, and a refusal leaves nothing behind."""
    import random

    rng = random.Random(23)
    good = [_raw_zip([("bot/bot.yaml", BOT_YAML), ("bot/bot.py", b"print(1)\n" * 50)],
                     zipfile.ZIP_DEFLATED),
            _raw_zip([("bot.yaml", BOT_YAML), ("lib/", b""), ("lib/a", bytes(3000))]),
            _tar_bytes([(tarfile.TarInfo("bot.yaml"), BOT_YAML),
                        (tarfile.TarInfo("bot.py"), b"print(1)\n" * 50)])]
    refused = unpacked = 0
    for n in range(600):
        data = bytearray(rng.choice(good))
        for _ in range(rng.randint(1, 4)):
            how, at = rng.randrange(4), rng.randrange(len(data))
            if how == 0:
                data[at] = rng.randrange(256)
            elif how == 1:
                del data[at:at + rng.randint(1, 64)]
            elif how == 2:
                data[at:at] = data[rng.randrange(len(data)):][:rng.randint(1, 64)]
            else:
                data[at:at + 4] = rng.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00",
                                              b"\x00\x00\x00\x80"])
        archive = tmp_path / f"m{n}.bin"
        archive.write_bytes(bytes(data))
        dest = tmp_path / f"d{n}"
        try:
            _unpack(archive, dest)
            unpacked += 1
        except UnpackError as e:
            assert str(e).startswith("refused: ") and "\n" not in str(e), str(e)
            assert not dest.exists()
            refused += 1
    assert refused > 100, (refused, unpacked)


# ---- settings --------------------------------------------------------------------------


def test_the_judges_pool_and_what_it_starts_run_nicer() -> None:
    """``nice``: the games' workers, and the processes they start (referees' bots), run
    that much nicer than the server, so its pages stay quick while games are played."""
    import subprocess
    from concurrent.futures import ProcessPoolExecutor

    from arena.executors import process_pool, stop_pool

    base = os.getpriority(os.PRIO_PROCESS, 0)
    if base + 3 > 19:
        pytest.skip(f"this process is already at niceness {base}")
    pool: ProcessPoolExecutor = process_pool(1, nice=3)
    try:
        worker = pool.submit(os.getpriority, os.PRIO_PROCESS, 0).result(60)
        started = pool.submit(subprocess.check_output, ["nice"], text=True).result(60)
    finally:
        stop_pool(pool)
    assert (worker, int(started)) == (base + 3, base + 3)
    plain = process_pool(1)
    try:
        assert plain.submit(os.getpriority, os.PRIO_PROCESS, 0).result(60) == base
    finally:
        stop_pool(plain)


def test_server_config_round_trips_and_names_wrong_keys() -> None:
    cfg = parse_server_config({"name": "class", "variants": ["nine-mens-morris"],
                               "time": {"movetime": 50}, "pairs": 3, "workers": 1,
                               "check_workers": 3, "check_timeout": 30,
                               "upload": {"per_hour": 4}, "isolation": "none", "nice": 5})
    assert cfg.nice == 5 and ServerConfig().nice == 10
    assert cfg.pairs == 3 and cfg.upload.per_hour == 4 and cfg.time_control.movetime_ms == 50
    assert cfg.rate_limit.participant == "600/minute"
    assert (cfg.check_workers, cfg.check_timeout) == (3, 30)
    limited = parse_server_config({"rate_limit": {"anonymous": "10 per second"}})
    assert limited.rate_limit.anonymous == "10 per second"
    assert parse_server_config(limited.to_dict()) == limited
    assert parse_server_config(cfg.to_dict()) == cfg
    assert parse_server_config(None) == ServerConfig()
    for bad, where in (({"pairz": 1}, "pairz"), ({"pairs": 0}, "pairs"),
                       ({"upload": {"max_files": "many"}}, "upload.max_files"),
                       ({"variants": ["no-such-game"]}, "variants[0]"),
                       ({"executor": "dask"}, "executor.scheduler"),
                       ({"time": {"movetime": -1}}, "time.movetime"),
                       ({"isolation": "no-such-level"}, "isolation"),
                       ({"check_workers": 0}, "check_workers"),
                       ({"nice": 20}, "nice"), ({"nice": -5}, "nice"), ({"nice": "low"}, "nice"),
                       ({"check_timeout": "long"}, "check_timeout"),
                       ({"rate_limit": {"participant": "many"}}, "rate_limit.participant"),
                       ({"rate_limit": {"anonymous": 5}}, "rate_limit.anonymous"),
                       ({"rate_limit": {"everyone": "1/second"}}, "rate_limit.everyone")):
        with pytest.raises(ConfigError) as e:
            parse_server_config(bad)
        assert str(e.value).startswith(where), str(e.value)


def test_trusted_proxies_are_addresses_or_networks_naming_the_key() -> None:
    assert ServerConfig().trusted_proxies == ()
    assert ServerConfig().rate_limit.anonymous == "3000/minute"  # a class behind one NAT
    cfg = parse_server_config({"trusted_proxies": ["127.0.0.1", "10.0.0.0/8", "::1",
                                                   "fd00::/8"]})
    assert cfg.trusted_proxies == ("127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8")
    assert parse_server_config(cfg.to_dict()) == cfg
    assert parse_server_config({"trusted_proxies": "127.0.0.1"}).trusted_proxies == (
        "127.0.0.1",)
    assert parse_server_config({"trusted_proxies": None}).trusted_proxies == ()
    for bad, where in (({"trusted_proxies": ["127.0.0.1", "nginx"]}, "trusted_proxies[1]"),
                       ({"trusted_proxies": [8080]}, "trusted_proxies[0]"),
                       ({"trusted_proxies": ["10.0.0.0/33"]}, "trusted_proxies[0]"),
                       ({"trusted_proxies": {"a": 1}}, "trusted_proxies"),
                       ({"trusted_proxy": []}, "trusted_proxy")):
        with pytest.raises(ConfigError) as e:
            parse_server_config(bad)
        message = str(e.value)
        assert message.startswith(where) and "\n" not in message, message


def test_the_client_is_the_right_most_address_that_is_not_a_trusted_proxy() -> None:
    from arena.server.config import proxy_networks
    from arena.server.web import client_and_scheme

    trusted = proxy_networks(parse_server_config({"trusted_proxies": ["127.0.0.1",
                                                                      "10.0.0.0/8"]}))

    def client(peer: str, forwarded: list[str], proto: tuple[str, ...] = ()) -> tuple[str, object]:
        headers = [(b"x-forwarded-for", v.encode()) for v in forwarded] + [
            (b"x-forwarded-proto", v.encode()) for v in proto]
        return client_and_scheme({"client": (peer, 5000), "headers": headers}, trusted)

    assert client("192.0.2.1", ["1.2.3.4"], ("https",)) == ("192.0.2.1", None)  # untrusted
    assert client("127.0.0.1", []) == ("127.0.0.1", None)
    assert client("127.0.0.1", ["1.2.3.4"], ("https",)) == ("1.2.3.4", "https")
    assert client("127.0.0.1", ["6.6.6.6, 1.2.3.4"]) == ("1.2.3.4", None)  # the left: lies
    assert client("127.0.0.1", ["6.6.6.6", "1.2.3.4, 10.1.1.1"]) == ("1.2.3.4", None)
    assert client("127.0.0.1", ["10.2.2.2, 10.1.1.1"]) == ("10.2.2.2", None)  # all trusted
    assert client("127.0.0.1", ["garbage, 10.1.1.1"]) == ("garbage", None)
    assert client("127.0.0.1", ["1.2.3.4"], ("http, https",)) == ("1.2.3.4", "https")
    assert client("127.0.0.1", ["1.2.3.4"], ("gopher",)) == ("1.2.3.4", None)
    assert client_and_scheme({"client": ("127.0.0.1", 1), "headers": [
        (b"x-forwarded-for", b"1.2.3.4")]}, ()) == ("127.0.0.1", None)  # none trusted
    assert client_and_scheme({"headers": []}, trusted) == ("", None)


# ---- the schema ------------------------------------------------------------------------


def test_migrations_make_the_models_tables(tmp_path: Path) -> None:
    check_migrations(f"sqlite:///{tmp_path / 'x.db'}")


def check_migrations(url: str) -> None:
    """The migrations, applied twice to the database at ``url``, make the models' tables
    (also run on PostgreSQL by tests/test_server_postgres.py)."""
    from sqlalchemy import inspect

    from arena.server.db import database_url, migrate, open_engine
    from arena.server.models import Base

    engine = open_engine(database_url(".", url))
    migrate(engine)
    migrate(engine)  # again: a no-op
    found = inspect(engine)
    for table in Base.metadata.sorted_tables:
        columns = {c["name"]: c["nullable"] for c in found.get_columns(table.name)}
        assert columns == {c.name: c.nullable for c in table.columns}, table.name
        assert {i["name"] for i in found.get_indexes(table.name)} >= {
            i.name for i in table.indexes}
    engine.dispose()


# ---- the library on a real SQLite file -------------------------------------------------


def _bot_zip(tmp_path: Path, bot: str = "random", name: str | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for f in ("bot.py", "bot.yaml"):
            data = (ROOT / "bots" / bot / f).read_bytes()
            if f == "bot.yaml" and name:
                data = data.replace(f"name: {bot}".encode(), f"name: {name}".encode())
            zf.writestr(f"{bot}/{f}", data)
    return buf.getvalue()


def test_library_tokens_access_and_rate_limit(tmp_path: Path) -> None:
    check_library(tmp_path, None)


def check_library(tmp_path: Path, url: str | None) -> None:
    """Tokens, access rules and the upload limits of the library on a database (None: the
    folder's SQLite file; tests/test_server_postgres.py passes a PostgreSQL URL)."""
    from arena.server.config import UploadLimits
    from arena.server.service import (ANONYMOUS, Competition, Forbidden, NotFound, RateLimited,
                                      Refused, init_competition)

    init_competition(tmp_path / "c", ServerConfig(upload=UploadLimits(per_hour=2), db_url=url))
    comp = Competition(tmp_path / "c")
    try:
        alice_token = comp.add_user("alice")
        bob = comp.authenticate(comp.add_user("bob"))
        admin = comp.authenticate(comp.add_user("root", admin=True))
        alice = comp.authenticate(alice_token)
        assert alice.name == "alice" and not alice.is_admin and admin.is_admin
        assert comp.authenticate("wrong") == ANONYMOUS
        if url is None:
            assert alice_token not in (tmp_path / "c" / "arena.db").read_bytes().decode(
                "latin-1")
        with pytest.raises(ConfigError, match="exists already"):
            comp.add_user("alice")
        with pytest.raises(ConfigError, match="name"):
            comp.add_user("<script>")
        with pytest.raises(Forbidden):
            comp.submit(ANONYMOUS, "bot.zip", _bot_zip(tmp_path))
        with pytest.raises(Refused, match=".zip or .tar.gz"):
            comp.submit(alice, "bot.exe", _bot_zip(tmp_path))
        first = comp.submit(alice, "bot.zip", _bot_zip(tmp_path))
        second = comp.submit(alice, "bot.zip", _bot_zip(tmp_path))
        assert first == {"id": 1, "status": "checking"} and second["id"] == 2
        with pytest.raises(RateLimited, match="uploads an hour"):
            comp.submit(alice, "bot.zip", _bot_zip(tmp_path))
        # refused uploads count too: three attempts per upload allowed (2 an hour here)
        for _ in range(6):
            with pytest.raises(Refused, match="not a .zip"):
                comp.submit(bob, "bot.zip", b"junk")
        with pytest.raises(RateLimited, match="attempts"):
            comp.submit(bob, "bot.zip", _bot_zip(tmp_path))
        comp.submit(admin, "bot.zip", _bot_zip(tmp_path))  # admins are not limited
        assert comp.bot_view(2, alice)["version"] == 2  # same name: a new version
        assert comp.bot_view(1, admin)["check_log"] == ""
        with pytest.raises(Forbidden):
            comp.bot_view(1, bob)
        public = comp.bot_view(1, bob, private=False)
        assert "check_log" not in public and "verdict" not in public
        with pytest.raises(Forbidden):
            comp.retire(1, bob)
        with pytest.raises(Forbidden):
            comp.set_paused(True, alice)
        comp.set_paused(True, admin)
        assert comp.paused()
        # tokens: a new one revokes the old at once; a revoked one logs nobody in
        with pytest.raises(Forbidden):
            comp.new_token("bob", alice)
        with pytest.raises(NotFound):
            comp.new_token("nobody-here", admin)
        fresh = comp.new_token(alice.id or 0, admin)
        assert comp.authenticate(alice_token) == ANONYMOUS
        assert comp.authenticate(fresh) == alice and fresh != alice_token
        comp.revoke_token("alice", admin)
        assert comp.authenticate(fresh) == ANONYMOUS
        assert [u["revoked"] for u in comp.users() if u["name"] == "alice"] == [True]
        assert [u["revoked"] for u in comp.users() if u["name"] == "bob"] == [False]
        assert comp.authenticate(comp.new_token("alice", admin)) == alice
    finally:
        comp.close()


# ---- the commands ----------------------------------------------------------------------


def test_server_commands_init_user_and_their_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    for args in (["server", "--help"], ["server", "init", "--help"],
                 ["server", "user", "--help"], ["server", "run", "--help"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0 and "Usage" in result.output
    assert "127.0.0.1" in runner.invoke(cli, ["server", "run", "--help"]).output
    bad = tmp_path / "bad.yaml"
    bad.write_text("pairs: 0\n")
    result = runner.invoke(cli, ["server", "init", str(tmp_path / "x"), "--config", str(bad)])
    assert result.exit_code == 2 and "bad.yaml: pairs: expected an integer" in result.output
    good = tmp_path / "good.yaml"
    good.write_text("name: club\ntime: 50\npairs: 1\n")
    result = runner.invoke(cli, ["server", "init", str(tmp_path / "c"), "--config", str(good)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["server", "init", str(tmp_path / "c")])
    assert result.exit_code == 2 and "already holds a competition" in result.output
    result = runner.invoke(cli, ["server", "user", str(tmp_path / "c"), "ann", "--admin"])
    assert result.exit_code == 0
    token = result.output.strip().splitlines()[-1]
    from arena.server.service import Competition

    comp = Competition(tmp_path / "c")
    try:
        assert comp.authenticate(token).is_admin
        assert comp.config.name == "club" and comp.config.pairs == 1
    finally:
        comp.close()
    result = runner.invoke(cli, ["server", "user", str(tmp_path), "ann"])
    assert result.exit_code == 2 and "not a competition folder" in result.output
    # a new token revokes the old; --revoke leaves none
    c = str(tmp_path / "c")
    result = runner.invoke(cli, ["server", "user", c, "ann", "--new-token"])
    assert result.exit_code == 0 and "old token is revoked" in result.output
    new = result.output.strip().splitlines()[-1]
    assert new != token
    result = runner.invoke(cli, ["server", "user", c, "nobody-here", "--new-token"])
    assert result.exit_code == 2 and "no participant 'nobody-here'" in result.output
    result = runner.invoke(cli, ["server", "user", c, "ann", "--revoke", "--new-token"])
    assert result.exit_code == 2 and "choose one of" in result.output
    comp = Competition(tmp_path / "c")
    try:
        assert not comp.authenticate(token).known and comp.authenticate(new).is_admin
        result = runner.invoke(cli, ["server", "user", c, "ann", "--revoke"])
        assert result.exit_code == 0 and "revoked ann's token" in result.output
        assert not comp.authenticate(new).known
    finally:
        comp.close()


# ---- the judge's queue (on PostgreSQL too: tests/test_server_postgres.py) --------------


def test_the_judges_queue_counts_each_game_once(tmp_path: Path) -> None:
    check_judges_queue(tmp_path, None)


def check_judges_queue(tmp_path: Path, url: str | None) -> None:
    """Checks, scheduling, claims, a restart's recovery and stored records, on a real
    database of each kind."""
    from sqlalchemy import text

    from arena.server.service import Competition, Forbidden, init_competition
    from tests.synth_records import make_record

    database = "sqlite" if url is None else "postgresql"
    init_competition(tmp_path / "c", ServerConfig(pairs=2, db_url=url))
    comp = Competition(tmp_path / "c")
    try:
        if url:
            with comp.engine.begin() as conn:  # really PostgreSQL
                assert conn.dialect.name == "postgresql"
        alice = comp.authenticate(comp.add_user(f"alice-{database}"))
        bob = comp.authenticate(comp.add_user(f"bob-{database}"))
        a = comp.submit(alice, "a.zip", _bot_zip(tmp_path))["id"]
        b = comp.submit(bob, "b.zip", _bot_zip(tmp_path, "greedy"))["id"]
        for bot in (a, b):
            claimed = comp.claim_check()
            assert claimed is not None and claimed[1] == bot
            comp.finish_check(claimed[0], bot, True, "PASS", "log")
        assert comp.claim_check() is None
        assert comp.status()["games"] == {"queued": 4}
        first = comp.claim_games(3)
        assert len(first) == 3 and comp.status()["games"] == {"queued": 1, "running": 3}
        # a record comes back, then the server dies with two games running
        gid, w, _, variant, pair, game, _ = first[0]
        labels = {a: f"random#{a}", b: f"greedy#{b}"}
        loser = first[0][2]
        rec = make_record(labels[w], labels[loser], 1.0, game_id=f"g{gid}", pair=pair,
                          termination="crash", forfeit="black", stderr={"black": "boom"})
        assert comp.finish_game(gid, rec)
        assert not comp.finish_game(gid, rec)  # twice: not counted again
        owner, other = (alice, bob) if loser == a else (bob, alice)
        view = comp.bot_view(loser, owner)
        assert view["forfeits"] == 1 and view["forfeit_games"] == [
            {"id": gid, "termination": "crash", "detail": "", "stderr": "boom"}]
        assert "forfeit_games" not in comp.bot_view(loser, other, private=False)
        assert comp.game_view(gid, other)["stderr"] == {}
        assert comp.game_view(gid, owner)["stderr"] == {"black": "boom"}
        comp.close()
        comp = Competition(tmp_path / "c")
        assert comp.recover() == (0, 2)
        rest = comp.claim_games(10)
        assert len(rest) == 3 and gid not in {g[0] for g in rest}
        # games end out of id order (two at once): the leaderboard, fitted after the highest
        # id ended, still counts each game that ends after it
        for i, g in enumerate(sorted(rest, key=lambda g: -g[0])):
            comp.finish_game(g[0], make_record(labels[g[1]], labels[g[2]], 0.5,
                                               game_id=f"g{g[0]}", pair=g[4]))
            assert sorted(r["games"] for r in comp.leaderboard()) == [i + 2, i + 2]
        assert comp.status()["games"] == {"done": 4}
        rows = comp.leaderboard()
        assert sorted(r["games"] for r in rows) == [4, 4]
        with comp.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM games")).scalar() == 4
        # a new version of alice's bot retires the old and drops nothing played
        a2 = comp.submit(alice, "a.zip", _bot_zip(tmp_path))["id"]
        claimed = comp.claim_check()
        assert claimed is not None
        assert comp.finish_check(claimed[0], a2, True, "PASS", "log") == 4
        statuses = {r["id"]: r["status"] for r in comp.bots()}
        assert statuses == {a: "retired", b: "active", a2: "active"}
        assert comp.status()["games"] == {"done": 4, "queued": 4}
        assert {r["id"] for r in comp.leaderboard()} == {a2, b}
        # an admin re-judges bob's bot: back to checking, its queued games dropped
        admin = comp.authenticate(comp.add_user(f"root-{database}", admin=True))
        with pytest.raises(Forbidden):
            comp.rejudge(b, alice)
        comp.rejudge(b, admin)
        assert comp.bot_view(b, bob)["status"] == "checking"
        assert comp.status()["games"] == {"done": 4}
        claimed = comp.claim_check()
        assert claimed is not None and claimed[1] == b
        assert comp.finish_check(claimed[0], b, False, "FAIL: crash", "log") == 0
        assert comp.bot_view(b, bob)["status"] == "rejected"
        assert {r["id"] for r in comp.leaderboard()} == {a2}
        # checkers claiming at once (threads here) never take the same check twice (eight
        # participants: each may have one check running)
        import threading

        uploads = {comp.submit(comp.authenticate(comp.add_user(f"p{i}-{database}")), "x.zip",
                               _bot_zip(tmp_path, name=f"x{i}"))["id"] for i in range(8)}
        claimed_by: list[int] = []

        def claim() -> None:
            while (got := comp.claim_check()) is not None:
                claimed_by.append(got[1])

        threads = [threading.Thread(target=claim) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert sorted(claimed_by) == sorted(uploads)
    finally:
        comp.close()


# ---- the live board --------------------------------------------------------------------


def test_write_transactions_are_one_at_a_time_from_their_first_read(tmp_path: Path) -> None:
    """Three ``writing()`` transactions that read a count, wait, then insert the next row:
    each sees the others' rows (SQLite's driver would begin only at the insert, and all
    three would read 0)."""
    import threading
    import time

    from sqlalchemy import text

    from arena.server.service import Competition, init_competition

    init_competition(tmp_path / "c", ServerConfig())
    comp = Competition(tmp_path / "c")
    seen: list[int] = []

    def write() -> None:
        with comp.writing() as s:
            n = s.execute(text("SELECT count(*) FROM settings WHERE key LIKE 'w%'")).scalar()
            time.sleep(0.1)
            s.execute(text("INSERT INTO settings (key, value) VALUES (:k, '')"), {"k": f"w{n}"})
            seen.append(int(n or 0))

    try:
        threads = [threading.Thread(target=write) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        comp.close()
    assert sorted(seen) == [0, 1, 2]


def test_verdicts_stored_at_once_queue_every_pairing(tmp_path: Path) -> None:
    check_verdicts_at_once(tmp_path, lambda _round: None)


def check_verdicts_at_once(tmp_path: Path, url_for: Callable[[int], str | None],
                           bots: int = 5, rounds: int = 3) -> None:
    """Checks that end at the same moment (the judge stores its verdicts from several
    threads) still queue a meeting between every two active bots: each verdict's
    transaction sees the others' (on PostgreSQL, read committed, two new bots each saw
    the other still being checked, and neither queued their games)."""
    import threading

    from arena.server.service import Competition, init_competition

    for r in range(rounds):
        folder = tmp_path / f"c{r}"
        init_competition(folder, ServerConfig(pairs=1, db_url=url_for(r)))
        comp = Competition(folder)
        try:
            users = [comp.authenticate(comp.add_user(f"u{r}-{i}")) for i in range(bots)]
            ids = [comp.submit(u, "a.zip", _bot_zip(tmp_path, name=f"b{i}"))["id"]
                   for i, u in enumerate(users)]
            claimed = [comp.claim_check() for _ in ids]
            assert all(c is not None for c in claimed)
            start = threading.Barrier(bots)
            errors: list[BaseException] = []

            def finish(job: int, bot: int) -> None:
                try:
                    start.wait(10)
                    comp.finish_check(job, bot, True, "PASS", "log")
                except BaseException as e:  # noqa: BLE001 - reported below
                    errors.append(e)

            threads = [threading.Thread(target=finish, args=(c[0], c[1]))
                       for c in claimed if c is not None]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            assert not errors, errors
            meetings = {frozenset((g[1], g[2])) for g in comp.claim_games(1000)}
            missing = {frozenset((a, b)) for i, a in enumerate(ids)
                       for b in ids[i + 1:]} - meetings
            assert not missing, f"round {r}: no games between {sorted(map(sorted, missing))}"
        finally:
            comp.close()


def test_a_played_games_plies_are_written_as_they_come(tmp_path: Path) -> None:
    """A real game (bots/greedy against bots/random) through the judge's worker function:
    its ply file holds every move of its record, in order, and reads back as the board."""
    from arena.clock import TimeControl
    from arena.jobs import GameJob
    from arena.manifest import load_bot
    from arena.schedule import Slot
    from arena.server.live import live_board, live_path, play_live, read_plies
    from arena.variants import get_variant

    variant = get_variant("nine-mens-morris")
    path = live_path(tmp_path, 7)
    path.parent.mkdir()
    slot = Slot(index=7, game_id="g7", variant=variant, round=1, pair=3, game=0, white=0,
                black=1, opening=(), seed=11)
    job = GameJob(slot=slot, white=load_bot(ROOT / "bots" / "greedy"),
                  black=load_bot(ROOT / "bots" / "random"),
                  time_control=TimeControl(movetime_ms=2000), tournament="ladder")
    record = play_live(job, str(path))
    assert (record.tournament, record.round, record.pair) == ("ladder", 1, 3)
    plies = read_plies(path)
    assert [p["move"] for p in plies] == [m.move for m in record.moves] and len(plies) > 10
    board = live_board(variant, [p["move"] for p in plies])
    assert board["plies"] == len(plies) and board["last"] == record.moves[-1].move
    assert board["board"].count("W") + board["board"].count("B") >= 3
    # a half-written last line waits for the next read; a missing file has no plies
    with open(path, "a") as f:
        f.write('{"move": "a1"')
    assert len(read_plies(path)) == len(plies)
    assert read_plies(tmp_path / "none.jsonl") == []
    start = live_board(variant, [])
    assert start["board"] == "." * 24 and start["hand"] == [9, 9] and start["turn"] == 0
    assert len(start["xy"]) == 24 and [0, 0] in start["xy"] and [6, 6] in start["xy"]


def test_kept_views_follow_the_database_and_answer_while_one_is_computed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """:meth:`cached` keeps a view until the database changes; :meth:`peek` answers a kept
    one without computing; while the judge has games in flight, a view computed again by
    one request is answered to the others from the kept one instead of making them wait."""
    import sqlite3
    import threading

    from arena.server.common import MISSING
    from arena.server.service import Competition, init_competition

    init_competition(tmp_path / "c")
    comp = Competition(tmp_path / "c")
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    try:
        assert comp.peek("k") is MISSING
        assert comp.cached("k", compute) == 1 and comp.cached("k", compute) == 1
        assert comp.peek("k") == 1 and len(calls) == 1
        comp.add_user("ann")  # a write: the view is computed again
        assert comp.peek("k") is MISSING
        assert comp.cached("k", compute) == 2
        # the judge plays: a change is seen within STALE_S, and meanwhile the kept view
        # answers those who ask while one request computes it again
        comp.games_in_flight = 1
        comp.add_user("carl")  # a person's change is seen at once, games in flight or not
        assert comp.peek("k") is MISSING
        assert comp.cached("k", compute) == 3
        with sqlite3.connect(tmp_path / "c" / "arena.db") as db:  # as the judge writes
            db.execute("CREATE TABLE scratch (x)")
        assert comp.peek("k", stale_ok=False) is MISSING
        assert comp.peek("k") == 3  # younger than STALE_S
        entered, release = threading.Event(), threading.Event()

        def slow() -> int:
            entered.set()
            release.wait(30)
            return 99

        monkeypatch.setattr("arena.server.common.STALE_S", 0.0)  # too old for its own sake
        try:
            assert comp.peek("k") is MISSING
            worker = threading.Thread(target=lambda: comp.cached("k", slow))
            worker.start()
            assert entered.wait(30)
            assert comp.peek("k") == 3 and comp.cached("k", compute) == 3
            comp.games_in_flight = 0  # no game in flight: exact answers only
            assert comp.peek("k") is MISSING
            comp.games_in_flight = 1
            release.set()
            worker.join(30)
            assert comp.peek("k") == 99 and comp.peek("k", stale_ok=False) == 99
        finally:
            release.set()
    finally:
        comp.close()
