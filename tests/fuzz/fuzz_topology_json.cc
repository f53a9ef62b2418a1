// libFuzzer target: topology files (STRATA_TOPO_FILE) through the strict JSON reader and the schema
// checks behind it. A file that is accepted must write back to canonical text that parses to an equal
// graph and writes back to the same text; a refused one must say why.
#include <cstddef>
#include <cstdint>
#include <string>

#include "topology/json_reader.h"
#include "topology/topology_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  // The reader alone, with small limits so that the fuzzer also reaches every limit check.
  strata::JsonValue value;
  int line = 0;
  std::string err;
  strata::JsonLimits small;
  small.maxDepth = 4;
  small.maxStringBytes = 16;
  small.maxItems = 8;
  small.maxNumberChars = 12;
  if (!strata::ParseJson(text, &value, &line, &err, small) && (err.empty() || line < 1)) __builtin_trap();

  strata::TopologyGraph graph;
  err.clear();
  if (!strata::ParseTopologyJson(text, &graph, &err, "fuzz")) {
    if (err.empty()) __builtin_trap();
    return 0;
  }
  const std::string canonical = strata::TopologyToJson(graph);
  strata::TopologyGraph again;
  std::string err2;
  if (!strata::ParseTopologyJson(canonical, &again, &err2, "canonical")) __builtin_trap();
  if (!(again == graph)) __builtin_trap();
  if (strata::TopologyToJson(again) != canonical) __builtin_trap();
  return 0;
}
