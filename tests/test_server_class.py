"""A class competition from roster to grades, as a teacher runs it, on real ``arena server
run`` processes (tests/test_server.py's :class:`Server`): a roster of 12 students and the
teacher made with ``arena server users``, uploads from several students (three copies of a
bot that draws against itself, one rejected), a deadline a few seconds ahead, uploads
refused after it (403 naming it), the final round robin played and its standings frozen
(unchanged after a retire, a test match and a SIGKILL and restart), ``arena server
results`` giving the CSV of the whole roster with the shared place of the three drawers.
Then the teacher moves the deadline: the server refuses to run on it, uploads stay closed,
and ``arena server final --rerun`` plays final 2, which the results name.  Then, in headless
Chromium, the final page and the submit page after the deadline.  Skipped with a reason
where the ``server`` extra is not installed."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
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
from tests.test_server import ARENA, Server, _judged, _wait, bot_archive  # noqa: E402

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
HEADER = ("variant,rank,participant,bot,version,points,elo,elo95,games,score,place,h2h,sb,"
          "status,final,buchholz,buchholz_cut1")
TEST_BOTS = Path(__file__).resolve().parent / "bots"


def _test_bot_zip(bot: str, name: str, *, broken: bool = False) -> bytes:
    """tests/bots/<bot> as a .zip named ``name`` (``broken``: its bot.py fails at once)."""
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for f in ("bot.py", "bot.yaml"):
            text = (TEST_BOTS / bot / f).read_text()
            if f == "bot.yaml":
                text = text.replace(f"name: {bot}", f"name: {name}")
            if f == "bot.py" and broken:
                text = "raise SystemExit('this bot is broken')\n" + text
            zf.writestr(f"{name}/{f}", text)
    return buf.getvalue()


def _results(folder: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["server", "results", str(folder)])
    return result.exit_code, result.stdout, result.stderr


def _results_of(folder: Path, number: int) -> str:
    result = CliRunner().invoke(cli, ["server", "results", str(folder), "--final", str(number)])
    assert result.exit_code == 0, result.output
    return result.stdout


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
    # the roster: 12 students and the teacher, as a spreadsheet exports it
    roster = tmp_path / "roster.csv"
    names = [f"student{i:02d}" for i in range(1, 13)]
    roster.write_text("name,admin\n" + "".join(f"{n},\n" for n in names) + "teacher,true\n")
    made = runner.invoke(cli, ["server", "users", str(folder), str(roster)])
    assert made.exit_code == 0, made.output
    tokens = dict(row for row in csv.reader(io.StringIO(made.stdout)))
    assert tokens.pop("name") == "token" and sorted(tokens) == sorted(names + ["teacher"])
    again = runner.invoke(cli, ["server", "users", str(folder), str(roster)])
    assert again.stdout == "name,token\n" and again.stderr.count("exists already") == 13

    server = Server(folder)
    server.start()
    try:
        # three students upload the same drawing bot; their bots are checked and play the
        # ladder; student05's only upload fails its check
        uploads = {"student01": ("drawer.zip", _test_bot_zip("drawer", "drawer")),
                   "student02": ("calm.zip", _test_bot_zip("drawer", "calm")),
                   "student03": ("still.zip", _test_bot_zip("drawer", "still"))}
        status, out = server.upload(tokens["student05"], "broken.zip",
                                    _test_bot_zip("drawer", "broken", broken=True))
        assert status == 201, out
        assert _wait("the broken bot's verdict", lambda: _judged(
            server, tokens["student05"], out["id"]))["status"] == "rejected"
        bots = {}
        for who, (filename, data) in uploads.items():
            status, out = server.upload(tokens[who], filename, data)
            assert status == 201, out
            bots[who] = out["id"]
        for who, bot in bots.items():
            view = _wait(f"{who}'s verdict", lambda: _judged(server, tokens[who], bot))
            assert view["status"] == "active", view
        _wait("the ladder", lambda: server.get("/api/status")["games"] == {"done": 6})
        code, out, _ = _results(folder)  # no deadline yet: the ladder, the whole roster
        assert code == 0 and out.splitlines()[0] == HEADER and len(out.splitlines()) == 13
        assert server.get("/api/final")["status"] == "none"
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
        status, late = server.upload(tokens["student04"], "striker.zip",
                                     _test_bot_zip("striker", "last-minute"))
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
        assert table["variant"] == "nine-mens-morris" and final["number"] == 1
        entries = [r for r in table["rows"] if r["status"] == "entry"]
        assert sorted(r["participant"] for r in entries) == [
            "student01", "student02", "student03", "student04"]
        for r in entries:
            assert set(r) == {"rank", "participant", "bot", "version", "points", "elo",
                              "elo95", "games", "score", "place", "h2h", "sb", "status",
                              "final", "buchholz", "buchholz_cut1"}
            assert r["games"] == 6 and r["points"] == pytest.approx(6 * r["score"], abs=0.01)
        assert sum(r["points"] for r in entries) == 12
        # the three drawers draw every game among themselves and score alike against the
        # striker: one shared place, with the tie-breaks that could not tell them apart
        drawers = [r for r in entries if r["participant"] != "student04"]
        assert len({(r["rank"], r["points"], r["h2h"], r["sb"]) for r in drawers}) == 1
        assert {r["place"] for r in drawers} == {f"{drawers[0]['rank']}="}
        assert drawers[0]["h2h"] == 2.0  # 4 draws against the two others
        # everyone on the roster: the rejected upload's owner and those who never uploaded
        absent = {r["participant"]: r["status"] for r in table["rows"] if r["status"] != "entry"}
        assert absent == {"student05": "no accepted bot",
                          **{f"student{i:02d}": "no upload" for i in range(6, 13)}}
        assert all(r["rank"] is None for r in table["rows"] if r["status"] != "entry")
        ladder = {r["id"]: r["games"] for r in server.get("/api/leaderboard")}
        assert ladder[bots["student04"]] == 0  # no ladder game after the deadline
        assert server.get("/api/status")["games"] == {"done": 6 + 12}
        code, grades, err = _results(folder)
        assert code == 0 and grades.splitlines()[0] == HEADER and "final 1" in err
        rows = list(csv.DictReader(io.StringIO(grades)))
        assert len(rows) == 12  # the roster, one variant
        assert [(r["participant"], r["rank"], r["place"], r["status"], r["final"])
                for r in rows] == [
            (r["participant"], "" if r["rank"] is None else str(r["rank"]), r["place"],
             r["status"], "1") for r in table["rows"]]
        assert [float(r["points"]) for r in rows[:4]] == [r["points"] for r in entries]
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

    # the teacher changes their mind: the deadline moves a day later.  The server refuses
    # to run on settings that no longer fit the final, naming the command to use
    text = (folder / "server.yaml").read_text()
    later = deadline + timedelta(days=1)
    (folder / "server.yaml").write_text(text.replace(deadline.isoformat(), later.isoformat()))
    refused = subprocess.run([*ARENA, "server", "run", str(folder), "--port", "0"],
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "--rerun" in refused.stderr, refused.stderr
    assert "final 1" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert _results(folder)[:2] == (0, grades)  # the results still are final 1's
    # a new final among the same entries, with the settings as they are now
    rerun = CliRunner().invoke(cli, ["server", "final", str(folder), "--rerun"])
    assert rerun.exit_code == 0 and "final 2 starts: 12 games among 4 entries" in rerun.output
    server.start()
    try:
        status, out = server.upload(tokens["student06"], "striker.zip",
                                    _test_bot_zip("striker", "too-late"))
        assert status == 403 and "do not reopen" in out["detail"], out  # never silently
        second = _wait("the second final", lambda: (lambda f: f if f["status"] == "done" and
                       f["number"] == 2 else None)(server.get("/api/final")), 240)
        assert [f["number"] for f in second["finals"]] == [1, 2]
        assert second["settings"]["deadline"] == later.isoformat()
        first = server.get("/api/final?final=1")
        assert {**first, "finals": None} == {**final, "finals": None}
        status, page = server.request("GET", "/final")
        assert status == 200 and b'id="final-name">Final 2' in page
    finally:
        server.stop()
    code, again, err = _results(folder)
    assert code == 0 and "final 2 (a re-run of final 1" in err
    assert {r["final"] for r in csv.DictReader(io.StringIO(again))} == {"2"}
    assert _results_of(folder, 1) == grades


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
        tokens = {n: comp.add_user(n) for n in ("ada", "ben", "cleo", "dev", "eve")}
        tokens["teacher"] = comp.add_user("teacher", admin=True)
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
    # ben and cleo drew and scored alike against the others: a shared place; eve, who
    # never uploaded, is listed with why
    assert [(r[0], r[1], r[3]) for r in rows[:4]] == [("1", "ada", "6"), ("2=", "ben", "3"),
                                                      ("2=", "cleo", "3"), ("4", "dev", "0")]
    assert [(r[0], r[1], r[2]) for r in rows[4:]] == [("–", "eve", "no upload")]
    assert [r[6] for r in rows[:4]] == ["–", "1", "1", "–"]  # H2H: only the level ones
    assert all(re.fullmatch(r"-?\d+ ± \d+", r[8]) for r in rows[:4]), rows
    caption = driver.find_element(By.CSS_SELECTOR, "p.caption")
    assert caption.get_attribute("data-ranked-by") == "points" and "points" in caption.text
    driver.save_screenshot(str(tmp_path / "final.png"))
    # the bot's link leads to its page; the final's games are listed apart
    driver.find_element(By.CSS_SELECTOR, "table.final tbody tr a").click()
    _wait("a finalist's page", lambda: re.search(r"/bots/\d+$", driver.current_url), 20)
    driver.get(server.url + "/games?kind=final")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#games-list tbody tr")) == 12
    assert "final" in driver.find_element(By.CSS_SELECTOR, "#games-list .kind").text
    # ben's own pages say which bot is his final entry
    driver.get(server.url + "/submit")
    assert re.match(r"Your final entry: hand\d+ v1 \(bot \d+\)", driver.find_element(By.ID, "entry").text)
    driver.find_element(By.CSS_SELECTOR, "#entry a").click()
    _wait("ben's bot page", lambda: driver.find_elements(By.ID, "entry"), 20)
    assert "This bot is your final entry" in driver.find_element(By.ID, "entry").text
    # the teacher's overview: every upload with its verdict; the final played again
    driver.find_element(By.CSS_SELECTOR, "nav form button").click()  # log out
    _wait("the logout", lambda: "Log out" not in driver.page_source, 20)  # its POST done
    driver.get(server.url + "/login")
    driver.find_element(By.ID, "token").send_keys(tokens["teacher"])
    driver.find_element(By.ID, "login").click()
    _wait("the teacher's login", lambda: "Admin" in driver.page_source, 20)
    driver.get(server.url + "/admin")
    uploads = driver.find_elements(By.CSS_SELECTOR, "#uploads tbody tr")
    assert len(uploads) == 4 and all("entry" in u.text for u in uploads)
    assert "None." in driver.find_element(By.ID, "refused").text
    assert driver.find_elements(By.CSS_SELECTOR, "#similar tbody tr")
    driver.save_screenshot(str(tmp_path / "admin.png"))
    driver.find_element(By.ID, "rerun").click()
    _wait("final 2's page", lambda: "final=2" in driver.current_url, 20)
    assert driver.find_element(By.ID, "final-name").text.startswith("Final 2")
    assert driver.find_element(By.ID, "final-status").get_attribute("data-status") == "running"
    assert "final 1" in driver.find_element(By.ID, "finals").text
