"""Runs one LDBC short read N times through the Python package, for instruction counts under callgrind:

    plexus import --data DB --ldbc DATA/vanilla
    valgrind --tool=callgrind python bench/ldbc/instructions.py DB is2 0
    valgrind --tool=callgrind python bench/ldbc/instructions.py DB is2 1000

The difference of the two totals divided by N is the cost of one execution (opening the database and drawing the
parameters cancel out). Parameters cycle over the data's persons (IS1–IS3) or up to 5,000 messages (IS4–IS7) in a
fixed shuffled order.
"""

import os
import random
import sys

import plexus


def main() -> None:
    db_dir, query, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    db = plexus.Database(db_dir)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "queries", f"{query}.cypher")) as f:
        text = f.read()
    if query in ("is1", "is2", "is3"):
        key, ids = "personId", [r["id"] for r in db.execute("MATCH (p:Person) RETURN p.id AS id")]
    else:
        key, ids = "messageId", [r["id"] for r in db.execute("MATCH (m:Message) RETURN m.id AS id LIMIT 5000")]
    random.Random(7).shuffle(ids)
    for i in range(n):
        db.execute(text, {key: ids[i % len(ids)]})


if __name__ == "__main__":
    main()
