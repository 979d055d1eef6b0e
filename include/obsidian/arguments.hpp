/// Host-side arguments of a kernel launch and their checks against the kernel's signature and
/// preconditions. The simulator and the GPU runtime both bind arguments here, so a bad launch
/// gets the same message wherever it runs, before anything executes.
/// @file
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "obsidian/ir.hpp"

namespace obsidian {

/// One argument: a host array (read-only or writable) or a scalar. Arrays are passed in the
/// kernel function's parameter order (one per component of a tuple element type), then the
/// outputs; lengths are not passed: they are the arrays' sizes.
class KernelArg {
 public:
  /// What the argument is.
  enum class Kind : uint8_t {
    Array,  ///< a host or device array
    Scalar  ///< a scalar value
  };

  /// A writable host array (implicit, so that launches take `{in, out}`).
  template <KernelScalar T>
  KernelArg(std::vector<T>& v) : KernelArg(std::span<T>(v)) {}  // NOLINT: implicit by design
  /// A read-only host array.
  template <KernelScalar T>
  KernelArg(const std::vector<T>& v) : KernelArg(std::span<const T>(v)) {}  // NOLINT
  /// A host array; read-only when T is const.
  template <class T>
  requires KernelScalar<std::remove_const_t<T>> KernelArg(std::span<T> s)  // NOLINT
      : kind_(Kind::Array),
        type_(scalarTypeOf<std::remove_const_t<T>>),
        data_(const_cast<std::remove_const_t<T>*>(s.data())),
        count_(s.size()),
        writable_(!std::is_const_v<T>) {}
  /// A scalar argument (integer bits, or a float's value, by the parameter's type).
  template <KernelScalar T>
  KernelArg(T scalar) : kind_(Kind::Scalar), type_(scalarTypeOf<T>) {  // NOLINT
    if constexpr (std::is_same_v<T, float>) {
      real_ = detail::widenF32(scalar);  // a NaN's bits kept (types.hpp)
    } else if constexpr (std::is_floating_point_v<T>) {
      real_ = static_cast<double>(scalar);
    } else if constexpr (SmallFloatScalar<T>) {
      real_ = scalar.toDouble();  // a NaN's bits kept (half.hpp)
    } else if constexpr (PairScalar<T>) {
      bits_ = scalar.bits();  // a pair is held as its word (types.hpp)
    } else if constexpr (std::is_same_v<T, bool>) {
      bits_ = scalar ? 1 : 0;
    } else {
      bits_ = static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(scalar));
    }
  }

  /// A device buffer (the runtime's DeviceBuffer converts to this): `address` is a CUdeviceptr.
  static KernelArg deviceArray(ScalarType type, uint64_t address, size_t count, bool writable) {
    KernelArg a(uint32_t{0});
    a.kind_ = Kind::Array;
    a.type_ = type;
    a.data_ = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
    a.count_ = count;
    a.writable_ = writable;
    a.device_ = true;
    return a;
  }

  /// Whether it is an array or a scalar.
  Kind kind() const { return kind_; }
  /// Whether the array is device memory (deviceArray) rather than host memory.
  bool onDevice() const { return device_; }
  /// The element type of an array, or the type of a scalar.
  ScalarType type() const { return type_; }
  /// The array's first element (a CUdeviceptr on the device); null for a scalar.
  void* data() const { return data_; }
  /// The array's element count.
  size_t count() const { return count_; }
  /// Whether the kernel may write the array (outputs must be writable).
  bool writable() const { return writable_; }
  /// A non-float scalar's bits (zero-extended; two's complement for i32).
  uint64_t bits() const { return bits_; }
  /// A float or double scalar's value (an f32 NaN keeps its bits: see types.hpp).
  double real() const { return real_; }
  /// "a writable array of 1000 uint32_t", "a float scalar"
  std::string describe() const;

 private:
  Kind kind_;
  ScalarType type_;
  void* data_ = nullptr;
  size_t count_ = 0;
  bool writable_ = false;
  bool device_ = false;
  uint64_t bits_ = 0;
  double real_ = 0;
};

/// The arguments matched to the kernel's parameters, all indexed by parameter.
struct BoundArguments {
  std::vector<const KernelArg*> arrays;  ///< the host or device array of an Array parameter
  /// The value of each Length and Scalar parameter: integer bits, or a float's value.
  std::vector<uint64_t> bits;
  std::vector<double> reals;  ///< the value of each float Length or Scalar parameter (see bits)
  /// Elements of each Array parameter the kernel may touch (its length expression evaluated).
  std::vector<uint64_t> lengths;
  uint32_t gridBlocks = 0;  ///< the kernel's gridBlocks evaluated
};

/// Match `args` to kernel `k`'s parameters and check everything a launch needs: the number and
/// kinds of arguments, element types, writability of outputs, null arrays, array sizes against
/// the lengths the kernel reads and writes, and the kernel's preconditions. Throws Error naming
/// the kernel, the argument and the rule. Cheap enough for every launch: it allocates nothing
/// but the result unless a check fails.
BoundArguments bindArguments(const KernelIR& k, const std::vector<KernelArg>& args);

/// The most real blocks of `threadsPerBlock` threads any launch uses (GPU, simulator, exported
/// launcher): CUDA's 2^31 - 1, and few enough that blockIdx * threadsPerBlock + threadIdx and
/// the grid's stride gridDim * threadsPerBlock fit in 32 bits. A kernel that wants more virtual
/// blocks loops its virtual blocks over these.
uint32_t maxRealBlocks(uint32_t threadsPerBlock);

/// The real blocks of a launch: `requested`, or for 0 the kernel's gridBlocks capped at
/// maxRealBlocks. A request over maxRealBlocks is an Error naming `who` (the launch option).
uint32_t realBlocks(const KernelIR& k, const BoundArguments& b, uint32_t requested,
                    const std::string& who);

/// The value (integer bits) of an expression over the scalar and length parameters.
uint64_t evaluateParams(const KernelIR& k, const ExpPtr& e, const BoundArguments& b);

}  // namespace obsidian
