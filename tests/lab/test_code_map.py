"""The code map (docs/architecture.md) stays true: it names every module of the apps and only paths that exist,
every module and package starts with a docstring, and the library versions its "Library internals" table relies on
are the ones installed and pinned in requirements.txt."""

import ast
import re
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAP = ROOT / "docs" / "architecture.md"
APPS = ("lab", "compare", "judging", "voting", "promptlab")
# Top-level folders whose paths the map may name (and whose named paths must exist).
TOP_LEVEL = (*APPS, "templates", "static", "tests", "bench", "docs")
# The libraries whose private internals the code leans on: each must be named in the map's table with a version.
RELIED_ON = ("channels_redis", "httpcore", "httpx", "Django")
INTERNALS_HEADING = "## Library internals we lean on"

PATH = re.compile(r"`([A-Za-z_][\w.-]*(?:/[\w.-]+)*/?)`")
MAP_LINE = re.compile(r"^- `([^`]+)` — ", re.MULTILINE)  # a module's own line in the code map


def app_modules(root: Path = ROOT) -> list[str]:
    """Every .py file of the apps, migrations left out, as repository paths (`compare/rounds/worker.py`)."""
    return sorted(
        path.relative_to(root).as_posix()
        for app in APPS
        for path in (root / app).rglob("*.py")
        if "migrations" not in path.relative_to(root).parts
    )


def named_paths(text: str) -> set[str]:
    """The repository paths the map names in backticks (`lab/jobs/kinds.py`, `templates/compare/`)."""
    return {
        token.rstrip("/")
        for token in PATH.findall(text)
        if "/" in token and token.split("/")[0] in TOP_LEVEL and not token.startswith("/")
    }


def map_lines(text: str) -> list[str]:
    """The paths that have a line of their own in the code map (`- `path` — what it is for`)."""
    return MAP_LINE.findall(text)


def unmapped(modules: list[str], lines: list[str]) -> list[str]:
    return [module for module in modules if module not in set(lines)]


def repeated(lines: list[str]) -> list[str]:
    return sorted({path for path in lines if lines.count(path) > 1})


def missing_on_disk(named: set[str], root: Path = ROOT) -> list[str]:
    return sorted(path for path in named if not (root / path).exists())


def undocumented(modules: list[str], root: Path = ROOT) -> list[str]:
    """Modules (packages' __init__ included) whose first statement is not a docstring, or an empty one."""
    return [module for module in modules if not (ast.get_docstring(ast.parse((root / module).read_text())) or "")]


