"""``rocketlab chaos``: a Jepsen-style campaign on real processes (see :mod:`rocketlab.chaos`).

* ``rocketlab chaos run --system S [--variant V] --seed N [--faults a,b] [--rounds R] [--out DIR] [--local]``:
  one run; prints its verdict line; exit 0 when the system showed what it must, 1 when not;
* ``rocketlab chaos campaign --systems S[/V],... --seeds 1-10 [--faults ...] [--out DIR] [--local]``: many
  runs, a summary table (``summary.json``, ``summary.txt``); exit 1 when any run was not as expected;
* ``--client kit|java|auto``: the producers are the kit's RocketMQ client or the Java 4.9.5 client
  (``auto``, the default: Java where it can run here, else the kit's); both go through the campaign's name server;
* ``rocketlab chaos replay RUN_DIR [--out DIR]``: the same seed and schedule again (also ``RUN_DIR/replay.sh``);
* ``rocketlab chaos check RUN_DIR``: the checker again over a run's files.

Bad usage is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rocketlab.chaos.campaign import RECOVERY_MS, RunSpec, check_run_dir, run, summary_line
from rocketlab.chaos.java_clients import java_available
from rocketlab.chaos.schedule import FAULTS
from rocketlab.chaos.systems import SYSTEMS
from rocketlab.chaos.systems import system as make_system
from rocketlab.errors import ConfigError
from rocketlab.i18n import _


def register(sub: Any) -> None:
    p = sub.add_parser("chaos", help=_("a Jepsen-style fault campaign on real node processes"))
    csub = p.add_subparsers(dest="chaos_command", metavar="ACTION", required=True)
    r = csub.add_parser("run", help=_("one run of one system with one seed"))
    r.add_argument("--system", required=True, help=_("sync-pair, async-pair, dledger or controller"))
    r.add_argument("--variant", help="; ".join(f"{name}: {', '.join(variants)}" for name, variants in SYSTEMS.items()
                                               if any(variants)))
    r.add_argument("--seed", type=int, required=True, help=_("the seed: same seed, same schedule and trace"))
    _common(r)
    r.set_defaults(func=cmd_run)
    c = csub.add_parser("campaign", help=_("many runs: systems x seeds, a summary table"))
    c.add_argument("--systems", default="sync-pair,async-pair,dledger/raft,dledger/dledger-0.3.1.2,controller/all-ack",
                   help=_("comma-separated SYSTEM[/VARIANT]"))
    c.add_argument("--seeds", default="1-3", help=_("N, N-M or a comma-separated list"))
    _common(c)
    c.set_defaults(func=cmd_campaign)
    rp = csub.add_parser("replay", help=_("re-run a run directory's seed and schedule"))
    rp.add_argument("run_dir", type=Path, help=_("a run directory written by chaos run or campaign"))
    rp.add_argument("--out", type=Path, help=_("where (default RUN_DIR-replay)"))
    rp.set_defaults(func=cmd_replay)
    ck = csub.add_parser("check", help=_("check a run directory's history, reads and trace again"))
    ck.add_argument("run_dir", type=Path, help=_("a run directory written by chaos run or campaign"))
    ck.set_defaults(func=cmd_check)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--faults", default=",".join(FAULTS),
                   help=_("comma-separated, of {faults}").format(faults=", ".join(FAULTS)))
    p.add_argument("--rounds", type=int, default=1, help=_("passes over the fault kinds (default 1)"))
    p.add_argument("--recovery-ms", type=int, default=None, help=_("puts after the heal before reading back"))
    p.add_argument("--step-ms", default="3000-8000", help=_("how long each fault lasts, MIN-MAX ms"))
    p.add_argument("--quiet-ms", default="1000-3000", help=_("quiet between faults, MIN-MAX ms"))
    p.add_argument("--out", type=Path, help=_("run directory (default runs/chaos/...)"))
    p.add_argument("--local", action="store_true", help=_("127.0.0.1 even where network namespaces work"))
    p.add_argument("--client", choices=("kit", "java", "auto"), default="auto",
                   help=_("the producers: the kit's RocketMQ client, the Java 4.9.5 client, or auto (the default: "
                          "Java where it can run here, else the kit's)"))
    p.add_argument("--node-module", default="", help=_("MODULE[:ARG] to run as each node instead of rocketlab.cli "
                                                       "(the checker's planted-bug suite)"))


def _faults(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    bad = [k for k in kinds if k not in FAULTS]
    if bad or not kinds:
        raise ConfigError(_("--faults: unknown {bad} (known: {known})").format(
            bad=bad or _("nothing"), known=", ".join(FAULTS)))
    return kinds


def _seeds(text: str) -> list[int]:
    try:
        if "-" in text and "," not in text:
            a, b = text.split("-", 1)
            return list(range(int(a), int(b) + 1))
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise ConfigError(_("--seeds {text!r}: expected N, N-M or N,M,...").format(text=text)) from None


def _range(text: str, what: str) -> tuple[int, int]:
    try:
        a, b = (int(x) for x in text.split("-", 1))
    except ValueError:
        raise ConfigError(_("{option} {text!r}: expected MIN-MAX (milliseconds)").format(option=what, text=text)) from None
    if not 0 < a <= b:
        raise ConfigError(_("{option} {text!r}: expected 0 < MIN <= MAX").format(option=what, text=text))
    return a, b


def _client(choice: str) -> str:
    """``kit`` or ``java`` (``auto``: Java where it runs here); ConfigError when Java is asked for and absent."""
    if choice == "kit":
        return "kit"
    ok, why = java_available()
    if ok:
        return "java"
    if choice == "java":
        raise ConfigError(_("--client java: the Java 4.9.5 client cannot run here ({why})").format(why=why))
    return "kit"


def _spec(system: str, variant: str | None, seed: int, args: argparse.Namespace):
    sysobj = make_system(system, variant)
    if args.rounds < 1:
        raise ConfigError(_("--rounds must be at least 1"))
    return RunSpec(sysobj.name, sysobj.variant, seed, _faults(args.faults), args.rounds,
                   recovery_ms=args.recovery_ms if args.recovery_ms is not None else RECOVERY_MS,
                   step_ms=_range(args.step_ms, "--step-ms"), quiet_ms=_range(args.quiet_ms, "--quiet-ms"),
                   netns=not args.local, node_module=args.node_module, client=_client(args.client))


def cmd_run(args: argparse.Namespace) -> int:
    spec = _spec(args.system, args.variant, args.seed, args)
    out = args.out or Path("runs/chaos") / f"{args.system}{'-' + spec.variant if spec.variant else ''}-seed{args.seed}"
    verdict = run(spec, out)
    print(summary_line(verdict))
    print(_("run directory: {path} (timeline.html, verdict.json); replay: {replay}").format(
        path=out, replay=verdict["replay"]))
    return 0 if verdict["met"] else 1


def cmd_campaign(args: argparse.Namespace) -> int:
    out = args.out or Path("runs/chaos/campaign")
    systems = []
    for item in (s.strip() for s in args.systems.split(",") if s.strip()):
        name, _slash, variant = item.partition("/")
        systems.append((name, variant or None))
    rows, all_met = [], True
    for seed in _seeds(args.seeds):
        for name, variant in systems:
            spec = _spec(name, variant, seed, args)
            run_dir = out / f"{name}{'-' + spec.variant if spec.variant else ''}-seed{seed}"
            verdict = run(spec, run_dir)
            line = summary_line(verdict)
            print(line, flush=True)
            all_met &= verdict["met"]
            rows.append({"system": name, "variant": spec.variant, "seed": seed, "acknowledged": verdict["ok"],
                         "lost": len(verdict["lost"]), "named": sorted(set(verdict["lost_named"].values())),
                         "duplicates": len(verdict["duplicates"]),
                         "retried_duplicates": len(verdict.get("retried_duplicates", [])), "gaps": len(verdict["gaps"]),
                         "order": len(verdict["order"]), "unknown": verdict["unknown"], "met": verdict["met"],
                         "checks": {name: c["count"] for name, c in verdict["checks"].items()},
                         "run_dir": str(run_dir), "replay": verdict["replay"]})
    (out / "summary.json").write_text(json.dumps(rows, indent=1) + "\n")
    (out / "summary.txt").write_text("\n".join(f"{r['system']}/{r['variant']} seed {r['seed']}: {r['acknowledged']} "
                                               f"acknowledged, {r['lost']} lost {r['named'] or ''}, "
                                               f"{'met' if r['met'] else 'NOT MET'}" for r in rows) + "\n")
    print(_("{runs} runs, {met} as expected; summary: {path}").format(
        runs=len(rows), met=sum(r["met"] for r in rows), path=out / "summary.txt"))
    return 0 if all_met else 1


def cmd_replay(args: argparse.Namespace) -> int:
    spec_path = args.run_dir / "spec.json"
    if not spec_path.exists():
        raise ConfigError(_("{path}: not a chaos run directory (no {name})").format(path=args.run_dir, name="spec.json"))
    spec = RunSpec.load(spec_path)
    out = args.out or args.run_dir.with_name(args.run_dir.name + "-replay")
    verdict = run(spec, out)
    print(summary_line(verdict))
    return 0 if verdict["met"] else 1


def cmd_check(args: argparse.Namespace) -> int:
    for name in ("history.jsonl", "reads.json", "spec.json", "schedule.json", "events.jsonl", "meta.json"):
        if not (args.run_dir / name).exists():
            raise ConfigError(_("{path}: not a chaos run directory (no {name})").format(path=args.run_dir, name=name))
    verdict = check_run_dir(args.run_dir)
    print(summary_line(verdict))
    return 0 if verdict["met"] else 1
