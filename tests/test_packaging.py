"""The environment files agree, and hepkg imports with numpy alone."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _pins(text: str) -> set[str]:
    return set(re.findall(r"[\"\s-]([A-Za-z][\w.-]*==[\w.]+)", text))


def test_environment_yml_matches_pyproject_pins():
    pyproject = (ROOT / "pyproject.toml").read_text()
    block = pyproject.split("all = [", 1)[1].split("]", 1)[0]
    assert _pins(block) and _pins(block) == _pins((ROOT / "environment.yml").read_text())


def test_hepkg_imports_without_any_he_library():
    code = ("import sys; [sys.modules.__setitem__(m, None) for m in ('Pyfhel', 'openfhe', 'tenseal', 'pandas', "
            "'scipy')]; import importlib.util as u; real = u.find_spec; "
            "u.find_spec = lambda n, *a: None if n in ('Pyfhel', 'openfhe', 'tenseal') else real(n, *a); "
            "import hepkg as hk; a = hk.availability(); assert a == {'sim': True, 'pyfhel': False, "
            "'openfhe': False, 'tenseal': False}, a; ctx = hk.context('sim'); "
            "assert list(ctx.decrypt(ctx.encrypt([1, 2]), 2)) == [1, 2]")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
