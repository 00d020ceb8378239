#!/usr/bin/env python3
"""Checks Plexus's answers to the LDBC SNB Interactive queries in queries/ against an independent computation.

The expected answer for every substitution parameter is computed here, directly from the CsvComposite files of
the data set (plain dicts and sorting, Python standard library only); Plexus is only run, through its command
line (one `plexus shell` process for all statements), on a database imported from the same files. Every row is
compared: the columns, the values and the order the specification prescribes. Rows whose sort keys are equal
under the specification's ordering may come in any order among themselves, and when a LIMIT cuts through such a
group any of its rows may fill the remaining places; both are allowed and counted as ties.

    python3 bench/ldbc/check.py --plexus target/debug/plexus --db DB --data ../shared/ldbc-snb-tiny

DB is a database made by `plexus import --data DB --ldbc ../shared/ldbc-snb-tiny/vanilla`. Exits 1 on any
mismatch, after printing a readable diff; prints a summary table either way.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Result columns of each query, as the specification names them.
COLUMNS = {
    "is1": ["firstName", "lastName", "birthday", "locationIP", "browserUsed", "cityId", "gender", "creationDate"],
    "is2": [
        "messageId",
        "messageContent",
        "messageCreationDate",
        "originalPostId",
        "originalPostAuthorId",
        "originalPostAuthorFirstName",
        "originalPostAuthorLastName",
    ],
    "is3": ["personId", "firstName", "lastName", "friendshipCreationDate"],
    "is4": ["messageCreationDate", "messageContent"],
    "is5": ["personId", "firstName", "lastName"],
    "is6": ["forumId", "forumTitle", "moderatorId", "moderatorFirstName", "moderatorLastName"],
    "is7": [
        "commentId",
        "commentContent",
        "commentCreationDate",
        "replyAuthorId",
        "replyAuthorFirstName",
        "replyAuthorLastName",
        "replyAuthorKnowsOriginalMessageAuthor",
    ],
    "ic2": ["personId", "personFirstName", "personLastName", "messageId", "messageContent", "messageCreationDate"],
    "ic9": ["personId", "personFirstName", "personLastName", "messageId", "messageContent", "messageCreationDate"],
}

QUERIES = ["is1", "is2", "is3", "is4", "is5", "is6", "is7", "ic2", "ic9"]


def desc(v):
    """Sort key component for a descending integer."""
    return -v


# The specification's sort order of each query as a key over a result row (None: one row, or no order), and the
# limit the specification puts on the number of rows.
ORDER = {
    "is1": (None, None),
    "is2": (lambda r: (desc(r[2]), desc(r[0])), 10),  # messageCreationDate desc, messageId desc
    "is3": (lambda r: (desc(r[3]), r[0]), None),  # friendshipCreationDate desc, personId asc
    "is4": (None, None),
    "is5": (None, None),
    "is6": (None, None),
    "is7": (lambda r: (desc(r[2]), r[3]), None),  # commentCreationDate desc, replyAuthorId asc
    "ic2": (lambda r: (desc(r[5]), r[3]), 20),  # messageCreationDate desc, messageId asc
    "ic9": (lambda r: (desc(r[5]), r[3]), 20),
}


# ---------------------------------------------------------------------------------------------------------------
# The data set, read straight from the CSV files.


def read_csv(path):
    """Rows of a `|`-separated file with a header, as lists of strings (the tiny set has no quoted fields)."""
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("|")
        rows = []
        for line in f:
            line = line.rstrip("\n")
            if line:
                fields = line.split("|")
                if len(fields) != len(header):
                    raise SystemExit(f"{path}: {len(fields)} fields where the header has {len(header)}: {line!r}")
                rows.append(fields)
    return header, rows


class Snb:
    def __init__(self, vanilla):
        dyn = os.path.join(vanilla, "dynamic")
        static = os.path.join(vanilla, "static")

        def rows(name, base=dyn):
            return read_csv(os.path.join(base, name))

        h, rs = rows("person_0_0.csv")
        col = {c: i for i, c in enumerate(h)}
        self.person_order = []
        self.person = {}
        for r in rs:
            pid = int(r[col["id"]])
            self.person_order.append(pid)
            self.person[pid] = {
                "firstName": r[col["firstName"]],
                "lastName": r[col["lastName"]],
                "gender": r[col["gender"]],
                "birthday": int(r[col["birthday"]]),
                "creationDate": int(r[col["creationDate"]]),
                "locationIP": r[col["locationIP"]],
                "browserUsed": r[col["browserUsed"]],
            }
        _, rs = rows("place_0_0.csv", static)
        self.place_type = {int(r[0]): r[3] for r in rs}
        _, rs = rows("person_isLocatedIn_place_0_0.csv")
        self.person_place = {int(a): int(b) for a, b in rs}

        # KNOWS is stored once per pair; friendship is symmetric.
        self.knows = collections.defaultdict(dict)
        _, rs = rows("person_knows_person_0_0.csv")
        for a, b, date in rs:
            a, b, date = int(a), int(b), int(date)
            self.knows[a][b] = date
            self.knows[b][a] = date

        # Messages: a post's content is its text, or its image file when it has no text.
        self.message = {}
        self.post_order = []
        self.comment_order = []
        h, rs = rows("post_0_0.csv")
        col = {c: i for i, c in enumerate(h)}
        for r in rs:
            mid = int(r[col["id"]])
            self.post_order.append(mid)
            content = r[col["content"]] or r[col["imageFile"]]
            self.message[mid] = {"post": True, "creationDate": int(r[col["creationDate"]]), "content": content}
        h, rs = rows("comment_0_0.csv")
        col = {c: i for i, c in enumerate(h)}
        for r in rs:
            mid = int(r[col["id"]])
            self.comment_order.append(mid)
            self.message[mid] = {"post": False, "creationDate": int(r[col["creationDate"]]), "content": r[col["content"]]}

        self.creator = {}
        self.created = collections.defaultdict(list)
        for name in ("post_hasCreator_person_0_0.csv", "comment_hasCreator_person_0_0.csv"):
            for m, p in rows(name)[1]:
                self.creator[int(m)] = int(p)
                self.created[int(p)].append(int(m))

        self.reply_of = {}
        self.replies = collections.defaultdict(list)
        for name in ("comment_replyOf_post_0_0.csv", "comment_replyOf_comment_0_0.csv"):
            for c, parent in rows(name)[1]:
                self.reply_of[int(c)] = int(parent)
                self.replies[int(parent)].append(int(c))

        _, rs = rows("forum_0_0.csv")
        self.forum_title = {int(r[0]): r[1] for r in rs}
        self.container = {int(p): int(f) for f, p in rows("forum_containerOf_post_0_0.csv")[1]}
        self.moderator = {int(f): int(p) for f, p in rows("forum_hasModerator_person_0_0.csv")[1]}

    def root_post(self, m):
        while not self.message[m]["post"]:
            m = self.reply_of[m]
        return m

    def chain_length(self, m):
        n = 0
        while not self.message[m]["post"]:
            m = self.reply_of[m]
            n += 1
        return n

    # -----------------------------------------------------------------------------------------------------------
    # Expected answers: every row the query could return, in the specification's order, before any LIMIT.

    def is1(self, personId):
        if personId not in self.person:
            return []
        p = self.person[personId]
        city = self.person_place[personId]
        if self.place_type[city] != "city":
            return []
        return [
            (p["firstName"], p["lastName"], p["birthday"], p["locationIP"], p["browserUsed"], city, p["gender"],
             p["creationDate"])
        ]

    def is2(self, personId):
        rows = []
        for m in self.created.get(personId, []):
            msg = self.message[m]
            post = self.root_post(m)
            author = self.creator[post]
            a = self.person[author]
            rows.append((m, msg["content"], msg["creationDate"], post, author, a["firstName"], a["lastName"]))
        return rows

    def is3(self, personId):
        return [
            (f, self.person[f]["firstName"], self.person[f]["lastName"], date)
            for f, date in self.knows.get(personId, {}).items()
        ]

    def is4(self, messageId):
        m = self.message[messageId]
        return [(m["creationDate"], m["content"])]

    def is5(self, messageId):
        p = self.creator[messageId]
        return [(p, self.person[p]["firstName"], self.person[p]["lastName"])]

    def is6(self, messageId):
        forum = self.container[self.root_post(messageId)]
        mod = self.moderator[forum]
        return [(forum, self.forum_title[forum], mod, self.person[mod]["firstName"], self.person[mod]["lastName"])]

    def is7(self, messageId):
        author = self.creator[messageId]
        rows = []
        for c in self.replies.get(messageId, []):
            ra = self.creator[c]
            knows = ra != author and ra in self.knows.get(author, {})
            msg = self.message[c]
            p = self.person[ra]
            rows.append((c, msg["content"], msg["creationDate"], ra, p["firstName"], p["lastName"], knows))
        return rows

    def _messages_of(self, people, keep):
        rows = []
        for f in people:
            p = self.person[f]
            for m in self.created.get(f, []):
                msg = self.message[m]
                if keep(msg["creationDate"]):
                    rows.append((f, p["firstName"], p["lastName"], m, msg["content"], msg["creationDate"]))
        return rows

    def ic2(self, personId, maxDate):
        # "created before (and including) a given date"
        return self._messages_of(self.knows.get(personId, {}), lambda d: d <= maxDate)

    def ic9(self, personId, maxDate):
        friends = set(self.knows.get(personId, {}))
        reach = set(friends)
        for f in friends:
            reach.update(self.knows.get(f, {}))
        reach.discard(personId)
        # "created before a given date (excluding that day)"
        return self._messages_of(reach, lambda d: d < maxDate)


# ---------------------------------------------------------------------------------------------------------------
# Substitution parameters.


def read_params(path):
    header, rows = read_csv(path)
    return [dict(zip(header, r)) for r in rows]


def choose_parameters(snb, params_dir):
    """The parameter sets per query, in a fixed order (see README.md for the reasoning)."""
    files = {n: read_params(os.path.join(params_dir, f"interactive_{n}_param.txt")) for n in range(1, 15)}

    # Persons: every person id of the complex-read parameter files (IC1..IC14 in order, deduplicated), then every
    # other person in person_0_0.csv order: all persons of the data set.
    param_persons = []
    for n in range(1, 15):
        for row in files[n]:
            for key in ("personId", "person1Id", "person2Id"):
                if key in row and int(row[key]) not in param_persons:
                    param_persons.append(int(row[key]))
    persons = param_persons + [p for p in snb.person_order if p not in param_persons]

    # Messages: the first 30 posts and the first 30 comments in file order, the first 30 of each that have at
    # least one reply, and the 10 comments deepest in their reply chains (longest path to the post).
    def first(ids, n, pred=lambda m: True):
        return [m for m in ids if pred(m)][:n]

    def has_replies(m):
        return bool(snb.replies.get(m))

    deepest = sorted(snb.comment_order, key=lambda m: (-snb.chain_length(m), m))[:10]
    messages = []
    for group in (
        first(snb.post_order, 30),
        first(snb.comment_order, 30),
        first(snb.post_order, 30, has_replies),
        first(snb.comment_order, 30, has_replies),
        deepest,
    ):
        for m in group:
            if m not in messages:
                messages.append(m)

    ic2 = [{"personId": int(r["personId"]), "maxDate": int(r["maxDate"])} for r in files[2]]
    ic9 = [{"personId": int(r["personId"]), "maxDate": int(r["maxDate"])} for r in files[9]]
    # Beyond the two rows of each file: every complex-read parameter person with each maxDate of the file.
    ic2_extra = [{"personId": p, "maxDate": r["maxDate"]} for r in ic2 for p in param_persons]
    ic9_extra = [{"personId": p, "maxDate": r["maxDate"]} for r in ic9 for p in param_persons]

    def dedupe(ps):
        out = []
        for p in ps:
            if p not in out:
                out.append(p)
        return out

    sets = {q: [{"personId": p} for p in persons] for q in ("is1", "is2", "is3")}
    sets.update({q: [{"messageId": m} for m in messages] for q in ("is4", "is5", "is6", "is7")})
    sets["ic2"] = dedupe(ic2 + ic2_extra)
    sets["ic9"] = dedupe(ic9 + ic9_extra)
    absent = sum(1 for p in param_persons if p not in snb.person)
    notes = {
        "is1": f"{len(param_persons)} person ids of the IC parameter files ({absent} not in the data), then the "
        f"other {len(persons) - len(param_persons)} persons",
        "is4": f"{len(messages)} messages: first 30 posts, 30 comments, 30 of each with replies, 10 deepest",
        "ic2": f"{len(ic2)} rows of interactive_2_param.txt + IC parameter persons x its maxDates",
        "ic9": f"{len(ic9)} rows of interactive_9_param.txt + IC parameter persons x its maxDates",
    }
    notes["is2"] = notes["is3"] = notes["is1"]
    notes["is5"] = notes["is6"] = notes["is7"] = notes["is4"]
    return sets, notes


# ---------------------------------------------------------------------------------------------------------------
# Running Plexus.

MARKER = "plexus_check_marker"
SUMMARY = re.compile(r"^\d+ rows? .*\(([0-9.]+) ms\)$")


def run_plexus(plexus, db, statements):
    """Runs [(query_text, params)] in one `plexus shell`; returns [(result or None, engine ms)] and stderr."""
    lines = []
    for i, (text, params) in enumerate(statements):
        lines.append(f"RETURN {i} AS {MARKER};")
        lines.append(":clear")
        for k, v in params.items():
            lines.append(f":param {k} => {v}")
        lines.append(text.strip().rstrip(";") + ";")
    script = "\n".join(lines) + "\n"
    start = time.perf_counter()
    proc = subprocess.run(
        [plexus, "shell", "--data", db, "--format", "json"], input=script, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    results = [[None, None] for _ in statements]
    current = None
    for line in proc.stdout.splitlines():
        if line.startswith('{"columns":'):
            obj = json.loads(line)
            if obj["columns"] == [MARKER]:
                current = obj["rows"][0][0]
            elif current is not None:
                results[current][0] = obj
    # From a script the shell writes each statement's row count and time to stderr, in order: the marker's,
    # then the query's (or, when the query failed, its error, which is no summary line).
    times = []
    errors = []
    for line in proc.stderr.splitlines():
        m = SUMMARY.match(line)
        if m:
            times.append(float(m.group(1)))
        else:
            errors.append(line)
    at = 0
    for result in results:
        at += 1
        if result[0] is not None and at < len(times):
            result[1] = times[at]
            at += 1
    return results, "\n".join(errors), wall


def cli_time(plexus, db, text, params, repeat=3):
    """Wall time of one `plexus query` process (open, run, print): the best of a few runs, in ms."""
    args = [plexus, "query", "--data", db, text, "--format", "json"]
    for k, v in params.items():
        args += ["--param", f"{k}={v}"]
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        if subprocess.run(args, capture_output=True).returncode != 0:
            return None
        t = (time.perf_counter() - start) * 1e3
        best = t if best is None else min(best, t)
    return best


# ---------------------------------------------------------------------------------------------------------------
# Comparing.


def compare(query, expected_all, result):
    """Returns (problems, ties): a list of strings describing mismatches, and the number of tied rows."""
    key, limit = ORDER[query]
    columns = COLUMNS[query]
    if result is None:
        return ["the query failed (see the error above)"], 0
    problems = []
    if result["columns"] != columns:
        problems.append(f"columns {result['columns']} != {columns}")
        return problems, 0
    actual = [tuple(r) for r in result["rows"]]
    for row in actual:
        for v, c in zip(row, columns):
            if isinstance(v, (dict, list)):
                problems.append(f"column {c} holds {json.dumps(v)}, not a value")
                return problems, 0
    if key is None:
        exp = sorted(expected_all, key=repr)
        if sorted(actual, key=repr) != exp:
            problems.append(diff(exp, sorted(actual, key=repr)))
        return problems, 0
    expected_all = sorted(expected_all, key=key)
    n = len(expected_all) if limit is None else min(limit, len(expected_all))
    expected = expected_all[:n]
    groups = collections.Counter(key(r) for r in expected_all)
    ties = sum(1 for r in expected if groups[key(r)] > 1)
    if len(actual) != n or [key(r) for r in actual] != [key(r) for r in expected]:
        problems.append(diff(expected, actual))
        return problems, ties
    # Same sort keys in the same order: within each key, the rows must be rows the query could give for it.
    by_key = collections.defaultdict(collections.Counter)
    for r in expected_all:
        by_key[key(r)][r] += 1
    got = collections.defaultdict(collections.Counter)
    for r in actual:
        got[key(r)][r] += 1
    for k, rows in got.items():
        if rows - by_key[k]:
            problems.append(diff(expected, actual))
            break
    return problems, ties


def diff(expected, actual):
    out = [f"expected {len(expected)} rows, got {len(actual)}:"]
    for i in range(max(len(expected), len(actual))):
        e = expected[i] if i < len(expected) else None
        a = actual[i] if i < len(actual) else None
        if e == a:
            out.append(f"      {i:3} = {fmt(e)}")
        else:
            out.append(f"    - {i:3}   {fmt(e)}")
            out.append(f"    + {i:3}   {fmt(a)}")
    return "\n".join(out)


def fmt(row):
    if row is None:
        return "(none)"
    return " | ".join(json.dumps(v, ensure_ascii=False)[:60] for v in row)


def main():
    repo = os.path.abspath(os.path.join(HERE, "..", ".."))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plexus", default=os.path.join(repo, "target", "debug", "plexus"), help="the plexus binary")
    ap.add_argument("--db", required=True, help="a database imported from DATA/vanilla with plexus import --ldbc")
    ap.add_argument("--data", default=os.path.join(repo, "..", "shared", "ldbc-snb-tiny"), help="the data set")
    ap.add_argument("--queries", default=os.path.join(HERE, "queries"))
    ap.add_argument("--only", help="comma-separated queries to check (default: all)")
    ap.add_argument("--no-cli-timing", action="store_true", help="skip timing one `plexus query` per query")
    args = ap.parse_args()

    t0 = time.perf_counter()
    snb = Snb(os.path.join(args.data, "vanilla"))
    sets, notes = choose_parameters(snb, os.path.join(args.data, "substitution_parameters"))
    queries = QUERIES if not args.only else args.only.split(",")
    texts = {}
    for q in queries:
        with open(os.path.join(args.queries, f"{q}.cypher"), encoding="utf-8") as f:
            texts[q] = f.read()

    statements = []
    owners = []
    for q in queries:
        for p in sets[q]:
            statements.append((texts[q], p))
            owners.append((q, p))
    results, stderr, wall = run_plexus(args.plexus, args.db, statements)
    if stderr.strip():
        # Identical errors (the same query failing for many parameters) are shown once.
        blocks = []
        for line in stderr.splitlines():
            if blocks and line.startswith(" "):
                blocks[-1] += "\n" + line
            else:
                blocks.append(line)
        counts = collections.Counter(blocks)
        print("plexus reported errors:", file=sys.stderr)
        for block, n in counts.items():
            print(f"{block}\n  ({n} time{'s' if n > 1 else ''})", file=sys.stderr)

    stats = {q: {"params": 0, "ok": 0, "rows": 0, "ties": 0, "ms": 0.0, "max_ms": 0.0, "empty": 0} for q in queries}
    failures = collections.defaultdict(list)
    for (q, p), (result, ms) in zip(owners, results):
        expected = getattr(snb, q)(**p)
        problems, ties = compare(q, expected, result)
        s = stats[q]
        s["params"] += 1
        s["ties"] += ties
        if result is not None:
            s["rows"] += len(result["rows"])
            s["empty"] += not result["rows"]
        if ms is not None:
            s["ms"] += ms
            s["max_ms"] = max(s["max_ms"], ms)
        if problems:
            failures[q].append((p, problems))
        else:
            s["ok"] += 1

    cli = {}
    if not args.no_cli_timing:
        for q in queries:
            cli[q] = cli_time(args.plexus, args.db, texts[q], sets[q][0])

    for q in queries:
        for p, problems in failures[q][:5]:
            print(f"MISMATCH {q} {json.dumps(p)}")
            for pr in problems:
                print("  " + pr.replace("\n", "\n  "))
        if len(failures[q]) > 5:
            print(f"... and {len(failures[q]) - 5} more mismatches for {q}")

    print()
    print("| query | parameters | matched | rows | empty | tied rows | mean ms | max ms | plexus query ms | parameters |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for q in queries:
        s = stats[q]
        mean = s["ms"] / s["params"] if s["params"] else 0.0
        cli_ms = f"{cli[q]:.1f}" if cli.get(q) is not None else "-"
        print(
            f"| {q.upper()} | {s['params']} | {s['ok']} | {s['rows']} | {s['empty']} | {s['ties']} | {mean:.2f} "
            f"| {s['max_ms']:.2f} | {cli_ms} | {notes[q]} |"
        )
    total = sum(s["params"] for s in stats.values())
    ok = sum(s["ok"] for s in stats.values())
    print()
    print(
        f"{ok} of {total} query executions matched; one plexus shell ran {len(statements)} statements in "
        f"{wall:.2f} s; {time.perf_counter() - t0:.2f} s in total"
    )
    return 0 if ok == total else 1


if __name__ == "__main__":
    sys.exit(main())
