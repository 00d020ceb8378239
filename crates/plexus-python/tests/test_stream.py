"""Database.stream: a read-only query's rows in batches, produced as they are iterated."""

import threading

import pytest

import plexus


def test_batches_hold_every_row_in_order(db):
    db.execute("UNWIND range(1, 25000) AS i CREATE (:N {i: i, s: toString(i)})")
    stream = db.stream("MATCH (n:N) RETURN n.i AS i, n.s AS s ORDER BY i", batch_size=4000)
    assert stream.columns == ["i", "s"]
    sizes, seen = [], []
    for batch in stream:
        assert batch.columns == ["i", "s"]
        sizes.append(len(batch))
        seen.extend(t[0] for t in batch.tuples())
    assert sizes == [4000] * 6 + [1000]
    assert seen == list(range(1, 25001))
    # Exhausted: stays so.
    assert next(stream, None) is None


def test_batches_convert_to_frames(db):
    pd = pytest.importorskip("pandas")
    frames = [b.df() for b in db.stream("UNWIND range(0, 9999) AS i RETURN i, i * 0.5 AS half", batch_size=3000)]
    frame = pd.concat(frames, ignore_index=True)
    assert list(frame.columns) == ["i", "half"]
    assert frame["i"].tolist() == list(range(10000))
    assert frame["half"].sum() == sum(range(10000)) * 0.5


def test_batches_convert_to_arrow_with_one_schema(db):
    pa = pytest.importorskip("pyarrow")
    # Batch 1: x null, y integers; batch 2: x integers, y floats (exact and not); batch 3: y integers again.
    query = """UNWIND range(0, 2999) AS i
               RETURN CASE WHEN i >= 1000 THEN i END AS x,
                      CASE WHEN 1000 <= i < 2000 THEN i + 0.5 ELSE i END AS y"""
    # y was integers first, then floats: no one type for it, said plainly.
    with pytest.raises(TypeError, match="column 'y' of this stream was int64"):
        [b.arrow() for b in db.stream(query, batch_size=1000)]
    # Floats first, then integers: the integers widen.
    query = query.replace("CASE WHEN 1000 <= i < 2000 THEN i + 0.5 ELSE i END", "CASE WHEN i < 1000 THEN i + 0.5 ELSE i END")
    tables = [b.arrow() for b in db.stream(query, batch_size=1000)]
    assert [t.schema.field("y").type for t in tables] == [pa.float64()] * 3
    assert [t.schema.field("x").type for t in tables] == [pa.null(), pa.int64(), pa.int64()]
    whole = pa.concat_tables(tables, promote_options="default")
    assert whole.column("y").to_pylist() == [i + 0.5 if i < 1000 else float(i) for i in range(3000)]
    assert whole.column("x").to_pylist() == [None] * 1000 + list(range(1000, 3000))
    # Nodes and maps keep each batch's own struct type (their fields vary): no error, and Arrow unifies them.
    db.execute("UNWIND range(1, 2000) AS i CREATE (:V {i: i, extra: CASE WHEN i > 1000 THEN 'x' END})")
    tables = [b.arrow() for b in db.stream("MATCH (v:V) RETURN v.i AS i, v {.*} AS m ORDER BY i", batch_size=1000)]
    whole = pa.concat_tables(tables, promote_options="permissive")
    assert whole.num_rows == 2000 and whole.column("m").to_pylist()[-1] == {"i": 2000, "extra": "x"}


def test_datetimes_past_2262_in_a_later_batch_share_the_stream_schema(db):
    pa = pytest.importorskip("pyarrow")
    # The first batch fits in nanoseconds; the second holds a placeholder date nanoseconds cannot.
    query = """UNWIND range(0, 1999) AS i
               RETURN CASE WHEN i < 1000 THEN localdatetime('2020-01-01T00:00') ELSE localdatetime('9999-12-31T00:00') END AS t,
                      CASE WHEN i < 1000 THEN datetime('2020-01-01T00:00Z') ELSE datetime('9999-12-31T00:00Z') END AS z"""
    tables = [b.arrow() for b in db.stream(query, batch_size=1000)]
    assert [t.schema.field("t").type for t in tables] == [pa.timestamp("us")] * 2
    assert [t.schema.field("z").type for t in tables] == [pa.timestamp("us", tz="UTC")] * 2
    whole = pa.concat_tables(tables)
    assert whole.column("t").to_pylist()[-1].year == 9999
    # A value finer than a microsecond keeps nanoseconds where they fit.
    fine = [b.arrow() for b in db.stream("RETURN localdatetime('2020-01-01T00:00:00.000000001') AS t")]
    assert fine[0].schema.field("t").type == pa.timestamp("ns")


def test_a_huge_range_streams_and_stops_early(db):
    stream = db.stream("UNWIND range(1, 1000000000000) AS i RETURN i", batch_size=1000)
    first = next(stream)
    second = next(stream)
    assert first.tuples()[0] == (1,) and second.tuples()[-1] == (2000,)
    stream.close()
    assert next(stream, None) is None


def test_the_stream_reads_the_snapshot_it_started_on(db):
    db.execute("UNWIND range(1, 3000) AS i CREATE (:S {i: i})")
    stream = db.stream("MATCH (n:S) RETURN n.i AS i", batch_size=1000)
    first = next(stream)
    db.execute("MATCH (n:S) DETACH DELETE n")
    rest = [t[0] for b in stream for t in b.tuples()]
    assert sorted([t[0] for t in first.tuples()] + rest) == list(range(1, 3001))
    assert db.execute("MATCH (n:S) RETURN count(n) AS c").scalar() == 0


