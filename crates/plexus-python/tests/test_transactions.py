"""Explicit transactions, rollbacks, conflicts, durability and concurrent threads."""

import threading
import time

import pytest

import plexus


def count(db, label="N"):
    return db.execute(f"MATCH (n:{label}) RETURN count(n)").scalar()


def test_commit_on_exit(db):
    with db.transaction() as tx:
        tx.execute("CREATE (:N {i: 1})")
        tx.execute("CREATE (:N {i: 2})")
        assert tx.execute("MATCH (n:N) RETURN count(n)").scalar() == 2
        assert count(db) == 0, "not visible outside before commit"
    assert count(db) == 2 and tx.closed


def test_rollback_on_exception(db):
    with pytest.raises(RuntimeError):
        with db.transaction() as tx:
            tx.execute("CREATE (:N)")
            raise RuntimeError("boom")
    assert count(db) == 0


def test_failed_statement_keeps_earlier_ones(db):
    with db.transaction() as tx:
        tx.execute("CREATE (:N)")
        with pytest.raises(plexus.QueryError):
            tx.execute("CREATE (:N) WITH 1 AS x RETURN 1 / 0")
    assert count(db) == 1


def test_explicit_rollback_and_reuse(db):
    tx = db.transaction()
    tx.execute("CREATE (:N)")
    tx.rollback()
    assert count(db) == 0
    with pytest.raises(plexus.ClosedError):
        tx.execute("RETURN 1")
    with pytest.raises(plexus.ClosedError):
        tx.commit()


def test_conflict_is_retryable(db):
    db.execute("CREATE (:Account {id: 1, balance: 100})")
    a, b = db.transaction(), db.transaction()
    a.execute("MATCH (x:Account) SET x.balance = x.balance - 10")
    b.execute("MATCH (x:Account) SET x.balance = x.balance - 20")
    a.commit()
    with pytest.raises(plexus.ConflictError) as info:
        b.commit()
    assert info.value.retryable
    assert db.execute("MATCH (x:Account) RETURN x.balance").scalar() == 90


