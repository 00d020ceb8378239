"""The LDBC SNB short reads in SQL, shared by the relational peers (SQLite, DuckDB; PostgreSQL can use it too).

What it owns: the relational schema of the CsvComposite layout and the SQL of IS1–IS7; each peer only brings its
own bulk loader for the raw files (`raw_tables` says which tables and columns) and runs `BUILD`, then the queries.

Schema, as LDBC's own PostgreSQL implementation models the SNB: every file is first loaded as it is into a raw
table (`raw_<file stem>`, relation files with `src` and `dst` for their two id columns, empty fields as NULL);
the one-to-one relations are then folded into their entities: `person` with its `cityId`, `message` (posts and
comments, whose ids are disjoint) with `creatorId`, `forumId` (posts) and `replyOfId` (comments), `forum` with its
`moderatorId`; `knows` holds each friendship in both directions. The raw tables folded in are dropped; the others
(tags, organisations, likes, ...) stay as loaded. Indexes: the primary keys, `knows (person1Id, person2Id)`,
`message (creatorId, creationDate)` and `message (replyOfId)`.

Queries take one `?` parameter. IS2 and IS6 follow the reply chain to its post with a recursive CTE.
"""

from __future__ import annotations

import os
import re
from typing import List, Tuple

#: Column types by name (dates are epoch milliseconds).
LONGS = {"id", "src", "dst", "creationDate", "birthday", "joinDate"}
INTS = {"length", "classYear", "workFrom"}


def column_type(name: str) -> str:
    return "BIGINT" if name in LONGS else "INTEGER" if name in INTS else "TEXT"


def raw_tables(data_dir: str) -> List[Tuple[str, List[Tuple[str, str]], List[str]]]:
    """(table, [(column, type)], [files]) for every file stem of the layout under `data_dir`, in name order."""
    parts = {}
    for sub in ("static", "dynamic"):
        d = os.path.join(data_dir, sub)
        for name in sorted(os.listdir(d)):
            m = re.fullmatch(r"(.+)_\d+_\d+\.csv", name)
            if m:
                parts.setdefault(m.group(1), []).append(os.path.join(d, name))
    out = []
    for stem in sorted(parts):
        with open(parts[stem][0], encoding="utf-8") as f:
            header = f.readline().rstrip("\n").split("|")
        if "." in header[0]:  # a relation file: `Person.id|Tag.id[|property]`
            header = ["src", "dst", *header[2:]]
        out.append((f"raw_{stem}", [(c, column_type(c)) for c in header], parts[stem]))
    return out


def create_raw(table: str, columns: List[Tuple[str, str]]) -> str:
    return f"CREATE TABLE {table} (" + ", ".join(f"{c} {t}" for c, t in columns) + ")"


BUILD = [
    """CREATE TABLE place (id BIGINT PRIMARY KEY, name TEXT, url TEXT, type TEXT)""",
    """INSERT INTO place SELECT id, name, url, type FROM raw_place""",
    """CREATE TABLE person (id BIGINT PRIMARY KEY, firstName TEXT, lastName TEXT, gender TEXT, birthday BIGINT,
        creationDate BIGINT, locationIP TEXT, browserUsed TEXT, language TEXT, email TEXT, cityId BIGINT)""",
    """INSERT INTO person
        SELECT p.id, p.firstName, p.lastName, p.gender, p.birthday, p.creationDate, p.locationIP, p.browserUsed,
               p.language, p.email, l.dst
        FROM raw_person p LEFT JOIN raw_person_isLocatedIn_place l ON l.src = p.id""",
    """CREATE TABLE forum (id BIGINT PRIMARY KEY, title TEXT, creationDate BIGINT, moderatorId BIGINT)""",
    """INSERT INTO forum
        SELECT f.id, f.title, f.creationDate, m.dst
        FROM raw_forum f LEFT JOIN raw_forum_hasModerator_person m ON m.src = f.id""",
    """CREATE TABLE message (id BIGINT PRIMARY KEY, creationDate BIGINT, locationIP TEXT, browserUsed TEXT,
        language TEXT, content TEXT, imageFile TEXT, length INTEGER, creatorId BIGINT, forumId BIGINT,
        replyOfId BIGINT)""",
    """INSERT INTO message
        SELECT p.id, p.creationDate, p.locationIP, p.browserUsed, p.language, p.content, p.imageFile, p.length,
               c.dst, f.src, NULL
        FROM raw_post p
        LEFT JOIN raw_post_hasCreator_person c ON c.src = p.id
        LEFT JOIN raw_forum_containerOf_post f ON f.dst = p.id""",
    """INSERT INTO message
        SELECT m.id, m.creationDate, m.locationIP, m.browserUsed, NULL, m.content, NULL, m.length,
               c.dst, NULL, coalesce(rp.dst, rc.dst)
        FROM raw_comment m
        LEFT JOIN raw_comment_hasCreator_person c ON c.src = m.id
        LEFT JOIN raw_comment_replyOf_post rp ON rp.src = m.id
        LEFT JOIN raw_comment_replyOf_comment rc ON rc.src = m.id""",
    """CREATE TABLE knows (person1Id BIGINT, person2Id BIGINT, creationDate BIGINT, PRIMARY KEY (person1Id, person2Id))""",
    """INSERT INTO knows
        SELECT src, dst, creationDate FROM raw_person_knows_person
        UNION ALL SELECT dst, src, creationDate FROM raw_person_knows_person""",
    """CREATE INDEX message_creator ON message (creatorId, creationDate)""",
    """CREATE INDEX message_reply ON message (replyOfId)""",
]

