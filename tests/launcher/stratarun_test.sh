#!/usr/bin/env bash
# Checks stratarun with real processes. Usage: stratarun_test.sh STRATARUN_PATH
# Rank scripts are single-quoted on purpose: the ranks expand them, not this shell.
# shellcheck disable=SC2016
set -euo pipefail

if [[ $# -ne 1 || ! -x $1 ]]; then
  echo "usage: $0 STRATARUN_PATH" >&2
  exit 2
fi
SR=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/stratarun_test.XXXXXX")
# Every rank of every case carries this variable, so leftovers can be found through /proc/*/environ
# whatever their name or parent.
MARK="STRATARUN_TEST_MARK=$$.$RANDOM"
passed=0
failed=0

# Pids of live processes that carry MARK (this shell and its helpers do not).
marked_processes() {
  grep -lsaF "$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true
}

cleanup() {
  local pids
  mapfile -t pids < <(marked_processes)
  if [[ ${#pids[@]} -gt 0 ]]; then kill -KILL "${pids[@]}" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

pass() {
  passed=$((passed + 1))
  echo "ok   $1"
}
fail() {
  failed=$((failed + 1))
  echo "FAIL $1: $2"
  [[ -s $WORK/err ]] && sed 's/^/     stderr: /' "$WORK/err" | head -n 10
  return 0
}

now_ms() { date +%s%3N; }

# run ARGS...: runs stratarun with MARK set, stdout to $WORK/out, stderr to $WORK/err, status in $rc.
run() {
  rc=0
  "$SR" -x "$MARK" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
}

expect_no_leftovers() {
  local name=$1 pids
  mapfile -t pids < <(marked_processes)
  if [[ ${#pids[@]} -gt 0 ]]; then
    fail "$name" "processes left alive: $(ps -o pid=,args= -p "$(IFS=,; echo "${pids[*]}")" | tr '\n' ';')"
    kill -KILL "${pids[@]}" 2>/dev/null || true
  else
    pass "$name"
  fi
}

ENV_PRINT='echo $STRATA_RANK $STRATA_NRANKS $STRATA_LOCAL_RANK $STRATA_LOCAL_SIZE $STRATA_HOSTID'

# --- environment per rank -----------------------------------------------------------------
export STRATA_HOSTID=inherited
run -n 4 sh -c "$ENV_PRINT"
expected=$'0 4 0 4 inherited\n1 4 1 4 inherited\n2 4 2 4 inherited\n3 4 3 4 inherited'
if [[ $rc -eq 0 && $(sort "$WORK/out") == "$expected" ]]; then pass "env -n 4"; else
  fail "env -n 4" "rc=$rc, got: $(tr '\n' '|' <"$WORK/out")"; fi

run -n 5 --nodes 2 sh -c "$ENV_PRINT"
expected=$'0 5 0 3 node0\n1 5 1 3 node0\n2 5 2 3 node0\n3 5 0 2 node1\n4 5 1 2 node1'
if [[ $rc -eq 0 && $(sort "$WORK/out") == "$expected" ]]; then pass "env -n 5 --nodes 2"; else
  fail "env -n 5 --nodes 2" "rc=$rc, got: $(tr '\n' '|' <"$WORK/out")"; fi
unset STRATA_HOSTID

# --- pinning --------------------------------------------------------------------------------
# Run on two CPUs (taskset), each rank prints the CPUs it may run on: one CPU each while there are enough,
# contiguous blocks with more ranks than CPUs (rank i on CPU i * 2 / N), all of them with --bind none.
cpus=()
IFS=, read -ra parts <<<"$(grep Cpus_allowed_list /proc/self/status | cut -f2)"
for part in "${parts[@]}"; do
  for ((c = ${part%-*}; c <= ${part#*-}; c++)); do cpus+=("$c"); done
done
if command -v taskset >/dev/null && [[ ${#cpus[@]} -ge 2 ]]; then
  first=${cpus[0]} second=${cpus[1]}
  both="$first,$second"
  [[ $second -eq $((first + 1)) ]] && both="$first-$second"
  AFFINITY_PRINT='echo $STRATA_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)'
  for spec in "2:0:0 1:1" "3:0:0 1:0 2:1" "4:0:0 1:0 2:1 3:1" "8:0:0 1:0 2:0 3:0 4:1 5:1 6:1 7:1"; do
    n=${spec%%:*}
    expected=$(echo "${spec#*:}" | tr ' ' '\n' | sed "s/:0\$/ $first/; s/:1\$/ $second/")
    rc=0
    taskset -c "$first,$second" "$SR" -x "$MARK" -n "$n" sh -c "$AFFINITY_PRINT" >"$WORK/out" 2>"$WORK/err" || rc=$?
    if [[ $rc -eq 0 && $(sort -n "$WORK/out") == "$expected" ]]; then pass "pinning -n $n on 2 CPUs"; else
      fail "pinning -n $n on 2 CPUs" "rc=$rc, got: $(tr '\n' '|' <"$WORK/out"), expected: $(echo "$expected" | tr '\n' '|')"; fi
  done
  rc=0
  taskset -c "$first,$second" "$SR" -x "$MARK" --bind none -n 4 sh -c "$AFFINITY_PRINT" >"$WORK/out" 2>"$WORK/err" || rc=$?
  if [[ $rc -eq 0 && $(cut -d' ' -f2 "$WORK/out" | sort -u) == "$both" ]]; then pass "--bind none"; else
    fail "--bind none" "rc=$rc, got: $(tr '\n' '|' <"$WORK/out")"; fi
else
  echo "skip pinning: needs taskset and 2 CPUs"
fi

# Same secret and address for all ranks; -x VAR=VALUE sets, -x VAR passes through.
export STRATARUN_TEST_PASSED=through
run -n 3 -x FOO=bar=baz -x STRATARUN_TEST_PASSED sh -c \
  'echo "$STRATA_SECRET $STRATA_ROOT_ADDR $FOO $STRATARUN_TEST_PASSED"'
unset STRATARUN_TEST_PASSED
if [[ $rc -eq 0 && $(sort -u "$WORK/out" | wc -l) -eq 1 ]] &&
  grep -qE '^[0-9a-f]{32} 127\.0\.0\.1:[0-9]+ bar=baz through$' "$WORK/out"; then
  pass "secret, root address and -x"
else
  fail "secret, root address and -x" "rc=$rc, got: $(tr '\n' '|' <"$WORK/out")"
fi

# --- the listening socket handed to rank 0 --------------------------------------------------
# Rank 0 prints what its STRATA_ROOT_FD is and waits for rank 1, which lists its own sockets and connects to
# STRATA_ROOT_ADDR; the kernel completes the connection from the backlog although nobody accepts it.
run -n 3 -x "DONE=$WORK/connected" bash -c '
  if [[ $STRATA_RANK == 0 ]]; then
    echo "0 $(readlink /proc/$$/fd/$STRATA_ROOT_FD)"
    for _ in $(seq 100); do [[ -e $DONE ]] && break; sleep 0.05; done
  else
    echo "$STRATA_RANK fd=${STRATA_ROOT_FD-unset} sockets=$(ls -l /proc/$$/fd | grep -o "socket:\[[0-9]*\]" | tr "\n" ,)"
    if [[ $STRATA_RANK == 1 ]]; then
      if exec 3<>"/dev/tcp/${STRATA_ROOT_ADDR%:*}/${STRATA_ROOT_ADDR##*:}"; then echo "1 connected"; fi
      touch "$DONE"
    fi
  fi'
root_socket=$(sed -n 's/^0 \(socket:\[[0-9]*\]\)$/\1/p' "$WORK/out")
if [[ $rc -eq 0 && -n $root_socket ]]; then pass "STRATA_ROOT_FD is a socket on rank 0"; else
  fail "STRATA_ROOT_FD is a socket on rank 0" "rc=$rc, got: $(tr '\n' '|' <"$WORK/out")"; fi
if [[ $(grep -c '^[12] fd=unset sockets=' "$WORK/out") -eq 2 ]] && ! grep -qF "$root_socket" <(grep -v '^0 ' "$WORK/out"); then
  pass "other ranks neither see STRATA_ROOT_FD nor inherit the socket"
else
  fail "other ranks neither see STRATA_ROOT_FD nor inherit the socket" "got: $(tr '\n' '|' <"$WORK/out")"
fi
if grep -qx '1 connected' "$WORK/out"; then pass "STRATA_ROOT_ADDR is listening"; else
  fail "STRATA_ROOT_ADDR is listening" "got: $(tr '\n' '|' <"$WORK/out")"; fi

# --- --tag-output ---------------------------------------------------------------------------
run -n 2 --tag-output sh -c 'echo "a$STRATA_RANK"; echo "e$STRATA_RANK" >&2; printf "b$STRATA_RANK\nno newline"'
expected_out=$'[0] a0\n[0] b0\n[0] no newline\n[1] a1\n[1] b1\n[1] no newline'
if [[ $rc -eq 0 && $(sort "$WORK/out") == "$expected_out" && $(sort "$WORK/err") == $'[0] e0\n[1] e1' ]]; then
  pass "--tag-output"
else
  fail "--tag-output" "rc=$rc, stdout: $(tr '\n' '|' <"$WORK/out") stderr: $(tr '\n' '|' <"$WORK/err")"
fi

# --- failures -------------------------------------------------------------------------------
start=$(now_ms)
run -n 4 sh -c 'if [ $STRATA_RANK = 1 ]; then exit 3; fi; sleep 30'
elapsed=$(($(now_ms) - start))
if [[ $rc -eq 3 && $elapsed -lt 5000 ]] && grep -q 'rank 1 (pid [0-9]*) exited with status 3' "$WORK/err"; then
  pass "failing rank: exit 3 in ${elapsed} ms"
else
  fail "failing rank" "rc=$rc after ${elapsed} ms"
fi
expect_no_leftovers "failing rank leaves no process"

# The shell forks sleep and dies on SIGTERM, so sleep is orphaned and must be found and stopped without
# waiting for the SIGKILL grace period. Rank 2 fails once the others have started their sleep.
start=$(now_ms)
run -n 3 -x "READY=$WORK/orphans" sh -c '
  if [ $STRATA_RANK = 2 ]; then
    for i in $(seq 100); do [ -e "$READY.0" ] && [ -e "$READY.1" ] && break; sleep 0.05; done
    exit 5
  fi
  sleep 30 & touch "$READY.$STRATA_RANK"; wait'
elapsed=$(($(now_ms) - start))
if [[ $rc -eq 5 && $elapsed -lt 2500 ]]; then pass "failing rank with orphaned children: exit 5"; else
  fail "failing rank with orphaned children" "rc=$rc after ${elapsed} ms"; fi
expect_no_leftovers "orphans of stopped ranks are killed"

run -n 3 sh -c 'if [ $STRATA_RANK = 2 ]; then kill -KILL $$; fi; sleep 30'
if [[ $rc -eq 137 ]] && grep -q 'rank 2 (pid [0-9]*) killed by signal 9' "$WORK/err"; then
  pass "rank killed by signal: exit 137"
else
  fail "rank killed by signal" "rc=$rc"
fi
expect_no_leftovers "signalled rank leaves no process"

# A rank that ignores SIGTERM is SIGKILLed after the grace period.
start=$(now_ms)
run -n 2 -x "READY=$WORK/trapped" sh -c '
  if [ $STRATA_RANK = 0 ]; then
    for i in $(seq 100); do [ -e "$READY" ] && break; sleep 0.05; done
    exit 4
  fi
  trap "" TERM; touch "$READY"; while :; do sleep 0.1; done'
elapsed=$(($(now_ms) - start))
if [[ $rc -eq 4 && $elapsed -ge 2900 && $elapsed -lt 6000 ]] && grep -q 'sending SIGKILL' "$WORK/err"; then
  pass "SIGKILL after grace: ${elapsed} ms"
else
  fail "SIGKILL after grace" "rc=$rc after ${elapsed} ms"
fi
expect_no_leftovers "SIGTERM-ignoring rank leaves no process"

# All ranks succeed but leave a background process behind: it is stopped, the exit stays 0.
run -n 2 sh -c 'sleep 30 & exit 0'
if [[ $rc -eq 0 ]]; then pass "leftover background process, exit 0"; else fail "leftover background process" "rc=$rc"; fi
expect_no_leftovers "leftover background process is killed"

start=$(now_ms)
run -n 2 --timeout 1 sh -c 'sleep 30'
elapsed=$(($(now_ms) - start))
if [[ $rc -eq 124 && $elapsed -lt 3000 ]] && grep -q 'timeout' "$WORK/err"; then pass "--timeout: exit 124"; else
  fail "--timeout" "rc=$rc after ${elapsed} ms"; fi
expect_no_leftovers "--timeout leaves no process"

run -n 2 /nonexistent/program
if [[ $rc -eq 127 ]] && grep -q 'cannot execute /nonexistent/program: No such file or directory' "$WORK/err"; then
  pass "unexecutable program: exit 127"
else
  fail "unexecutable program" "rc=$rc"
fi

# --- signals to stratarun -------------------------------------------------------------------
rm -f "$WORK"/ready.*
"$SR" -x "$MARK" -x "READY=$WORK/ready" -n 3 sh -c 'touch "$READY.$STRATA_RANK"; sleep 30' >"$WORK/out" 2>"$WORK/err" &
sr_pid=$!
for _ in $(seq 100); do
  [[ $(find "$WORK" -name 'ready.*' | wc -l) -eq 3 ]] && break
  sleep 0.05
done
start=$(now_ms)
kill -TERM "$sr_pid"
rc=0
wait "$sr_pid" || rc=$?
elapsed=$(($(now_ms) - start))
if [[ $rc -eq 143 && $elapsed -lt 5000 ]] && grep -q 'received signal 15' "$WORK/err"; then
  pass "SIGTERM to stratarun: exit 143 in ${elapsed} ms"
else
  fail "SIGTERM to stratarun" "rc=$rc after ${elapsed} ms"
fi
expect_no_leftovers "SIGTERM to stratarun leaves no process"

# --- usage ----------------------------------------------------------------------------------
check_usage() {
  local name=$1
  shift
  run "$@"
  if [[ $rc -eq 2 ]] && grep -q '^stratarun: ' "$WORK/err" && grep -q '^usage: stratarun' "$WORK/err"; then
    pass "bad usage: $name"
  else
    fail "bad usage: $name" "rc=$rc"
  fi
}
check_usage "missing -n" true
check_usage "-n 0" -n 0 true
check_usage "-n 4097" -n 4097 true
check_usage "-n abc" -n abc true
check_usage "--nodes 0" -n 2 --nodes 0 true
check_usage "--nodes above -n" -n 2 --nodes 3 true
check_usage "no program" -n 2
check_usage "unknown option" -n 2 --frobnicate true
check_usage "bad --timeout" -n 2 --timeout -1 true

run --help
if [[ $rc -eq 0 ]] && grep -q '^usage: stratarun' "$WORK/out"; then pass "--help"; else fail "--help" "rc=$rc"; fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
