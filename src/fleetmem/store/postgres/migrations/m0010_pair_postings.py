"""Migration 10: a posting for every two terms at adjacent positions (issue 20).

A phrase of several tokens (``test_push``, ``handle_daily_totals``) was looked for in the rows
of its rarest token, each row checked on the positions of every token; the other tokens'
postings were looked up row by row. When a phrase is common, most of a question's time went
there: ``test_push`` at 1,000,000 episodes looked up the postings of ``test`` at 10,209 rows
holding ``push`` (110 to 170 ms) to find the 4,000 newest holding the phrase.

``builtin_pair_postings`` holds a row per pair of adjacent terms of each episode, keyed by
``text_index.pair_id`` (eight bytes of the MD5 of ``first second``, computed the same way
here), with the positions where the pair starts and how many of them are in the text or
summary: a phrase of two tokens is its pair's rows, read newest first from the primary key
alone, with its frequency; one of more tokens is the rows holding each of its pairs, checked
on their starts. Columns are one empty position apart, so no pair spans two. At about 140
pairs an episode the table is the store's largest, so its rows hold only what a query reads
(no count of starts in the context: the positions give it).

The pairs are made here from the postings' stored positions (two bytes each, big-endian),
joined position to position within each episode. They replace ``builtin_fts.pairs`` and its
GIN index (migration 9), which only narrowed the rows to check.
"""

from __future__ import annotations

VERSION = 10
NAME = "pair_postings"

_ID = "('x' || left(md5(a.lexeme || ' ' || b.lexeme), 16))::bit(64)::int8"

SQL = f"""
CREATE TEMPORARY TABLE pair_positions ON COMMIT DROP AS
SELECT p.erow, p.scope_id, p.lexeme,
       (get_byte(p.positions, 2 * i) << 8) | get_byte(p.positions, 2 * i + 1) AS pos
FROM builtin_postings p
CROSS JOIN LATERAL generate_series(0, length(p.positions) / 2 - 1) i;
CREATE INDEX ON pair_positions (erow, pos);
CREATE TABLE builtin_pair_postings (
    -- text_index.pair_id of the two terms.
    pair bigint NOT NULL,
    scope_id integer NOT NULL,
    erow bigint NOT NULL,
    -- The document's length and start, which scoring needs for every row holding a phrase
    -- (read from builtin_fts instead, 4,000 rows took longer than their postings).
    doc_len integer NOT NULL,
    started_at double precision NOT NULL,
    -- Starts in the text or summary (they come first in positions).
    n_main smallint NOT NULL,
    -- Where the pair starts, two bytes each, big-endian, ascending.
    positions bytea NOT NULL
);
INSERT INTO builtin_pair_postings (pair, scope_id, erow, doc_len, started_at, n_main, positions)
SELECT {_ID}, a.scope_id, a.erow, f.doc_len, f.started_at,
       count(*) FILTER (WHERE a.pos <= f.summary_end),
       string_agg(int2send(a.pos::int2), ''::bytea ORDER BY a.pos)
FROM pair_positions a
JOIN pair_positions b ON b.erow = a.erow AND b.pos = a.pos + 1
JOIN builtin_fts f ON f.erow = a.erow
GROUP BY 1, a.scope_id, a.erow, f.doc_len, f.started_at;
ALTER TABLE builtin_pair_postings ADD CONSTRAINT builtin_pair_postings_pkey PRIMARY KEY
    (pair, scope_id, erow) INCLUDE (n_main, doc_len, started_at, positions);
ALTER TABLE builtin_pair_postings SET
    (autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 100000);
ANALYZE builtin_pair_postings;
DROP INDEX builtin_fts_pairs;
ALTER TABLE builtin_fts DROP COLUMN pairs;
"""
