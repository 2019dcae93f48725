// Packed launch of recorded Triton kernels (lab prototype of the host-path record's Q2).
//
// A PackedCall holds the kernels of one plan: per kernel the CUfunction, grid, block,
// shared memory and launch attributes, and its parameters as one 8-byte word each, laid
// out as Triton's launcher lays them out. A call admits the tensors it is given against
// those the plan was built with (dtype, device, sizes, strides, 16-byte alignment), writes
// their data pointers into the tensor slots, and launches every kernel with
// cuLaunchKernelEx on the current stream, without a Python call per argument. A call made
// while another device is current is refused, as is one whose tensors differ.
#include <cuda.h>
#include <dlfcn.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/python_variable.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

using LaunchEx = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
using GetErrorString = CUresult (*)(CUresult, const char**);

LaunchEx launch_ex() {
  static LaunchEx fn = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_LAZY);
    if (lib == nullptr) throw std::runtime_error("libcuda.so.1 not found");
    auto f = reinterpret_cast<LaunchEx>(dlsym(lib, "cuLaunchKernelEx"));
    if (f == nullptr) throw std::runtime_error("cuLaunchKernelEx not found in libcuda.so.1");
    return f;
  }();
  return fn;
}

std::string error_text(CUresult code) {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY);
  auto get = lib ? reinterpret_cast<GetErrorString>(dlsym(lib, "cuGetErrorString")) : nullptr;
  const char* text = nullptr;
  if (get != nullptr) get(code, &text);
  return text ? text : ("CUresult " + std::to_string(static_cast<int>(code)));
}

struct TensorSpec {
  c10::ScalarType dtype;
  int64_t device;
  std::vector<int64_t> sizes, strides;
};

struct Kernel {
  CUfunction function;
  CUlaunchConfig config;
  CUlaunchAttribute attrs[2];
  std::vector<uint64_t> words;          // one word per kernel parameter, scratch pointers last
  std::vector<void*> params;            // &words[i]
  std::vector<std::pair<int, int>> slots;  // (parameter index, tensor index)
};

const at::Tensor& unpack(py::handle obj, size_t index) {
  if (!THPVariable_Check(obj.ptr())) throw std::invalid_argument("argument " + std::to_string(index) + " is not a tensor");
  return THPVariable_Unpack(obj.ptr());
}

}  // namespace

class PackedCall {
 public:
  // kernels: dicts with function, grid (3), num_warps, shared, pdl, cooperative, words, slots.
  // examples: the tensors of the call the plan was built for (their specs are what a call must match).
  PackedCall(const std::vector<py::dict>& kernels, py::sequence examples) {
    launch_ex();
    for (size_t i = 0; i < examples.size(); ++i) {
      const at::Tensor& t = unpack(examples[i], i);
      if (!t.is_cuda()) throw std::invalid_argument("tensor " + std::to_string(i) + " is not on a CUDA device");
      specs_.push_back({t.scalar_type(), t.device().index(), t.sizes().vec(), t.strides().vec()});
    }
    for (const auto& spec : kernels) {
      Kernel k{};
      k.function = reinterpret_cast<CUfunction>(spec["function"].cast<uint64_t>());
      auto grid = spec["grid"].cast<std::vector<unsigned>>();
      if (grid.size() != 3) throw std::invalid_argument("grid must have 3 entries");
      k.config.gridDimX = grid[0];
      k.config.gridDimY = grid[1];
      k.config.gridDimZ = grid[2];
      k.config.blockDimX = 32 * spec["num_warps"].cast<unsigned>();
      k.config.blockDimY = 1;
      k.config.blockDimZ = 1;
      k.config.sharedMemBytes = spec["shared"].cast<unsigned>();
      unsigned n = 0;
      if (spec["pdl"].cast<bool>()) {
        k.attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        k.attrs[n].value.programmaticStreamSerializationAllowed = 1;
        ++n;
      }
      if (spec["cooperative"].cast<bool>()) {
        k.attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        k.attrs[n].value.cooperative = 1;
        ++n;
      }
      k.config.numAttrs = n;
      k.words = spec["words"].cast<std::vector<uint64_t>>();
      for (auto slot : spec["slots"].cast<std::vector<std::pair<int, int>>>()) {
        if (slot.first < 0 || slot.first >= static_cast<int>(k.words.size()) || slot.second < 0 ||
            slot.second >= static_cast<int>(specs_.size()))
          throw std::invalid_argument("slot out of range");
        k.slots.push_back(slot);
      }
      kernels_.push_back(std::move(k));
    }
    for (auto& k : kernels_) {  // pointers into vectors that no longer move
      k.config.attrs = k.attrs;
      for (auto& w : k.words) k.params.push_back(&w);
    }
    pointers_.resize(specs_.size());
    device_ = specs_.empty() ? 0 : specs_[0].device;
  }

  // Admits `tensors` and launches; false (nothing launched) where a tensor differs from the plan's.
  bool call(py::sequence tensors, bool admit) {
    const size_t count = specs_.size();
    if (static_cast<size_t>(tensors.size()) != count) return false;
    if (admit && c10::cuda::current_device() != device_) return false;  // the plan's kernels live on its device
    for (size_t i = 0; i < count; ++i) {
      const at::Tensor& t = unpack(tensors[i], i);
      if (admit) {
        const TensorSpec& s = specs_[i];
        if (t.scalar_type() != s.dtype || !t.is_cuda() || t.device().index() != s.device || t.sizes() != s.sizes ||
            t.strides() != s.strides)
          return false;
      }
      const auto ptr = reinterpret_cast<uint64_t>(t.data_ptr());
      if (admit && (ptr & 15) != 0) return false;
      pointers_[i] = ptr;
    }
    launch_all();
    return true;
  }

  // Nanoseconds per launch of the whole plan, `n` times in a loop with the last pointers (host cost only).
  double time_launches(int n) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) launch_all();
    auto end = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(end - start).count() / n;
  }

  // The parameter words of kernel `index` as the last call wrote them.
  std::vector<uint64_t> words(size_t index) const { return kernels_.at(index).words; }

 private:
  void launch_all() {
    CUstream stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_)).stream();
    for (auto& k : kernels_) {
      for (const auto& slot : k.slots) k.words[slot.first] = pointers_[slot.second];
      k.config.hStream = stream;
      CUresult rc = launch_ex()(&k.config, k.function, k.params.data(), nullptr);
      if (rc != CUDA_SUCCESS) throw std::runtime_error("cuLaunchKernelEx: " + error_text(rc));
    }
  }

  std::vector<TensorSpec> specs_;
  std::vector<Kernel> kernels_;
  std::vector<uint64_t> pointers_;
  int64_t device_ = 0;
};

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  py::class_<PackedCall>(m, "PackedCall")
      .def(py::init<const std::vector<py::dict>&, py::sequence>())
      .def("__call__", &PackedCall::call, py::arg("tensors"), py::arg("admit") = true)
      .def("time_launches", &PackedCall::time_launches)
      .def("words", &PackedCall::words);
}
