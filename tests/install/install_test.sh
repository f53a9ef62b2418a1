#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds and runs a consumer through the CMake
# package and through pkg-config.
#   install_test.sh BUILD_DIR SOURCE_DIR [SANITIZERS]
# SANITIZERS (e.g. address,undefined) builds the consumer with the same -fsanitize as the library.
set -euo pipefail
build=$1 src=$2 san=${3:-}
flags=()
[[ -z $san ]] || flags=("-fsanitize=$san")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_C_FLAGS="${flags[*]}" -DCMAKE_EXE_LINKER_FLAGS="${flags[*]}" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc "${flags[@]}" "$src/tests/install/consumer/consumer.c" $(pkg-config --cflags --libs strata) -Wl,-rpath,"$tmp/prefix/lib" \
  -o "$tmp/consumer_pc"
"$tmp/consumer_pc"
test -x "$tmp/prefix/bin/stratarun" && test -x "$tmp/prefix/bin/all_reduce_perf" && test -x "$tmp/prefix/bin/strata-info"
echo "install ok"