#: Raw tables folded into the tables above, dropped once `BUILD` has run.
FOLDED = ["raw_place", "raw_person", "raw_person_isLocatedIn_place", "raw_forum", "raw_forum_hasModerator_person",
          "raw_post", "raw_post_hasCreator_person", "raw_forum_containerOf_post", "raw_comment",
          "raw_comment_hasCreator_person", "raw_comment_replyOf_post", "raw_comment_replyOf_comment",
          "raw_person_knows_person"]

QUERIES = {
    "is1": """
        SELECT p.firstName, p.lastName, p.birthday, p.locationIP, p.browserUsed, p.cityId, p.gender, p.creationDate
        FROM person p JOIN place city ON city.id = p.cityId
        WHERE p.id = ? AND city.type = 'city'""",
    "is2": """
        WITH RECURSIVE latest AS (
            SELECT id, creationDate, coalesce(content, imageFile) AS content, replyOfId, creatorId
            FROM message WHERE creatorId = ?
            ORDER BY creationDate DESC, id DESC
            LIMIT 10
        ), chain (messageId, content, creationDate, id, parent, creatorId) AS (
            SELECT id, content, creationDate, id, replyOfId, creatorId FROM latest
            UNION ALL
            SELECT chain.messageId, chain.content, chain.creationDate, m.id, m.replyOfId, m.creatorId
            FROM chain JOIN message m ON m.id = chain.parent
        )
        SELECT chain.messageId, chain.content, chain.creationDate, chain.id, author.id, author.firstName,
               author.lastName
        FROM chain JOIN person author ON author.id = chain.creatorId
        WHERE chain.parent IS NULL
        ORDER BY chain.creationDate DESC, chain.messageId DESC""",
    "is3": """
        SELECT friend.id, friend.firstName, friend.lastName, k.creationDate
        FROM knows k JOIN person friend ON friend.id = k.person2Id
        WHERE k.person1Id = ?
        ORDER BY k.creationDate DESC, friend.id""",
    "is4": """
        SELECT creationDate, coalesce(content, imageFile) FROM message WHERE id = ?""",
    "is5": """
        SELECT p.id, p.firstName, p.lastName FROM message m JOIN person p ON p.id = m.creatorId WHERE m.id = ?""",
    "is6": """
        WITH RECURSIVE chain (id, parent, forumId) AS (
            SELECT id, replyOfId, forumId FROM message WHERE id = ?
            UNION ALL
            SELECT m.id, m.replyOfId, m.forumId FROM chain JOIN message m ON m.id = chain.parent
        )
        SELECT f.id, f.title, moderator.id, moderator.firstName, moderator.lastName
        FROM chain
        JOIN forum f ON f.id = chain.forumId
        JOIN person moderator ON moderator.id = f.moderatorId
        WHERE chain.parent IS NULL""",
    "is7": """
        SELECT c.id, c.content, c.creationDate, author.id, author.firstName, author.lastName,
               CASE WHEN author.id = m.creatorId THEN false
                    ELSE EXISTS (SELECT 1 FROM knows k WHERE k.person1Id = m.creatorId AND k.person2Id = author.id)
               END
        FROM message m
        JOIN message c ON c.replyOfId = m.id
        JOIN person author ON author.id = c.creatorId
        WHERE m.id = ?
        ORDER BY c.creationDate DESC, author.id""",
}

#: The one parameter of each query.
PARAMETER = {q: "personId" if q in ("is1", "is2", "is3") else "messageId" for q in QUERIES}


def shaped(query: str, rows) -> List[tuple]:
    """Rows as tuples, IS7's flag as a bool (SQLite has no boolean type)."""
    if query == "is7":
        return [(*r[:6], bool(r[6])) for r in rows]
    return [tuple(r) for r in rows]
