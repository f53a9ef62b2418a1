#!/usr/bin/env bash
# perf/selector_pool.py: three jobs' tables of one shape pooled. Every forced algorithm's time at a size is its median
# over the jobs; each algorithm the selector ran is judged by its pooled time against the best pooled one. The
# expected figures below are worked by hand from the tables.
#   selector_pool_test.sh SOURCE_DIR
set -euo pipefail
pool="$1/perf/selector_pool.py"
fail() { echo "FAIL: $*" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# job N: the rows of 8 B and 32 KiB (rd and hier_leader forced; "-" for an algorithm that did not fit)
job() {
  cat <<TABLE
# selector_perf: 4 ranks, 3 communicators (the selector's and 2 forced), 5 rounds
| size | selector (us) | ran | best forced (us) | best | ratio | choice | ring (us) | ring / selector | rd | hier_leader | direct |
|---|---|---|---|---|---|---|---|---|---|---|---|
| 8 | 50.0 | rd | 50.0 | rd | 1.00 | 1.00 | - | - | $1 | $2 | - |
| 32768 | 200.0 | $3 | 150.0 | rd | 1.33 ** | $4 | - | - | $5 | $6 | 300.0 |
# sizes whose choice, forced, ran over 1.10x the best forced algorithm: 1 of 2
TABLE
}
# 32 KiB: rd 170, 160, 180 (median 170); hier_leader 101, 225, 150 (median 150): hier_leader is the best pooled, and
# rd, which one job ran, is 170 / 150 = 1.13 over it. Two jobs' own choice columns were over 1.10.
job 50.0 60.0 hier_leader 1.00 170.0 101.0 > "$dir/a.md"
job 52.0 58.0 hier_leader "1.41 **" 160.0 225.0 > "$dir/b.md"
job 54.0 70.0 rd "1.20 **" 180.0 150.0 > "$dir/c.md"
out=$(python3 "$pool" "$dir/a.md" "$dir/b.md" "$dir/c.md")
echo "$out" >&2
grep -qxF "| 8 B | rd | rd | 52.0 | 1.00 | 0 of 3 |" <<<"$out" || fail "8 B row"
grep -qxF "| 32 KiB | hier_leader x2, rd x1 | hier_leader | 150.0 | 1.00 (hier_leader), 1.13 ** (rd) | 2 of 3 |" <<<"$out" ||
  fail "32 KiB row"
grep -qxF "# sizes whose choice, by the pooled medians, ran over 1.10x the best: 1 of 2" <<<"$out" || fail "summary"
# The selector's time against the forced copy of what it ran: 8 B 50 against 50, 52, 54 (at most 1.08x); 32 KiB 200
# against hier_leader's 101 (1.98x) and 225 (1.125x) and rd's 180 (1.11x).
grep -qxF "# the same algorithm on two communicators (the selector's and its forced copy) over 1.10x apart: 3 of 6 rows" \
  <<<"$out" || fail "the same algorithm apart"
# Per job, the algorithm run forced against the job's best forced. The selector: a 0 (hier_leader 101 is a's best),
# b 1 (hier_leader 225 against rd's 160), c 1 (rd 180 against hier_leader's 150). The oracle runs the algorithm best
# by the other two jobs' medians: in a, rd at 8 B (53 against 64) and at 32 KiB (rd 170 against hier_leader 187.5 and
# direct 300), 170 / 101 over; in b, rd at 8 B and hier_leader at 32 KiB (125.5 against rd's 175), 225 / 160 over;
# in c, rd at 8 B and hier_leader at 32 KiB (163 against 165), c's best.
grep -qxF "# per job, sizes where the algorithm run, forced, was over 1.10x the job's best forced: the selector's choice \
0, 1, 1; an oracle's (in each job the algorithm best by the other jobs' pooled medians) 1, 1, 0" <<<"$out" ||
  fail "per job"
# (Output captured first: `grep -q` on a pipe can leave the script writing to a closed pipe, which pipefail counts.)
out=$(python3 "$pool" "$dir/a.md")
grep -q "^# per job" <<<"$out" && fail "per job with one job"
# A looser tolerance marks nothing, and leaves only the 1.98x apart.
out=$(python3 "$pool" --tolerance 1.15 "$dir/a.md" "$dir/b.md" "$dir/c.md")
grep -qxF "# sizes whose choice, by the pooled medians, ran over 1.15x the best: 0 of 2" <<<"$out" || fail "tolerance 1.15"
grep -qxF "# the same algorithm on two communicators (the selector's and its forced copy) over 1.15x apart: 1 of 6 rows" \
  <<<"$out" || fail "the same algorithm apart, tolerance 1.15"
# Times under the tables' resolution: rd 0.5 against 0.4 us is 1.25x on paper, within the 0.1 us the tables print,
# and not marked; 0.6 against 0.4 is.
tiny() {
  printf '| size | selector (us) | ran | best forced (us) | best | ratio | choice | ring (us) | ring / selector | rd | oneshot |\n'
  printf '|---|---|---|---|---|---|---|---|---|---|---|\n| 16 | 0.5 | rd | 0.4 | oneshot | 1.25 ** | 1.25 ** | - | - | %s | 0.4 |\n' "$1"
}
tiny 0.5 > "$dir/t1.md"
tiny 0.5 > "$dir/t2.md"
out=$(python3 "$pool" "$dir/t1.md" "$dir/t2.md")
grep -qxF "| 16 B | rd | oneshot | 0.40 | 1.25 | 2 of 2 |" <<<"$out" || fail "0.1 us"
tiny 0.6 > "$dir/t1.md"
tiny 0.6 > "$dir/t2.md"
out=$(python3 "$pool" "$dir/t1.md" "$dir/t2.md")
grep -qxF "| 16 B | rd | oneshot | 0.40 | 1.50 ** | 2 of 2 |" <<<"$out" || fail "0.2 us"
# The selector's 0.5 against its forced copy's 0.6: 1.2x on paper, within the tables' 0.1 us.
grep -qxF "# the same algorithm on two communicators (the selector's and its forced copy) over 1.10x apart: 0 of 2 rows" \
  <<<"$out" || fail "the same algorithm within 0.1 us"
# A file with no table: a message and exit status 1.
echo "no table here" > "$dir/none.md"
if python3 "$pool" "$dir/none.md" 2> "$dir/err"; then fail "a file with no table accepted"; fi
grep -q "no selector_perf table" "$dir/err" || fail "message: $(cat "$dir/err")"
echo "selector_pool: ok"
