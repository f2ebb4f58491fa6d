"""Grouping of query hits by a payload field (QueryGroups).

qdrant_edge has no grouped query, so the service runs the query with a
larger limit and groups the ranked hits itself, widening the window until
it has `limit` full groups or the collection has no more hits.
"""

from __future__ import annotations

from typing import Any, Callable

# MAX_WINDOW bounds how many hits one grouped query may look at.
MAX_WINDOW = 100_000


def group_values(payload: dict, path: str) -> list:
    """group_values returns the group ids a payload gives for path (a dotted
    path; an array gives one group per element). Only strings and integers
    form groups, as in Qdrant."""
    values: list = [payload]
    for part in path.split("."):
        nxt = []
        for v in values:
            if isinstance(v, dict) and part in v:
                got = v[part]
                nxt.extend(got if isinstance(got, list) else [got])
        values = nxt
    out = []
    for v in values:
        if isinstance(v, (str, int)) and not isinstance(v, bool) and v not in out:
            out.append(v)
    return out


def group_hits(run: Callable[[int], list], path: str, limit: int, size: int) -> list[tuple[Any, list]]:
    """group_hits returns up to limit (group id, hits) pairs of up to size
    hits each, groups in the order of their best hit.

    run(n) must return the query's first n hits, best first, with payload.
    """
    window = max(limit * size * 4, 16)
    while True:
        hits = run(window)
        groups: dict[Any, list] = {}
        for h in hits:
            for gid in group_values(h.payload or {}, path):
                if gid not in groups and len(groups) >= limit:
                    continue
                members = groups.setdefault(gid, [])
                if len(members) < size:
                    members.append(h)
        full = len(groups) >= limit and all(len(m) >= size for m in groups.values())
        if full or len(hits) < window or window >= MAX_WINDOW:
            return list(groups.items())[:limit]
        window = min(window * 4, MAX_WINDOW)
