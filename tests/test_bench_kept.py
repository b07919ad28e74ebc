"""Rounds kept across sittings and folded into a section's runs (hepkg.bench.kept)."""
import json
import sys
import types

import pytest

from hepkg.bench import kept, versus
from hepkg.bench.sysinfo import key_of

AMD = dict(node="vm", cpu="AMD EPYC", physical_cores=2, logical_cores=2, ram_bytes=25276059648)


@pytest.fixture
def fake(monkeypatch):
    mod = types.ModuleType("hepkg_fake_kept")
    mod.REPS, mod.REPO, mod.QUANTITIES, mod.REFERENCE = 2, None, ("e2e_s",), "theirs"
    mod.versus_cases = lambda scale: ["a", "b"]
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    monkeypatch.setitem(versus.SECTIONS, "fake", mod.__name__)
    return mod


def _folder(root, machine: dict, revision: str, rounds: dict, finished: str | None = None) -> None:
    """A kept folder of ``machine`` at ``revision`` holding ``rounds`` (case -> round numbers), round r finished
    r minutes after ``finished`` (an hour, "2026-12-07T10"), or with no finish time."""
    key = key_of(machine)
    folder = root / "bench" / kept.KEPT / f"{key}-{revision}"
    (folder / "bench").mkdir(parents=True)
    (folder / kept.MACHINE).write_text(json.dumps(machine | dict(key=key)))
    for case, numbers in rounds.items():
        for r in numbers:
            ours = 1.0 + r if revision != "bad" else float("nan")
            rows = [dict(side="theirs", rep=r - 1, e2e_s=2.0 + r, correct=True, case=case,
                         status="measured" if r else "warmup"),
                    dict(side="ours", rep=r - 1, e2e_s=ours, correct=True, case=case,
                         status="measured" if r else "warmup"),
                    dict(side="ours big", rep=r - 1, e2e_s=float("nan"), correct=False, case=case,
                         status="measured" if r else "warmup", estimated_rss_gb=30.0)]
            record = dict(fn="run_case", config=dict(section="fake", case=case, round=r), rows=rows, elapsed_s=1.0)
            if finished:
                record["finished"] = f"{finished}:{r:02d}:00+00:00"
            (folder / "bench" / f"{case}{r}{revision}.json").write_text(json.dumps(record))


def test_each_case_is_folded_whole_from_the_one_machine_that_ran_it(tmp_path, fake):
    other = AMD | dict(cpu="Intel(R) Xeon(R) Processor")
    _folder(tmp_path, AMD, "26b670381f62", dict(a=[0, 1, 2], b=[0, 1]))      # b cut short on this machine
    _folder(tmp_path, other, "08b959e37aff", dict(b=[0, 1, 2]))
    runs, info = kept.fold("fake", ["a", "b"], 2, tmp_path)
    amd, intel = f"{key_of(AMD)}-26b670381f62", f"{key_of(other)}-08b959e37aff"
    assert info["cases"] == dict(a=amd, b=intel) and info["partial"] == {amd: dict(b=[0, 1])}
    assert list(runs.case) == ["a"] * 9 + ["b"] * 9
    assert set(runs[runs.case == "b"].cpu) == {other["cpu"]} and set(runs[runs.case == "a"].cpu) == {"AMD EPYC"}
    assert set(runs[runs.case == "b"].revision) == {"08b959e37aff"}
    big = runs[runs.side == "ours big"]
    assert list(big.status) == ["warmup", kept.LEFT_OUT, kept.LEFT_OUT] * 2 and info["restored_status"] == 4
    s = versus.summarize(runs, ["e2e_s"], reference="theirs")
    assert list(s.side) == ["ours", "ours"] and s.reps.tolist() == [2, 2]


def test_a_case_no_folder_holds_whole_is_refused(tmp_path, fake):
    _folder(tmp_path, AMD, "26b670381f62", dict(a=[0, 1, 2], b=[0, 2]))
    with pytest.raises(ValueError, match="no kept folder holds b whole"):
        kept.fold("fake", ["a", "b"], 2, tmp_path)


