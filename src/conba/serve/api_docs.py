"""The user guide's HTTP API page, generated from the OpenAPI schema of the ``conba serve`` app.

Each endpoint gets its description, a table of its request fields (type, default, description, example), its
response fields, and a ``curl`` call built from the fields' examples, so the page says what the app says and
a field without a description or an example shows up (tests/serve/test_serve_fields.py refuses those). The MkDocs
build (mkdocs.yml, ``hooks``) loads this module as a hook: ``on_page_markdown`` replaces the marker
:data:`MARKER` in docs/http-api.md with :func:`render`'s markdown.
"""

from __future__ import annotations

import json
from typing import Any

MARKER = "<!-- conba: generated from the OpenAPI schema -->"


def _type(schema: dict[str, Any]) -> str:
    """A short type name: ``string``, ``integer | null``, ``array of string``..."""
    if "anyOf" in schema:
        return " \\| ".join(_type(s) for s in schema["anyOf"])
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    if "enum" in schema:
        return " \\| ".join(json.dumps(v) for v in schema["enum"])
    return str(kind)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _example(field: dict[str, Any]) -> Any:
    examples = field.get("examples") or field.get("schema", {}).get("examples")
    return examples[0] if examples else field.get("example")


def _code(value: Any) -> str:
    return "`" + json.dumps(value).replace("`", "'").replace("|", "\\|") + "`"


def _body_model(op: dict[str, Any], schemas: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    ref = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {}).get("$ref")
    if not ref:
        return None
    name = ref.rsplit("/", 1)[-1]
    return name, schemas[name]


def _response_model(op: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any] | None:
    content = op.get("responses", {}).get("200", {}).get("content", {})
    ref = content.get("application/json", {}).get("schema", {}).get("$ref")
    return schemas[ref.rsplit("/", 1)[-1]] if ref else None


def _curl(method: str, path: str, body: dict[str, Any] | None, query: dict[str, Any]) -> str:
    url = "localhost:8000" + path
    if query:
        url += "?" + "&".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in query.items())
    if method == "GET":
        return f"curl -s '{url}'"
    data = json.dumps(body or {})
    return f"curl -s {url} -H 'content-type: application/json' \\\n  -d '{data}'"


def _endpoint(path: str, method: str, op: dict[str, Any], schemas: dict[str, Any]) -> list[str]:
    lines = [f"## {method.upper()} {path}", "", (op.get("description") or op.get("summary", "")).replace("``", "`"),
             ""]
    if op.get("deprecated"):
        lines += ["**Deprecated.**", ""]
    rows, body, query = [], {}, {}
    for param in op.get("parameters", []):
        schema = param.get("schema", {})
        ex = _example(param)
        rows.append((f"`{param['name']}` (query)", _type(schema), schema.get("default", "required"),
                     param.get("description", ""), ex))
        if ex is not None and not param.get("deprecated"):
            query[param["name"]] = ex
    model = _body_model(op, schemas)
    if model is not None:
        required = set(model[1].get("required", []))
        for name, field in model[1].get("properties", {}).items():
            ex = _example(field)
            deprecated = field.get("deprecated", False)
            rows.append((f"`{name}`" + (" (deprecated)" if deprecated else ""), _type(field),
                         "required" if name in required else field.get("default"), field.get("description", ""), ex))
            if ex is not None and not deprecated and (name in required or name in _CURL_FIELDS.get(path, ())):
                body[name] = ex
    if rows:
        lines += ["| field | type | default | description | example |", "|---|---|---|---|---|"]
        lines += [f"| {n} | {t} | {_code(d) if d != 'required' else 'required'} | {_cell(desc)} | "
                  f"{_code(ex) if ex is not None else ''} |" for n, t, d, desc, ex in rows]
        lines.append("")
    lines += ["```bash", _curl(method.upper(), path, body if model is not None else None, query), "```", ""]
    response = _response_model(op, schemas)
    if response is not None:
        lines += ["Response fields:", ""] + [
            f"- `{name}` ({_type(f)})" + (f": {_cell(f['description'])}" if f.get("description") else "")
            for name, f in response.get("properties", {}).items()] + [""]
    return lines


# optional body fields worth showing in an endpoint's curl example (the required ones always are)
_CURL_FIELDS: dict[str, tuple[str, ...]] = {"/search": ("query_language", "result_language", "k"),
                                            "/search/files": ("file", "result_language", "k"),
                                            "/compare": ("b", "language_a", "language_b"),
                                            "/encode": ("languages",), "/map": ("only",)}


def render(schema: dict[str, Any] | None = None) -> str:
    """The HTTP API page's body: every endpoint of the schema (by default the served app's) in its order."""
    if schema is None:
        from conba.serve.describe import schema_app

        schema = schema_app().openapi()
    schemas = schema.get("components", {}).get("schemas", {})
    lines: list[str] = []
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            lines += _endpoint(path, method, op, schemas)
    return "\n".join(lines).rstrip() + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """MkDocs hook: the generated endpoints in place of :data:`MARKER`."""
    return markdown.replace(MARKER, render()) if MARKER in markdown else markdown

