// The Python module strata_torch._C: Options and the factory that torch.distributed calls through
// the registration in python/strata_torch/__init__.py.
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>  // c10::intrusive_ptr as a pybind11 holder, shared with torch._C

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "process_group_strata.h"

namespace py = pybind11;

namespace strata_torch {
namespace {

c10::intrusive_ptr<BackendBase> CreateBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                              std::chrono::milliseconds timeout, const BackendOptions& options) {
  return c10::make_intrusive<ProcessGroupStrata>(store, rank, size, timeout, options);
}

// A tensor of `proto`'s dtype and `sizes` on memory from strataMemAlloc, freed with strataMemFree when torch drops it.
at::Tensor EmptyShared(const at::Tensor& proto, const std::vector<int64_t>& sizes) {
  const at::TensorOptions options = proto.options();
  uint64_t bytes = static_cast<uint64_t>(proto.element_size());
  for (int64_t s : sizes) {
    if (s < 0) throw std::invalid_argument("strata_torch.empty: negative size " + std::to_string(s));
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(s), &bytes) || bytes > uint64_t{INT64_MAX})
      throw std::invalid_argument("strata_torch.empty: the sizes ask for more bytes than a tensor can hold");
  }
  if (bytes == 0) return at::empty(sizes, options);
  void* p = nullptr;
  if (strataMemAlloc(&p, bytes) != strataSuccess)
    throw std::runtime_error(std::string("strata_torch.empty: ") + strataGetLastError(nullptr));
  return at::from_blob(
      p, sizes, [](void* q) { (void)strataMemFree(q); }, options);
}

}  // namespace
}  // namespace strata_torch

PYBIND11_MODULE(_C, m) {
  using strata_torch::BackendOptions;
  m.doc() = "strata collectives as a torch.distributed backend (import strata_torch, not this module)";
  // torch's types (Store, ProcessGroup/Backend, Work) must be registered before ours refer to them.
  py::module::import("torch.distributed");

  py::class_<BackendOptions>(m, "_BackendOptions")
      .def(py::init<>())
      .def_readwrite("nchannels", &BackendOptions::nChannels)
      .def_readwrite("shm_disable", &BackendOptions::shmDisable)
      .def_readwrite("sockets_per_peer", &BackendOptions::nSocketsPerPeer)
      .def_readwrite("comm_name", &BackendOptions::commName)
      .def_readwrite("quant", &BackendOptions::quant)
      .def_readwrite("worker_nice", &BackendOptions::workerNice);
  m.attr("CONFIG_UNDEF_INT") = STRATA_CONFIG_UNDEF_INT;
  m.attr("TORCH_VERSION_MAJOR") = TORCH_VERSION_MAJOR;

  // Blocks in the store until every rank joins: release the GIL so that other Python threads (and a
  // store served from this process) keep running.
  m.def("_create_backend", &strata_torch::CreateBackend, py::arg("store"), py::arg("rank"), py::arg("size"),
        py::arg("timeout"), py::arg("options"), py::call_guard<py::gil_scoped_release>());

  // Registered with atexit by __init__.py: pending collectives (and their future callbacks) finish
  // while the interpreter can still run Python.
  m.def("_drain_all", &strata_torch::WorkQueue::DrainAll, py::call_guard<py::gil_scoped_release>());

  m.def("_empty_shared", &strata_torch::EmptyShared, py::arg("proto"), py::arg("sizes"));

  int version = 0;
  strataGetVersion(&version);
  m.attr("STRATA_VERSION") = version;
}