def test_a_case_run_again_is_folded_from_the_folder_that_finished_it_last(tmp_path, fake):
    _folder(tmp_path, AMD, "26b670381f62", dict(a=[0, 1, 2], b=[0, 1, 2]), finished="2026-12-07T09")
    _folder(tmp_path, AMD, "08b959e37aff", dict(b=[0, 1, 2]), finished="2026-12-07T12")   # b run again, later
    _folder(tmp_path, AMD, "c8efc05aaaaa", dict(a=[0, 1]), finished="2026-12-07T13")      # a again, cut short
    runs, info = kept.fold("fake", ["a", "b"], 2, tmp_path)
    old, new = (f"{key_of(AMD)}-{r}" for r in ("26b670381f62", "08b959e37aff"))
    assert info["cases"] == dict(a=old, b=new) and info["superseded"] == dict(b=[old])
    assert set(runs[runs.case == "b"].revision) == {"08b959e37aff"} and len(runs) == 18


@pytest.mark.parametrize("second", ["2026-12-07T09", None])
def test_two_whole_folders_with_no_order_between_them_are_refused(tmp_path, fake, second):
    _folder(tmp_path, AMD, "26b670381f62", dict(a=[0, 1, 2], b=[0, 1, 2]), finished="2026-12-07T09")
    _folder(tmp_path, AMD, "08b959e37aff", dict(a=[0, 1, 2]), finished=second)
    with pytest.raises(ValueError, match="a is whole in .*(both finished|no finish time)"):
        kept.fold("fake", ["a", "b"], 2, tmp_path)


def test_a_folder_whose_machine_does_not_give_its_key_is_refused(tmp_path, fake):
    _folder(tmp_path, AMD, "26b670381f62", dict(a=[0, 1, 2], b=[0, 1, 2]))
    (folder,) = (tmp_path / "bench" / kept.KEPT).iterdir()
    (folder / kept.MACHINE).write_text(json.dumps(AMD | dict(cpu="AMD EPYC 9R14", key=folder.name[:12])))
    with pytest.raises(ValueError, match="does not describe machine"):
        kept.fold("fake", ["a", "b"], 2, tmp_path)


def test_keep_copies_this_machines_rounds_but_not_those_kept_elsewhere(tmp_path, fake, monkeypatch):
    from hepkg.grid import grid_store

    monkeypatch.setenv("HEPKG_CACHE", str(tmp_path / "cache"))
    _folder(tmp_path, AMD, "26b670381f62", dict(a=[0, 1, 2]))
    store = grid_store("bench")
    seeded = next((tmp_path / "bench" / kept.KEPT).glob("*/bench/a0*.json"))
    (store / seeded.name).write_bytes(seeded.read_bytes())             # a store seeded to skip case a
    record = dict(fn="run_case", config=dict(section="fake", case="b", round=0), rows=[], elapsed_s=1.0)
    (store / "b0.json").write_text(json.dumps(record))
    (store / "other.json").write_text(json.dumps(record | dict(config=dict(section="omr", case="x", round=0))))
    anew = seeded.with_name(seeded.name.replace("a0", "a1"))                 # round 1 of case a, run again here
    (store / anew.name).write_text(json.dumps(json.loads(anew.read_text()) | dict(elapsed_s=2.0)))
    dest = kept.keep("fake", tmp_path)
    assert dest.name == store.parent.name
    assert sorted(p.name for p in (dest / "bench").iterdir()) == sorted(["b0.json", anew.name])
    assert json.loads((dest / kept.MACHINE).read_text()) == kept.describe_machine()
    assert kept.describe_machine()["key"] == key_of(kept.describe_machine())


def test_from_kept_writes_the_runs_their_record_and_summary(tmp_path, fake):
    _folder(tmp_path, AMD, "26b670381f62", dict(a=[0, 1, 2], b=[0, 1, 2]))
    versus.main(["fake", "--from-kept", "--artifacts", str(tmp_path)])
    info = versus.load_run_info("fake", tmp_path)
    assert info["kept"]["cases"] == dict.fromkeys("ab", f"{key_of(AMD)}-26b670381f62")
    assert "machine_key" not in info and "system" not in info and info["runs"] == 18
    assert len(versus.load_runs("fake", tmp_path)) == 18
    assert (tmp_path / "bench" / "versus_fake_summary.csv").is_file()
