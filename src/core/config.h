// The config registry: every knob declared once (name, type, default, description), read from the
// environment here and nowhere else, and listed by strata-info.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

enum class KnobType { Int, Bool, String, Bytes };

struct KnobInfo {
  const char* name;
  KnobType type;
  const char* defaultValue;  // as text, the way a user would set it
  const char* description;
};

// Every declared knob, in documentation order.
const std::vector<KnobInfo>& AllKnobs();

// The knob's value: the environment's when set, else its default. Unknown names abort in debug
// builds: a knob must be declared before it is read.
std::string ConfigString(const char* name);
int64_t ConfigInt(const char* name);
bool ConfigBool(const char* name);
// Accepts plain numbers and K/M/G suffixes (powers of two).
uint64_t ConfigBytes(const char* name);
// True when the environment sets the knob.
bool ConfigIsSet(const char* name);

// Launcher variables that are not strata's own (RANK, OMPI_COMM_WORLD_RANK, ...): read through here
// too, so that this file is the only one that calls getenv. Returns "" when unset.
std::string LauncherEnv(const char* name);

// Parses "123", "64K", "1M", "2G"; false on anything else.
bool ParseBytes(const std::string& text, uint64_t* out);

}  // namespace strata
