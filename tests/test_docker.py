"""The Dockerfile agrees with make setup (make docker-test builds and tests the image itself)."""
import fnmatch
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def _stages() -> dict[str, str]:
    """Each stage's text by its name (the unnamed last one as 'final')."""
    parts = re.split(r"^FROM\s+\S+(?:\s+AS\s+(\S+))?\s*$", DOCKERFILE, flags=re.M | re.I)
    return {name or "final": body for name, body in zip(parts[1::2], parts[2::2])}


def test_default_base_has_the_python_setup_requires():
    base = re.search(r"^ARG BASE=python:(\d+)\.(\d+)-", DOCKERFILE, re.M)
    setup = re.search(r"sys\.version_info\[:2\] == \((\d+), (\d+)\)", (ROOT / "scripts/setup.sh").read_text())
    assert base and setup and base.groups() == setup.groups()


def test_build_stage_has_what_setup_would_apt_install_and_runs_setup():
    # as the non-root user, setup.sh cannot apt-get: the stage must provide its system packages
    packages = re.search(r'^SYSTEM_PKGS="([^"]+)"', (ROOT / "scripts/setup.sh").read_text(), re.M).group(1).split()
    build = _stages()["build"]
    assert packages and all(re.search(rf"\s{re.escape(p)}\s", build) for p in packages)
    assert "make setup" in build


def test_pins_come_only_from_pyproject():
    # the image installs what make setup installs; a pin written here would drift from pyproject.toml
    assert not re.search(r"[\w.-]==\d", DOCKERFILE)


def test_final_stage_runs_unprivileged_with_the_repository_and_token_auth():
    final = _stages()["final"]
    users = re.findall(r"^USER\s+(\S+)", final, re.M)
    assert users and users[-1] not in ("root", "0")
    assert re.search(r"^COPY --chown=\S+ \. \.$", final, re.M)
    cmd = re.search(r"^CMD (.+)$", final, re.M).group(1)
    assert "jupyter" in cmd and "token=''" not in cmd and 'token=""' not in cmd and "disable_check_xsrf" not in cmd


def test_dockerignore_keeps_notebooks_artifacts_and_git_but_not_the_venv():
    patterns = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line and line[0] != "#"]

    def ignored(path: str) -> bool:  # a pattern matching a folder leaves out all below it
        parts = path.split("/")
        return any(fnmatch.fnmatch("/".join(parts[:i]), p) for i in range(1, len(parts) + 1) for p in patterns)

    committed = [*ROOT.glob("notebooks/*.ipynb"), *(f for f in ROOT.glob("artifacts/*/*.*") if not f.parent.name.startswith("_"))]
    kept = [".git/HEAD", ".jupyterlab/overrides.json", *(str(f.relative_to(ROOT)) for f in committed)]
    assert ignored(".venv/bin/python") and len(kept) > 10 and not [f for f in kept if ignored(f)]


def test_jupyterlab_opens_on_the_readme_rendered_in_the_image_and_with_make_lab():
    import json

    overrides = json.loads((ROOT / ".jupyterlab" / "overrides.json").read_text())
    assert overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]["markdown"] == "Markdown Preview"
    makefile = (ROOT / "Makefile").read_text()
    for text in (DOCKERFILE, makefile):
        assert "--LabApp.default_url=/lab/tree/README.md" in text and "--LabApp.app_settings_dir=" in text
    assert "--allow-root" in makefile  # make lab as root (a container's default user) starts
