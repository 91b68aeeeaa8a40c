"""ORM queries compiled to SQL once per process, then run with new values on every request.

Building and compiling a queryset costs Django a few hundred microseconds (the
lookups, the joins, the select list, the ordering), several times what running it
costs. A query asked on every API request (the token behind it, the caller's
bindings) keeps its queryset as the one definition of what it reads, compiles it
once per database with placeholder values, and runs that SQL through
``Model.objects.raw`` with the request's own values in the placeholders' places.
The rows become model instances exactly as the ORM makes them (the fields' own
conversions from the database included); annotations arrive as the database
returns them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from django.db import connections, router
from django.db.models import Model, QuerySet

M = TypeVar("M", bound=Model)

#: How a value becomes the parameter the database receives (a datetime field adapts its
#: values, for one); ``connection`` is the database's.
Prepare = Callable[[Any, Any], Any]


def _as_is(value: Any, connection: Any) -> Any:
    return value


class PreparedQuery(Generic[M]):
    """``build(**values)`` compiled once per database; ``run(**values)`` executes it.

    ``placeholders`` names each value with a stand-in that appears nowhere else in the
    compiled parameters (so its place is found without doubt), and ``prepare`` says how
    a value is adapted for the database when the ORM would adapt it (by its field).
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
        self._compiled: dict[tuple[str, str], tuple[str, tuple[Any, ...], dict[str, int]]] = {}
        self._lock = threading.Lock()

    def run(self, **values: Any) -> list[M]:
        """The instances the queryset would return for ``values`` (one query)."""
        if self._model is None:
            # Not at import: building a queryset needs the app registry ready.
            self._model = self._build(**self._placeholders).model
        alias = router.db_for_read(self._model)
        connection = connections[alias]
        sql, template, places = self._compiled_for(alias, connection)
        params = list(template)
        for name, place in places.items():
            params[place] = self._prepare[name](values[name], connection)
        return list(self._model._default_manager.db_manager(alias).raw(sql, params))

    def _compiled_for(self, alias: str, connection: Any) -> tuple[str, tuple[Any, ...], dict[str, int]]:
        key = (alias, connection.vendor)
        compiled = self._compiled.get(key)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(key) or self._compile(alias, connection)
                self._compiled[key] = compiled
        return compiled

    def _compile(self, alias: str, connection: Any) -> tuple[str, tuple[Any, ...], dict[str, int]]:
        queryset = self._build(**self._placeholders).using(alias)
        sql, params = queryset.query.get_compiler(alias).as_sql()
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
        return sql, tuple(params), places
