"""The harness that runs the authors' SophOMR beside hepkg's (hepkg.omr.authors), on a stand-in program."""
import pathlib
import shutil
import stat
import textwrap
import types

import pytest

from hepkg.bench.versus import MissingCheckout
from hepkg.omr import authors as A

#: Their lines as their sophomr.cpp and detect.cpp print them (tabs, a blank line after each).
OUTPUT = """1. Setup Started!

Setup Finished!

2. Payload & Signal Simulation Started!

\t 3-1. Detection Started!

\t\t Affine Transform time: 61.25sec

\t\t RangeCheck time: 40.5sec

\t Detection time: 101.8sec

\t Compression time: 12.125sec

Client-side Decoding Finished!
Client-side Decoding Time: 250.5ms

Result is Correct!
"""


def test_parse_reads_every_phase_and_the_verdict():
    got = A.parse(OUTPUT)
    assert got == dict(affine_s=61.25, range_check_s=40.5, compression_s=12.125, decode_s=0.2505,
                       digest_s=61.25 + 40.5 + 12.125, correct=True)
    assert A.parse(OUTPUT.replace("Result is Correct!", "Something went Wrong!"))["correct"] is False


def test_parse_names_the_missing_line():
    with pytest.raises(ValueError, match="RangeCheck"):
        A.parse(OUTPUT.replace("RangeCheck time", "RangeCheck tim"))


def test_authors_configs_are_read_from_their_main(tmp_path):
    (tmp_path / "main.cpp").write_text(textwrap.dedent("""
        std::map<std::string, std::function<void()>> paramFuncs = {
            {"OMR_65536_50_250", param_OMR_65536_50_250},
            {"OMD_65536_16", param_OMD_65536_16},
        };"""))
    assert A.authors_configs(tmp_path) == {"OMR_65536_50_250", "OMD_65536_16"}


def _standin(tmp_path: pathlib.Path, body: str) -> A.Authors:
    exe = tmp_path / "test"
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return A.Authors({"authors": A.Program(exe, tmp_path / "lib")}, frozenset({"OMD_65536_16", "OMR_65536_50_250"}))


def test_run_authors_times_their_phases_and_reads_their_files(tmp_path):
    setup, rest = (part.replace("\n", "\\n") for part in OUTPUT.split("2. Payload", 1))
    rest = "2. Payload" + rest
    authors = _standin(tmp_path, f"""
        [ "$*" = "OMR 65536 50 250" ] || exit 3
        [ "$OMP_NUM_THREADS" = 1 ] || exit 4
        case "$LD_LIBRARY_PATH" in {tmp_path}/lib*) ;; *) exit 5;; esac
        printf '{setup}'
        head -c 3000 /dev/zero > data/key-rot.txt; sleep 0.5
        head -c 1500 /dev/zero > data/digest.txt
        printf '{rest}'
        """)
    got = A.run_authors(authors, "OMR", 65536, 50, 250, threads=1)
    assert got["correct"] and got["compression_s"] == 12.125
    assert got["digest_kb"] == 1.5 and got["key_kb"] == 3.0
    assert 0 < got["keygen_s"] < 60 and got["rss_gb"] > 0 and 0.4 < got["keysave_s"] < 30


def test_run_authors_refuses_a_configuration_they_lack_before_starting(tmp_path):
    authors = _standin(tmp_path, "touch started\n")
    with pytest.raises(ValueError, match="no configuration OMD_65536_50"):
        A.run_authors(authors, "OMD", 65536, 50, None, threads=1)
    assert not (tmp_path / "started").exists()


def test_run_authors_reports_a_failed_run_with_its_output(tmp_path):
    authors = _standin(tmp_path, "echo 'Setup Finished!'; echo boom; exit 7\n")
    with pytest.raises(RuntimeError, match=r"exited with 7(.|\n)*boom"):
        A.run_authors(authors, "OMD", 65536, 16, None, threads=1)


def test_run_authors_refuses_output_without_their_times(tmp_path):
    authors = _standin(tmp_path, "echo 'Result is Correct!'\n")
    with pytest.raises(ValueError, match="Affine Transform"):
        A.run_authors(authors, "OMD", 65536, 16, None, threads=1)


def test_prepare_without_an_openfhe_source_says_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.delenv("HEPKG_OPENFHE_SRC", raising=False)
    with pytest.raises(MissingCheckout, match=r"git clone --recursive --branch v1\.4\.0 .*openfhe-development"):
        A.prepare(tmp_path)


def test_cases_are_the_papers_configurations_at_one_and_two_threads():
    cases = A.versus_cases("default")
    assert "OMD N65536 k50 threads1" in cases and "OMR N65536 k50 t250 threads2" in cases and len(cases) == 6


