"""The LDBC SNB short reads on PostgreSQL through psycopg 3, for a PostgreSQL peer's `load_ldbc` and `ldbc_short`
to call with its connection (the peer owns the server and the connection; this module only the LDBC part).

Paths: the schema and SQL of `ldbc_sql`; each file streamed to `COPY ... FROM STDIN` (CSV format with `|` as the
delimiter, a header row, empty fields as NULL, and a quote character that never occurs, as the layout has no
quoting), in one transaction with the tables built from it, then `ANALYZE`. The queries are parameterised
statements, which psycopg prepares on the server after a few executions of the same text.
"""

from __future__ import annotations

from typing import Any, List

from . import ldbc_sql

COPY = "COPY {} FROM STDIN (FORMAT csv, DELIMITER '|', HEADER true, NULL '', QUOTE E'\\x01')"


def load(con: Any, data_dir: str) -> None:
    """Loads the layout at `data_dir` into the database of `con` (a psycopg connection), committed on return."""
    with con.transaction(), con.cursor() as cur:
        for table, columns, files in ldbc_sql.raw_tables(data_dir):
            cur.execute(ldbc_sql.create_raw(table, columns))
            for path in files:
                with cur.copy(COPY.format(table)) as copy, open(path, "rb") as f:
                    while block := f.read(1 << 20):
                        copy.write(block)
        for statement in ldbc_sql.BUILD:
            cur.execute(statement)
        for table in ldbc_sql.FOLDED:
            cur.execute(f"DROP TABLE {table}")
    con.execute("ANALYZE")
    con.commit()


QUERIES = {q: text.replace("?", "%s") for q, text in ldbc_sql.QUERIES.items()}


def short(con: Any, query: str, params: dict) -> List[tuple]:
    rows = con.execute(QUERIES[query], (params[ldbc_sql.PARAMETER[query]],)).fetchall()
    return ldbc_sql.shaped(query, rows)
