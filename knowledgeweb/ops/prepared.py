"""ORM queries compiled to SQL once per process, then run with new values on every request.

Building and compiling a queryset costs Django a few hundred microseconds (the
lookups, the joins, the select list, the ordering, the converters each column
needs), several times what running it costs. A query asked on every API request
(the token behind it, the caller's bindings) keeps its queryset as the one
definition of what it reads, compiles it once per thread and database with
placeholder values, and runs that SQL with the request's own values in the
placeholders' places. Rows become instances as Django's own ``ModelIterable``
makes them: every column through the converters the compiler chose for it
(the fields' conversions from the database included), the model's fields through
``Model.from_db``, annotations set as attributes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.db import connections, router
from django.db.models import Model, QuerySet

M = TypeVar("M", bound=Model)

#: How a value becomes the parameter the database receives (a datetime field adapts its
#: values, for one); ``connection`` is the database's.
Prepare = Callable[[Any, Any], Any]


def _as_is(value: Any, connection: Any) -> Any:
    return value


def as_field(model: type[Model], name: str) -> Prepare:
    """A ``prepare`` adapting a value as ``model``'s field ``name`` adapts it for a lookup: a
    UUID key as SQLite's text, an integer as PostgreSQL's typed one, a datetime as stored."""
    field = model._meta.get_field(name)

    def prepare(value: Any, connection: Any) -> Any:
        return field.get_db_prep_value(value, connection, prepared=False)  # type: ignore[union-attr]

    return prepare


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    places: dict[str, int]
    #: Per column that needs any: its position, converters and the expression they expect.
    converters: tuple[tuple[int, Sequence[Any], Any], ...]
    fields: slice
    init_list: tuple[str, ...]
    annotations: tuple[tuple[str, int], ...]


class PreparedQuery(Generic[M]):
    """``build(**values)`` compiled once per thread and database; ``run(**values)`` executes it.

    ``placeholders`` names each value with a stand-in that appears nowhere else in the
    compiled parameters (so its place is found without doubt), and ``prepare`` says how
    a value is adapted for the database when the ORM would adapt it (by its field).
    Only a plain queryset of one model (annotations allowed, no ``select_related``) fits.
    """

    def __init__(
        self,
        build: Callable[..., QuerySet[M]],
        *,
        placeholders: dict[str, Any],
        prepare: dict[str, Prepare] | None = None,
    ) -> None:
        self._build = build
        self._placeholders = placeholders
        self._prepare = {name: (prepare or {}).get(name, _as_is) for name in placeholders}
        self._model: type[M] | None = None
        # Per thread, as Django's connections are: converters belong to their connection.
        self._local = threading.local()

    def run(self, **values: Any) -> list[M]:
        """The instances the queryset would return for ``values`` (one query)."""
        if self._model is None:
            # Not at import: building a queryset needs the app registry ready.
            self._model = self._build(**self._placeholders).model
        model = self._model
        alias = router.db_for_read(model)
        connection = connections[alias]
        compiled = self._compiled_for(alias, connection)
        params = list(compiled.params)
        for name, place in compiled.places.items():
            params[place] = self._prepare[name](values[name], connection)
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        found: list[M] = []
        for fetched in rows:
            row = list(fetched)
            for position, converters, expression in compiled.converters:
                value = row[position]
                for converter in converters:
                    value = converter(value, expression, connection)
                row[position] = value
            instance = model.from_db(alias, compiled.init_list, row[compiled.fields])
            for name, position in compiled.annotations:
                setattr(instance, name, row[position])
            found.append(instance)
        return found

    def _compiled_for(self, alias: str, connection: Any) -> _Compiled:
        compiled_here: dict[tuple[str, int], _Compiled] = self._local.__dict__.setdefault("compiled", {})
        key = (alias, id(connection))
        compiled = compiled_here.get(key)
        if compiled is None:
            compiled = compiled_here[key] = self._compile(alias, connection)
        return compiled

    def _compile(self, alias: str, connection: Any) -> _Compiled:
        queryset = self._build(**self._placeholders).using(alias)
        compiler = queryset.query.get_compiler(alias)
        sql, params = compiler.as_sql()
        klass_info = compiler.klass_info
        if klass_info is None or klass_info.get("related_klass_infos"):
            raise ValueError("a prepared query reads one model's instances, without select_related")
        places: dict[str, int] = {}
        for name, placeholder in self._placeholders.items():
            prepared = self._prepare[name](placeholder, connection)
            found = [
                i for i, param in enumerate(params) if type(param) is type(prepared) and param == prepared
            ]
            if len(found) != 1:
                # A stand-in the compiler repeated, folded away or changed cannot be replaced safely.
                raise ValueError(
                    f"the placeholder for {name!r} appears {len(found)} times in the compiled query"
                )
            places[name] = found[0]
        select = compiler.select
        if compiler.has_composite_fields([s[0] for s in select]):
            raise ValueError("a prepared query reads no composite primary key")
        first, last = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
        converters = tuple(
            (position, tuple(convs), expression)
            for position, (convs, expression) in compiler.get_converters([s[0] for s in select]).items()
        )
        return _Compiled(
            sql=sql,
            params=tuple(params),
            places=places,
            converters=converters,
            fields=slice(first, last),
            init_list=tuple(s[0].target.attname for s in select[first:last]),
            annotations=tuple(compiler.annotation_col_map.items()),
        )
