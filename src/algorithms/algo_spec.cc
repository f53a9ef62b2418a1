#include "algorithms/algo_spec.h"

#include <cctype>
#include <vector>

namespace strata {

namespace {

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

// The token as it can be shown in a message: printable ASCII, the rest as \xNN, at most 40 characters.
std::string Shown(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size() && out.size() < 40; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (isprint(c)) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (s.size() > 40) out += "...";
  return out;
}

Status ParseName(const std::string& token, AlgoId* id) {
  const std::string name = Lower(Trim(token));
  STRATA_REQUIRE(!name.empty(), strataInvalidArgument, "STRATA_ALGO: an algorithm name is missing");
  STRATA_REQUIRE(AlgoByName(name, id), strataInvalidArgument, "STRATA_ALGO: unknown algorithm '%s' (known: %s)",
                 Shown(name).c_str(), AlgoNamesText().c_str());
  STRATA_REQUIRE(GetAlgoInfo(*id).implemented, strataInvalidArgument,
                 "STRATA_ALGO: algorithm '%s' is not implemented yet and cannot be forced", name.c_str());
  return Status::Ok();
}

}  // namespace

bool ForcedAlgos::any() const {
  for (int8_t a : algo)
    if (a >= 0) return true;
  return false;
}

std::string ForcedAlgos::toString() const {
  std::string out;
  for (int k = 0; k < kNumCollKinds; ++k) {
    if (algo[k] < 0) continue;
    if (!out.empty()) out += ';';
    out += CollKindKey(static_cast<CollKind>(k));
    out += ':';
    out += GetAlgoInfo(static_cast<AlgoId>(algo[k])).name;
  }
  return out;
}

Status ParseAlgoSpec(const std::string& text, ForcedAlgos* out) {
  ForcedAlgos result;
  if (Trim(text).empty()) {
    *out = result;
    return Status::Ok();
  }
  std::vector<std::string> entries;
  size_t start = 0;
  for (;;) {
    const size_t semi = text.find(';', start);
    entries.push_back(text.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  bool explicitSet[kNumCollKinds] = {};
  int bare = -1;
  for (size_t e = 0; e < entries.size(); ++e) {
    const std::string entry = Trim(entries[e]);
    STRATA_REQUIRE(!entry.empty(), strataInvalidArgument, "STRATA_ALGO: entry %zu of '%s' is empty", e + 1,
                   Shown(text).c_str());
    const size_t colon = entry.find(':');
    AlgoId id;
    if (colon == std::string::npos) {
      STRATA_CHECK(ParseName(entry, &id));
      STRATA_REQUIRE(bare < 0, strataInvalidArgument,
                     "STRATA_ALGO: two bare algorithm names ('%s' and '%s'); name the collective of one of them",
                     GetAlgoInfo(static_cast<AlgoId>(bare)).name, GetAlgoInfo(id).name);
      bare = static_cast<int>(id);
      continue;
    }
    STRATA_REQUIRE(entry.find(':', colon + 1) == std::string::npos, strataInvalidArgument,
                   "STRATA_ALGO: entry '%s' has more than one ':'", Shown(entry).c_str());
    const std::string key = Lower(Trim(entry.substr(0, colon)));
    CollKind kind;
    STRATA_REQUIRE(CollKindByKey(key, &kind), strataInvalidArgument,
                   "STRATA_ALGO: unknown collective '%s' (known: allreduce, broadcast, reduce, allgather, "
                   "reducescatter, alltoall)",
                   Shown(key).c_str());
    STRATA_CHECK(ParseName(entry.substr(colon + 1), &id));
    STRATA_REQUIRE(AlgoServes(id, kind), strataInvalidArgument,
                   "STRATA_ALGO: algorithm '%s' does not serve %s (it serves %s)", GetAlgoInfo(id).name,
                   CollKindKey(kind), AlgoCollectivesText(id).c_str());
    const int k = static_cast<int>(kind);
    STRATA_REQUIRE(!explicitSet[k], strataInvalidArgument, "STRATA_ALGO: %s is named twice", CollKindKey(kind));
    explicitSet[k] = true;
    result.algo[k] = static_cast<int8_t>(id);
  }
  if (bare >= 0) {
    for (int k = 0; k < kNumCollKinds; ++k)
      if (!explicitSet[k] && AlgoServes(static_cast<AlgoId>(bare), static_cast<CollKind>(k)))
        result.algo[k] = static_cast<int8_t>(bare);
  }
  *out = result;
  return Status::Ok();
}

}  // namespace strata
