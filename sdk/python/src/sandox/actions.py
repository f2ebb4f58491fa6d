"""Turning an action payload into the list form the SDK sends."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Union

from pydantic import ValidationError

from .errors import BadRequestError
from .models import Action, Actions

ActionsLike = Union[Actions, Mapping[str, Any], Sequence[Union[Action, Mapping[str, Any]]], str, bytes]
"""What send_actions takes: the spec's object form ({"module.function":
{"description": ..., "args": {...}}}, calls run in the order written), the
list form ([{"tool": ..., "description": ..., "args": {...}}], which can call
a tool twice), either as JSON text, or an Actions model."""


def to_list(actions: ActionsLike) -> list[Action]:
    """Returns the actions in the list form, in order. Raises
    BadRequestError for a payload that is not one of the two forms, or that
    has no action."""
    try:
        if isinstance(actions, (str, bytes)):
            actions = json.loads(actions)
        if not isinstance(actions, Actions):
            if isinstance(actions, Sequence) and not isinstance(actions, (str, bytes)):
                actions = [a.model_dump(exclude_none=True) if isinstance(a, Action) else a for a in actions]
            actions = Actions.model_validate(actions)
    except (ValueError, ValidationError) as e:
        raise BadRequestError(f"malformed action payload: {e}") from e
    root = actions.root
    if isinstance(root, dict):
        out = [Action(tool=name, description=call.description, args=call.args) for name, call in root.items()]
    else:
        out = list(root)
    if not out:
        raise BadRequestError("no actions")
    return out


def encode(actions: list[Action]) -> bytes:
    """Returns the JSON of the list form."""
    return json.dumps([a.model_dump(exclude_none=True) for a in actions]).encode()
