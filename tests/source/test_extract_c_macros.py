"""C written behind macros (zlib style, K&R): every function found, under its own name; a file that
parses with errors says so and keeps the functions after the error."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from conba.source.c_macros import parse_copy
from conba.source.extract import extract_units

# each macro pattern of issue 49 row 2, in code written for this test (no third-party code)
MACRO_C = """\
#include "zutil.h"

local int helper OF((int a, int b));
ZEXTERN int ZEXPORT deflate OF((z_streamp strm, int flush));

/* K&R definition behind an export macro */
int ZEXPORT deflate (strm, flush)
    z_streamp strm;
    int flush;
{
    return helper(flush, 1);
}

local int helper(a, b)
    int a;
    int b;
{
    return a + b;
}

/* pointer return, K&R, export macro: tree-sitter-c splits header and body */
const char * ZEXPORT describe(err, detail)
    int err;
    int *detail;
{
    *detail = err;
    return ERR_MSG(err);
}

void ZLIB_INTERNAL report_error (m)
    char *m;
{
    fprintf(stderr, "%s\\n", m);
}

unsigned long ZEXPORT checksum(unsigned long adler, const unsigned char FAR *buf, unsigned len)
{
    while (len--) adler += *buf++;
    return adler;
}

MYLIB_API my_status_t my_update (my_state_t* state, const void* input, size_t len)
{
    state->total += len;
    return MY_OK;
}

MYLIB_FORCE_INLINE int
decode_generic(const char* src, char* dst, int size)
{
    return size > 0 ? dst[0] = src[0] : 0;
}

int split_by_ifdef(int x)
{
    if (
#ifdef FEATURE
        x > 1
#else
        x > 2
#endif
       ) {
        return 1;
    }
    return 0;
}

int after_the_error(int x)
{
    return x * 2;
}

static int last_one(int y)
{
    return y - 1;
}

MODULE_INIT(checksums)

typedef struct
{
    int count;
} counter_t;

static int count_up(counter_t *c)
__contract__(
  requires(c != NULL)
  assigns(c->count)
)
{
    return ++c->count;
}
"""
EXPECTED = ["deflate", "helper", "describe", "report_error", "checksum", "my_update", "decode_generic",
            "split_by_ifdef", "after_the_error", "last_one", "count_up"]


def test_every_macro_pattern_is_found_with_its_own_name():
    units = extract_units("z.c", MACRO_C, "c")
    assert [u.qualname for u in units] == EXPECTED
    describe = units[2]
    assert describe.code.startswith("/* pointer return") and describe.code.rstrip().endswith("}")
    assert "const char * ZEXPORT describe(err, detail)" in describe.code  # the unit is the original text


def test_export_macros_in_cpp():
    """C++ has no K&R definitions; the ANSI half of the patterns, in a header (.h: the C++ grammar)."""
    ansi = MACRO_C[MACRO_C.index("unsigned long ZEXPORT checksum"):]
    ansi += "\nvoid ZLIB_INTERNAL report_error (char *m)\n{\n    fprintf(stderr, \"%s\\n\", m);\n}\n"
    for name in ("z.h", "z.cpp"):
        assert [u.qualname for u in extract_units(name, ansi, "cpp")] == [*EXPECTED[4:], "report_error"]


def test_the_parse_copy_keeps_every_offset():
    src = MACRO_C.encode()
    copy = parse_copy(src)
    assert len(copy) == len(src) and copy.count(b"\n") == src.count(b"\n")
    assert b"ZEXPORT" not in copy and b" OF((" not in copy and b"ZLIB_INTERNAL" not in copy
    plain = b"int add(int a, int b)\n{\n    return a + b;\n}\nconst BYTE* p(const BYTE* q) { return q; }\n"
    assert parse_copy(plain) == plain  # no macros: untouched (const BYTE* is a type, not a macro)


def test_a_file_with_syntax_errors_says_so():
    errors: list[int] = []
    units = extract_units("z.c", MACRO_C, "c", errors)
    assert errors == [56] and len(units) == len(EXPECTED)  # the `if (` split by #ifdef
    clean: list[int] = []
    extract_units("a.c", "int add(int a, int b)\n{\n    return a + b;\n}\n", "c", clean)
    assert clean == []


@pytest.mark.slow
def test_index_reports_files_with_syntax_errors(tiny_model, tmp_path):
    from conba.cli.main import cli

    src = tmp_path / "src"
    src.mkdir()
    (src / "z.c").write_text(MACRO_C)
    (src / "ok.c").write_text("int add(int a, int b)\n{\n    return a + b;\n}\n")
    idx = str(tmp_path / "idx")
    res = CliRunner().invoke(cli, ["index", str(src), "--index", idx, "-m", tiny_model, "-v"])
    assert res.exit_code == 0, res.output
    assert "1 file parsed with syntax errors" in res.output and "z.c:56: syntax error" in res.output, res.output
    assert "Indexed 12 functions" in res.output
    res = CliRunner().invoke(cli, ["index", str(src), "--index", idx, "-m", tiny_model, "--format", "json"])
    assert res.exit_code == 0, res.output
