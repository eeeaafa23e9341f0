"""Migration 7: a posting per (term, scope, episode), read newest first (issue 20, recall p95).

The text channel scores at most the 4,000 newest episodes in scope that hold a query term. A
GIN index over ``builtin_fts.tsv`` finds every matching row but cannot hand them over newest
first, so PostgreSQL collected all of them (half the store for a common word), sorted them,
and unnested each candidate's ``tsvector`` for its counts: the time grew with the store
(recall p95 472 ms at 100,000 episodes, against 27.5 on SQLite).

``builtin_postings`` holds, per term of each indexed episode, what BM25 needs: the term's
stored positions in the text and summary and in the context (counted as the ``tsvector``
holds them), the document's length and its start (the tie-break). Its primary key is ordered
(term, scope, row), and carries the counts, so the newest postings of one term in one scope
are an index-only range read, whatever the store's size. A scope is a number of
``builtin_scopes`` there (a posting is a few dozen bytes; the scope's name would double
it). ``builtin_fts`` stays: phrases of several tokens still need positions.

The postings of every episode indexed before are built here from its ``tsvector``.
"""

from __future__ import annotations

VERSION = 7
NAME = "postings"

_T = 'text COLLATE "C"'

SQL = f"""
CREATE TABLE builtin_scopes (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope {_T} NOT NULL UNIQUE
);
CREATE TABLE builtin_postings (
    erow bigint NOT NULL,
    started_at double precision NOT NULL,
    scope_id integer NOT NULL,
    doc_len integer NOT NULL,
    -- Stored positions of the term (at most 256): in the text or summary, in the context.
    n_main smallint NOT NULL,
    n_context smallint NOT NULL,
    lexeme {_T} NOT NULL,
    PRIMARY KEY (lexeme, scope_id, erow) INCLUDE (n_main, n_context, doc_len, started_at)
);
INSERT INTO builtin_scopes (scope) SELECT DISTINCT scope FROM builtin_fts ORDER BY scope;
INSERT INTO builtin_postings (erow, started_at, scope_id, doc_len, n_main, n_context, lexeme)
SELECT f.erow, f.started_at, s.id, f.doc_len,
       count(*) FILTER (WHERE p.position <= f.summary_end),
       count(*) FILTER (WHERE p.position > f.summary_end),
       u.lexeme
FROM builtin_fts f
JOIN builtin_scopes s ON s.scope = f.scope
CROSS JOIN LATERAL unnest(f.tsv) u
CROSS JOIN LATERAL unnest(u.positions) p(position)
GROUP BY u.lexeme, s.id, f.erow, f.doc_len, f.started_at;
"""