def test_errors_come_with_the_batch_that_meets_them(db):
    with pytest.raises(plexus.QueryError):
        db.stream("RETURN 1 +")
    with pytest.raises(plexus.QueryError):
        db.stream("CREATE (:X)")
    assert db.execute("MATCH (x:X) RETURN count(x)").scalar() == 0
    with pytest.raises(plexus.ArgumentError):
        db.stream("RETURN 1", batch_size=0)
    stream = db.stream("UNWIND range(1, 5000) AS x RETURN 100 / (4000 - x) AS q", batch_size=1000)
    seen = 0
    with pytest.raises(plexus.QueryError):
        for batch in stream:
            seen += len(batch)
    assert 1000 <= seen < 4000
    # Iterating on after the error must not look like a complete result.
    with pytest.raises(plexus.ClosedError, match="failed part-way"):
        next(stream)
    with pytest.raises(plexus.ClosedError, match="failed part-way"):
        list(stream)


def test_a_closed_database_ends_its_streams(tmp_path):
    db = plexus.Database(str(tmp_path / "db"))
    stream = db.stream("UNWIND range(1, 100000) AS i RETURN i", batch_size=10)
    assert len(next(stream)) == 10
    db.close()
    # The stream is still referenced, but closing ended it: the directory is free again.
    with plexus.Database(str(tmp_path / "db")) as again:
        assert again.execute("RETURN 1").scalar() == 1
    with pytest.raises(plexus.ClosedError):
        next(stream)


def test_a_stream_may_move_between_threads(tmp_path):
    db = plexus.Database(str(tmp_path / "db"))
    results = {}

    def make():
        results["stream"] = db.stream("UNWIND range(1, 30) AS i RETURN i", batch_size=10)
        results["first"] = next(results["stream"]).tuples()

    t = threading.Thread(target=make)
    t.start()
    t.join()
    stream = results.pop("stream")
    assert results["first"][0] == (1,)
    assert [len(b) for b in stream] == [10, 10]
    # Made on one thread, dropped on another, and the database closes cleanly.
    other = []
    t = threading.Thread(target=lambda: other.append(db.stream("UNWIND range(1, 5000) AS i RETURN i", batch_size=1)))
    t.start()
    t.join()
    other.clear()
    db.close()
    with plexus.Database(str(tmp_path / "db")) as again:
        assert again.execute("RETURN 2").scalar() == 2


def test_an_interrupt_of_another_query_leaves_a_stream_running():
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import os, signal, threading, plexus
        db = plexus.Database()
        stream = db.stream("UNWIND range(1, 100000) AS i RETURN i", batch_size=1000)
        next(stream)
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            db.execute("UNWIND range(1, 100000) AS x UNWIND range(1, 100000) AS y RETURN count(*)")
        except KeyboardInterrupt:
            print("interrupted")
        print(sum(len(b) for b in stream))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["interrupted", "99000"], out.stdout


def test_a_stream_interrupted_part_way_says_so_when_iterated_again():
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import os, signal, threading, plexus
        db = plexus.Database()
        stream = db.stream("UNWIND range(1, 300000000) AS i WITH i WHERE i % 50000000 = 0 RETURN i", batch_size=1)
        print(next(stream).tuples())
        threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            next(stream)
        except KeyboardInterrupt:
            print("interrupted")
        try:
            print([b.tuples() for b in stream])
        except plexus.ClosedError as e:
            print("closed:", "interrupted" in str(e))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[(50000000,)]", "interrupted", "closed: True"], out.stdout


def test_load_csv_reads_only_what_the_database_allows(tmp_path):
    (tmp_path / "import").mkdir()
    (tmp_path / "import" / "a.csv").write_text("name\nAnn\nBob\n")
    (tmp_path / "secret.csv").write_text("s\n")
    with plexus.Database(load_csv=str(tmp_path / "import")) as db:
        rows = db.execute("LOAD CSV WITH HEADERS FROM 'file:///a.csv' AS r RETURN r.name AS name").tuples()
        assert rows == [("Ann",), ("Bob",)]
        with pytest.raises(plexus.QueryError):
            db.execute("LOAD CSV FROM 'file:///../secret.csv' AS r RETURN r")
    with plexus.Database(load_csv="none") as db:
        with pytest.raises(plexus.QueryError):
            db.execute(f"LOAD CSV FROM 'file://{tmp_path}/secret.csv' AS r RETURN r")
    with plexus.Database() as db:
        assert db.execute(f"LOAD CSV FROM 'file://{tmp_path}/secret.csv' AS r RETURN count(r)").scalar() == 1


def test_ctrl_c_during_a_bulk_import_leaves_nothing_or_is_not_raised():
    # Into an empty database edges are built and installed at once: Ctrl-C during the build stops it with
    # nothing installed; one that comes after the install must not be raised as if nothing had been loaded.
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import os, signal, threading, warnings, numpy as np, plexus
        warnings.simplefilter("ignore")
        db = plexus.Database()
        n = 5_000_000
        threading.Timer(0.1, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            print("finished", db.import_edges(np.arange(n), (np.arange(n) + 1) % n)["bulk"])
        except KeyboardInterrupt:
            print("interrupted")
        print(db.counts()["relationships"])
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() in (["interrupted", "0"], ["finished True", "5000000"]), out.stdout


def test_ctrl_c_during_an_import_into_a_non_empty_database_leaves_nothing():
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import os, signal, threading, time, numpy as np, plexus
        db = plexus.Database()
        db.execute("CREATE (:Seed)")
        n = 3_000_000
        threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        started = time.time()
        try:
            db.import_edges(np.arange(n), (np.arange(n) + 1) % n)
            print("finished")
        except KeyboardInterrupt:
            print("interrupted")
        print(db.execute("MATCH ()-[r]->() RETURN count(r)").scalar(), time.time() - started < 10)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["interrupted", "0 True"], out.stdout
