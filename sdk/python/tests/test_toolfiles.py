import base64
from pathlib import Path

import pytest

import sandox
from sandox.config import group_spec, sandbox_spec
from sandox.toolfiles import read_tools


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    mine = tmp_path / "my_tools.py"
    mine.write_text("def f(): pass\n")
    shadow = tmp_path / "web_tools.py"
    shadow.write_text("def g(): pass\n")
    return {"mine": mine, "shadow": shadow, "gone": tmp_path / "gone.py"}


# The same table as sdk/toolfiles_test.go's TestReadTools.
CASES = [
    ("the seed's list", ["filesystem_tools.py", "terminal_tools.py", "web_tools.py", "mine"],
     ["my_tools.py"], ["filesystem_tools", "terminal_tools", "web_tools"], ""),
    ("families without .py", ["filesystem_tools"], [], ["filesystem_tools"], ""),
    ("a file named like a family is sent as a file", ["shadow"], ["web_tools.py"], [], ""),
    ("a missing path", ["gone"], [], [], "gone.py"),
    ("a missing name that is no module name", ["not-a-module.py"], [], [], "not-a-module.py"),
]


@pytest.mark.parametrize("name,entries,want_files,want_families,want_err", CASES, ids=[c[0] for c in CASES])
def test_read_tools(files, name, entries, want_files, want_families, want_err) -> None:
    entries = [str(files[e]) if e in files else e for e in entries]
    if want_err:
        with pytest.raises(sandox.BadRequestError, match=want_err):
            read_tools(entries)
        return
    got_files, got_families = read_tools(entries)
    assert [f.name for f in got_files] == want_files
    assert got_families == want_families
    for f in got_files:
        assert base64.b64decode(f.content) == Path(next(e for e in entries if e.endswith(f.name))).read_bytes()


def test_sandbox_spec_carries_families() -> None:
    spec = sandbox_spec("sb-1", ["terminal_tools.py"], None, None)
    assert spec.families == ["terminal_tools"]
    assert spec.tools is None


def test_group_spec(files, tmp_path: Path) -> None:
    pop = tmp_path / "population.yml"
    pop.write_text("qdrant: []\n")
    spec = group_spec(
        "g-1",
        [{"database": "qdrant", "namespace": "docs", "read": True, "write": False}],
        sandox.ComputeResources(cpu="1", memory="512MiB"),
        ["filesystem_tools.py", str(files["mine"])],
        str(pop),
        [sandox.InitialSandbox(id="static-1", tools=["web_tools.py"], compute_resources=sandox.ComputeResources(cpu="0.5"))],
        None,
    )
    assert spec.population_config == "qdrant: []\n"
    assert spec.families == ["filesystem_tools"]
    assert [t.name for t in spec.tools] == ["my_tools.py"]
    assert spec.database_access.root[0].namespace == "docs"
    assert spec.sandboxes[0].families == ["web_tools"]
    assert spec.sandboxes[0].compute.cpu == "0.5"


@pytest.mark.parametrize("placement", [None, "spread", "pack"])
def test_placement(placement: str | None) -> None:
    g = sandox.SandboxGroup(placement=placement)
    assert g.spec.placement == placement
    g.close()


def test_unknown_placement_is_refused() -> None:
    with pytest.raises(sandox.BadRequestError, match="placement"):
        sandox.SandboxGroup(placement="everywhere")


@pytest.mark.parametrize("bad", ["", "-x", "a.b", "a" * 64, "has space"])
def test_bad_ids_are_refused(bad: str) -> None:
    with pytest.raises(sandox.BadRequestError, match="id"):
        sandbox_spec(bad, None, None, None)


def test_missing_population_config(tmp_path: Path) -> None:
    with pytest.raises(sandox.BadRequestError, match="population config"):
        sandox.SandboxGroup(initial_database_population_config=str(tmp_path / "none.yml"))


def test_seed_spelling_of_population_config(tmp_path: Path) -> None:
    pop = tmp_path / "p.yml"
    pop.write_text("x: 1\n")
    g = sandox.SandboxGroup(intial_database_population_config=str(pop))
    assert g.spec.population_config == "x: 1\n"
    g.close()


@pytest.mark.parametrize(
    "policy,err",
    [({"policy": "none"}, ""), ({"policy": "allowlist", "allow": ["example.com"]}, ""), ({"policy": "open"}, ""),
     ({"policy": "allowlist"}, "allows nothing|lists nothing"), ({"policy": "open", "allow": ["x"]}, "only for the allowlist"),
     ({"policy": "everything"}, "egress"),
     ({"policy": "allowlist", "allow": ["pypi.example.internal"], "package_index": "http://pypi.example.internal:8080/simple"}, ""),
     ({"policy": "none", "package_index": "/workspace/wheels"}, ""),
     ({"policy": "none", "package_index": "https://pypi.org/simple"}, "cannot be reached without a network"),
     ({"policy": "open", "package_index": "wheels"}, "absolute path")],
    ids=["none", "allowlist", "open", "empty allowlist", "open with allow", "unknown policy",
         "allowlist with an index", "none with a wheel directory", "none with an outside index", "relative index"],
)
def test_egress(policy: dict, err: str) -> None:
    """Checked as schemas.Egress.Validate does."""
    if err:
        with pytest.raises(sandox.BadRequestError, match=err):
            sandbox_spec("sb-1", None, None, None, policy)
        return
    assert sandbox_spec("sb-1", None, None, None, policy).egress.policy == policy["policy"]
    g = sandox.SandboxGroup(egress=policy)
    assert g.spec.egress.policy == policy["policy"]
    g.close()


@pytest.mark.parametrize(
    ("pool", "want"),
    [
        (None, None),
        ({"size": 3}, (3, None)),
        ({"size": 2, "idle_shrink_seconds": 60}, (2, 60)),
    ],
)
def test_group_pool(pool, want) -> None:
    g = sandox.SandboxGroup(pool=pool)
    got = None if g.spec.pool is None else (g.spec.pool.size, g.spec.pool.idle_shrink_seconds)
    assert got == want
    g.close()


def test_bad_group_pool() -> None:
    with pytest.raises(sandox.BadRequestError, match="pool"):
        sandox.SandboxGroup(pool={"size": "many"})
