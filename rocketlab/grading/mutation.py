"""``rocketlab mutate``: an automatic mutation run of the kit's reference implementations against the graded tests.

Each exercise's reference (the function or class the lab table names, :data:`rocketlab.grading.EXERCISES`) is parsed, and
one small change at a time is made to its syntax tree (:data:`OPERATORS`: arithmetic operators,
comparisons, integer and boolean constants, ``and``/``or``, ``not``, returned values). Every mutant is
graded in a child process of its own (killed at a time limit: a mutant that hangs is killed by the
grader's limit too), on the exercise's decision tables first; the survivors of the tables then run the
exercise's scenario tests while the time budget lasts, as the hand-written mutants'
runner (``tests/grading/mutants.py``) does. A mutant is *killed* when a graded test fails it.

The report gives the share killed per exercise and lists every survivor, with the reason it is
equivalent (same answers on every input the component can produce) where :data:`EQUIVALENT` says so;
a survivor without a reason is a gap in the tests. rocketlab's own tool: mutmut and cosmic-ray mutate
whole files on disk and run a test command per mutant, where this needs one function mutated in
memory and graded by the registry's tests, tables first.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import io
import json
import multiprocessing
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rocketlab import plugs
from rocketlab.cli_support import writable_file
from rocketlab.errors import RocketlabError
from rocketlab.grading import registry
from rocketlab.i18n import _

SWAP_BINOP: dict[type, type] = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
                                ast.Mod: ast.FloorDiv, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd,
                                ast.LShift: ast.RShift, ast.RShift: ast.LShift, ast.Div: ast.Mult}
SWAP_CMP: dict[type, tuple[type, ...]] = {ast.Lt: (ast.LtE, ast.Gt), ast.LtE: (ast.Lt, ast.GtE), ast.Gt: (ast.GtE, ast.Lt),
                                          ast.GtE: (ast.Gt, ast.LtE), ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,),
                                          ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,), ast.In: (ast.NotIn,),
                                          ast.NotIn: (ast.In,)}
OPERATORS = ("binop", "compare", "constant", "boolop", "not", "return")
"""The mutation operators, in the order a node is offered to them."""

_COUNTER = "self.consumed counts the stream's bytes for the error message only: no answer changes"
_WIDER = ("a larger body limit: the broker's own encoder refuses such a body before encode_record is asked "
          "(PluggedEncoder runs it first), so no message the grader can send tells the two apart")
_FIRST_ONLY = ("elect reads only the first element of the TreeSet; this changes where worse elements go or "
               "drops a worse one that ties, never which element is first")
_SIGN_ONLY = "the comparator's callers read only its sign; the mutated cast keeps the sign of every difference"
_MOD_ZERO = ("Java's `mod > 0 and index < mod`: a member index is never negative, so when mod is 0 `index < mod` is "
             "false whether mod > 0 or mod >= 0 (or > -1) is asked first")
EQUIVALENT: dict[tuple[str, str], str] = {
    ("lab01.transfer_parser", "line +13: TransferParser: 0 -> 1"): _COUNTER,
    ("lab01.transfer_parser", "line +13: TransferParser: 0 -> -1"): _COUNTER,
    ("lab01.transfer_parser", "line +32: TransferParser: Add= -> Sub="): _COUNTER,
    ("lab01.transfer_parser", "line +32: TransferParser: Add -> Sub"): _COUNTER,
    ("lab02.encode_record", "line +5: encode_record: 1024 -> 1025"): _WIDER,
    ("lab02.encode_record", "line +5: encode_record: 4 -> 5"): _WIDER,
    ("lab04.quorum_index", "line +10: quorum_index: Gt -> GtE"): (
        "at index == committed_index the rule answers min(index, committed_index) == index: the same"),
    ("lab04.commit_rule", "line +8: safe_commit_index: Gt -> GtE"): (
        "at index == committed_index the rule answers committed_index instead of index: the same number"),
    ("lab06.elect_master", "line +13: _tree_set: 0 -> 1"): _FIRST_ONLY,
    ("lab06.elect_master", "line +15: _tree_set: Lt -> LtE"): _FIRST_ONLY + " (c == 0 has already left the loop)",
    ("lab06.elect_master", "line +15: _tree_set: 0 -> 1"): _FIRST_ONLY + " (c == 0 has already left the loop)",
    ("lab06.elect_master", "line +18: _tree_set: 1 -> 2"): _FIRST_ONLY,
    ("lab06.elect_master", "line +3: java_int: 4294967295 -> 4294967294"): (
        "clearing bit 0 turns a difference of +1 into 0 (a tie): TreeSet then drops the new, worse element; "
        "the first element is unchanged"),
    ("lab06.elect_master", "line +4: java_int: 2 -> 3"): _SIGN_ONLY,
    ("lab06.elect_master", "line +4: java_int: 32 -> 33"): _SIGN_ONLY,
    ("lab08.allocate", "line +9: allocate_averagely: LtE -> Lt"): (
        "as many queues as members: mod is 0, so the else branch's average is len(mq_all) // len(cid_all) == 1 too"),
    ("lab08.allocate", "line +11: allocate_averagely: Gt -> GtE"): _MOD_ZERO,
    ("lab08.allocate", "line +11: allocate_averagely: 0 -> -1"): _MOD_ZERO,
    ("lab08.allocate", "line +15: allocate_averagely: Gt -> GtE"): _MOD_ZERO,
    ("lab08.allocate", "line +15: allocate_averagely: 0 -> -1"): _MOD_ZERO,
}
"""(exercise, "line +K: NAME: mutant description") -> why that mutant answers as the reference on every input
the component can produce (reviewed by hand). K counts from the line of NAME's definition (1: the ``def`` or
``class`` line), so moving a definition within its file or to another keeps its entries."""


@dataclass(frozen=True)
class Mutant:
    exercise: str
    number: int  # the n-th mutation point of the reference's tree (stable for a given source)
    operator: str
    line: int  # line in the reference's source file
    description: str
    offset: int = 0  # line within the mutated definition (1: its def or class line)


def _points(tree: ast.AST) -> Iterator[tuple[ast.AST, str, str, Any]]:
    """Every (node, operator, description, replacement maker) of ``tree``, in a stable order."""
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in SWAP_BINOP:
            new = SWAP_BINOP[type(node.op)]
            yield node, "binop", f"{type(node.op).__name__} -> {new.__name__}", ("op", new)
        elif isinstance(node, ast.AugAssign) and type(node.op) in SWAP_BINOP:
            new = SWAP_BINOP[type(node.op)]
            yield node, "binop", f"{type(node.op).__name__}= -> {new.__name__}=", ("op", new)
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                for new in SWAP_CMP.get(type(op), ()):
                    yield node, "compare", f"{type(op).__name__} -> {new.__name__}", ("cmp", i, new)
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            yield node, "constant", f"{node.value} -> {not node.value}", ("const", not node.value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, int):
            for new in (node.value + 1, node.value - 1):
                yield node, "constant", f"{node.value} -> {new}", ("const", new)
        elif isinstance(node, ast.BoolOp):
            new = ast.Or if isinstance(node.op, ast.And) else ast.And
            yield node, "boolop", f"{type(node.op).__name__} -> {new.__name__}", ("op", new)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield node, "not", "not x -> x", ("unnot",)
        elif isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            yield node, "return", "return x -> return None", ("return_none",)


def _apply(node: ast.AST, change: tuple) -> ast.AST | None:
    """Change ``node`` in place (or return a replacement node)."""
    kind = change[0]
    if kind == "op":
        node.op = change[1]()  # type: ignore[attr-defined]
    elif kind == "cmp":
        node.ops[change[1]] = change[2]()  # type: ignore[attr-defined]
    elif kind == "const":
        node.value = change[1]  # type: ignore[attr-defined]
    elif kind == "unnot":
        return node.operand  # type: ignore[attr-defined]
    elif kind == "return_none":
        node.value = ast.Constant(None)  # type: ignore[attr-defined]
    return None


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST) -> None:
        self.target, self.replacement = target, replacement

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return self.replacement
        return super().generic_visit(node)


def scope(exercise: str) -> tuple[Any, list[tuple[str, str, int]]]:
    """The reference's module and what is mutated: the reference's definition (a function or class) and,
    transitively, every function of the same module it names, as (name, dedented source, first line).
    Classes it only uses (result types, the store's encoder) are the kit's shared parts, not mutated."""
    reference = registry.EXERCISES[exercise].reference
    module_name, attr = reference.__module__, reference.__name__
    module = inspect.getmodule(reference)
    todo, seen, found = [attr], {attr}, []
    while todo:
        name = todo.pop(0)
        obj = getattr(module, name)
        lines, first = inspect.getsourcelines(obj)
        source = textwrap.dedent("".join(lines))
        found.append((name, source, first))
        for node in ast.walk(ast.parse(source)):
            other = node.id if isinstance(node, ast.Name) else None
            target = getattr(module, other, None) if other else None
            if (other and other not in seen and inspect.isfunction(target)  # data classes are shared types
                    and getattr(target, "__module__", None) == module_name):
                seen.add(other)
                todo.append(other)
    return module, found


def _mutable_points(source: str) -> tuple[ast.Module, list[tuple[ast.AST, str, str, Any]]]:
    """The parsed definition and its mutation points, docstrings left alone."""
    tree = ast.parse(source)
    docs: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            docs.update(map(id, ast.walk(body[0])))
        for hint in (getattr(node, "annotation", None), getattr(node, "returns", None)):  # type hints
            if isinstance(hint, ast.AST):
                docs.update(map(id, ast.walk(hint)))
    return tree, [p for p in _points(tree) if id(p[0]) not in docs]


def mutants_of(exercise: str) -> list[Mutant]:
    """Every automatic mutant of ``exercise``'s reference (and of the same-module helpers it uses)."""
    _module, parts = scope(exercise)
    found = []
    for name, source, first in parts:
        _tree, points = _mutable_points(source)
        for node, operator, description, _change in points:
            line = first + getattr(node, "lineno", 1) - 1
            found.append(Mutant(exercise, len(found), operator, line, f"{name}: {description}",
                                getattr(node, "lineno", 1)))
    return found


def build(mutant: Mutant) -> Any:
    """The mutated function or class, defined (with its helpers) in a copy of its module's namespace."""
    module, parts = scope(mutant.exercise)
    namespace = dict(vars(module))
    number = mutant.number
    for name, source, _first in parts:
        tree, points = _mutable_points(source)
        if 0 <= number < len(points):
            node, _operator, _description, change = points[number]
            replacement = _apply(node, change)
            if replacement is not None:
                tree = _Replace(node, replacement).visit(tree)
            ast.fix_missing_locations(tree)
        number -= len(points)
        exec(compile(tree, f"<mutant {mutant.exercise} #{mutant.number}: {name}>", "exec"), namespace)  # noqa: S102
    return namespace[parts[0][0]]


def _grade_child(mutant: Mutant, tests: list[str], out: Any) -> None:
    """Child process: run ``tests`` on the mutant; send the first failing test's name (or None)."""
    sys.stdout = sys.stderr = io.StringIO()  # a mutant's prints and the scenarios' chatter
    try:
        impl = build(mutant)
    except Exception as e:  # noqa: BLE001 - a mutant that does not even compile is killed at import
        out.send(("<import>", f"{type(e).__name__}: {e}"))
        return
    for name in tests:
        test = registry.TESTS[name]
        for seed in (None,) if test.seeds is None else test.seeds:
            ctx = registry.Ctx(impl, seed if seed is not None else 0)
            try:
                with plugs.plugged({mutant.exercise: impl}):
                    test.fn(ctx)
            except BaseException as e:  # noqa: BLE001 - any failure of the mutant kills it
                out.send((name, f"{type(e).__name__}: {str(e)[:200]}"))
                return
            finally:
                for cluster in ctx.clusters:
                    try:
                        cluster.close()
                    except Exception:  # noqa: BLE001
                        pass
    out.send((None, ""))


@dataclass
class Outcome:
    mutant: Mutant
    killed_by: str | None = None  # a test name, "<timeout>" or "<import>"; None: survived (or not run)
    phase: str = ""  # "tables" or "scenarios": where it was killed or last survived
    detail: str = ""
    seconds: float = 0.0
    run: bool = False


def _run_one(mutant: Mutant, tests: list[str], limit_s: float) -> tuple[str | None, str, float]:
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    started = time.monotonic()
    child = ctx.Process(target=_grade_child, args=(mutant, tests, send), daemon=True)
    child.start()
    send.close()
    try:
        if recv.poll(limit_s):
            killer, detail = recv.recv()
        else:
            killer, detail = "<timeout>", f"no answer within {limit_s:g} s (the grader's limit kills it too)"
    except EOFError:
        killer, detail = "<crash>", f"the mutant's process died (exit code {child.exitcode})"
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        recv.close()
    return killer, detail, time.monotonic() - started


def run(exercises: list[str], budget_s: float = 600.0, limit_s: float | None = None, scenarios: bool = True,
        echo: Any = None, without: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Mutate every exercise's reference; grade each mutant on the tables, then the survivors on the
    scenarios, starting no mutant once ``budget_s`` is spent or too little of it is left for the mutant's
    limit (the sum of its tests' own time limits, at most ``limit_s``: a mutant over it has overrun one
    of them, as the grader would see). ``without``: test names (``any_tally`` or in full) left out, for a
    baseline. Returns the report (see :func:`report_markdown`)."""
    for lab in sorted({e.split(".")[0] for e in exercises}):
        registry.load_builtin(lab)
    started = time.monotonic()
    outcomes: dict[str, list[Outcome]] = {e: [Outcome(m) for m in mutants_of(e)] for e in exercises}
    for phase in ("tables", "scenarios") if scenarios else ("tables",):
        for exercise, found in outcomes.items():
            kind = "unit" if phase == "tables" else "scenario"
            tests = [t.name for t in registry.TESTS.values() if t.exercise == exercise and t.kind == kind
                     and not t.hidden and t.name not in without and t.name.split("/", 1)[1] not in without]
            if not tests:
                continue
            limit = sum(registry.TESTS[n].time_limit_s for n in tests)
            limit = min(limit, limit_s) if limit_s else limit
            for o in found:
                if o.killed_by is not None or (phase == "scenarios" and not o.run):
                    continue
                if budget_s - (time.monotonic() - started) < limit:
                    continue  # not run: the budget could not let it reach its limit
                killer, detail, seconds = _run_one(o.mutant, tests, limit)
                o.killed_by, o.detail, o.seconds, o.phase, o.run = killer, detail, o.seconds + seconds, phase, True
                if echo:
                    what = _("killed by {test}").format(test=killer) if killer else _("survived {phase}").format(
                        phase=phase)
                    echo(_("{exercise} #{number} line {line} {description}: {what} ({seconds} s)").format(
                        exercise=exercise, number=o.mutant.number, line=o.mutant.line,
                        description=o.mutant.description, what=what, seconds=f"{seconds:.1f}"))
    return _report(outcomes, time.monotonic() - started, budget_s, scenarios)


def _report(outcomes: dict[str, list[Outcome]], elapsed: float, budget_s: float, scenarios: bool) -> dict[str, Any]:
    per: dict[str, Any] = {}
    for exercise, found in outcomes.items():
        ran = [o for o in found if o.run]
        survivors = [o for o in ran if o.killed_by is None]
        fully = [o for o in survivors if o.phase == "scenarios" or not scenarios
                 or not any(t.exercise == exercise and t.kind == "scenario" for t in registry.TESTS.values())]
        equivalent = [o for o in survivors if _why(o.mutant)]
        per[exercise] = {
            "mutants": len(found), "run": len(ran), "killed": len(ran) - len(survivors),
            "killed_by_tables": sum(o.killed_by is not None and o.phase == "tables" for o in ran),
            "killed_by_scenarios": sum(o.killed_by is not None and o.phase == "scenarios" for o in ran),
            "survived": len(survivors), "equivalent": len(equivalent),
            "killed_share": round((len(ran) - len(survivors)) / len(ran), 4) if ran else None,
            "killed_share_of_non_equivalent": (round((len(ran) - len(survivors)) / (len(ran) - len(equivalent)), 4)
                                               if len(ran) > len(equivalent) else None),
            "not_run": len(found) - len(ran),
            "survivors": [{**asdict(o.mutant), "survived": o.phase if o in fully else "tables (scenarios not run)",
                           "equivalent_because": _why(o.mutant)}
                          for o in survivors],
            "killed_by_test": dict(sorted(Counter(o.killed_by for o in ran if o.killed_by).items())),
            "seconds": round(sum(o.seconds for o in found), 1),
        }
    return {"budget_s": budget_s, "elapsed_s": round(elapsed, 1), "scenarios": scenarios, "operators": list(OPERATORS),
            "exercises": per}


def _why(m: Mutant) -> str | None:
    return EQUIVALENT.get((m.exercise, f"line +{m.offset}: {m.description}"))


def report_markdown(report: dict[str, Any]) -> str:
    """The report as a table: one row per exercise."""
    base = report.get("baseline", {}).get("exercises", {})
    rows = ["| exercise | mutants | run | killed (tables + scenarios) | survived | equivalent | killed of non-equivalent |"
            + (" baseline: killed without the listed tests |" if base else ""),
            "|---|---|---|---|---|---|---|" + ("---|" if base else "")]
    for exercise, r in report["exercises"].items():
        share = r["killed_share_of_non_equivalent"]
        b = base.get(exercise)
        rows.append(f"| {exercise} | {r['mutants']} | {r['run']} | {r['killed']} ({r['killed_by_tables']} + "
                    f"{r['killed_by_scenarios']}) | {r['survived']} | {r['equivalent']} | "
                    f"{'-' if share is None else f'{share:.0%}'} |" + ((f" {b['killed']} of {b['run']} |" if b else " - |") if base else ""))
    return "\n".join(rows)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "mutate", help=_("mutation run: mutate the kit's reference of each exercise and grade every mutant"),
        description=_("Mutate each exercise's reference implementation (operators, comparisons, constants, "
                      "and/or, not, returned values), grade every mutant on the exercise's tables, then the "
                      "survivors on its scenarios, within a time budget; report the share killed per exercise."))
    p.add_argument("labs", nargs="*", metavar="LAB_OR_EXERCISE",
                   help=_("labs (lab03) or exercises (lab03.handle_vote); default: every exercise but those of "
                          "Spark labs (lab07)"))
    p.add_argument("--budget", type=float, default=1800.0, metavar="S",
                   help=_("stop starting mutants after S seconds"))
    p.add_argument("--tables-only", action="store_true", help=_("grade on the decision tables only"))
    p.add_argument("--limit", type=float, metavar="S",
                   help=_("at most S seconds per mutant (default: the sum of its tests' own time limits)"))
    p.add_argument("--json", metavar="FILE", help=_("write the report here (e.g. benchmarks/results/mutation.json)"))
    p.add_argument("--quiet", action="store_true", help=_("no line per mutant"))
    p.add_argument("--baseline-without", action="append", metavar="TEST",
                   help=_("first a tables-only run without these tests (e.g. tests added since the last run), "
                          "recorded as the report's baseline; repeatable, or comma-separated"))
    p.set_defaults(func=_run_cli)


def chosen_exercises(names: list[str]) -> list[str]:
    """Exercises named directly or through their lab; when none, every exercise but those of Spark labs (lab 07:
    each mutant would start a JVM)."""
    if not names:
        return [e.id for lab in registry.LABS.values() if lab.spark is None for e in lab.exercises]
    chosen = []
    for name in names:
        hits = [e for e in registry.EXERCISES if e == name or e.split(".")[0] == name]
        if not hits:
            raise RocketlabError(_("mutate: {name!r} is no lab or exercise; known: {known}").format(
                name=name, known=", ".join(registry.EXERCISES)))
        chosen += [h for h in hits if h not in chosen]
    return chosen


def _run_cli(args: argparse.Namespace) -> int:
    if args.budget <= 0 or (args.limit is not None and args.limit <= 0):
        raise RocketlabError(_("mutate: --budget and --limit must be positive"))
    exercises = chosen_exercises(args.labs)
    if args.json:

        writable_file(Path(args.json), "--json")  # before the work starts
    echo = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    without = frozenset(v.strip() for value in args.baseline_without or () for v in value.split(",") if v.strip())
    baseline = run(exercises, budget_s=args.budget, limit_s=args.limit, scenarios=False, echo=echo,
                   without=without) if without else None
    report = run(exercises, budget_s=args.budget, limit_s=args.limit, scenarios=not args.tables_only, echo=echo)
    if baseline is not None:
        report["baseline"] = {"without": sorted(without), "tables_only": True, "exercises": {
            e: {k: r[k] for k in ("mutants", "run", "killed", "survived", "killed_share")}
            for e, r in baseline["exercises"].items()}}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    print(report_markdown(report))
    gaps = [s for r in report["exercises"].values() for s in r["survivors"] if not s["equivalent_because"]]
    for s in gaps:
        print(_("survivor: {exercise} line {line}: {description}").format(
            exercise=s["exercise"], line=s["line"], description=s["description"]))
    return 1 if gaps else 0


__all__ = ["EQUIVALENT", "OPERATORS", "Mutant", "build", "mutants_of", "report_markdown", "run"]
