"""Errors: one hierarchy, positions for query errors, clear messages for bad arguments."""

import numpy as np
import pytest

import plexus


def test_hierarchy():
    for cls in [
        plexus.QueryError,
        plexus.ConflictError,
        plexus.StorageError,
        plexus.InputError,
        plexus.ArgumentError,
        plexus.ConversionError,
        plexus.ClosedError,
    ]:
        assert issubclass(cls, plexus.Error)
    assert issubclass(plexus.ArgumentError, ValueError)
    assert plexus.ConflictError.retryable


def test_syntax_error_has_position(db):
    with pytest.raises(plexus.QueryError) as info:
        db.execute("MATCH (n)\nRETURN n,\n  m")
    e = info.value
    assert (e.code, e.detail, e.phase) == ("SyntaxError", "UndefinedVariable", "compile time")
    assert (e.line, e.column) == (3, 3)
    assert e.query.startswith("MATCH") and "line 3, column 3" in str(e)


def test_parse_error_position(db):
    with pytest.raises(plexus.QueryError) as info:
        db.execute("RETURN 1 +")
    assert info.value.code == "SyntaxError" and info.value.line == 1 and info.value.column is not None


def test_runtime_errors(db):
    with pytest.raises(plexus.QueryError) as info:
        db.execute("RETURN 1 / 0")
    assert info.value.code == "ArithmeticError" and info.value.phase == "runtime"
    with pytest.raises(plexus.QueryError) as info:
        db.execute("RETURN $missing")
    assert info.value.code == "ParameterMissing"
    db.execute("CREATE (a)-[:R]->(b)")
    with pytest.raises(plexus.QueryError) as info:
        db.execute("MATCH (n) DELETE n")
    assert info.value.detail == "DeleteConnectedNode"


def test_constraint_violation(db):
    db.execute("CREATE CONSTRAINT FOR (p:P) REQUIRE p.k IS UNIQUE")
    db.execute("CREATE (:P {k: 1})")
    with pytest.raises(plexus.QueryError) as info:
        db.execute("CREATE (:P {k: 1})")
    assert info.value.code.startswith("Constraint")


def test_bad_arguments(tmp_path):
    with pytest.raises(plexus.ArgumentError, match="durability"):
        plexus.Database(tmp_path / "db", durability="sometimes")
    with plexus.Database() as db:
        with pytest.raises(plexus.ArgumentError, match="mapping"):
            db.execute("RETURN 1", [1])
        with pytest.raises(plexus.ArgumentError, match="lone surrogate"):
            db.execute("RETURN $s", {"s": "a\ud800b"})
        with pytest.raises(plexus.ArgumentError, match="lone surrogate"):
            db.execute("RETURN $m", {"m": {"\udfff": 1}})
        for size in (0, -1, -(2**70)):
            with pytest.raises(plexus.ArgumentError, match="batch_size must be at least 1"):
                db.stream("RETURN 1", batch_size=size)
        # A size past any result is every row in one batch.
        assert [len(b) for b in db.stream("UNWIND range(1, 3) AS i RETURN i", batch_size=2**63)] == [3]
        with pytest.raises(plexus.ArgumentError, match="dtype float64"):
            db.import_edges(np.array([1.5]), np.array([2.0]))
        with pytest.raises(plexus.ArgumentError, match="same length"):
            db.import_edges(np.array([1, 2]), np.array([2]))
        with pytest.raises(plexus.ArgumentError, match="one-dimensional"):
            db.import_edges(np.zeros((2, 2), dtype=np.int64), np.zeros(4, dtype=np.int64))
        with pytest.raises(plexus.ArgumentError, match="numbers"):
            db.import_edges(np.array([1]), np.array([2]), weight=np.array(["x"]))
        g = db.graph()
        with pytest.raises(plexus.ArgumentError, match="direction"):
            g.neighbors(1, direction="up")
        with pytest.raises(plexus.ArgumentError, match="same length"):
            g.has_edge(np.array([1, 2]), np.array([1, 2, 3]))


def test_closed_database(tmp_path):
    db = plexus.Database(tmp_path / "db")
    db.close()
    db.close()
    assert db.closed
    with pytest.raises(plexus.ClosedError):
        db.execute("RETURN 1")


def test_locked_directory(tmp_path):
    import subprocess
    import sys

    other_process = [sys.executable, "-c", "import plexus, sys; plexus.Database(sys.argv[1])", str(tmp_path / "db")]
    with plexus.Database(tmp_path / "db"):
        out = subprocess.run(other_process, capture_output=True, text=True, timeout=60)
        assert out.returncode != 0 and "StorageError" in out.stderr and "locked" in out.stderr, out.stderr
    # Released on close.
    assert subprocess.run(other_process, capture_output=True, timeout=60).returncode == 0


def test_opening_an_open_directory_again_in_one_process_shares_it(tmp_path):
    # As a notebook does when a cell `db = plexus.Database(path)` runs twice: the new handle comes first.
    db = plexus.Database(tmp_path / "db")
    db.execute("CREATE (:A {n: 1})")
    db = plexus.Database(tmp_path / "db")
    assert db.execute("MATCH (a:A) RETURN a.n").tuples() == [(1,)]
    other = plexus.Database(str(tmp_path / "db" / ".." / "db"), durability="sync")
    other.execute("CREATE (:A {n: 2})")
    assert db.execute("MATCH (a:A) RETURN count(a)").scalar() == 2, "one database, seen by both"
    with pytest.raises(plexus.ArgumentError, match="already open in this process with durability='sync'"):
        plexus.Database(tmp_path / "db", durability="off")
    # Closing one handle leaves the other working; the directory is free once both are closed.
    other.close()
    assert db.execute("MATCH (a:A) RETURN count(a)").scalar() == 2
    db.close()
    with plexus.Database(tmp_path / "db", durability="off") as again:
        assert again.durability == "off" and again.execute("MATCH (a:A) RETURN count(a)").scalar() == 2


def test_import_errors_name_file_and_line(db, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2\n3\n4,5\n")
    with pytest.raises(plexus.InputError) as info:
        db.import_csv(edges=str(bad))
    assert info.value.path.endswith("bad.csv") and info.value.line == 2
    with pytest.raises(plexus.InputError):
        db.import_csv(edges=str(tmp_path / "missing.csv"))
    assert db.import_csv(edges=str(bad), skip_bad_lines=1)["relationships_created"] == 2


def test_close_ends_open_transactions(tmp_path):
    db = plexus.Database(tmp_path / "db")
    tx = db.transaction()
    tx.execute("CREATE (:T)")
    db.close()
    # The transaction was rolled back by close: it cannot commit, and the directory is free again.
    with pytest.raises(plexus.ClosedError):
        tx.commit()
    with pytest.raises(plexus.ClosedError):
        tx.execute("RETURN 1")
    with plexus.Database(tmp_path / "db") as again:
        assert again.execute("MATCH (t:T) RETURN count(t)").scalar() == 0


def test_notifications_name_what_the_database_lacks(db):
    db.execute("CREATE (:Person {name: 'a'})")
    assert db.execute("MATCH (p:Person) RETURN p.name").notifications == []
    notes = db.execute("MATCH (p:Persn) RETURN p.nme").notifications
    assert [n["code"].rsplit(".", 1)[1] for n in notes] == ["UnknownLabelWarning", "UnknownPropertyKeyWarning"]
    assert notes[0]["severity"] == "WARNING" and notes[0]["category"] == "UNRECOGNIZED"
    assert notes[0]["position"] == {"offset": 9, "line": 1, "column": 10}
    assert "Persn" in notes[0]["description"]
