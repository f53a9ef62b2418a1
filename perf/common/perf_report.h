// What the perf tools print (nccl-tests' table, byte for byte in layout) and the JSON file of -J.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace strata::perf {

struct PassResult {
  double timeUs = 0;
  double algBw = 0;  // GB/s, 1e9 bytes per second
  double busBw = 0;
  int64_t wrong = -1;  // elements summed over ranks; -1: not checked (-c 0)
  double error = -1;   // quantized runs (-q): relative L2 error against a float64 reduction; -1: none
};

struct ResultRow {
  size_t bytes = 0;
  size_t count = 0;
  const char* type = "";
  const char* op = "";
  int root = -1;
  std::string algorithm;  // what the communicator ran (strataCommGetLastAlgorithm)
  PassResult outOfPlace;
  PassResult inPlace;
};

// `errorColumn` (quantized runs): an `error` column after each #wrong.
void PrintTableHeader(FILE* out, bool errorColumn = false);
// A row is printed in pieces as its measurements finish, as nccl-tests does, so slow sizes show progress.
void PrintRowStart(FILE* out, const ResultRow& row);
void PrintPass(FILE* out, const PassResult& pass, bool errorColumn = false);
// Ends the row with the algorithm column.
void PrintRowEnd(FILE* out, const std::string& algorithm);
// failedChecks: measurements with #wrong > 0.
void PrintFooter(FILE* out, int failedChecks, double avgBusBw);

struct RunSummary {
  std::string commandLine;
  std::string collective;
  int nranks = 0;
  std::vector<ResultRow> rows;
  int failedChecks = 0;
  double avgBusBw = 0;
};

// Writes the summary as one JSON object; false (with errno set) when the file cannot be written.
bool WriteJson(const std::string& path, const RunSummary& summary);

}  // namespace strata::perf
