"""The MCP server of ``conba mcp``: six tools over one index, built on the official ``mcp`` SDK (``MCPServer``).

>>> from conba.mcp.server import build_server
>>> server = build_server(state)           # a conba.mcp.state.ServerState
>>> server.run("stdio")                     # or: async with mcp.Client(server) as client: ...

Each tool answers one compact JSON text (:mod:`conba.mcp.compact`). A bad argument, an unknown file, function
or language, or a path outside the served roots is a tool error (``isError``) carrying the one-line message the
CLI would print; a bug is logged with its traceback on stderr and reaches the client as the SDK's generic
``Error executing tool NAME``, never as a traceback.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

from pydantic import Field

from conba.mcp import tools_port, tools_search
from conba.mcp.compact import CHARS_PER_TOKEN, DEFAULT_TOKENS
from conba.mcp.state import ServerState

INSTRUCTIONS = (
    "conba finds functionally equivalent code across programming languages in an index of this codebase. "
    "Use find_counterpart for 'where is this function in the other language', port_status for 'what is left "
    "to port' (coverage and missing functions of one tree or language in another), compare for 'do these two "
    "correspond, line by line', clones_of for copies of a function or file, search_code to find code by example, "
    "index_status to see what is indexed and how fresh. Files are given as paths (relative to the server's "
    "folder) and functions by name or line; answers give file:start-end locations.")
_BUDGET = (f" The answer is compact JSON within max_tokens (about {CHARS_PER_TOKEN} characters a token); lists cut "
           "to fit say so in 'cut'.")

K = Annotated[int, Field(description="Number of results, 1 to 100.")]
Tokens = Annotated[int, Field(description="Answer budget in tokens, 200 to 20000.")]
CodeLines = Annotated[int, Field(description="Lines of code shown per result, 0 to 40 (then a '... (+N lines)' "
                                             "marker).")]
File = Annotated[str, Field(description="A source file of the index (path as in results, or relative to the "
                                        "server's folder); FILE:LINE also names a function.")]
Function = Annotated[str | None, Field(description="The function's name: qualified (Class.method) or its last part.")]
Line = Annotated[int | None, Field(description="A line inside the function (instead of its name).")]
Lang = Annotated[str | None, Field(description="A language name: python, java, cpp, c, csharp, javascript, "
                                               "typescript, go, rust, kotlin, php, ruby (aliases: py, c++, js...).")]
Tree = Annotated[str | None, Field(description="A folder or file inside the indexed roots.")]
Threshold = Annotated[str, Field(description="Clone threshold: a number in [-1, 1], or 'auto' (the model's "
                                             "calibrated one).")]
Trivial = Annotated[bool, Field(description="Include trivial functions (empty bodies, one-line accessors, tests), "
                                            "which are skipped by default.")]


def _tool_error(exc: BaseException) -> Exception | None:
    """The tool error of an expected failure (one line), or None for a bug."""
    from mcp.server.mcpserver.exceptions import ToolError

    from conba.errors import ConbaError
    from conba.serve.reload import NoIndex

    if isinstance(exc, (ConbaError, NoIndex)):
        return ToolError(" ".join(str(exc).split("\n")))
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return ToolError(f"{exc.filename}: {exc.strerror}")
    return None


def _validation_line(tool: str, exc: Any) -> str:
    """A pydantic validation error of a tool's arguments in one line: ``k: Input should be ... (got 'many')``."""
    parts = []
    for e in exc.errors()[:5]:
        where = ".".join(str(x) for x in e.get("loc", ())) or "arguments"
        given = repr(e.get("input"))
        parts.append(f"{where}: {e.get('msg', 'invalid')} (got {given[:60] + '...' if len(given) > 60 else given})")
    return f"Error executing tool {tool}: " + "; ".join(parts)


