// Topology files: the JSON form of a TopologyGraph (docs/TOPOLOGY.md describes every field).
// `STRATA_TOPO_FILE` loads one instead of detecting; `strata-info --topo` writes one.
#pragma once

#include <string>

#include "topology/topology_graph.h"

namespace strata {

// The format version this build reads and writes ("strata_topology": 1).
constexpr int kTopologyFormatVersion = 1;

// Parses and checks a topology. Pure: no files, no environment. On failure returns false and sets
// `err` to "NAME:LINE: what was wrong", NAME being `sourceName`; `out` is then left unchanged.
bool ParseTopologyJson(const std::string& text, TopologyGraph* out, std::string* err,
                       const std::string& sourceName = "<topology>");

// The canonical JSON text of a graph: parsing it gives back an equal graph, and writing that graph
// gives back the same text.
std::string TopologyToJson(const TopologyGraph& graph);

// Reads `path` (at most 4 MiB) and parses it; errors name the path.
bool LoadTopologyFile(const std::string& path, TopologyGraph* out, std::string* err);

// Field-by-field equality (the round-trip tests use it).
bool operator==(const TopologyGraph& a, const TopologyGraph& b);

}  // namespace strata
