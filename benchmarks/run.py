"""Run every benchmark: ``python benchmarks/run.py [--quick] [NAME ...]`` (``make bench``).

Speed targets live here, never in timed unit tests. Every figure is printed next to a
reference measured in the same run (a floor such as a bare pipe round trip, or the same work
done another way), as a ratio, so the numbers mean something on any machine and under load.

The contract for a benchmark module ``benchmarks/bench_<name>.py``:

* it exposes ``bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]``,
  which measures its figures and their references side by side, prints one header line and
  then one line per figure with its ratio through ``echo``, and returns the figures by name;
* a full run takes well under a minute, ``quick=True`` a few seconds;
* it also runs alone: ``python benchmarks/bench_<name>.py [--quick]``, for which
  ``sys.exit(standalone(bench, __doc__))`` from this module is all the ``__main__`` block needs;
* it imports the package from the checkout (``sys.path`` gets the repository root), so it
  measures the working tree.

A module that exposes only ``run()`` (printing its own lines, returning figures or nothing) is
called without arguments. A benchmark that raises is reported and the others still run; the
exit status is then 1. ``NAME`` selects modules (``perft`` for ``bench_perft.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def discover(names: list[str]) -> list[Path]:
    """The benchmark modules, in name order, restricted to ``names`` when given."""
    found = sorted(HERE.glob("bench_*.py"))
    if not names:
        return found
    by_name = {p.stem[len("bench_"):]: p for p in found}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(unknown)} "
                         f"(known: {', '.join(by_name)})")
    return [by_name[n] for n in names]


def load(path: Path) -> ModuleType:
    """Import a benchmark module from its file."""
    spec = importlib.util.spec_from_file_location(f"benchmarks.{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def run_one(module: ModuleType, quick: bool) -> Any:
    """Call a module's ``bench`` (or, failing that, its ``run``)."""
    if hasattr(module, "bench"):
        return module.bench(quick=quick, echo=lambda line: print(line, flush=True))
    if hasattr(module, "run"):
        return module.run()
    raise AttributeError(f"{module.__name__} has neither bench() nor run()")


def standalone(bench: Callable[..., Any], doc: Optional[str],
               argv: Optional[list[str]] = None) -> int:
    """The command line of one benchmark module run alone: ``--quick`` for a short run."""
    parser = argparse.ArgumentParser(description=(doc or "").strip().split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (a few seconds)")
    args = parser.parse_args(argv)
    bench(quick=args.quick)
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    """Run the selected benchmarks one after the other and print a timing summary."""
    parser = argparse.ArgumentParser(description="Run the Morris Arena benchmarks.")
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="short runs (a few seconds each)")
    args = parser.parse_args(argv)
    summary: list[tuple[str, float, str]] = []
    for path in discover(args.names):
        name = path.stem[len("bench_"):]
        print(f"== {name} ==", flush=True)
        t0 = time.perf_counter()
        try:
            run_one(load(path), args.quick)
            status = "ok"
        except Exception:  # a broken benchmark must not hide the others
            traceback.print_exc()
            status = "FAILED"
        summary.append((name, time.perf_counter() - t0, status))
        print(flush=True)
    total = sum(seconds for _, seconds, _ in summary)
    print(f"== summary ({total:.1f} s) ==")
    for name, seconds, status in summary:
        print(f"  {name:<12} {seconds:6.1f} s  {status}")
    return 0 if all(status == "ok" for _, _, status in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
