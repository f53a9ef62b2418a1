#include "perf_report.h"

#include <cmath>
#include <string>

namespace strata::perf {
namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// JSON has no inf or NaN.
std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void WriteJsonPass(FILE* f, const char* name, const PassResult& p) {
  std::fprintf(f, "\"%s\": {\"time_us\": %s, \"algbw_GBps\": %s, \"busbw_GBps\": %s, \"wrong\": ", name,
               JsonNumber(p.timeUs).c_str(), JsonNumber(p.algBw).c_str(), JsonNumber(p.busBw).c_str());
  if (p.wrong < 0) {
    std::fputs("null", f);
  } else {
    std::fprintf(f, "%lld", static_cast<long long>(p.wrong));
  }
  if (p.error >= 0) std::fprintf(f, ", \"error\": %s", JsonNumber(p.error).c_str());
  std::fputc('}', f);
}

}  // namespace

void PrintTableHeader(FILE* out, bool errorColumn) {
  if (errorColumn) {
    // The error column follows #wrong in each half; the rest keeps nccl-tests' layout.
    std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s                out-of-place                                in-place          \n",
                 "", "", "", "", "");
    std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %7s  %6s  %6s %6s  %7s  %s\n", "size", "count",
                 "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "error", "time", "algbw", "busbw", "#wrong",
                 "error", "algo");
    std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %7s  %6s  %6s  %5s  %7s\n", "(B)",
                 "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "", "(us)", "(GB/s)", "(GB/s)", "", "");
    std::fflush(out);
    return;
  }
  std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "",
               "", "", "", "");
  std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s  %s\n", "size", "count", "type",
               "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", "algo");
  // One more column after nccl-tests' own: the algorithm that ran, so parsers of their layout still work.
  std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "",
               "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  std::fflush(out);
}

void PrintRowStart(FILE* out, const ResultRow& row) {
  std::fprintf(out, "%12zu  %12zu  %8s  %6s  %6i", row.bytes, row.count, row.type, row.op, row.root);
  std::fflush(out);
}

void PrintPass(FILE* out, const PassResult& pass, bool errorColumn) {
  // nccl-tests' time format: fewer decimals as the number grows, always 7 columns.
  char time[32];
  if (pass.timeUs >= 10000.0) {
    std::snprintf(time, sizeof time, "%7.0f", pass.timeUs);
  } else if (pass.timeUs >= 100.0) {
    std::snprintf(time, sizeof time, "%7.1f", pass.timeUs);
  } else {
    std::snprintf(time, sizeof time, "%7.2f", pass.timeUs);
  }
  char wrong[32];
  if (pass.wrong < 0) {
    std::snprintf(wrong, sizeof wrong, "N/A");
  } else {
    std::snprintf(wrong, sizeof wrong, "%lld", static_cast<long long>(pass.wrong));
  }
  std::fprintf(out, "  %7s  %6.2f  %6.2f  %5s", time, pass.algBw, pass.busBw, wrong);
  if (errorColumn) {
    if (pass.error < 0) {
      std::fprintf(out, "  %7s", "N/A");
    } else {
      std::fprintf(out, "  %7.4f", pass.error);
    }
  }
  std::fflush(out);
}

void PrintRowEnd(FILE* out, const std::string& algorithm) {
  std::fprintf(out, "  %s\n", algorithm.empty() ? "-" : algorithm.c_str());
  std::fflush(out);
}

void PrintFooter(FILE* out, int failedChecks, double avgBusBw) {
  std::fprintf(out, "# Out of bounds values : %d %s\n", failedChecks, failedChecks ? "FAILED" : "OK");
  std::fprintf(out, "# Avg bus bandwidth    : %g \n", avgBusBw);
  std::fprintf(out, "#\n");
  std::fflush(out);
}

bool WriteJson(const std::string& path, const RunSummary& s) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "{\n  \"command\": %s,\n  \"collective\": %s,\n  \"nranks\": %d,\n  \"rows\": [",
               JsonString(s.commandLine).c_str(), JsonString(s.collective).c_str(), s.nranks);
  for (size_t i = 0; i < s.rows.size(); ++i) {
    const ResultRow& r = s.rows[i];
    std::fprintf(f,
                 "%s\n    {\"collective\": %s, \"size_bytes\": %zu, \"count\": %zu, \"type\": %s, \"redop\": %s, "
                 "\"root\": %d, \"algorithm\": %s, ",
                 i ? "," : "", JsonString(s.collective).c_str(), r.bytes, r.count, JsonString(r.type).c_str(),
                 JsonString(r.op).c_str(), r.root, JsonString(r.algorithm).c_str());
    WriteJsonPass(f, "out_of_place", r.outOfPlace);
    std::fputs(", ", f);
    WriteJsonPass(f, "in_place", r.inPlace);
    std::fputc('}', f);
  }
  std::fprintf(f, "%s],\n  \"out_of_bounds\": %d,\n  \"avg_busbw_GBps\": %s\n}\n", s.rows.empty() ? "" : "\n  ",
               s.failedChecks, JsonNumber(s.avgBusBw).c_str());
  const bool ok = !std::ferror(f);
  return std::fclose(f) == 0 && ok;
}

}  // namespace strata::perf