@pytest.fixture
def hepkg_calls(monkeypatch):
    """The arguments of each call of hepkg's side, which returns a correct 1-second digest without running one."""
    calls = []
    monkeypatch.setattr(A, "run_hepkg", lambda *args: calls.append(args) or dict(digest_s=1.0, correct=True))
    return calls


def test_the_omr_section_runs_hepkg_alone_without_their_program(hepkg_calls):
    """Without their program: hepkg's side alone, on the wheel, a fresh board per run (hepkg's digest itself is
    run and checked in the next test)."""
    runs = A.versus_run("OMR N4096 k4 t250 threads2", None, reps=2, seed=7)
    assert list(runs.side) == ["hepkg"] * 2 and bool(runs.correct.all()) and runs.threads.eq(2).all()
    assert runs.build.str.startswith("openfhe-python wheel").all() and runs.params.eq("toy-bfv-omr-soph").all()
    assert hepkg_calls == [("toy-bfv-omr-soph", "OMR", 4096, 4, 2, seed, None) for seed in (7, 8, 9)]   # a warm-up first


def _build(root, prefix=None):
    return types.SimpleNamespace(root=root, prefix=prefix)


def test_each_build_of_their_program_is_a_side_beside_hepkg(tmp_path):
    """The build on hepkg's OpenFHE is the reference ``authors``, the one at their tested version a side of its own."""
    lines = OUTPUT.replace("\n", "\\n")
    exe = _standin(tmp_path, f"""
        case "$LD_LIBRARY_PATH" in
            {tmp_path}/lib14*) printf '{lines}' | sed 's/61.25/70.5/';;
            *) printf '{lines}';;
        esac
        """).programs["authors"].binary
    authors = A.Authors({"authors": A.Program(exe, tmp_path / "lib", "sophomr-bb + openfhe-v151"),
                         "authors-v1.4.0": A.Program(exe, tmp_path / "lib14", "sophomr-bb + openfhe-v140")},
                        frozenset({"OMD_4096_4"}))
    runs = A.versus_run("OMD N4096 k4 threads1", authors, reps=1, warmup=0, rotate=1)
    assert list(runs.side) == ["authors-v1.4.0", "hepkg", "authors"]       # the round's order, rotated once
    runs = runs.set_index("side")
    assert bool(runs.correct.all())
    assert runs.affine_s[["authors", "authors-v1.4.0"]].tolist() == [61.25, 70.5]
    assert runs.build["authors-v1.4.0"] == "sophomr-bb + openfhe-v140"
    assert runs.build["hepkg"].startswith("openfhe-python wheel")
    hepkg = runs.loc["hepkg"]                                 # hepkg's own digest, run beside the stand-in
    assert (hepkg[["affine_s", "range_check_s", "compression_s", "decode_s"]] > 0).all()
    assert hepkg.digest_s >= hepkg[["affine_s", "range_check_s", "compression_s"]].sum() * 0.99


def test_hepkg_side_is_given_the_openfhe_module_built_beside_their_openfhe(tmp_path, hepkg_calls):
    """Given prepare's openfhe-python build, hepkg's side is run on it and labelled by it (the digest on such a
    module: the next test, and prepare's own check)."""
    authors = A.Authors({}, frozenset(), tmp_path / "python", "openfhe-python-cc on openfhe-aa")
    runs = A.versus_run("OMD N4096 k4 threads1", authors, reps=1, warmup=0)
    assert list(runs.side) == ["hepkg"] and runs.build.iloc[0] == "openfhe-python-cc on openfhe-aa"
    assert hepkg_calls == [("toy-bfv-omr-soph", "OMD", 4096, 4, 1, 0, tmp_path / "python")]


def test_hepkg_runs_their_dnum_on_the_module_built_beside_theirs_where_it_builds(tmp_path, hepkg_calls):
    """At N = 2^16 hepkg's set is prepare's choice on the built module (their dnum 2 where it builds at 128 bits),
    the wheel's dnum 3 without that module; rows name each side's set."""
    on_theirs = A.Authors({}, frozenset(), tmp_path / "python", "openfhe-python-cc on openfhe-aa", A.THEIR_SET)
    for authors, want in ((on_theirs, A.THEIR_SET), (A.Authors({}, frozenset(), None, None, A.THEIR_SET), A.WHEEL_SET),
                          (None, A.WHEEL_SET)):
        hepkg_calls.clear()
        runs = A.versus_run("OMD N65536 k50 threads1", authors, reps=1, warmup=0)
        assert [c[0] for c in hepkg_calls] == [want] and runs.params.tolist() == [want]


