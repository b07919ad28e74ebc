"""The authors' SophOMR (github.com/keewoolee/SophOMR, C++ on OpenFHE) beside hepkg's SophOMR / SophOMD.

Their program runs unchanged: :func:`prepare` builds it from their checkout (``--authors`` or
``$HEPKG_AUTHORS_SOPHOMR``) against OpenFHE at the version they tested (:data:`OPENFHE_REF`), built from an
openfhe-development checkout (``$HEPKG_OPENFHE_SRC``, its ``third-party/cereal`` submodule checked out), with
NTL and GMP from the system (:mod:`hepkg.bench.builds`: cached outside the repository). Where the CPU has
AVX512-IFMA and HEXL's checkouts are given (:func:`hepkg.bench.builds.accelerator`), every OpenFHE build here
has Intel HEXL, as the paper measured (openfhe-hexl's files, machine-specific flags as openfhe-configurator
builds it), hepkg's module included; otherwise none has. Given an
openfhe-python checkout (``$HEPKG_OPENFHE_PYTHON_SRC``), both sides also run on one OpenFHE: their program
again against :data:`SAME_OPENFHE_REF` and hepkg's child on openfhe-python :data:`OPENFHE_PYTHON_REF` built
against that very build (the first release whose bindings have what hepkg's SophOMD needs: v1.4.0.1 lacks
``EvalAutomorphism``, the row swap), if a toy digest decodes on it. That build is then the reference side
``authors``, and the one at the tested version runs beside it as ``authors-v1.4.0``: the ratios give hepkg
against theirs on the same library, and what the version changes in theirs (OpenFHE 1.5 drops fewer towers
before BFV products: ``FindLevelsToDrop``). Each of their runs is ``test OMD <N> <k>`` or ``test OMR <N> <k>
<t>`` (a configuration of their ``main.cpp``; any other is refused before it starts, since theirs would fall
back to its defaults) in a scratch folder, where it writes its keys and digest to ``data/``. Their lines give
the affine transform, range check, compression and decoding times; the time to their "Setup Finished!" line is
their key generation (``keygen_s``, process start included), from there to the board's simulation their key
saving to ``data/`` (``keysave_s``); the process's own peak RSS comes from ``wait4``;
``correct`` is their "Result is Correct!".

hepkg's side is :func:`hepkg.omr.experiments.measure_here` in a child process on the same N, k and payload
(612 bytes for OMR, as their ``payload_size``; none for OMD), its digest decoded and checked against the
planted messages; it imports the ``openfhe`` module built as above, else the openfhe-python wheel (OpenFHE
1.6.1). Its ``keygen_s`` is the receiver's contexts and keys and Enc(sk), as their setup (no process start), its
``keysave_s`` the detection key written as bytes, as their ``saveKeys`` writes its files; ``keyload_s`` (the
server's contexts made) and ``server_setup_s`` (the detector built on them), in its rows only, have no counterpart
in theirs. Each hepkg
row names the module it ran (``openfhe_module``), each row its ``build``. The sides
alternate after a warm-up round, ``OMP_NUM_THREADS`` the same on both (the case's ``threads``). What cannot be
made equal: on the module built beside theirs hepkg runs their dnum 2 (:data:`THEIR_SET`, log PQ 1740) if that
OpenFHE accepts it at 128 bits, as 1.5.1 does; the wheel (OpenFHE 1.6.1, no HEXL), which hepkg runs without
that module, refuses it, and there hepkg's top level uses dnum 3 (``bfv-omr-soph``, log PQ 1620). Both switch the
digest to a smaller ring: theirs to 2^16 / dim_trace, hepkg's to :meth:`~hepkg.omr.detector.Layout.descent`'s
(the same 2^14 and 2^13), where its backend can (:attr:`~hepkg.he.context.Context.subrings`).
"""
from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import itertools
import os
import pathlib
import re

from hepkg.bench import builds
from hepkg.bench.builds import Program
from hepkg.bench.child import in_child
from hepkg.bench.versus import alternate

__all__ = ["REPO", "ENV", "OPENFHE_REF", "SAME_OPENFHE_REF", "THEIR_SET", "WHEEL_SET", "Program", "Authors", "prepare",
           "authors_configs", "parse", "run_authors", "run_hepkg", "versus_cases", "versus_run"]

