"""Conversion of Qdrant filters (Filter, Condition, Match, Range) to qdrant_edge."""

from __future__ import annotations

import datetime as dt
from typing import Any, Optional

import numpy as np
import qdrant_edge as e
from qdrant_client.grpc import qdrant_common_pb2 as qpb

from .convert import Invalid, Unsupported, opt, point_id


def _timestamp(ts) -> str:
    return ts.ToDatetime(tzinfo=dt.timezone.utc).isoformat()


def match_in(m: qpb.Match) -> Any:
    kind = m.WhichOneof("match_value")
    if kind == "keyword":
        return e.MatchValue(m.keyword)
    if kind == "integer":
        return e.MatchValue(m.integer)
    if kind == "boolean":
        # qdrant_edge reads a Python bool as an integer (bool is an int
        # subclass); numpy's bool is not, and is read as a bool.
        return e.MatchValue(np.bool_(m.boolean))
    if kind == "text":
        return e.MatchText(m.text)
    if kind == "text_any":
        return e.MatchTextAny(m.text_any)
    if kind == "phrase":
        return e.MatchPhrase(m.phrase)
    if kind == "keywords":
        return e.MatchAny(list(m.keywords.strings))
    if kind == "integers":
        return e.MatchAny(list(m.integers.integers))
    if kind == "except_keywords":
        return e.MatchExcept(list(m.except_keywords.strings))
    if kind == "except_integers":
        return e.MatchExcept(list(m.except_integers.integers))
    raise Invalid("match condition is empty")


def field_condition(fc: qpb.FieldCondition) -> e.FieldCondition:
    kw: dict = {}
    if fc.HasField("match"):
        kw["match"] = match_in(fc.match)
    if fc.HasField("range"):
        r = fc.range
        kw["range"] = e.RangeFloat(gte=opt(r, "gte"), gt=opt(r, "gt"), lte=opt(r, "lte"), lt=opt(r, "lt"))
    if fc.HasField("datetime_range"):
        r = fc.datetime_range
        kw["range"] = e.RangeDateTime(**{
            k: _timestamp(getattr(r, k)) for k in ("gte", "gt", "lte", "lt") if r.HasField(k)
        })
    if fc.HasField("values_count"):
        c = fc.values_count
        kw["values_count"] = e.ValuesCount(lt=opt(c, "lt"), gt=opt(c, "gt"), lte=opt(c, "lte"), gte=opt(c, "gte"))
    if fc.HasField("geo_radius"):
        g = fc.geo_radius
        kw["geo_radius"] = e.GeoRadius(e.GeoPoint(g.center.lon, g.center.lat), g.radius)
    if fc.HasField("geo_bounding_box"):
        g = fc.geo_bounding_box
        kw["geo_bounding_box"] = e.GeoBoundingBox(
            e.GeoPoint(g.top_left.lon, g.top_left.lat), e.GeoPoint(g.bottom_right.lon, g.bottom_right.lat)
        )
    if fc.HasField("geo_polygon"):
        raise Unsupported("geo_polygon conditions are not supported by qdrant-edge's gRPC service")
    if fc.HasField("is_empty"):
        kw["is_empty"] = fc.is_empty
    if fc.HasField("is_null"):
        kw["is_null"] = fc.is_null
    return e.FieldCondition(fc.key, **kw)


def condition_in(c: qpb.Condition) -> Any:
    kind = c.WhichOneof("condition_one_of")
    if kind == "field":
        return field_condition(c.field)
    if kind == "is_empty":
        return e.IsEmptyCondition(c.is_empty.key)
    if kind == "is_null":
        return e.IsNullCondition(c.is_null.key)
    if kind == "has_id":
        return e.HasIdCondition({point_id(i) for i in c.has_id.has_id})
    if kind == "has_vector":
        return e.HasVectorCondition(c.has_vector.has_vector)
    if kind == "nested":
        return e.NestedCondition(c.nested.key, filter_in(c.nested.filter))
    if kind == "filter":
        return filter_in(c.filter)
    raise Invalid("condition is empty")


def filter_in(f: Optional[qpb.Filter]) -> Optional[e.Filter]:
    if f is None:
        return None
    min_should = None
    if f.HasField("min_should"):
        min_should = e.MinShould([condition_in(c) for c in f.min_should.conditions], f.min_should.min_count)
    return e.Filter(
        must=[condition_in(c) for c in f.must] or None,
        should=[condition_in(c) for c in f.should] or None,
        must_not=[condition_in(c) for c in f.must_not] or None,
        min_should=min_should,
    )


