/// Wide loads and stores: a global array viewed as vectors of W consecutive elements (W a power
/// of two, at most 16 bytes: 16 u8, 8 u16 or half, 4 u32/i32/f32, 2 u64/f64), each vector read
/// (vectors<W>) or written (unvectors<W>) with one access of up to 16 bytes (ld/st.global.v4)
/// instead of one per element. Memory-bound kernels need these to reach the device's bandwidth;
/// for byte and half data one access per element would reach a fraction of it.
/// @file
#pragma once

#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <functional>
#include <utility>
#include <vector>

#include "obsidian/memory_ops.hpp"
#include "obsidian/pull.hpp"
#include "obsidian/push.hpp"

namespace obsidian {

namespace detail {
// Where a pull array reads from: arr[i] is array[base + i] for a global array.
struct VectorSource {
  ArrayId array = 0;
  ExpPtr base;
  uint32_t origin = 0;  // the capture of `array`
};
// Checks that `probed` (arr at the variable kProbe) is such a direct read whose base is a
// multiple of `width` and that vectors of `width` elements of its type exist; records the
// alignment the launch must check. Throws an Error naming the rule otherwise.
VectorSource vectorSource(uint32_t width, const ExpPtr& probed);
inline constexpr const char* kProbe = "__vector_probe";
ExpPtr vectorLane(const VectorSource& s, ScalarType t, uint32_t width, const EWord32& j,
                  uint32_t lane);

template <class X, size_t... K>
auto vectorTuple(const VectorSource& s, const EWord32& j, std::index_sequence<K...>) {
  constexpr uint32_t w = sizeof...(K);
  return hana::make_tuple(
      Exp<X>(vectorLane(s, scalarTypeOf<X>, w, j, static_cast<uint32_t>(K)))...);
}

// Writes element j of a push of vectors: elements j * W + k = values[k] through `w`, with one
// StoreVector where `w` writes a global array directly (probed as vectorSource probes a read).
using ScalarWriter = std::function<void(const Program<Thread>&, const ExpPtr&, const EWord32&)>;
void writeVector(const Program<Thread>& t, ScalarType type, const ScalarWriter& w,
                 const std::vector<ExpPtr>& values, const EWord32& j);
// The length of unvectors<W> of n vectors: n * W, which must fit 32 bits (static: an Error now;
// dynamic: a precondition of the launch).
uint32_t unvectorsLength(uint32_t width, uint32_t n);
EWord32 unvectorsLength(uint32_t width, const EWord32& n);
}  // namespace detail

/// The element type of vectors<W>: a tuple of W scalars.
template <uint32_t W, class X>
using Vector = decltype(detail::vectorTuple<X>(detail::VectorSource{}, EWord32(0u),
                                               std::make_index_sequence<W>{}));

/// vectors<W>(arr): the len/W whole vectors of W consecutive elements of arr, each a tuple read
/// with one W * sizeof(X)-byte load: W is a power of two of at least 2, and W * sizeof(X) at
/// most 16 bytes (2 to 16 u8, 2 to 8 u16, 2 or 4 u32/i32/f32, 2 u64/f64). u8 and u16 vectors
/// are read as 32-bit words (a uint4 for 16 bytes) whose bits are the lanes, little-endian as
/// in memory. The last len % W elements are not in it: read them as scalars. arr must read a
/// global array directly, arr[i] being in[base + i] (a kernel parameter, or splitUp/splitAt/
/// halve pieces of one) with base a multiple of W; the launch checks that the array's address
/// is aligned to the vector size. The CUDA compiler makes one load of the lanes of a vector
/// that are read together: declare them (t.declare) before statements that write memory.
template <uint32_t W, class Len, KernelScalar X>
Pull<Len, Vector<W, X>> vectors(const Pull<Len, Exp<X>>& arr) {
  static_assert(W >= 2 && (W & (W - 1)) == 0,
                "vectors<W>: W is a power of two of at least 2 elements");
  static_assert(!std::is_same_v<X, bool>, "vectors<W>: there are no vector loads of bool");
  static_assert(W * sizeof(X) <= 16,
                "vectors<W>: a vector is at most 16 bytes (W * sizeof(X) <= 16: up to 16 u8, "
                "8 u16, 4 u32/i32/f32 or 2 u64/f64)");
  const detail::VectorSource src =
      detail::vectorSource(W, arr[variable<uint32_t>(detail::kProbe)].node());
  return Pull<Len, Vector<W, X>>(arr.len() / W, [src](const EWord32& j) {
    return detail::vectorTuple<X>(src, j, std::make_index_sequence<W>{});
  });
}

/// unvectors<W>(a): the push array of the W * len(a) elements of the vectors of `a` (each a
/// tuple of W scalars, as vectors<W> reads them), vector j being elements j * W .. j * W + W - 1.
/// Where the result is written to a global array directly (a kernel's output, or a piece of one
/// that starts at a multiple of W elements) each vector is one W * sizeof(X)-byte store
/// (st.global.v4) and the launch checks that the array is aligned to that size; an output piece
/// that starts elsewhere is an Error. Where its writes go elsewhere (shared memory, a writer
/// that transforms the value or the index) the lanes are written one by one. W and X follow
/// vectors<W>'s rules.
template <uint32_t W, class L, class Len, KernelScalar X, class... Rest>
Push<L, Len, Exp<X>> unvectors(const Push<L, Len, hana::tuple<Exp<X>, Rest...>>& a) {
  static_assert(W >= 2 && (W & (W - 1)) == 0,
                "unvectors<W>: W is a power of two of at least 2 elements");
  static_assert(sizeof...(Rest) + 1 == W && (std::is_same_v<Rest, Exp<X>> && ...),
                "unvectors<W>: the elements are vectors of W scalars of one type (Vector<W, X>)");
  static_assert(!std::is_same_v<X, bool>, "unvectors<W>: there are no vector stores of bool");
  static_assert(W * sizeof(X) <= 16,
                "unvectors<W>: a vector is at most 16 bytes (W * sizeof(X) <= 16: up to 16 u8, "
                "8 u16, 4 u32/i32/f32 or 2 u64/f64)");
  return Push<L, Len, Exp<X>>(detail::unvectorsLength(W, a.len()), [a](const Program<L>& p,
                                                                       const Writer<Exp<X>>& w) {
    a(p, [&w](const Program<Thread>& t, const Vector<W, X>& v, const EWord32& j) {
      std::vector<ExpPtr> values;
      hana::for_each(v, [&](const Exp<X>& x) { values.push_back(x.node()); });
      detail::writeVector(
          t, scalarTypeOf<X>,
          [&w](const Program<Thread>& u, const ExpPtr& x, const EWord32& i) { w(u, Exp<X>(x), i); },
          values, j);
    });
  });
}

}  // namespace obsidian