REPO, ENV, FILES = "keewoolee/SophOMR", "HEPKG_AUTHORS_SOPHOMR", ("main.cpp", "CMakeLists.txt", "src/param.cpp")
OPENFHE_REF = "v1.4.0"            # the version they tested
#: hepkg's set on their OpenFHE (their dnum 2) and the one the wheel (OpenFHE 1.6.1) builds (dnum 3)
THEIR_SET, WHEEL_SET = "bfv-omr-soph-d2", "bfv-omr-soph"
SAME_OPENFHE_REF, OPENFHE_PYTHON_REF = "v1.5.1", "v1.5.1.0"   # one OpenFHE for both sides (openfhe-python needs 1.5.1)
#: Per-phase seconds compared (ratio = authors / hepkg), the digest (server) total, memory and sizes.
QUANTITIES = ("digest_s", "affine_s", "range_check_s", "compression_s", "decode_s", "keygen_s", "rss_gb",
              "digest_kb")
REPS = 5
ROUND_RECORDS = True       # a case takes hours: each round is kept as it finishes (hepkg.bench.versus.measure)
PAYLOAD_BYTES = 612        # their payload_size = 612 * 8 bits (global.cpp), the OMR configurations' payload
_LINES = {"affine_s": (r"Affine Transform time:\s*([0-9.eE+-]+)\s*sec", 1.0),
          "range_check_s": (r"RangeCheck time:\s*([0-9.eE+-]+)\s*sec", 1.0),
          "compression_s": (r"Compression time:\s*([0-9.eE+-]+)\s*sec", 1.0),
          "decode_s": (r"Client-side Decoding Time:\s*([0-9.eE+-]+)\s*ms", 1e-3)}
_CASE = re.compile(r"(OMD|OMR) N(\d+) k(\d+)(?: t(\d+))? threads(\d+)")
#: their lines around key saving (``saveKeys``, between key generation and the simulated board)
_SETUP, _SAVED = "Setup Finished!", "Payload & Signal Simulation Started!"


@dataclasses.dataclass(frozen=True)
class Authors:
    """Their builds by side (:func:`prepare`), the configurations their ``main.cpp`` accepts
    (:func:`authors_configs`), ``python``, the folder holding an ``openfhe`` module built against the reference
    side's OpenFHE (None: hepkg runs the wheel), ``hepkg_build``, that module's build, and ``hepkg_params``,
    hepkg's set at N = 2^16 (their dnum 2 where that module accepts it at 128 bits)."""

    programs: dict
    configs: frozenset
    python: pathlib.Path | None = None
    hepkg_build: str | None = None
    hepkg_params: str = WHEEL_SET


def authors_configs(checkout) -> frozenset[str]:
    """The configurations their ``main.cpp`` maps to parameter sets: ``'OMD_65536_50'``, ``'OMR_65536_50_250'``, ..."""
    text = (pathlib.Path(checkout) / "main.cpp").read_text()
    return frozenset(re.findall(r'\{\s*"((?:OMR|OMD)_\d+_\d+(?:_\d+)?)"\s*,', text))


def _program(lib, prog) -> Program:
    return Program(prog.root / "build" / "test", lib.prefix / "lib", f"{prog.root.name} + {lib.root.name}")


def prepare(checkout) -> Authors:
    """Their program built (cached) against OpenFHE :data:`OPENFHE_REF` from ``$HEPKG_OPENFHE_SRC`` (side
    ``authors``), and, given ``$HEPKG_OPENFHE_PYTHON_SRC``, against :data:`SAME_OPENFHE_REF` with openfhe-python
    :data:`OPENFHE_PYTHON_REF` on that build for hepkg (that side is then ``authors``, the first
    ``authors-<OPENFHE_REF>``); where that cannot be built or hepkg does not run on it, it says why."""
    tested = _program(*builds.against_openfhe("sophomr", checkout, OPENFHE_REF, with_hexl=True))
    configs = authors_configs(checkout)
    same = _same_openfhe(checkout)
    if isinstance(same, str):
        print(f"{same}; hepkg runs the openfhe wheel", flush=True)
        return Authors({"authors": tested}, configs)
    lib, prog, (python, label) = same
    refused = _refuses(python, THEIR_SET)
    if refused:
        print(f"hepkg runs {WHEEL_SET} (dnum 3): {label} refuses {THEIR_SET} ({refused})", flush=True)
    return Authors({"authors": _program(lib, prog), f"authors-{OPENFHE_REF}": tested}, configs, python, label,
                   WHEEL_SET if refused else THEIR_SET)


