// CPU lists in the kernel's text form ("0-3,8,10-11", as in /sys/devices/system/cpu/online and
// Cpus_allowed_list): the way topology files and logs name sets of logical CPUs.
#pragma once

#include <string>
#include <vector>

namespace strata {

// Largest logical CPU number a list may name: bounds what a topology file can make us allocate.
constexpr int kMaxCpuIndex = 65535;

// Parses a CPU list into sorted, distinct CPU numbers. "" is the empty list. Rejects anything
// else the kernel would not print: spaces, signs, reversed or overlapping ranges, repeated CPUs,
// numbers above kMaxCpuIndex. On failure `err` says what was wrong.
bool ParseCpuList(const std::string& text, std::vector<int>* cpus, std::string* err);

// The canonical text of sorted, distinct CPU numbers, as the kernel prints it: runs become "a-b".
std::string FormatCpuList(const std::vector<int>& cpus);

// Set helpers over sorted, distinct lists.
bool CpuListContains(const std::vector<int>& outer, const std::vector<int>& inner);
bool CpuListsIntersect(const std::vector<int>& a, const std::vector<int>& b);
std::vector<int> CpuListUnion(const std::vector<int>& a, const std::vector<int>& b);

}  // namespace strata
