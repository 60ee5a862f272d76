"""A class competition from roster to grades, as a teacher runs it, on real ``arena server
run`` processes (tests/test_server.py's :class:`Server`): a roster of 30 names made with
``arena server users``, uploads from several students, a deadline a few seconds ahead,
uploads refused after it (403 naming it), the final round robin played and its standings
frozen (unchanged after a retire, a test match and a SIGKILL and restart), ``arena server
results`` giving the CSV.  Then, in headless Chromium, the final page and the submit page
after the deadline.  Skipped with a reason where the ``server`` extra is not installed."""

from __future__ import annotations

import csv
import io
import json
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("fastapi", reason="the server extra is not installed "
                                      "(pip install -e '.[server]')")
pytest.importorskip("sqlalchemy", reason="the server extra is not installed")
pytest.importorskip("uvicorn", reason="the server extra is not installed")

from arena.cli import cli  # noqa: E402
from tests.test_server import Server, _judged, _wait, bot_archive  # noqa: E402

SETTINGS = """name: class of 2026
upload: {max_bytes: 1000000, per_hour: 100}
time: {movetime: 50}
pairs: 1
check_games: 1
workers: 2
nice: 0
final: {pairs: 1}
rate_limit: {participant: 100000/minute, anonymous: 100000/minute}
"""
HEADER = "variant,rank,participant,bot,version,points,elo,elo95,games,score"


def _results(folder: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["server", "results", str(folder)])
    return result.exit_code, result.stdout, result.stderr


def _set_paused(folder: Path, paused: bool) -> None:
    """What an admin's Pause button does (the server reads it from the database)."""
    from arena.server.service import OPERATOR, Competition

    comp = Competition(folder)
    try:
        comp.set_paused(paused, OPERATOR)
    finally:
        comp.close()


def _request_json(server: Server, method: str, path: str, token: str | None,
                  body: dict[str, Any]) -> tuple[int, Any]:
    status, out = server.request(method, path, token, json.dumps(body).encode(),
                                 "application/json")
    return status, json.loads(out)