def test_contended_auto_commit_statements_all_land(db):
    # Each db.execute that meets a conflict runs again by itself: no ConflictError, no lost update.
    db.execute("CREATE (:Counter {n: 0})")

    def bump():
        for _ in range(100):
            db.execute("MATCH (c:Counter) SET c.n = c.n + 1")

    threads = [threading.Thread(target=bump) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert db.execute("MATCH (c:Counter) RETURN c.n").scalar() == 600


def transfer_with_retry(db, amount, attempts=50):
    for _ in range(attempts):
        try:
            with db.transaction() as tx:
                tx.execute("MATCH (x:Account) SET x.balance = x.balance + $a", {"a": amount})
            return
        except plexus.ConflictError:
            continue
    raise AssertionError("no attempt committed")


def test_concurrent_threads_with_retries(db):
    db.execute("CREATE (:Account {balance: 0})")
    threads = [
        threading.Thread(target=lambda: [transfer_with_retry(db, 1) for _ in range(25)]) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert db.execute("MATCH (x:Account) RETURN x.balance").scalar() == 100


def test_parallel_readers_get_the_same_answers(db):
    db.execute("UNWIND range(1, 2000) AS i CREATE (:N {i: i})")
    results, errors = [], []

    def work():
        try:
            for _ in range(20):
                results.append(db.execute("MATCH (n:N) RETURN sum(n.i)").scalar())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == [2000 * 2001 // 2] * 80


def test_queries_release_the_gil(db):
    """While one thread runs a long query, another keeps running Python code."""
    done = threading.Event()
    elapsed = []

    def long_query():
        start = time.perf_counter()
        db.execute("UNWIND range(1, 3000000) AS x WITH x WHERE x % 7 = 0 RETURN count(x)")
        elapsed.append(time.perf_counter() - start)
        done.set()

    t = threading.Thread(target=long_query)
    spins = 0
    t.start()
    while not done.is_set():
        spins += 1
    t.join()
    # Holding the GIL for the whole query would leave this thread a handful of switch intervals at most.
    assert elapsed[0] > 0.05
    assert spins > 10000, (spins, elapsed)


def test_durable_database_survives_reopen(tmp_path):
    path = tmp_path / "db"
    for durability in ["sync", "batch", "off"]:
        with plexus.Database(path, durability=durability) as db:
            assert db.durability == durability and db.path == path
            db.execute("CREATE (:N {d: $d})", {"d": durability})
    with plexus.Database(path) as db:
        assert sorted(db.execute("MATCH (n:N) RETURN n.d").tuples()) == [("batch",), ("off",), ("sync",)]
        assert db.checkpoint() > 0


def test_a_backup_opens_as_a_copy_and_refuses_an_occupied_target(tmp_path):
    with plexus.Database(tmp_path / "db") as db:
        db.execute("CREATE CONSTRAINT FOR (p:P) REQUIRE p.id IS UNIQUE")
        db.execute("UNWIND range(1, 100) AS i CREATE (:P {id: i})-[:R {w: i * 0.5}]->(:Q {s: toString(i)})")
        taken = db.backup(tmp_path / "copy")
        assert taken["nodes"] == 200 and taken["relationships"] == 100 and taken["bytes"] > 0
        db.execute("CREATE (:P {id: 1000})")  # after the backup: not in it
        with pytest.raises(plexus.StorageError, match="not empty"):
            db.backup(tmp_path / "copy")
    # A read-only database and an in-memory one back up too.
    with plexus.Database(tmp_path / "db", read_only=True) as db:
        db.backup(str(tmp_path / "from-read-only"))
    with plexus.Database() as mem:
        mem.execute("CREATE (:M {v: 1})")
        assert mem.backup(tmp_path / "from-memory")["nodes"] == 1
    with plexus.Database(tmp_path / "copy") as copy:
        assert copy.execute("MATCH (:P)-[r:R]->(q:Q) RETURN count(*), sum(r.w)").tuples() == [(100, 2525.0)]
        assert copy.execute("MATCH (p:P {id: 1000}) RETURN count(p)").scalar() == 0
        with pytest.raises(plexus.QueryError):
            copy.execute("CREATE (:P {id: 5})")  # the unique constraint came along
    with plexus.Database(tmp_path / "from-read-only") as copy:
        assert copy.execute("MATCH (p:P) RETURN count(p)").scalar() == 101
    with plexus.Database(tmp_path / "from-memory") as copy:
        assert copy.execute("MATCH (m:M) RETURN m.v").scalar() == 1


def test_a_directory_of_other_files_is_not_made_a_database(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(plexus.StorageError, match="holds files but no Plexus database"):
        plexus.Database(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    with plexus.Database(tmp_path / "fresh") as db:  # a new directory, or an empty one, is made a database
        db.execute("CREATE ()")
    with plexus.Database(tmp_path / "fresh") as db:  # and opens again as one
        assert db.execute("MATCH (n) RETURN count(n)").scalar() == 1


def test_read_only_database_reads_and_refuses_writes(tmp_path):
    path = tmp_path / "db"
    with plexus.Database(path) as db:
        db.execute("CREATE (:N {v: 1})")
    files = sorted(p.name for p in path.iterdir())
    with plexus.Database(path, read_only=True) as db:
        assert db.read_only
        assert db.execute("MATCH (n:N) RETURN n.v").tuples() == [(1,)]
        kept = db
        with pytest.raises(plexus.QueryError) as e:
            db.execute("CREATE (:N {v: 2})")
        assert e.value.code == "ForbiddenOnReadOnlyDatabase"
        # In an explicit transaction too: refused at the statement, not at commit.
        with db.transaction() as tx:
            with pytest.raises(plexus.QueryError) as e:
                tx.execute("CREATE (:N {v: 3})")
            assert e.value.code == "ForbiddenOnReadOnlyDatabase"
            assert tx.execute("MATCH (n:N) RETURN count(n)").scalar() == 1
        # Every write is refused with the same error, calls that are not queries too (a checkpoint, an import),
        # and the graph view's writes even when every edge exists already.
        g = db.graph()
        writes = [
            db.checkpoint,
            lambda: db.import_edges([1], [2]),
            lambda: g.upsert_edges([1], [2]),
            lambda: g.remove_edges([1], [2]),
        ]
        for write in writes:
            with pytest.raises(plexus.QueryError) as e:
                write()
            assert e.value.code == "ForbiddenOnReadOnlyDatabase"
        # A second reader may share the directory; a writer may not.
        with plexus.Database(path, read_only=True) as again:
            assert again.execute("MATCH (n) RETURN count(*)").tuples() == [(1,)]
        with pytest.raises(plexus.ArgumentError, match="already open in this process with .*read_only=True"):
            plexus.Database(path)
    assert sorted(p.name for p in path.iterdir()) == files
    # Closed, it still says how it was opened, as it does its path and durability.
    assert kept.closed and kept.read_only
    with pytest.raises(plexus.Error):
        plexus.Database(tmp_path / "missing", read_only=True)
    assert not (tmp_path / "missing").exists()
    with plexus.Database(path) as db:
        assert not db.read_only


def test_close_stops_queries_running_on_other_threads(tmp_path):
    path = tmp_path / "db"
    db = plexus.Database(path)
    outcome = []

    def long_query():
        try:
            outcome.append(db.execute("UNWIND range(1, 20000) AS x UNWIND range(1, 20000) AS y RETURN count(*)"))
        except plexus.Error as e:
            outcome.append(e)

    thread = threading.Thread(target=long_query)
    thread.start()
    time.sleep(0.3)
    started = time.monotonic()
    db.close()
    # The query was stopped, not waited for (it would run for minutes), and the directory is free at once.
    assert time.monotonic() - started < 10
    with plexus.Database(path) as again:
        assert again.execute("RETURN 1").scalar() == 1
    thread.join()
    # Stopped while running (or, on a machine too busy to start it in time, refused as closed).
    stopped = isinstance(outcome[0], plexus.QueryError) and outcome[0].code == "Terminated"
    assert stopped or isinstance(outcome[0], plexus.ClosedError), outcome


def test_ctrl_c_stops_a_long_query(tmp_path):
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import os, signal, threading, time, plexus
        db = plexus.Database()
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        started = time.monotonic()
        try:
            db.execute("UNWIND range(1, 100000) AS x UNWIND range(1, 100000) AS y RETURN count(*)")
            print("finished")
        except KeyboardInterrupt:
            print("interrupted after", round(time.monotonic() - started, 1))
        print(db.execute("RETURN 1").scalar())
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[0].startswith("interrupted after"), out.stdout
    assert float(lines[0].split()[-1]) < 5
    assert lines[1] == "1", "the database works on after the interrupt"
