# Sourced by the benchmark batch scripts (selector_tables.sh, selector_confirm.sh, quant_compare.sh) after
# they cd to the repository root and take OUTDIR from "$1":
#   out     OUTDIR (created)
#   bin     BIN, default build/bin: where the tools are (point it and LD_LIBRARY_PATH at a copy of the build)
#   quiet   QUIET, default quietrun when it exists; QUIET= (empty) runs commands bare, e.g. inside one quietrun
#   netns   NETNS, default ../shared/bench/netns.sh (another copy where ../shared is not beside the checkout)
#   MPI_ALLREDUCE_PERF  a prebuilt ../shared/bench/mpi_allreduce_perf for ompi_setup (below)
# and the functions check, net_up and ompi_setup (below).
out=$1
bin=${BIN:-build/bin}
quiet=${QUIET-$(command -v quietrun || true)}
netns=${NETNS:-../shared/bench/netns.sh}
mkdir -p "$out"

check() {  # check NAME ARGS...: selector_check.py, its table in OUTDIR/NAME.md, raw times in NAME.json
  local name=$1
  shift
  echo "== $name $(date +%T)"
  $quiet python3 perf/selector_check.py --bin "$bin" --raw "$out/$name.json" "$@" > "$out/$name.md" \
    2> "$out/$name.log" || true  # exit 1 only means a marked size
  cat "$out/$name.md"
}

net_up() {  # net_up HOSTSxRANKS RATE: 2 hosts joined directly, more on a bridge
  local hosts=${1%x*}
  if [[ $hosts == 2 ]]; then bash "$netns" up 2 --direct --rate "$2"; else bash "$netns" up "$hosts" --rate "$2"; fi
}

ompi_setup() {  # sets mpi_tool, ../shared/bench's MPI_Allreduce tool (built here, or MPI_ALLREDUCE_PERF: one built
  # before, where ../shared is not beside the checkout, e.g. a lent machine), and mpirun (2 ranks over shared memory)
  mpi_tool=${MPI_ALLREDUCE_PERF:-}
  if [[ -z $mpi_tool ]]; then
    mkdir -p /tmp/strata-bench
    mpi_tool=/tmp/strata-bench/mpi_allreduce_perf
    mpicc -O2 -o "$mpi_tool" ../shared/bench/mpi_allreduce_perf.c
  fi
  mpirun=(mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca oob_tcp_if_include lo
          --mca btl_tcp_if_include lo -np 2)
}
