// A small, strict JSON reader (RFC 8259) for topology files: a pure function from text to a tree
// of values that remember their line, with every length bounded, so that a hostile or broken file
// yields an error message and never a crash or an unbounded allocation. Written to be fuzzed.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace strata {

struct JsonValue {
  enum class Type { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  int line = 0;  // 1-based line where the value starts
  bool boolean = false;
  double number = 0;
  bool integral = false;  // the literal had no fraction or exponent
  std::string str;
  std::vector<JsonValue> items;                            // Array
  std::vector<std::pair<std::string, JsonValue>> members;  // Object, in file order, keys distinct

  const JsonValue* find(const std::string& key) const;
};
const char* JsonTypeName(JsonValue::Type type);  // "an object", "a string", ...

struct JsonLimits {
  size_t maxBytes = 4 << 20;     // whole text
  int maxDepth = 16;             // nested arrays and objects
  size_t maxStringBytes = 4096;  // one string or key, after unescaping
  size_t maxItems = 65536;       // elements of one array or members of one object
  size_t maxNumberChars = 64;    // one number literal
};

// Parses one JSON value followed only by whitespace. On failure returns false with `*errLine` (1-based)
// and `*err` (what was wrong, without a location) set, and leaves `out` unspecified.
bool ParseJson(const std::string& text, JsonValue* out, int* errLine, std::string* err,
               const JsonLimits& limits = JsonLimits());

// Writes `s` as a JSON string literal (quotes included), escaping what JSON requires.
std::string JsonQuote(const std::string& s);
// The shortest text that reads back as exactly `x` (finite values only).
std::string JsonNumber(double x);

}  // namespace strata
