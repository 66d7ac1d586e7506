"""The import graph, read with the stdlib `ast`: no app imports one above it (DESIGN's layers), no circle of
module-level imports (type-checking ones included) inside any app, and no import of a tasks module inside a function
(the lazy import that hides a circle). Jobs are enqueued by task name (lab.jobs). And what loading the apps imports,
in a fresh interpreter: no statistics library."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("lab", "compare", "judging", "voting", "promptlab")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" not in path.parts:
                found[module_name(path)] = path
    return found


def imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The modules one import statement loads, resolved to absolute names (a name imported from a package may be
    one of its modules)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    names = [f"{source}.{alias.name}" for alias in node.names if f"{source}.{alias.name}" in known]
    return names or [source]


def top_level_imports(tree: ast.Module):
    """Import statements at module level: at top level, or in a top-level if / try. An `if TYPE_CHECKING:` block
    counts too: a circle that only type checkers follow is still a circle a reader has to untangle."""
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If | ast.Try):
            pending.extend(ast.iter_child_nodes(node))


def function_imports(tree: ast.Module):
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    yield function.name, node


# DESIGN's layers: each app may import only apps further down (lab at the bottom); promptlab (the project's
# configuration) stands outside them.
LAYERS = {"lab": 0, "compare": 1, "judging": 2, "voting": 3}


def upward_imports(found: dict[str, Path]) -> list[str]:
    """Every import, anywhere in a module (module level, a function, a type-checking block), of an app above the
    module's own."""
    upward = []
    for name, path in found.items():
        layer = LAYERS.get(name.split(".")[0])
        if layer is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom) or getattr(node, "level", 0):
                continue
            targets = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            upward += [f"{name} imports {target}" for target in targets if LAYERS.get(target.split(".")[0], -1) > layer]
    return upward


def graph() -> tuple[dict[str, set[str]], list[str]]:
    found = modules()
    known = set(found)
    edges: dict[str, set[str]] = {name: set() for name in found}
    lazy_task_imports = []
    for name, path in found.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in top_level_imports(tree):
            edges[name].update(target for target in imported(node, name, is_package, known) if target in known)
        for function, node in function_imports(tree):
            targets = imported(node, name, is_package, known)
            if any(target.split(".")[-1] == "tasks" for target in targets):
                lazy_task_imports.append(f"{name}.{function} imports {', '.join(targets)}")
    return edges, lazy_task_imports


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), i.e. import circles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in edges[node]:
                found.append(sorted(component))

    for node in edges:
        if node not in index:
            visit(node)
    return found


def test_no_app_has_an_import_circle():
    edges, _ = graph()
    within_apps = {
        name: {target for target in targets if target.split(".")[0] == name.split(".")[0]}
        for name, targets in edges.items()
    }
    assert circles(within_apps) == []


def test_no_app_imports_an_app_above_it():
    assert upward_imports(modules()) == []


def test_the_layer_check_sees_an_upward_import(tmp_path):
    module = tmp_path / "lab" / "x.py"
    module.parent.mkdir()
    module.write_text("def f():\n    from voting.stats import ab\n")
    assert upward_imports({"lab.x": module}) == ["lab.x imports voting.stats"]


def test_no_function_imports_a_tasks_module():
    _, lazy = graph()
    assert lazy == []


def test_the_walk_sees_a_circle_and_a_lazy_task_import(tmp_path):
    # The check itself can fail: a two-module circle and a function-level import of tasks are both found.
    assert circles({"a.x": {"a.y"}, "a.y": {"a.x"}, "a.z": set()}) == [["a.x", "a.y"]]
    tree = ast.parse("def f():\n    from .tasks import run\n")
    ((_, node),) = function_imports(tree)
    assert imported(node, "compare.rounds", False, {"compare.tasks"}) == ["compare.tasks"]
    edges, _ = graph()
    assert "compare.experiments.models" in edges["compare.models"]  # the walk does read real imports


def test_loading_the_apps_imports_no_statistics_library():
    # scipy and statsmodels (with pandas) took two seconds of every process's start-up, the experiment command's
    # among them; the statistics are imported where they are first used.
    code = (
        "import os, sys, django; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'promptlab.settings'); "
        "django.setup(); print(sorted(m for m in ('scipy', 'statsmodels', 'pandas') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)

    assert loaded.stdout.strip() == "[]"