def versions_named(text: str) -> dict[str, str]:
    """`library version` pairs named in the map's library-internals section."""
    section = text.split(INTERNALS_HEADING, 1)[1].split("\n## ", 1)[0]
    names = "|".join(re.escape(name) for name in RELIED_ON)
    found: dict[str, set[str]] = {}
    for name, version in re.findall(rf"\b({names}) (\d+(?:\.\d+)+)\b", section):
        found.setdefault(name, set()).add(version)
    conflicting = {name: versions for name, versions in found.items() if len(versions) > 1}
    assert not conflicting, f"docs/architecture.md names more than one version of {conflicting}"
    return {name: versions.pop() for name, versions in found.items()}


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned(requirements: str) -> dict[str, str]:
    """`name==version` lines of a requirements file, by normalised name (extras dropped)."""
    pins = {}
    for line in requirements.splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==([^\s#;]+)", line.strip())
        if match:
            pins[_normalised(match.group(1))] = match.group(2)
    return pins


def test_every_module_of_the_apps_is_named_in_the_code_map():
    missing = unmapped(app_modules(), map_lines(MAP.read_text()))

    assert not missing, (
        "docs/architecture.md does not name these modules; add one line each under its app's section "
        "(- `path` — what it is for):\n" + "\n".join(missing)
    )


def test_no_module_has_two_lines_in_the_code_map():
    twice = repeated(map_lines(MAP.read_text()))

    assert not twice, "docs/architecture.md gives these modules more than one line:\n" + "\n".join(twice)


def test_every_path_the_code_map_names_exists():
    gone = missing_on_disk(named_paths(MAP.read_text()))

    assert not gone, "docs/architecture.md names paths that do not exist; fix or remove them:\n" + "\n".join(gone)


def test_every_module_and_package_starts_with_a_docstring():
    bare = undocumented(app_modules())

    assert not bare, "These modules do not start with a docstring saying what they are for:\n" + "\n".join(bare)


def test_the_checks_find_an_unnamed_module_a_stale_path_and_a_bare_module(tmp_path):
    (tmp_path / "lab" / "engine").mkdir(parents=True)
    (tmp_path / "lab" / "migrations").mkdir()
    (tmp_path / "lab" / "engine" / "__init__.py").write_text("")
    (tmp_path / "lab" / "engine" / "fanout.py").write_text('"""Fan-out."""\n')
    (tmp_path / "lab" / "migrations" / "0001_initial.py").write_text("")
    text = (
        "- `lab/engine/fanout.py` — fan-out.\n- `lab/engine/gone.py` — moved; `/ws/groups/<id>/`, `x/y`.\n"
        "The engine starts in `lab/engine/__init__.py` (named in passing, not a line of its own).\n"
        "- `lab/engine/fanout.py` — again.\n"
    )

    modules = app_modules(tmp_path)
    named = named_paths(text)

    assert modules == ["lab/engine/__init__.py", "lab/engine/fanout.py"]  # migrations are left out
    assert named == {"lab/engine/__init__.py", "lab/engine/fanout.py", "lab/engine/gone.py"}  # URLs are not paths
    assert unmapped(modules, map_lines(text)) == ["lab/engine/__init__.py"]
    assert repeated(map_lines(text)) == ["lab/engine/fanout.py"]
    assert missing_on_disk(named, tmp_path) == ["lab/engine/gone.py"]
    assert undocumented(modules, tmp_path) == ["lab/engine/__init__.py"]


def test_the_library_versions_the_code_map_relies_on_are_installed_and_pinned():
    # A module leaning on a library's private internals (docs/architecture.md, "Library internals we lean on") was
    # written and measured against one release; an upgrade must re-read it before changing the table and the pin.
    named = versions_named(MAP.read_text())
    pins = pinned((ROOT / "requirements.txt").read_text())

    assert sorted(named) == sorted(RELIED_ON), "each relied-on library must be named with its version in the table"
    for library, version in named.items():
        assert metadata.version(library) == version, (
            f"{library} {metadata.version(library)} is installed, docs/architecture.md relies on {version}: "
            "re-read the modules that lean on its internals against the new release, then update the table"
        )
        assert pins.get(_normalised(library)) == version, (
            f"requirements.txt pins {library} at {pins.get(_normalised(library))}, docs/architecture.md relies on "
            f"{version}"
        )


def test_the_version_check_reads_the_table_and_the_pins():
    text = (
        "## Library internals we lean on\n\n| `m.py` | channels_redis 4.3.0 | … |\n| `n.py` | httpcore 1.0.9, "
        "httpx 0.28.1 | … |\n| `c.py` | Django 5.2.19 | … |\n\n## Next\n\nDjango 6.0 elsewhere is not read.\n"
    )
    requirements = "Django==5.2.19\ncelery[redis]==5.6.3\nchannels-redis==4.3.1  # upgraded\n"

    assert versions_named(text) == {
        "channels_redis": "4.3.0",
        "httpcore": "1.0.9",
        "httpx": "0.28.1",
        "Django": "5.2.19",
    }
    pins = pinned(requirements)
    assert pins == {"django": "5.2.19", "celery": "5.6.3", "channels-redis": "4.3.1"}
    assert pins[_normalised("channels_redis")] != versions_named(text)["channels_redis"]  # a changed pin is seen