def _same_openfhe(checkout):
    """(OpenFHE :data:`SAME_OPENFHE_REF`, their program, and :func:`hepkg.bench.builds.hepkg_python` on it) where
    hepkg runs on that module, else why not."""
    src = os.environ.get(builds.OPENFHE_PYTHON_ENV)
    if not src:
        return (f"for OpenFHE {SAME_OPENFHE_REF} on both sides: {builds.clone_hint(builds.OPENFHE_PYTHON_REPO)} "
                f"and set {builds.OPENFHE_PYTHON_ENV} to its path")
    try:
        lib, prog = builds.against_openfhe("sophomr", checkout, SAME_OPENFHE_REF, with_hexl=True)
        python, label = builds.hepkg_python(src, OPENFHE_PYTHON_REF, lib)
    except builds.BuildError as exc:
        return f"no build on OpenFHE {SAME_OPENFHE_REF} ({exc})"
    why = _fails_hepkg(python)
    return (lib, prog, (python, label)) if why is None else f"hepkg's backend does not run on {label} ({why})"


def parse(output: str) -> dict:
    """Their run's printed times (seconds) and correctness; ValueError naming a missing line."""
    out = {}
    for name, (pattern, scale) in _LINES.items():
        found = re.search(pattern, output)
        if not found:
            raise ValueError(f"the authors' output has no line matching {pattern!r}")
        out[name] = float(found.group(1)) * scale
    out["digest_s"] = out["affine_s"] + out["range_check_s"] + out["compression_s"]
    out["correct"] = "Result is Correct!" in output
    return out


def _args(mode: str, N: int, k: int, t) -> list[str]:
    return [mode, str(N), str(k)] + ([str(t)] if mode == "OMR" else [])


def run_authors(authors: Authors, mode: str, N: int, k: int, t, threads: int, side: str = "authors") -> dict:
    """One run of their program's build ``side`` (see the module docstring): times, peak RSS, the sizes in
    ``data/``."""
    key = "_".join(_args(mode, N, k, t))
    if key not in authors.configs:
        raise ValueError(f"{REPO} has no configuration {key} (theirs: {', '.join(sorted(authors.configs))})")
    program = authors.programs[side]
    output, marks, peak, files = builds.run(program.binary, _args(mode, N, k, t), libdir=program.libdir,
                                            threads=threads, marks=(_SETUP, _SAVED),
                                            setup=lambda tmp: (tmp / "data").mkdir())
    setup = marks.get(_SETUP, float("nan"))
    return parse(output) | dict(keygen_s=setup, keysave_s=marks.get(_SAVED, float("nan")) - setup, rss_gb=peak / 1e9,
                                digest_kb=files.get("data/digest.txt", float("nan")) / 1e3,
                                key_kb=sum(v for f, v in files.items() if f != "data/digest.txt") / 1e3)


def _openfhe_module(config: dict) -> list[dict]:
    """One row naming the folder of the ``openfhe`` module this process imports and how hepkg's backend encodes
    packed plaintexts on it (``config`` unused)."""
    from hepkg.he.backends.openfhe import binding

    return [binding()]


def _measure_naming_module(config: dict) -> list[dict]:
    """:func:`hepkg.omr.experiments.measure_here`, each row naming the folder of the ``openfhe`` module it ran."""
    from .experiments import measure_here

    (module,) = _openfhe_module(config)
    return [r | module for r in measure_here(config)]


def _config(params: str, mode: str, N: int, k: int, seed: int) -> dict:
    return dict(backend="openfhe", params=params, ps="sophomr", scheme="sophomd" if mode == "OMD" else "sophomr",
                N=N, k=k, payload_bytes=PAYLOAD_BYTES, seed=seed, reps=1, insecure=params.startswith("toy"))


def _fails_hepkg(python) -> str | None:
    """None when hepkg's SophOMD decodes a toy digest (N = 4096, k = 4) on the ``openfhe`` module in ``python``,
    else why not (a child that imports another module, or none, says so before any digest)."""
    want = str(pathlib.Path(python) / "openfhe")
    try:
        (m,) = in_child(_openfhe_module, {}, 0, 1, python_path=python)
        if m["openfhe_module"] != want:
            return f"module {m['openfhe_module']} imported instead of {want}"
        (r,) = in_child(_measure_naming_module, _config("toy-bfv-omr-soph", "OMD", 4096, 4, 0), 0, 1,
                        python_path=python)
    except Exception as exc:                     # the backend's error in the child, e.g. a binding it lacks
        return f"{type(exc).__name__}: {exc}"
    if r["status"] != "measured" or not r["correct"] or r["openfhe_module"] != want:
        return f"status {r['status']}, correct {r.get('correct')}, module {r.get('openfhe_module')}"
    return None


