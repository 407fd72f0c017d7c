"""How long the installed command takes to start and check the bundled example, and what it imports.

    .venv/bin/python bench/startup_bench.py                        # this checkout, 15 runs
    .venv/bin/python bench/startup_bench.py --runs 30
    .venv/bin/python bench/startup_bench.py --base main [--head HEAD]   # two revisions, interleaved
    .venv/bin/python bench/startup_bench.py --instructions           # instructions, under valgrind

The command is the installed one: its entry point (``[project.scripts] prefix-model``, which
leaves the contracts off) running ``check --example``, a fresh process per run; ``python -c
pass`` is timed beside it, the interpreter's own floor. The figures are the median wall and CPU
(user + system) time of whole processes (these machines are noisy: compare figures measured in
one run; under load the CPU time moves less than the wall time). Then the
modules that cost the most to import on that run (``python -X importtime``, cumulative, which
itself adds to each; each module's least of five runs), so a regression shows where it comes from.

Bytecode matters as much as imports: an installed wheel has its ``.pyc`` files (pip compiles them),
while an editable checkout under ``PYTHONDONTWRITEBYTECODE=1`` compiles every module it imports
on every run. With ``--base``, both are timed: each revision's ``model/`` is exported twice
(``git archive``, committed revisions only), one copy compiled (``compileall``), and every run
has ``PYTHONDONTWRITEBYTECODE=1`` so neither copy changes; the order of the five commands
reverses every round, so drift in the machine's load hits both revisions alike. A figure, not a
test: nothing here judges it.

``--instructions`` counts instructions instead of seconds (``valgrind --tool=callgrind``, which
must be on PATH), a figure that load does not move: of ``python -c pass``, of importing just the
standard-library modules the command imports (found by running it), and of the command. The
difference of the last two is the model's own share of start-up. Two breakdowns follow:

- what the command spends parsing and compiling source text at run time (callgrind's inclusive
  cost of CPython's ``_PyParser_ASTFromString`` and ``_PyAST_Compile``): with every module read
  from its ``.pyc``, that is the methods ``dataclasses`` and ``namedtuple`` generate as text and
  ``exec`` at each class definition (Python 3.11 compiles each method separately);
- each library module the model imports itself, by what leaving it out would save: the
  instructions of importing all of them, less those of importing all but that one (a module
  another one imports anyway saves nothing).
"""

from __future__ import annotations

import argparse
import ast
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.compare_bench import export  # noqa: E402

ARGS = ("check", "--example")
FLOOR = (sys.executable, "-c", "pass")


def command(entry: str) -> list[str]:
    """Return the process an installed ``prefix-model check --example`` is: its entry point ``MODULE:FUNCTION``, run."""
    module, function = entry.split(":")
    return [sys.executable, "-c", f"import sys; from {module} import {function}; sys.exit({function}())", *ARGS]


def entry_point() -> str:
    """Return this checkout's ``[project.scripts] prefix-model``."""
    import tomllib

    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    return str(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["scripts"]["prefix-model"])