def test_hepkg_runs_the_openfhe_module_built_beside_their_openfhe(tmp_path):
    """hepkg's digest in a child that imports ``openfhe`` from the build's folder (make test-long)."""
    import openfhe

    (tmp_path / "python").mkdir()
    (tmp_path / "python" / "openfhe").symlink_to(pathlib.Path(openfhe.__file__).parent)  # stands in for the build
    authors = A.Authors({}, frozenset(), tmp_path / "python", "openfhe-python-cc on openfhe-aa")
    runs = A.versus_run("OMD N4096 k4 threads1", authors, reps=1, warmup=0)
    assert list(runs.side) == ["hepkg"] and bool(runs.correct.all())
    assert runs.openfhe_module.iloc[0] == str(tmp_path / "python" / "openfhe")
    assert runs.build.iloc[0] == "openfhe-python-cc on openfhe-aa"


def test_prepare_offers_the_openfhe_python_checkout_that_puts_both_sides_on_one_openfhe(tmp_path, monkeypatch, capsys):
    built = {ref: (_build(tmp_path / f"openfhe-{ref}", prefix=tmp_path / f"inst-{ref}"),
                   _build(tmp_path / f"sophomr-{ref}")) for ref in (A.OPENFHE_REF, A.SAME_OPENFHE_REF)}
    asked = []                                   # every OpenFHE build of theirs asks for HEXL where it can be had
    monkeypatch.setattr(A.builds, "against_openfhe",
                        lambda name, checkout, ref, with_hexl: asked.append(with_hexl) or built[ref])
    (tmp_path / "main.cpp").write_text('{"OMD_65536_16", f},')
    monkeypatch.delenv("HEPKG_OPENFHE_PYTHON_SRC", raising=False)
    got = A.prepare(tmp_path)
    assert got.python is None and "git clone https://github.com/openfheorg/openfhe-python" in capsys.readouterr().out
    assert list(got.programs) == ["authors"] and got.programs["authors"].libdir == tmp_path / "inst-v1.4.0" / "lib"
    import openfhe

    seen = {}
    monkeypatch.setenv("HEPKG_OPENFHE_PYTHON_SRC", str(tmp_path / "ofp"))
    monkeypatch.setattr(A.builds, "hepkg_python",
                        lambda src, ref, against: seen.update(src=src, ref=ref, lib=against) or
                        (tmp_path / "py", f"openfhe-python-cc on {against.root.name}"))
    (tmp_path / "py").mkdir()
    got = A.prepare(tmp_path)                   # no module in the build's folder: the child imports the wheel
    out = capsys.readouterr().out
    assert got.python is None and "does not run on openfhe-python-cc" in out and "imported instead of" in out
    (tmp_path / "py" / "openfhe").mkdir()       # a module that lacks what hepkg's backend calls
    (tmp_path / "py" / "openfhe" / "__init__.py").write_text("raise ImportError('no bindings here')\n")
    got = A.prepare(tmp_path)
    assert got.python is None and "no bindings here" in capsys.readouterr().out
    shutil.rmtree(tmp_path / "py" / "openfhe")  # with the __pycache__ its import left where bytecode is cached
    (tmp_path / "py" / "openfhe").symlink_to(pathlib.Path(openfhe.__file__).parent)  # stands in for a good build
    got = A.prepare(tmp_path)
    lib = built[A.SAME_OPENFHE_REF][0]
    assert got.python == tmp_path / "py" and seen == dict(src=str(tmp_path / "ofp"), ref=A.OPENFHE_PYTHON_REF, lib=lib)
    assert got.configs == {"OMD_65536_16"} and list(got.programs) == ["authors", "authors-v1.4.0"]
    assert got.programs["authors"].build == "sophomr-v1.5.1 + openfhe-v1.5.1"
    assert got.programs["authors-v1.4.0"].libdir == tmp_path / "inst-v1.4.0" / "lib"
    assert got.hepkg_build == "openfhe-python-cc on openfhe-v1.5.1" and set(asked) == {True}
    # the stand-in is the wheel's module (OpenFHE 1.6.1), which refuses their dnum 2 at 128 bits
    out = capsys.readouterr().out
    assert got.hepkg_params == A.WHEEL_SET and f"refuses {A.THEIR_SET} (ParameterError: OpenFHE refuses" in out

    def fails(name, checkout, ref, with_hexl):
        if ref == A.SAME_OPENFHE_REF:
            raise A.builds.BuildError("sophomr does not compile")
        return built[ref]
    monkeypatch.setattr(A.builds, "against_openfhe", fails)
    got = A.prepare(tmp_path)
    assert list(got.programs) == ["authors"] and got.python is None
    assert "no build on OpenFHE v1.5.1 (sophomr does not compile)" in capsys.readouterr().out
