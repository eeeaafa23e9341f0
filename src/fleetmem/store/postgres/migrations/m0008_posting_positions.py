"""Migration 8: each posting keeps its term's positions; the ``tsvector`` goes (issue 20).

After migration 7 a phrase of several tokens was still checked on ``builtin_fts.tsv``: the
newest rows holding all its tokens came from the postings, then each row's whole
``tsvector`` (about 2.5 KB, stored out of line) was read for the positions of two or three
terms. Phrase questions were the slow tail of recall (p95 146-156 ms on the 100,000-episode
bench schema, against 15 ms for one-word questions).

Each posting now carries its term's stored positions, two bytes each, big-endian
(``int2send``'s bytes, which is how the store's writes pack them too:
``text_index.pack_positions``): a phrase is checked on a few bytes per token. The
positions stay out of the primary key's INCLUDE list, so a one-token query still reads the
index alone. Nothing reads the ``tsvector`` any more, so it and its GIN index are dropped;
``builtin_fts.terms`` lists each episode's terms, to find its postings when it is indexed
again or removed (its columns come from its positions and ``text_end`` / ``summary_end``).

Both tables are rebuilt from the ``tsvector``s rather than altered in place: an UPDATE of
every posting would leave a dead copy of each, and a dropped column's out-of-line values
stay on disk until the table is rewritten. At 100,000 episodes this takes minutes, once,
under the migration lock.
"""

from __future__ import annotations

VERSION = 8
NAME = "posting_positions"

_T = 'text COLLATE "C"'

SQL = f"""
CREATE TABLE builtin_postings_v8 (
    erow bigint NOT NULL,
    started_at double precision NOT NULL,
    scope_id integer NOT NULL,
    doc_len integer NOT NULL,
    -- Stored positions of the term (at most 256): in the text or summary, in the context.
    n_main smallint NOT NULL,
    n_context smallint NOT NULL,
    lexeme {_T} NOT NULL,
    -- Those positions, ascending, two bytes each (big-endian).
    positions bytea NOT NULL
);
INSERT INTO builtin_postings_v8
    (erow, started_at, scope_id, doc_len, n_main, n_context, lexeme, positions)
SELECT f.erow, f.started_at, s.id, f.doc_len,
       (SELECT count(*) FROM unnest(u.positions) p WHERE p <= f.summary_end),
       (SELECT count(*) FROM unnest(u.positions) p WHERE p > f.summary_end),
       u.lexeme,
       (SELECT string_agg(int2send(p), ''::bytea ORDER BY p) FROM unnest(u.positions) p)
FROM builtin_fts f
JOIN builtin_scopes s ON s.scope = f.scope
CROSS JOIN LATERAL unnest(f.tsv) u;
DROP TABLE builtin_postings;
ALTER TABLE builtin_postings_v8 RENAME TO builtin_postings;
ALTER TABLE builtin_postings ADD CONSTRAINT builtin_postings_pkey
    PRIMARY KEY (lexeme, scope_id, erow) INCLUDE (n_main, n_context, doc_len, started_at);

CREATE TABLE builtin_fts_v8 (
    erow bigint NOT NULL,
    episode_id {_T} NOT NULL,
    scope {_T} NOT NULL,
    doc_len integer NOT NULL,
    -- The last position of the text and of the summary: the column of any position.
    text_end integer NOT NULL,
    summary_end integer NOT NULL,
    started_at double precision NOT NULL,
    -- The episode's terms: where its postings are.
    terms text[] COLLATE "C" NOT NULL
);
INSERT INTO builtin_fts_v8
    (erow, episode_id, scope, doc_len, text_end, summary_end, started_at, terms)
SELECT erow, episode_id, scope, doc_len, text_end, summary_end, started_at,
       tsvector_to_array(tsv)
FROM builtin_fts;
DROP TABLE builtin_fts;
ALTER TABLE builtin_fts_v8 RENAME TO builtin_fts;
ALTER TABLE builtin_fts ADD CONSTRAINT builtin_fts_pkey PRIMARY KEY (erow);
ALTER TABLE builtin_fts ADD CONSTRAINT builtin_fts_episode_id_key UNIQUE (episode_id);
CREATE INDEX builtin_fts_scope ON builtin_fts (scope, erow);
-- New tables have no statistics until autovacuum gets to them: plan the first queries well.
ANALYZE builtin_postings;
ANALYZE builtin_fts;
"""
