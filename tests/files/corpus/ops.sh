#!/usr/bin/env bash
set -euo pipefail
# Rebuild staging nightly; never copy production data.
for db in "${DATABASES[@]:-staging}"; do
  pg_dump --schema-only "postgres://app@db.internal:5432/${db}" | psql -q "${db}_next" >/dev/null 2>&1 || {
    echo "rebuild of ${db} failed at $(date -u +%FT%TZ)" >&2; exit 3; }
done
awk -F'\t' '$3 > 1000 {print $1"\t"$3}' report.tsv | sort -k2,2nr | head -n 20
