"""The examples in the package's docstrings run as written, and the type stubs agree with what runs."""

import collections
import datetime as dt
import doctest
import pathlib

import plexus


def test_docstring_examples_run():
    assert doctest.testmod(plexus).failed == 0


def test_parameters_may_be_any_mapping(tmp_path):
    with plexus.Database(str(tmp_path / "db")) as db:
        params = collections.OrderedDict(x=1)
        assert db.execute("RETURN $x AS x", params).scalar() == 1
        assert db.execute("RETURN $x AS x", collections.ChainMap({"x": 2})).scalar() == 2
        assert isinstance(db.path, pathlib.Path)


def test_times_with_an_offset_keep_it_in_arrow_inside_lists_and_maps():
    with plexus.Database() as db:
        table = db.execute("RETURN [time('12:00+01:00')] AS l, {t: time('08:30-05:00')} AS m, time('01:00+05:00') AS t").arrow()
        row = table.to_pylist()[0]
        assert row["l"] == ["12:00:00+01:00"] and row["m"] == {"t": "08:30:00-05:00"} and row["t"] == "01:00:00+05:00"
        plain = db.execute("RETURN [localtime('12:00')] AS l").arrow().to_pylist()[0]
        assert plain["l"] == [dt.time(12, 0)]
