"""The models follow the schema files, which follow the Go types."""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path

import pytest

import sandox.models as models

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "scripts"))
import gen_models  # noqa: E402


def test_models_match_schema_files() -> None:
    want = gen_models.generate()
    got = (HERE.parent / "src" / "sandox" / "models.py").read_text()
    assert got == want, (
        "src/sandox/models.py drifted from schemas/jsonschema: run `uv run python scripts/gen_models.py`"
    )


def _defs() -> dict[str, dict]:
    return gen_models.load_defs(gen_models.SCHEMA_DIR)


@pytest.mark.parametrize("name", sorted(n for n, d in _defs().items() if d.get("type") == "object"))
def test_object_fields(name: str) -> None:
    """Each object definition is a model with the same fields and required set."""
    d = _defs()[name]
    model = getattr(models, name)
    fields = {f.alias or n: f for n, f in model.model_fields.items()}
    assert set(fields) == set(d.get("properties", {})), name
    required = {k for k, f in fields.items() if f.is_required()}
    assert required == set(d.get("required", [])), name


@pytest.mark.parametrize("name", sorted(n for n, d in _defs().items() if "enum" in d))
def test_enums(name: str) -> None:
    assert list(typing.get_args(getattr(models, name))) == _defs()[name]["enum"]


def test_sent_models_refuse_unknown_fields() -> None:
    with pytest.raises(ValueError):
        models.ComputeResources.model_validate({"cpu": "1", "cpus": "2"})


def test_read_models_take_new_values() -> None:
    """A newer server's error code or field still reads."""
    obs = models.Observation.model_validate(
        {"tool": "t", "stdout": "", "stderr": "", "terminal_still_running": False, "duration_ms": 1,
         "error": {"code": "brand_new", "message": "m"}, "new_field": 1, "return": [1]}
    )
    assert obs.error is not None and obs.error.code == "brand_new"
    assert obs.return_ == [1]


def test_go_nil_slices_read_as_empty() -> None:
    st = models.SandboxStatus.model_validate(
        {"id": "a", "group_id": "g", "state": "running", "image": "i", "tools": None,
         "resources": {"memory_bandwidth_enforced": False}, "image_reused": False,
         "updated_at": "0001-01-01T00:00:00Z"}
    )
    assert st.tools == []


def test_doc_examples_parse() -> None:
    """The batch results captured in docs/subjects.md read as BatchResult."""
    doc = (HERE.parents[2] / "docs" / "subjects.md").read_text()
    blocks = [b.split("```", 1)[0] for b in doc.split("```json\n")[1:]]
    results = [json.loads(b) for b in blocks if '"observations"' in b and "…" not in b]
    assert results, "no batch results found in docs/subjects.md"
    for r in results:
        models.BatchResult.model_validate(r)
