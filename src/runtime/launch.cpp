// Launching a captured kernel on the GPU: arguments and limits are checked first, then the
// kernel is loaded (through the kernel cache) and launched with cuLaunchKernel.
#include <array>
#include <cstring>

#include "codegen/emit_cuda.hpp"
#include "launch/postconditions.hpp"
#include "obsidian/runtime.hpp"
#include "runtime/driver.hpp"

namespace obsidian::gpu {
namespace {

// One kernel parameter's value, kept alive until cuLaunchKernel has read it.
union ParamValue {
  CUdeviceptr pointer;
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  int32_t i32;
  uint64_t u64;
  float f32;
  double f64;
  bool b;
};

// A small float argument's bits (its value is held as a double, NaN bits kept: half.hpp).
uint32_t smallBits(ScalarType t, double real) {
  return obsidian::detail::smallFloatBits(*scalarInfo(t).small, real);
}

ParamValue scalar(ScalarType t, uint64_t bits, double real) {
  ParamValue v{};
  switch (t) {
    case ScalarType::U8: v.u8 = static_cast<uint8_t>(bits); break;
    case ScalarType::U16: v.u16 = static_cast<uint16_t>(bits); break;
    case ScalarType::U32:
    case ScalarType::F16x2:  // a pair's word
    case ScalarType::BF16x2: v.u32 = static_cast<uint32_t>(bits); break;
    case ScalarType::I32: v.i32 = static_cast<int32_t>(static_cast<uint32_t>(bits)); break;
    case ScalarType::U64: v.u64 = bits; break;
    case ScalarType::F32: v.f32 = obsidian::detail::narrowF32(real); break;
    case ScalarType::F64: v.f64 = real; break;
    case ScalarType::Bool: v.b = bits != 0; break;
    case ScalarType::F16:
    case ScalarType::BF16: v.u16 = static_cast<uint16_t>(smallBits(t, real)); break;
    case ScalarType::E4M3:
    case ScalarType::E5M2: v.u8 = static_cast<uint8_t>(smallBits(t, real)); break;
  }
  return v;
}

}  // namespace

uint32_t occupancyBlocks(const Kernel& k) {
  Device& d = Device::get();
  d.makeCurrent();
  int perSm = 0;
  OBSIDIAN_CU_KERNEL(k.name(), cuOccupancyMaxActiveBlocksPerMultiprocessor, &perSm,
                     static_cast<CUfunction>(d.function(k).handle()),
                     static_cast<int>(k.threadsPerBlock()), k.sharedBytes());
  return static_cast<uint32_t>(std::max(perSm, 1) * d.info().smCount);
}

void launch(const Kernel& k, const std::vector<KernelArg>& args, const LaunchOptions& options) {
  const KernelIR& ir = k.ir();
  const BoundArguments bound = bindArguments(ir, args);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind() == KernelArg::Kind::Array && !args[i].onDevice()) {
      throw Error("launch of kernel " + k.name() + ": argument " + std::to_string(i) +
                  " is a host array; the GPU needs a gpu::DeviceBuffer");
    }
  }
  Device& d = Device::get();
  if (options.stream && &options.stream->device() != &d) {
    throw Error("launch of kernel " + k.name() + ": the stream belongs to device " +
                std::to_string(options.stream->device().info().ordinal) +
                "; launches run on device 0");
  }
  const DeviceInfo& info = d.info();
  if (static_cast<int>(k.threadsPerBlock()) > info.maxThreadsPerBlock) {
    throw Error("launch of kernel " + k.name() + ": " + std::to_string(k.threadsPerBlock()) +
                " threads per block; " + info.name + " allows " +
                std::to_string(info.maxThreadsPerBlock));
  }
  if (k.sharedBytes() > info.sharedPerBlockOptin) {
    throw Error("launch of kernel " + k.name() + ": needs " + std::to_string(k.sharedBytes()) +
                " bytes of shared memory per block; " + info.name + " allows " +
                std::to_string(info.sharedPerBlockOptin));
  }
  uint32_t blocks = realBlocks(ir, bound, options.blocks, "LaunchOptions::blocks");
  if (options.fillDevice) blocks = std::min(blocks, occupancyBlocks(k));
  if (blocks == 0) return;  // nothing to compute (an empty input)

  // Small kernels (all of them, in practice) keep the parameter block on the stack.
  constexpr size_t kInline = 32;
  std::array<ParamValue, kInline> inlineValues;
  std::array<void*, kInline> inlinePointers;
  std::vector<ParamValue> heapValues;
  std::vector<void*> heapPointers;
  ParamValue* values = inlineValues.data();
  void** pointers = inlinePointers.data();
  if (ir.params.size() > kInline) {
    heapValues.resize(ir.params.size());
    heapPointers.resize(ir.params.size());
    values = heapValues.data();
    pointers = heapPointers.data();
  }
  for (size_t i = 0; i < ir.params.size(); ++i) {
    const Param& p = ir.params[i];
    if (p.kind == ParamKind::Array) {
      values[i].pointer =
          static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(bound.arrays[i]->data()));
    } else {
      values[i] = scalar(p.type, bound.bits[i], bound.reals[i]);
    }
    pointers[i] = &values[i];
  }
  // Held until the launch is queued: the module cannot be unloaded under it.
  const Function function = options.checked ? d.checkedFunction(k) : d.function(k);
  const CUfunction f = static_cast<CUfunction>(function.handle());
  const uint64_t record = function.violationRecord();
  d.makeCurrent();
  CUstream stream = options.stream ? static_cast<CUstream>(options.stream->handle()) : nullptr;
  if (options.checked) {
    // Clear the record; synchronous copies keep it ordered with the launch on any stream.
    OBSIDIAN_CU_KERNEL(k.name(), cuStreamSynchronize, stream);
    const unsigned long long zero = 0;
    OBSIDIAN_CU_KERNEL(k.name(), cuMemcpyHtoD, static_cast<CUdeviceptr>(record), &zero,
                       sizeof zero);
  }
  OBSIDIAN_CU_KERNEL(k.name(), cuLaunchKernel, f, blocks, 1, 1, k.threadsPerBlock(), 1, 1,
                     k.sharedBytes(), stream, pointers, nullptr);
  if (options.synchronize || options.checked) {
    OBSIDIAN_CU_KERNEL(k.name(), cuStreamSynchronize, stream);
  }
  if (options.checked) {
    unsigned long long violation = 0;
    OBSIDIAN_CU_KERNEL(k.name(), cuMemcpyDtoH, &violation, static_cast<CUdeviceptr>(record),
                       sizeof violation);
    if (violation != 0) {
      throw Error("launch of kernel " + k.name() +
                  " (checked): " + describeViolation(ir, violation, [&](const ExpPtr& e) {
                    return evaluateParams(ir, e, bound);
                  }));
    }
    checkPostconditions(
        k, args, "launch of kernel " + k.name() + " (checked)",
        [&](const Kernel& check) {
          DeviceBuffer<uint32_t> first(std::vector<uint32_t>{0xffffffffu}, d);
          std::vector<KernelArg> withResult = args;
          withResult.push_back(first);
          LaunchOptions o;
          o.stream = options.stream;
          launch(check, withResult, o);  // synchronous
          return first.download()[0];
        },
        [&](const KernelArg& array, uint32_t index) {
          std::array<unsigned char, 8> bytes{};
          const size_t size = sizeOf(array.type());
          detail::copyToHost(d, bytes.data(),
                             reinterpret_cast<uintptr_t>(array.data()) + index * size, size);
          return formatScalar(array.type(), bytes.data());
        });
  }
}

}  // namespace obsidian::gpu
