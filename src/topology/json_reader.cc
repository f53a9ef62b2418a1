#include "topology/json_reader.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace strata {

const JsonValue* JsonValue::find(const std::string& key) const {
  for (const auto& m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

const char* JsonTypeName(JsonValue::Type type) {
  switch (type) {
    case JsonValue::Type::Null:
      return "null";
    case JsonValue::Type::Bool:
      return "a boolean";
    case JsonValue::Type::Number:
      return "a number";
    case JsonValue::Type::String:
      return "a string";
    case JsonValue::Type::Array:
      return "an array";
    case JsonValue::Type::Object:
      return "an object";
  }
  return "?";
}

namespace {

std::string Describe(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  snprintf(buf, sizeof(buf), "byte 0x%02x", u);
  return buf;
}

class Parser {
 public:
  Parser(const std::string& text, const JsonLimits& limits) : s_(text), lim_(limits) {}

  bool parseDocument(JsonValue* out) {
    if (s_.size() > lim_.maxBytes)
      return fail("the text is " + std::to_string(s_.size()) + " bytes; at most " + std::to_string(lim_.maxBytes) +
                  " are read");
    skipSpace();
    if (!parseValue(out, 0)) return false;
    skipSpace();
    if (pos_ != s_.size()) return fail("unexpected " + Describe(s_[pos_]) + " after the end of the document");
    return true;
  }

  int line() const { return line_; }
  const std::string& error() const { return err_; }

 private:
  bool fail(const std::string& what) {
    if (err_.empty()) err_ = what;
    return false;
  }

  bool atEnd() const { return pos_ >= s_.size(); }

  void skipSpace() {
    while (!atEnd()) {
      const char c = s_[pos_];
      if (c == '\n')
        ++line_;
      else if (c != ' ' && c != '\t' && c != '\r')
        break;
      ++pos_;
    }
  }

  bool expectLiteral(const char* word) {
    for (const char* p = word; *p; ++p, ++pos_)
      if (atEnd() || s_[pos_] != *p) return fail(std::string("expected '") + word + "'");
    return true;
  }

  bool parseValue(JsonValue* out, int depth) {
    if (atEnd()) return fail("unexpected end of text: expected a value");
    out->line = line_;
    const char c = s_[pos_];
    switch (c) {
      case '{':
        return parseObject(out, depth);
      case '[':
        return parseArray(out, depth);
      case '"':
        out->type = JsonValue::Type::String;
        return parseString(&out->str);
      case 't':
        out->type = JsonValue::Type::Bool;
        out->boolean = true;
        return expectLiteral("true");
      case 'f':
        out->type = JsonValue::Type::Bool;
        out->boolean = false;
        return expectLiteral("false");
      case 'n':
        out->type = JsonValue::Type::Null;
        return expectLiteral("null");
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return parseNumber(out);
        return fail("unexpected " + Describe(c) + ": expected a value");
    }
  }

  bool parseObject(JsonValue* out, int depth) {
    if (depth >= lim_.maxDepth) return fail("nested deeper than " + std::to_string(lim_.maxDepth) + " levels");
    out->type = JsonValue::Type::Object;
    ++pos_;  // '{'
    skipSpace();
    if (!atEnd() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      skipSpace();
      if (atEnd() || s_[pos_] != '"')
        return fail(atEnd() ? "unexpected end of text: expected a key"
                            : "expected a key in double quotes, found " + Describe(s_[pos_]));
      std::string key;
      if (!parseString(&key)) return false;
      if (out->find(key)) return fail("key \"" + key + "\" appears twice in one object");
      skipSpace();
      if (atEnd() || s_[pos_] != ':') return fail("expected ':' after key \"" + key + "\"");
      ++pos_;
      skipSpace();
      if (out->members.size() >= lim_.maxItems)
        return fail("an object has more than " + std::to_string(lim_.maxItems) + " members");
      out->members.emplace_back(std::move(key), JsonValue());
      if (!parseValue(&out->members.back().second, depth + 1)) return false;
      skipSpace();
      if (atEnd()) return fail("unexpected end of text: expected ',' or '}'");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or '}' after a member, found " + Describe(s_[pos_]));
    }
  }

  bool parseArray(JsonValue* out, int depth) {
    if (depth >= lim_.maxDepth) return fail("nested deeper than " + std::to_string(lim_.maxDepth) + " levels");
    out->type = JsonValue::Type::Array;
    ++pos_;  // '['
    skipSpace();
    if (!atEnd() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      skipSpace();
      if (out->items.size() >= lim_.maxItems)
        return fail("an array has more than " + std::to_string(lim_.maxItems) + " elements");
      out->items.emplace_back();
      if (!parseValue(&out->items.back(), depth + 1)) return false;
      skipSpace();
      if (atEnd()) return fail("unexpected end of text: expected ',' or ']'");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or ']' after an element, found " + Describe(s_[pos_]));
    }
  }

  bool parseNumber(JsonValue* out) {
    const size_t start = pos_;
    auto digits = [this] {
      const size_t from = pos_;
      while (!atEnd() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - from;
    };
    bool integral = true;
    if (s_[pos_] == '-') ++pos_;
    if (atEnd() || s_[pos_] < '0' || s_[pos_] > '9') return fail("a number needs a digit after '-'");
    if (s_[pos_] == '0') {
      ++pos_;
      if (!atEnd() && s_[pos_] >= '0' && s_[pos_] <= '9') return fail("numbers may not have leading zeros");
    } else {
      digits();
    }
    if (!atEnd() && s_[pos_] == '.') {
      ++pos_;
      integral = false;
      if (digits() == 0) return fail("a number needs a digit after '.'");
    }
    if (!atEnd() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      integral = false;
      if (!atEnd() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) return fail("a number needs a digit in its exponent");
    }
    if (pos_ - start > lim_.maxNumberChars)
      return fail("a number longer than " + std::to_string(lim_.maxNumberChars) + " characters");
    double v = 0;
    const auto r = std::from_chars(s_.data() + start, s_.data() + pos_, v);
    if (r.ec != std::errc() || r.ptr != s_.data() + pos_ || !std::isfinite(v))
      return fail("number " + s_.substr(start, pos_ - start) + " is out of range");
    out->type = JsonValue::Type::Number;
    out->number = v;
    out->integral = integral;
    return true;
  }

  bool hex4(unsigned* out) {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      if (atEnd()) return fail("unexpected end of text in a \\u escape");
      const char c = s_[pos_];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v |= c - 'A' + 10;
      else
        return fail("\\u must be followed by four hex digits");
    }
    *out = v;
    return true;
  }

  static void appendUtf8(unsigned cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }

  // Copies one UTF-8 sequence starting at a byte >= 0x80, rejecting overlong forms, surrogates and
  // code points above U+10FFFF.
  bool copyUtf8(std::string* out) {
    const unsigned char b0 = static_cast<unsigned char>(s_[pos_]);
    int len = 0;
    unsigned cp = 0, min = 0;
    if ((b0 & 0xe0) == 0xc0)
      len = 2, cp = b0 & 0x1f, min = 0x80;
    else if ((b0 & 0xf0) == 0xe0)
      len = 3, cp = b0 & 0x0f, min = 0x800;
    else if ((b0 & 0xf8) == 0xf0)
      len = 4, cp = b0 & 0x07, min = 0x10000;
    else
      return fail("invalid UTF-8 in a string");
    if (pos_ + len > s_.size()) return fail("invalid UTF-8 in a string");
    for (int i = 1; i < len; ++i) {
      const unsigned char b = static_cast<unsigned char>(s_[pos_ + i]);
      if ((b & 0xc0) != 0x80) return fail("invalid UTF-8 in a string");
      cp = (cp << 6) | (b & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return fail("invalid UTF-8 in a string");
    out->append(s_, pos_, len);
    pos_ += len;
    return true;
  }

  bool parseString(std::string* out) {
    ++pos_;  // opening quote
    out->clear();
    while (true) {
      if (atEnd()) return fail("unexpected end of text inside a string");
      if (out->size() > lim_.maxStringBytes)
        return fail("a string longer than " + std::to_string(lim_.maxStringBytes) + " bytes");
      const char c = s_[pos_];
      const unsigned char u = static_cast<unsigned char>(c);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (u < 0x20)
        return fail(c == '\n' ? "a string runs past the end of its line"
                              : "control character (" + Describe(c) + ") in a string");
      if (u >= 0x80) {
        if (!copyUtf8(out)) return false;
        continue;
      }
      if (c != '\\') {
        out->push_back(c);
        ++pos_;
        continue;
      }
      ++pos_;
      if (atEnd()) return fail("unexpected end of text in an escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          unsigned cp = 0;
          if (!hex4(&cp)) return false;
          if (cp >= 0xdc00 && cp <= 0xdfff) return fail("\\u escape is a lone low surrogate");
          if (cp >= 0xd800 && cp <= 0xdbff) {
            unsigned lo = 0;
            if (pos_ + 1 >= s_.size() || s_[pos_] != '\\' || s_[pos_ + 1] != 'u')
              return fail("\\u escape is a high surrogate without its low half");
            pos_ += 2;
            if (!hex4(&lo)) return false;
            if (lo < 0xdc00 || lo > 0xdfff) return fail("\\u escape is a high surrogate without its low half");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          }
          if (cp == 0) return fail("\\u0000 (a NUL character) is not allowed in a string");
          appendUtf8(cp, out);
          break;
        }
        default:
          return fail("unknown escape \\" + std::string(1, e) + " in a string");
      }
    }
  }

  const std::string& s_;
  const JsonLimits& lim_;
  size_t pos_ = 0;
  int line_ = 1;
  std::string err_;
};

}  // namespace

bool ParseJson(const std::string& text, JsonValue* out, int* errLine, std::string* err, const JsonLimits& limits) {
  Parser p(text, limits);
  *out = JsonValue();
  if (p.parseDocument(out)) return true;
  *errLine = p.line();
  *err = p.error();
  return false;
}

std::string JsonQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", u);
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double x) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), x);
  return std::string(buf, r.ptr);
}

}  // namespace strata
