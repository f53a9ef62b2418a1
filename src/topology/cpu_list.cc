#include "topology/cpu_list.h"

#include <algorithm>
#include <iterator>

namespace strata {

namespace {
// Reads a decimal number at text[*pos]; false if there is none or it exceeds kMaxCpuIndex.
bool ReadCpu(const std::string& text, size_t* pos, int* out) {
  size_t i = *pos;
  long v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    v = v * 10 + (text[i] - '0');
    if (v > kMaxCpuIndex) return false;
    ++i;
  }
  if (i == *pos || i - *pos > 5) return false;
  *pos = i;
  *out = static_cast<int>(v);
  return true;
}
}  // namespace

bool ParseCpuList(const std::string& text, std::vector<int>* cpus, std::string* err) {
  cpus->clear();
  if (text.empty()) return true;
  size_t pos = 0;
  while (true) {
    int lo = 0, hi = 0;
    if (!ReadCpu(text, &pos, &lo)) {
      *err = "CPU list \"" + text + "\": expected a CPU number (0-" + std::to_string(kMaxCpuIndex) + ") at offset " +
             std::to_string(pos);
      return false;
    }
    hi = lo;
    if (pos < text.size() && text[pos] == '-') {
      ++pos;
      if (!ReadCpu(text, &pos, &hi) || hi < lo) {
        *err = "CPU list \"" + text + "\": bad range ending at offset " + std::to_string(pos);
        return false;
      }
    }
    for (int c = lo; c <= hi; ++c) cpus->push_back(c);
    if (pos == text.size()) break;
    if (text[pos] != ',') {
      *err =
          "CPU list \"" + text + "\": unexpected '" + std::string(1, text[pos]) + "' at offset " + std::to_string(pos);
      return false;
    }
    ++pos;
  }
  std::vector<int> sorted = *cpus;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    *err = "CPU list \"" + text + "\" names a CPU twice";
    return false;
  }
  *cpus = std::move(sorted);
  return true;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

bool CpuListContains(const std::vector<int>& outer, const std::vector<int>& inner) {
  return std::includes(outer.begin(), outer.end(), inner.begin(), inner.end());
}

bool CpuListsIntersect(const std::vector<int>& a, const std::vector<int>& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) return true;
    if (a[i] < b[j])
      ++i;
    else
      ++j;
  }
  return false;
}

std::vector<int> CpuListUnion(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace strata