@pytest.mark.slow
def test_a_teacher_runs_a_class_competition_from_roster_to_grades(tmp_path: Path) -> None:
    runner = CliRunner()
    folder = tmp_path / "class"
    (tmp_path / "class.yaml").write_text(SETTINGS)
    assert runner.invoke(cli, ["server", "init", str(folder), "--config",
                               str(tmp_path / "class.yaml")]).exit_code == 0
    # the roster: 29 students and the teacher, as a spreadsheet exports it
    roster = tmp_path / "roster.csv"
    names = [f"student{i:02d}" for i in range(1, 30)]
    roster.write_text("name,admin\n" + "".join(f"{n},\n" for n in names) + "teacher,true\n")
    made = runner.invoke(cli, ["server", "users", str(folder), str(roster)])
    assert made.exit_code == 0, made.output
    tokens = dict(row for row in csv.reader(io.StringIO(made.stdout)))
    assert tokens.pop("name") == "token" and sorted(tokens) == sorted(names + ["teacher"])
    again = runner.invoke(cli, ["server", "users", str(folder), str(roster)])
    assert again.stdout == "name,token\n" and again.stderr.count("exists already") == 30

    server = Server(folder)
    server.start()
    try:
        # three students upload; their bots are checked and play the ladder
        uploads = {"student01": ("random.zip", bot_archive("random", "zip")),
                   "student02": ("greedy.tar.gz", bot_archive("greedy", "tgz")),
                   "student03": ("copycat.zip", bot_archive("random", "zip", name="copycat"))}
        bots = {}
        for who, (filename, data) in uploads.items():
            status, out = server.upload(tokens[who], filename, data)
            assert status == 201, out
            bots[who] = out["id"]
        for who, bot in bots.items():
            view = _wait(f"{who}'s verdict", lambda: _judged(server, tokens[who], bot))
            assert view["status"] == "active", view
        _wait("the ladder", lambda: server.get("/api/status")["games"] == {"done": 6})
        code, out, _ = _results(folder)  # no deadline yet: the ladder
        assert code == 0 and out.splitlines()[0] == HEADER and len(out.splitlines()) == 4
        assert server.get("/api/final") == {"status": "none", "games_done": 0,
                                            "games_total": 0, "tables": []}
    finally:
        server.stop()

    # the teacher sets the deadline a few seconds ahead and restarts the server; the judge
    # is paused a moment (so that the final cannot start before we look)
    deadline = (datetime.now(timezone.utc) + timedelta(seconds=8)).replace(microsecond=0)
    with open(folder / "server.yaml", "a") as f:
        f.write(f"deadline: {deadline.isoformat()}\n")
    _set_paused(folder, True)
    server.start()
    try:
        status, late = server.upload(tokens["student04"], "random.zip",
                                     bot_archive("random", "zip", name="last-minute"))
        assert status == 201 and datetime.now(timezone.utc) < deadline, late
        bots["student04"] = late["id"]
        _, submit_page = server.request("GET", "/submit", cookie=tokens["student05"])
        assert b'id="deadline"' in submit_page and deadline.isoformat().encode() in submit_page
        time.sleep(max(0.0, (deadline - datetime.now(timezone.utc)).total_seconds()) + 0.5)
        status, refused = server.upload(tokens["student05"], "random.zip",
                                        bot_archive("random", "zip"))
        assert status == 403 and deadline.isoformat() in refused["detail"], refused
        status, _ = server.upload(tokens["teacher"], "random.zip", bot_archive("random", "zip"))
        assert status == 403  # admins too
        _, submit_page = server.request("GET", "/submit", cookie=tokens["student05"])
        assert b'id="closed"' in submit_page and b'id="file"' not in submit_page
        code, out, err = _results(folder)
        assert code == 1 and "not started" in err and out == ""
        assert server.get("/api/final")["status"] == "none"

        # the judge goes on: the last-minute upload is checked, then the final is played
        _set_paused(folder, False)
        final = _wait("the final", lambda: (lambda f: f if f["status"] == "done" else None)(
            server.get("/api/final")), 240)
        assert (final["games_done"], final["games_total"]) == (12, 12)  # 4 bots, 1 pair each
        table = final["tables"][0]
        assert table["variant"] == "nine-mens-morris"
        assert sorted(r["participant"] for r in table["rows"]) == [
            "student01", "student02", "student03", "student04"]
        for r in table["rows"]:
            assert set(r) == {"rank", "participant", "bot", "version", "points", "elo",
                              "elo95", "games", "score"}
            assert r["games"] == 6 and r["points"] == pytest.approx(6 * r["score"], abs=0.01)
        assert sorted(r["rank"] for r in table["rows"]) == [1, 2, 3, 4]
        assert sum(r["points"] for r in table["rows"]) == 12
        ladder = {r["id"]: r["games"] for r in server.get("/api/leaderboard")}
        assert ladder[bots["student04"]] == 0  # no ladder game after the deadline
        assert server.get("/api/status")["games"] == {"done": 6 + 12}
        code, grades, _ = _results(folder)
        assert code == 0 and grades.splitlines()[0] == HEADER
        rows = list(csv.DictReader(io.StringIO(grades)))
        assert [(r["participant"], r["rank"], float(r["points"])) for r in rows] == [
            (r["participant"], str(r["rank"]), r["points"]) for r in table["rows"]]
        status, page = server.request("GET", "/final")
        assert status == 200 and b'data-status="done"' in page and b"student04" in page

        # students download what they uploaded; nobody else can
        status, archive = server.request("GET", f"/api/bots/{bots['student01']}/archive",
                                         tokens["student01"])
        assert status == 200 and archive == uploads["student01"][1]
        for token in (tokens["student02"], None):
            assert server.request("GET", f"/api/bots/{bots['student01']}/archive",
                                  token)[0] == 403

        # afterwards: a retire, a test match, a SIGKILL and a restart change nothing
        status, _ = server.request("POST", f"/api/bots/{bots['student01']}/retire",
                                   tokens["student01"])
        assert status == 200
        status, match = _request_json(server, "POST", "/api/matches", tokens["student02"],
                                      {"bot": bots["student02"], "opponent": bots["student03"],
                                       "variant": "nine-mens-morris"})
        assert status == 201 and set(match) == {"game"}, match
        status, _ = _request_json(server, "POST", "/api/matches", tokens["student03"],
                                  {"bot": bots["student02"], "opponent": bots["student03"]})
        assert status == 403  # not student03's bot
        _wait("the test match", lambda: server.get("/api/games?kind=match")[0]["status"] == "done")
        _, page = server.request("GET", f"/games/{match['game']}")
        assert b"unrated test match" in page
        assert server.get("/api/final") == final
        server.kill()
        server.start()
        assert server.get("/api/final") == final
        assert _results(folder)[:2] == (0, grades)
    finally:
        server.stop()