def _server_class() -> Any:
    """``MCPServer`` whose argument-validation errors are one line (the SDK's are pydantic's multi-line text)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from pydantic import ValidationError

    class OneLineErrors(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, ValidationError):
                    raise
                raise ToolError(_validation_line(name, exc.__cause__)) from exc.__cause__

    return OneLineErrors


def build_server(state: ServerState, name: str = "conba") -> Any:
    """An ``MCPServer`` answering from ``state``; its lifespan starts the reader thread, warms the model up and,
    with watch paths, starts the watcher (and stops it, finishing an update in progress, on the way out)."""
    from conba import __version__

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[ServerState]:
        state.start()
        try:
            await state.holder.call(state.warm_up)
            state.start_watching()
            state.preload_in_background()
            yield state
        finally:
            await state.close()

    server: Any = _server_class()(name, version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan,
                            log_level="WARNING")

    async def call(fn: Any, **kwargs: Any) -> str:
        try:
            return await state.call(fn, **kwargs)
        except Exception as exc:
            error = _tool_error(exc)
            if error is None:
                raise
            raise error from None

    def tool(description: str, budget: bool = True) -> Any:
        return server.tool(description=description + (_BUDGET if budget else ""), structured_output=False)

    @tool("Find indexed functions similar to code given by example: a snippet (code), a whole file (file), or one "
          "indexed function (file with function or line; itself left out). Results: file:lines, name, language, "
          "score (higher is closer), first lines of code.")
    async def search_code(code: Annotated[str | None, Field(description="A code snippet to search for.")] = None,
                          file: Annotated[str | None, Field(description="A file inside the indexed roots: the whole "
                                                            "file is the query, or one function of it with "
                                                            "function / line (FILE:LINE works too).")] = None,
                          function: Function = None, line: Line = None,
                          query_language: Annotated[str | None, Field(
                              description="Language of the snippet (default: from the file; none for a bare "
                                          "snippet).")] = None,
                          language: Annotated[str | None, Field(description="Only return functions in this "
                                                                "language.")] = None,
                          k: K = 10, code_lines: CodeLines = 3, max_tokens: Tokens = DEFAULT_TOKENS) -> str:
        return await call(tools_search.search_code, code=code, file=file, function=function, line=line,
                          query_language=query_language, language_filter=language, k=k, code_lines=code_lines,
                          max_tokens=max_tokens)

    @tool("The counterpart of one function in another language or tree: the best target function with its score, "
          "its status as `conba map` gives it (matched: a one-to-one assignment above the threshold; ambiguous: "
          "close rivals; missing: nothing above the threshold, so 'best' is only the nearest), the aligned lines "
          "of the pair ({source: [from, to], target: [from, to], score}), and the other candidates. The map is "
          "of the function's language (in source_path when given) onto the target side.")
    async def find_counterpart(file: File, function: Function = None, line: Line = None,
                               target_language: Lang = None,
                               target_path: Annotated[str | None, Field(description="The other tree (a folder inside "
                                                                        "the indexed roots).")] = None,
                               source_path: Annotated[str | None, Field(description="The function's own tree (default:"
                                                                        " every indexed function of its language "
                                                                        "outside the target).")] = None,
                               keep_trivial: Trivial = False, code_lines: CodeLines = 8,
                               max_tokens: Tokens = DEFAULT_TOKENS) -> str:
        return await call(tools_port.find_counterpart, file=file, function=function, line=line,
                          target_language=target_language, target_path=target_path, source_path=source_path,
                          keep_trivial=keep_trivial, code_lines=code_lines, max_tokens=max_tokens)

    @tool("What is left to port: the coverage of a source tree (or language) by a target tree (or language) as "
          "`conba map` computes it: summary (coverage, matched / ambiguous / missing counts, threshold), the least "
          "covered source files with the target file each maps to, and the source functions with status `only` "
          "(default missing), a page at a time (offset, limit; next_offset when there are more). With since (a git "
          "revision; source_path in a git working tree): the drift instead, each source function changed, added or "
          "removed since then with its counterpart's status.")
    async def port_status(source_path: Tree = None, target_path: Tree = None, source_language: Lang = None,
                          target_language: Lang = None,
                          only: Annotated[str, Field(description="missing, ambiguous, matched or all.")] = "missing",
                          offset: Annotated[int, Field(description="First row of the page.")] = 0,
                          limit: Annotated[int, Field(description="Rows per page, 1 to 500.")] = 50,
                          since: Annotated[str | None, Field(description="A git revision: list the drift since "
                                                             "it.")] = None,
                          target_since: Annotated[str | None, Field(description="With since: the revision of the "
                                                                    "target's repository.")] = None,
                          keep_trivial: Trivial = False, max_tokens: Tokens = DEFAULT_TOKENS) -> str:
        return await call(tools_port.port_status, source_path=source_path, target_path=target_path,
                          source_language=source_language, target_language=target_language, only=only, offset=offset,
                          limit=limit, since=since, target_since=target_since, keep_trivial=keep_trivial,
                          max_tokens=max_tokens)

    @tool("The clones of one function (the members of its clone class, as `conba clones`, each with its score to "
          "the function) or, with files=true, of one whole file (its class of files, as `conba clones --files`: "
          "ported or copied files).")
    async def clones_of(file: File, function: Function = None, line: Line = None,
                        files: Annotated[bool, Field(description="Whole files: the file's clones among "
                                                                 "files.")] = False,
                        threshold: Threshold = "auto",
                        cross_language_only: Annotated[bool, Field(description="Only clones in other "
                                                                   "languages.")] = False,
                        keep_trivial: Trivial = False, code_lines: CodeLines = 3,
                        max_tokens: Tokens = DEFAULT_TOKENS) -> str:
        return await call(tools_port.clones_of, file=file, function=function, line=line, files=files,
                          threshold=threshold, cross_language_only=cross_language_only, keep_trivial=keep_trivial,
                          code_lines=code_lines, max_tokens=max_tokens)

    @tool("Compare two pieces of code: each side a snippet (a / b) or an indexed function (file_a with function_a "
          "or line_a; file_b ...). Gives the score, the clone threshold and whether it is a clone, and with align "
          "the aligned lines ({source: lines of a, target: lines of b, score}). Two indexed functions are scored "
          "as the index scores them (as map and clones); a snippet is encoded with the served model.")
    async def compare(a: Annotated[str | None, Field(description="Snippet A.")] = None,
                      b: Annotated[str | None, Field(description="Snippet B.")] = None,
                      language_a: Lang = None, language_b: Lang = None,
                      file_a: Annotated[str | None, Field(description="File of function A (FILE:LINE works).")] = None,
                      function_a: Function = None, line_a: Line = None,
                      file_b: Annotated[str | None, Field(description="File of function B (FILE:LINE works).")] = None,
                      function_b: Function = None, line_b: Line = None, threshold: Threshold = "auto",
                      align: Annotated[bool, Field(description="Also align the lines of A and B.")] = True,
                      max_tokens: Tokens = DEFAULT_TOKENS) -> str:
        return await call(tools_search.compare, a=a, b=b, language_a=language_a, language_b=language_b,
                          file_a=file_a, function_a=function_a, line_a=line_a, file_b=file_b, function_b=function_b,
                          line_b=line_b, threshold=threshold, align=align, max_tokens=max_tokens)

    @tool("What the index holds and how fresh it is: files, functions per language, model, engine, clone "
          "threshold, the roots the tools may read, when it was last updated, how many indexed files changed on "
          "disk since, whether a writer is busy, and the watcher's state (conba mcp --watch). Compact JSON.",
          budget=False)
    async def index_status() -> str:
        return await call(tools_search.index_status)

    return server