def environment(model: Path | None = None, *, write_bytecode: bool = True) -> dict[str, str]:
    """The installed command's environment (no contract switch set), with ``model`` on PYTHONPATH when given."""
    env = {k: v for k, v in os.environ.items() if k != "PREFIX_MODEL_CONTRACTS"}
    if model is not None:
        env["PYTHONPATH"] = str(model)
    if not write_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def timed(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """Return the wall and CPU (user + system) seconds of one process of ``argv``, checked to succeed."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def heaviest_imports(argv: Sequence[str], env: dict[str, str], count: int = 12, repeat: int = 5) -> list[tuple[int, str]]:
    """Return the ``count`` modules with the largest cumulative import time (microseconds) on a run of ``argv``.

    Each module's time is the least of ``repeat`` runs: one run on a loaded machine can double any line.
    """
    best: dict[str, int] = {}
    for _ in range(repeat):
        done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], check=True, capture_output=True, text=True, env=env)
        for line in done.stderr.splitlines():
            parts = line.split("|")
            if len(parts) == 3 and parts[1].strip().isdigit():
                name = parts[2].rstrip()
                best[name] = min(best.get(name, int(parts[1])), int(parts[1]))
    return sorted(((micros, name) for name, micros in best.items()), reverse=True)[:count]


def _figure(label: str, times: Sequence[tuple[float, float]]) -> str:
    wall, cpu = [w for w, _ in times], [c for _, c in times]
    return f"{label:<36} wall median {statistics.median(wall):.3f} s (min {min(wall):.3f}, max {max(wall):.3f}), CPU median {statistics.median(cpu):.3f} s"


def _imports(title: str, rows: Sequence[tuple[int, str]]) -> list[str]:
    return [title, *(f"  {micros / 1000:7.1f} ms  {name}" for micros, name in rows)]


def this_checkout(runs: int) -> list[str]:
    argv, env = command(entry_point()), environment()
    subprocess.run(argv, check=True, capture_output=True, env=env)  # once untimed: bytecode written if it may be
    floor, times = [], []
    for _ in range(runs):
        floor.append(timed(FLOOR, env))
        times.append(timed(argv, env))
    bytecode = "PYTHONDONTWRITEBYTECODE set: .pyc read where present, never written" if env.get("PYTHONDONTWRITEBYTECODE") else ".pyc written and read"
    return [
        f"this checkout's model; {bytecode}",
        _figure(f"prefix-model {' '.join(ARGS)} ({runs} runs)", times),
        _figure("python -c pass (the floor)", floor),
        *_imports("heaviest imports of that run (cumulative, least of 5 runs):", heaviest_imports(argv, env)),
    ]


INSTRUMENT = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")
_NEW_MODULES = (
    "import contextlib, io, sys; before = set(sys.modules); sys.argv = ['prefix-model', *{args!r}]\n"
    "from {module} import {function}\n"
    "with contextlib.redirect_stdout(io.StringIO()): {function}()\n"
    "print(','.join(sorted({{m for m in set(sys.modules) - before if not m.startswith(('prefix_model', '_')) and '.' not in m}})))"
)


def library_modules(entry: str, env: dict[str, str]) -> list[str]:
    """Return the top-level standard-library (non-model) modules that ``check --example`` imports, by running it."""
    module, function = entry.split(":")
    code = _NEW_MODULES.format(args=ARGS, module=module, function=function)
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    return done.stdout.strip().split(",")


def instructions(argv: Sequence[str], env: dict[str, str]) -> int:
    """Return the instructions one process of ``argv`` executes, as callgrind counts them."""
    done = subprocess.run([*INSTRUMENT, *argv], check=True, capture_output=True, text=True, env=env)
    counted = [line.split("Collected :")[1] for line in done.stderr.splitlines() if "Collected :" in line]
    if not counted:
        raise SystemExit(f"startup_bench: valgrind printed no instruction count:\n{done.stderr[-2000:]}")
    return int(counted[-1])


_COMPILING = ("_PyParser_ASTFromString", "_PyAST_Compile")  # the parser and the compiler of source text


def compiling_instructions(argv: Sequence[str], env: dict[str, str], folder: Path) -> tuple[int, int]:
    """Return the instructions of one process of ``argv`` and, of them, those spent parsing and compiling source text."""
    out = folder / "callgrind.out"
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv], check=True, capture_output=True, text=True, env=env)
    total = int([line.split("Collected :")[1] for line in done.stderr.splitlines() if "Collected :" in line][-1])
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out)], check=True, capture_output=True, text=True).stdout
    spent = 0
    for line in annotated.splitlines():
        count, _, where = line.strip().partition(" ")
        function = where.rsplit(":", 1)[-1].split(" ")[0]
        if function in _COMPILING:  # the outermost call only: a recursive one is named NAME'2
            spent += int(count.replace(",", ""))
    return total, spent


def imported_by_the_model(model: Path, library: Sequence[str]) -> list[str]:
    """Return the modules of ``library`` that a module of the model imports itself (a top-level import statement)."""
    named: set[str] = set()
    for source in sorted(model.rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                named.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                named.add(node.module.split(".")[0])
    return [m for m in library if m in named]


def compiled_export(name: str, folder: Path) -> tuple[Path, str]:
    """Export revision ``name``'s ``model/`` into ``folder``, compiled as an installed wheel is; return it and its entry point."""
    revision = export("head", name, folder)
    if not compileall.compile_dir(revision.model, quiet=1):
        raise SystemExit(f"startup_bench: {name}: compileall failed")
    return revision.model, revision.entry


def counted_instructions(name: str) -> list[str]:
    if shutil.which("valgrind") is None:
        raise SystemExit("startup_bench: --instructions needs valgrind on PATH")
    with tempfile.TemporaryDirectory(prefix="prefix-startup-") as temporary:
        model, entry = compiled_export(name, Path(temporary))
        env = environment(model, write_bytecode=False)
        argv = command(entry)
        library = library_modules(entry, env)
        direct = imported_by_the_model(model, library)
        everything = instructions([sys.executable, "-c", "import " + ", ".join(direct)], env)
        saved = {m: everything - instructions([sys.executable, "-c", "import " + ", ".join(["sys", *(d for d in direct if d != m)])], env) for m in direct}
        total_again, compiling = compiling_instructions(argv, env, Path(temporary))
        rows = [
            ("python -c pass (the floor)", instructions(FLOOR, env)),
            (f"import of its {len(library)} library modules", instructions([sys.executable, "-c", "import " + ", ".join(library)], env)),
            (f"prefix-model {' '.join(ARGS)}", instructions(argv, env)),
        ]
    floor, library_total, total = (count for _, count in rows)
    lines = [f"{name}'s model, compiled; instructions of one process each (callgrind: load does not move them)", f"library modules: {', '.join(library)}"]
    lines += [f"{label:<40} {count / 1e6:8.1f} M  ({count / total:6.1%})" for label, count in rows]
    lines.append(f"{'the model and the check itself':<40} {(total - library_total) / 1e6:8.1f} M  ({(total - library_total) / total:6.1%}); above the floor {(total - floor) / 1e6:.1f} M")
    lines.append(f"{'parsing and compiling source text':<40} {compiling / 1e6:8.1f} M  ({compiling / total_again:6.1%} of that run's {total_again / 1e6:.1f} M): the methods dataclasses and namedtuple generate")
    lines.append("library modules the model imports itself, by what leaving each out would save:")
    ranked = sorted(saved.items(), key=lambda item: -item[1])
    lines += [f"  {m:<38} {count / 1e6:8.1f} M  ({count / total:6.1%})" for m, count in ranked if count >= 100_000]
    small = [m for m, count in ranked if count < 100_000]
    if small:
        lines.append(f"  under 0.1 M each (another module imports them anyway; within callgrind's run-to-run noise): {', '.join(sorted(small))}")
    return lines


def compare(base_name: str, head_name: str, runs: int) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="prefix-startup-") as temporary:
        folder = Path(temporary)
        base, head = export("base", base_name, folder), export("head", head_name, folder)
        variants: dict[str, tuple[list[str], dict[str, str]]] = {"python -c pass": (list(FLOOR), environment(write_bytecode=False))}
        for revision in (base, head):
            compiled = folder / f"{revision.label}-compiled"
            shutil.copytree(revision.model, compiled)
            if not compileall.compile_dir(compiled, quiet=1):
                raise SystemExit(f"startup_bench: {revision.label}: compileall failed")
            variants[f"{revision.label} {revision.commit[:10]}, no .pyc"] = (command(revision.entry), environment(revision.model, write_bytecode=False))
            variants[f"{revision.label} {revision.commit[:10]}, .pyc"] = (command(revision.entry), environment(compiled, write_bytecode=False))
        for argv, env in variants.values():
            subprocess.run(argv, check=True, capture_output=True, env=env)  # each must succeed before any is timed
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in variants}
        for round_ in range(runs):
            order = list(variants) if round_ % 2 == 0 else list(reversed(variants))
            for label in order:
                times[label].append(timed(*variants[label]))
        lines = [f"prefix-model {' '.join(ARGS)}, {runs} rounds, the order reversed every round; seconds of whole processes"]
        lines += [_figure(label, values) for label, values in times.items()]
        for revision in (base, head):
            argv, env = variants[f"{revision.label} {revision.commit[:10]}, .pyc"]
            lines += _imports(f"heaviest imports of {revision.label} {revision.name}, .pyc (cumulative, least of 5 runs):", heaviest_imports(argv, env))
        return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each command (default 15)")
    parser.add_argument("--base", help="compare this revision with --head, interleaved (committed revisions)")
    parser.add_argument("--head", default="HEAD", help="the revision compared with --base, or counted by --instructions (default HEAD)")
    parser.add_argument("--instructions", action="store_true", help="count instructions under valgrind instead of timing (load-independent)")
    args = parser.parse_args()
    if args.instructions:
        lines = counted_instructions(args.head)
    else:
        lines = this_checkout(args.runs) if args.base is None else compare(args.base, args.head, args.runs)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