@pytest.fixture
def closed_class(tmp_path: Path) -> Any:
    """A competition whose deadline has passed and whose final is done (games stored by
    hand, as the judge would), served with its judge paused."""
    from arena.server.config import FinalSettings, ServerConfig
    from arena.server.service import OPERATOR, Competition, init_competition
    from tests.synth_records import make_record
    from tests.test_server_web import Games

    folder = tmp_path / "class"
    past = datetime.now(timezone.utc) - timedelta(hours=1)
    init_competition(folder, ServerConfig(name="class of 2026", deadline=past,
                                          final=FinalSettings(pairs=1)))
    comp = Competition(folder)
    try:
        tokens = {n: comp.add_user(n) for n in ("ada", "ben", "cleo", "dev", "teacher")}
        comp.set_paused(True, OPERATOR)
    finally:
        comp.close()
    games = Games(folder)
    bots = {n: games.bot(n) for n in ("ada", "ben", "cleo", "dev")}
    comp = Competition(folder)
    try:
        assert comp.start_final() == 12
        strength = {bots["ada"]: 3, bots["ben"]: 2, bots["cleo"]: 2, bots["dev"]: 0}
        labels = {b["id"]: f"{b['bot']}#{b['id']}" for b in comp.bots()}
        for gid, w, b, variant, pair, _, _ in comp.claim_games(100):
            score = 1.0 if strength[w] > strength[b] else 0.0 if strength[w] < strength[b] \
                else 0.5
            comp.finish_game(gid, make_record(labels[w], labels[b], score, pair=pair))
        assert comp.finish_final()
    finally:
        comp.close()
    server = Server(folder)
    server.start()
    try:
        yield server, tokens
    finally:
        server.stop()


def test_the_final_page_and_the_closed_submit_page_in_a_browser(
        closed_class: Any, driver: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    server, tokens = closed_class
    driver.get(server.url + "/login")
    driver.find_element(By.ID, "token").send_keys(tokens["ben"])
    driver.find_element(By.ID, "login").click()
    _wait("the login", lambda: "Log out" in driver.page_source, 20)
    driver.get(server.url + "/submit")
    closed = driver.find_element(By.ID, "closed")
    assert "Uploads are closed" in closed.text and "deadline" in closed.text
    assert not driver.find_elements(By.ID, "file") and not driver.find_elements(By.ID, "upload")
    driver.save_screenshot(str(tmp_path / "submit-closed.png"))
    driver.find_element(By.LINK_TEXT, "Final").click()  # the header's link
    _wait("the final page", lambda: driver.find_elements(By.CSS_SELECTOR, "table.final"), 20)
    assert driver.find_element(By.ID, "final-status").get_attribute("data-status") == "done"
    rows = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in driver.find_elements(By.CSS_SELECTOR, "table.final tbody tr")]
    assert [(r[0], r[1], r[3]) for r in rows] == [("1", "ada", "6"), ("2", "ben", "3"),
                                                  ("3", "cleo", "3"), ("4", "dev", "0")]
    assert all(re.fullmatch(r"-?\d+ ± \d+", r[6]) for r in rows), rows
    driver.save_screenshot(str(tmp_path / "final.png"))
    # the bot's link leads to its page; the final's games are listed apart
    driver.find_element(By.CSS_SELECTOR, "table.final tbody tr a").click()
    _wait("a finalist's page", lambda: re.search(r"/bots/\d+$", driver.current_url), 20)
    driver.get(server.url + "/games?kind=final")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#games-list tbody tr")) == 12
    assert "final" in driver.find_element(By.CSS_SELECTOR, "#games-list .kind").text