def _context_built(config: dict) -> list[dict]:
    """One row: the bits of Q and P of the context ``config["params"]`` builds at 128 bits on this process's
    ``openfhe`` module (keys generated: as a digest's context)."""
    from hepkg import he

    built = he.context("openfhe", config["params"]).built
    return [dict(q_bits=sum(built.q_bits), p_bits=sum(built.p_bits))]


def _refuses(python, params: str) -> str | None:
    """None when the ``openfhe`` module in ``python`` builds ``params`` at 128 bits, else its refusal."""
    try:
        in_child(_context_built, dict(params=params), 0, 1, python_path=python)
    except Exception as exc:                     # ParameterError: OpenFHE's refusal, re-raised from the child
        return f"{type(exc).__name__}: {exc}"
    return None


def run_hepkg(params: str, mode: str, N: int, k: int, threads: int, seed: int, python=None) -> dict:
    """hepkg's SophOMD / SophOMR on the same configuration, in a child process (keys, one digest, decoding) that
    imports ``openfhe`` from ``python`` first (None: the installed wheel)."""
    from .experiments import estimated_peak_bytes

    cfg = _config(params, mode, N, k, seed)
    # the estimate builds its context here, on the wheel, which refuses their set: its dnum 3 (larger keys) stands in
    peak = estimated_peak_bytes(cfg | dict(params=WHEEL_SET) if params == THEIR_SET else cfg)
    (r,) = in_child(_measure_naming_module, cfg, peak, threads, python_path=python)
    if r["status"] != "measured":
        raise RuntimeError(f"hepkg's {cfg['scheme']} N={N} k={k}: {r['status']}")
    return dict(affine_s=r["affine_wall_s"], range_check_s=r["range_check_wall_s"],
                compression_s=r["compression_wall_s"], digest_s=r["digest_s"], decode_s=r["decode_s"],
                parse_s=r["parse_s"], keygen_s=r["keygen_s"], keysave_s=r["keysave_s"], keyload_s=r["keyload_s"],
                server_setup_s=r["server_setup_s"], precompute_s=r["precompute_s"],
                key_written_kb=r["detection_key_written_bytes"] / 1e3,
                rss_gb=r["rss_peak_bytes"] / 1e9, digest_kb=r["digest_bytes"] / 1e3,
                key_kb=r["detection_key_bytes"] / 1e3, correct=bool(r["correct"]), openfhe_module=r["openfhe_module"],
                encode_path=r["encode_path"], call_path=r["call_path"])


def versus_cases(scale: str) -> list[str]:
    """The paper's Table 3 configurations (``OMD N65536 k50``, ``OMR N65536 k50 t250``) and its k = 16 OMD, at
    one and two OpenMP threads; quick: a toy N for hepkg alone (the authors' program has no such configuration)."""
    if scale == "quick":
        return ["OMD N4096 k4 threads2"]
    return [f"{c} threads{th}" for th in (1, 2) for c in ("OMD N65536 k50", "OMR N65536 k50 t250", "OMD N65536 k16")]


def versus_run(case: str, authors: Authors | None = None, *, reps: int, seed: int = 0, warmup: int = 1,
               rotate: int = 0):
    """One row per kept run of each side on ``case`` (``authors``: :func:`prepare`'s, or None: hepkg alone),
    after ``warmup`` rounds, the sides' order rotated by ``rotate``."""
    mode, N, k, t, threads = _CASE.fullmatch(case).groups()
    N, k, threads = int(N), int(k), int(threads)
    python = authors.python if authors else None
    params = ((authors.hepkg_params if python else WHEEL_SET) if N >= 2 ** 16 else
              "toy-bfv-omr-soph")                                     # a toy N: insecure, tests
    sides, build = {}, {}
    if authors is not None and "_".join(_args(mode, N, k, t)) in authors.configs:
        for side, program in authors.programs.items():
            sides[side] = functools.partial(run_authors, authors, mode, N, k, t, threads, side)
            build[side] = program.build
    boards = itertools.count(seed)                                            # a fresh board each run
    sides["hepkg"] = lambda: run_hepkg(params, mode, N, k, threads, next(boards), python)
    build["hepkg"] = (authors.hepkg_build if python else
                      f"openfhe-python wheel {importlib.metadata.version('openfhe')}")
    names = list(sides)
    order = names[rotate % len(names):] + names[:rotate % len(names)]
    out = alternate({name: sides[name] for name in order}, reps, warmup)
    return out.assign(case=case, threads=threads, build=out.side.map(build),
                      params=out.side.map(lambda side: params if side == "hepkg" else "theirs: src/param.cpp"))
