"""Migration 9: each indexed episode lists the keys of its adjacent term pairs (issue 20).

A phrase of several tokens (``load_worker``, ``tests/auth/test_x.py``) was looked for in the
rows holding its rarest token, newest first, each row checked on its tokens' positions. When
every token is common and the phrase is not, most of those rows fail the check: on 1,000,000
episodes, ``load_worker`` read 101,810 postings of ``worker`` in one repository to find 2,500
rows holding the phrase (2.7 s), and each row checked costs a heap read of its positions.

``builtin_fts.pairs`` holds a key for every two terms at adjacent positions of the episode
(``text_index.pair_key``: four bytes of an MD5, so this migration and the store's writes
compute the same keys), under a GIN index. The rows holding every pair of a phrase are a
small superset of the rows holding the phrase, found from the index, and only they are checked
on positions. Columns are one empty position apart, so no pair spans two.

A phrase whose tokens usually follow each other is still checked row by row, so the primary
key of ``builtin_postings`` now carries the positions too: a window of a term's postings,
positions included, is a range read of the index alone, in key order, where it was a heap read
per row (a term's rows are spread over the table, one per episode written). That needs the
table's pages marked all-visible, which PostgreSQL does when it vacuums; by default it vacuums
a table after inserts of a fifth of its size (19 million postings at 100,000 episodes), so the
newest postings, the ones every query reads, would wait for it for months: the table is
vacuumed every 100,000 postings instead (about a thousand episodes).

The keys are made here from the postings' positions (two bytes each, big-endian), joined
position to position within each episode, into a rebuilt ``builtin_fts`` (an UPDATE of every
row would leave a dead copy of each behind). At 100,000 episodes this takes about a minute.
"""

from __future__ import annotations

VERSION = 9
NAME = "phrase_pairs"

_T = 'text COLLATE "C"'
_KEY = "('x' || left(md5(a.lexeme || ' ' || b.lexeme), 8))::bit(32)::int4"

SQL = f"""
CREATE TEMPORARY TABLE phrase_pair_positions ON COMMIT DROP AS
SELECT p.erow, p.lexeme,
       (get_byte(p.positions, 2 * i) << 8) | get_byte(p.positions, 2 * i + 1) AS pos
FROM builtin_postings p
CROSS JOIN LATERAL generate_series(0, length(p.positions) / 2 - 1) i;
CREATE TABLE builtin_fts_v9 (
    erow bigint NOT NULL,
    episode_id {_T} NOT NULL,
    scope {_T} NOT NULL,
    doc_len integer NOT NULL,
    text_end integer NOT NULL,
    summary_end integer NOT NULL,
    started_at double precision NOT NULL,
    terms text[] COLLATE "C" NOT NULL,
    -- The keys of its adjacent term pairs (text_index.pair_key), ascending.
    pairs int4[] NOT NULL
);
INSERT INTO builtin_fts_v9
    (erow, episode_id, scope, doc_len, text_end, summary_end, started_at, terms, pairs)
SELECT f.erow, f.episode_id, f.scope, f.doc_len, f.text_end, f.summary_end, f.started_at,
       f.terms, coalesce(k.pairs, '{{}}')
FROM builtin_fts f
LEFT JOIN (
    SELECT a.erow, array_agg(DISTINCT {_KEY} ORDER BY {_KEY}) AS pairs
    FROM phrase_pair_positions a
    JOIN phrase_pair_positions b ON b.erow = a.erow AND b.pos = a.pos + 1
    GROUP BY a.erow
) k ON k.erow = f.erow;
DROP TABLE builtin_fts;
ALTER TABLE builtin_fts_v9 RENAME TO builtin_fts;
ALTER TABLE builtin_fts ADD CONSTRAINT builtin_fts_pkey PRIMARY KEY (erow);
ALTER TABLE builtin_fts ADD CONSTRAINT builtin_fts_episode_id_key UNIQUE (episode_id);
CREATE INDEX builtin_fts_scope ON builtin_fts (scope, erow);
CREATE INDEX builtin_fts_pairs ON builtin_fts USING gin (pairs);
ANALYZE builtin_fts;
ALTER TABLE builtin_postings DROP CONSTRAINT builtin_postings_pkey;
ALTER TABLE builtin_postings ADD CONSTRAINT builtin_postings_pkey PRIMARY KEY
    (lexeme, scope_id, erow) INCLUDE (n_main, n_context, doc_len, started_at, positions);
ALTER TABLE builtin_postings SET
    (autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 100000);
"""
