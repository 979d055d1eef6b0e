/// The device layer, top-k: the k largest (or smallest) elements of an array, in order, with
/// their indices (torch.topk's sorted result), by radix selection over the keys' order words
/// (RadixKey, as the radix sort orders them: every RadixSortable type).
///
/// A level looks at one 8-bit digit of the order word, from the most significant: a count
/// kernel reads the whole input and takes the histogram of that digit over the elements that
/// agree with the digits chosen so far, and the host finds the digit that holds the k-th wanted
/// element. Levels go on until that digit's elements are few (`candidates`) or the last digit
/// is reached. Then one split (the three-way partition without its third part) reads the input
/// once more and keeps, in index order, the elements below the chosen prefix (all of them are
/// wanted) and those equal to it (the candidates; at the last digit they are all equal keys,
/// and the first ones by index are taken). One block sorts the result's candidates by key
/// (blockRadixSort, stable: equal keys keep their index order) and writes the first k; more
/// candidates than its tile are sorted by radixSortPairs.
/// @file
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "obsidian/device/radix_sort.hpp"
#include "obsidian/device/segmented_sort.hpp"
#include "obsidian/device/select.hpp"

namespace obsidian {

/// The top-k's launches: the count kernel's blocks, the split's tiles, and how many elements a
/// level may leave to the final sort.
struct TopKPolicy {
  uint32_t threads = 256;       ///< threads per block of the count kernel
  uint32_t items = 8;           ///< keys each count thread loads in flight
  uint32_t splitThreads = 128;  ///< threads per block of the split (a ScanPolicy's)
  uint32_t splitItems = 17;     ///< elements each split thread holds
  uint32_t splitBlocks = 8;     ///< the split's blocks per SM (minBlocksPerSm; 0: any)
  uint32_t candidates = 2048;   ///< at most this many left (besides k): stop and sort
  /// Field by field.
  friend bool operator==(const TopKPolicy&, const TopKPolicy&) = default;
};

namespace detail {
// The split's tiles as a ScanPolicy.
inline ScanPolicy splitPolicy(const TopKPolicy& p) {
  return {p.splitThreads, p.splitItems, BlockLoadAlgorithm::WarpStriped, 400, p.splitBlocks, false};
}
// b >> shift for an order word of 32 or 64 bits.
template <class Bits>
Exp<Bits> shiftDown(const Exp<Bits>& b, const EWord32& shift) {
  if constexpr (std::is_same_v<Bits, uint64_t>) {
    return b >> cast<uint64_t>(shift);
  } else {
    return b >> shift;
  }
}
// The count kernel's body: `blocks` blocks sweep the keys in chunks of threads x items, each
// counting, for the keys whose order word agrees with `prefix` on the bits of `mask`, the digit
// (order word >> shift) & 255 in shared counters, then adding them into `counts` (256, zero
// before).
template <RadixSortable K>
GridEffect topKCount(const DPull<Exp<K>>& keys, const DMutable<uint32_t>& counts,
                     const EWord32& shift, const Exp<typename RadixKey<K>::Bits>& mask,
                     const Exp<typename RadixKey<K>::Bits>& prefix, const EWord32& blocks,
                     bool largest, const TopKPolicy& policy) {
  using Key = RadixKey<K>;
  const uint32_t threads = policy.threads, items = policy.items, chunk = threads * items;
  const EWord32 n = len(keys);
  const EWord32 chunks = n / chunk + cast<uint32_t>(n % chunk != 0u);
  return effect([=](const Program<Grid>& g) {
    g.distrPar(blocks, [&](const Program<Block>& p, const EWord32& bid) {
      const SMutable<uint32_t> local = newShared<uint32_t>(p, 256);
      zeroCounters(p, local);
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        const EWord32 mine =
            t.declare(ifThenElse(bid < chunks, (chunks - bid + blocks - 1u) / blocks, EWord32(0u)));
        t.seqFor(mine, [&](const Program<Thread>& s, const EWord32& r) {
          const EWord32 first = s.declare((bid + r * blocks) * chunk + tid);
          std::vector<Exp<typename Key::Bits>> held;
          for (uint32_t k = 0; k < items; ++k) {
            const EWord32 i = first + k * threads;
            held.push_back(s.declare(
                ifThenElse(i < n, Key::toBits(keys[i], largest), Exp<typename Key::Bits>(0u))));
          }
          for (uint32_t k = 0; k < items; ++k) {
            s.cond(first + k * threads < n && (held[k] & mask) == prefix,
                   [&](const Program<Thread>& u) {
                     atomicAdd(u, local, cast<uint32_t>(shiftDown(held[k], shift)) & 255u, 1u);
                   });
          }
        });
      });
      p.sync();
      addCounters(p, local, counts);
    });
  });
}

// The split: the indices of the keys whose order word >> shift is below `bound`, then of those
// equal to it, each in index order, and how many of each. The keys are the partition's tile
// (loaded coalesced); it writes their indices.
template <RadixSortable K>
auto topKSplit(const DPull<Exp<K>>& keys, const EWord32& shift,
               const Exp<typename RadixKey<K>::Bits>& bound, bool largest,
               const TopKPolicy& policy) {
  using Key = RadixKey<K>;
  const auto above = [=](const Exp<K>& v) { return shiftDown(Key::toBits(v, largest), shift); };
  return threeWayGrid<K, false, uint32_t>(
      "topK", keys, [=](const Exp<K>& v) { return above(v) < bound; },
      [=](const Exp<K>& v) { return above(v) == bound; }, splitPolicy(policy),
      [](const Exp<K>&, const EWord32& i) { return i; });
}

// The final sort in one block when the candidates fit its tile (threads x items): the
// candidates' order words (at[j]'s key) and indices in thread arrays, warp-striped in candidate
// order, padded with the last order word, sorted stably (blockRadixSort), and the first k
// written. Equal keys keep the candidates' order, which is index order.
template <RadixSortable K>
GridEffect topKFinal(const DPull<Exp<K>>& keys, const DPull<EWord32>& at, const DMutable<K>& values,
                     const DMutable<uint32_t>& indices, const EWord32& k, bool largest,
                     uint32_t threads, uint32_t items) {
  using Key = RadixKey<K>;
  using Bits = typename Key::Bits;
  const EWord32 total = len(at);
  return effect([=](const Program<Grid>& g) {
    g.distrPar(1u, [&](const Program<Block>& p, const EWord32&) {
      const ThreadArray<Bits> words = threadArray<Bits>(p, items);
      const ThreadArray<uint32_t> where = threadArray<uint32_t>(p, items);
      const auto place = [&](const EWord32& tid, uint32_t j) {
        return (tid / 32u) * (32u * items) + j * 32u + tid % 32u;
      };
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        for (uint32_t j = 0; j < items; ++j) {
          const EWord32 c = t.declare(place(tid, j));
          const EWord32 i = t.declare(ifThenElse(c < total, at[c], EWord32(0u)));
          words.write(t, j,
                      ifThenElse(c < total, Key::toBits(keys[i], largest), Exp<Bits>(Key::all)));
          where.write(t, j, i);
        }
      });
      blockRadixSort(p, words, 0, Key::bits, 8, {where});
      p.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
        for (uint32_t j = 0; j < items; ++j) {
          const EWord32 c = place(tid, j);
          t.cond(c < k, [&](const Program<Thread>& u) {
            write(u, values, c, Key::fromBits(words[j], largest));
            write(u, indices, c, where[j]);
          });
        }
      });
    });
  });
}
// The first k of every sorted segment s (keys[offsets[s] ..], and `at`, their indices in the
// array) at values[s * k ..] and indices[s * k ..] (an index within the segment); places past
// a segment shorter than k hold K{} and index 2^32 - 1.
template <RadixSortable K>
GridEffect segmentFirsts(const DPull<Exp<K>>& keys, const DPull<EWord32>& at,
                         const DPull<EWord32>& offsets, const EWord32& k, const DMutable<K>& values,
                         const DMutable<uint32_t>& indices) {
  const EWord32 n = len(keys), total = len(values);
  requireLength(len(at) == n && len(indices) == total && offsets.len() >= 1u && k != 0u &&
                    total == (len(offsets) - 1u) * k,
                "segmentedTopK: k values and indices a segment, the keys' indices as many as "
                "the keys");
  return effect([=](const Program<Grid>& g) {
    g.distrPar((total + 255u) / 256u, [&](const Program<Block>& p, const EWord32& bid) {
      p.forAll(256u, [&](const Program<Thread>& t, const EWord32& tid) {
        const EWord32 o = t.declare(bid * 256u + tid);
        t.cond(o < total, [&](const Program<Thread>& u) {
          const EWord32 s = u.declare(o / k);
          const EWord32 first = u.declare(ifThenElse(offsets[s] < n, offsets[s], n));
          const EWord32 last = u.declare(ifThenElse(offsets[s + 1u] < n, offsets[s + 1u], n));
          const EWord32 i = u.declare(first + o % k);
          u.cond(
              i < last,
              [&](const Program<Thread>& v) {
                write(v, values, o, keys[i]);
                write(v, indices, o, at[i] - first);
              },
              [&](const Program<Thread>& v) {
                write(v, values, o, Exp<K>(K{}));
                write(v, indices, o, EWord32(0xffffffffu));
              });
        });
      });
    });
  });
}
}  // namespace detail

namespace device {

/// The top-k's descriptor (device/algorithm.hpp).
struct TopK {
  using Policy = TopKPolicy;                    ///< the policy type
  static constexpr const char* name = "top_k";  ///< the ready call's name
  /// Where it is declared.
  static constexpr const char* header = "obsidian/device/top_k.hpp";
  /// What it computes.
  static constexpr const char* summary =
      "the k largest or smallest elements in order with their indices (radix selection: a "
      "digit a level, then a sort of the candidates)";
  /// The policy's fields as data.
  static constexpr auto fields() {
    return hana::make_tuple(
        field("threads", &Policy::threads, 32, 1024, "threads per block of the count kernel"),
        field("items", &Policy::items, 1, 32, "keys each count thread loads in flight"),
        field("split_threads", &Policy::splitThreads, 32, 1024,
              "threads per block of the split (whole warps)"),
        field("split_items", &Policy::splitItems, 1, 64, "elements each split thread holds"),
        field("split_blocks", &Policy::splitBlocks, 0, 64,
              "the split's blocks per SM the registers must allow (0: the compiler's choice)"),
        field("candidates", &Policy::candidates, 1, 1 << 24,
              "at most this many elements left besides k: stop and sort them"));
  }
  /// The policy table.
  static constexpr Tuned<Policy> table[] = {
      {0,
       {},
       {256, 8, 128, 17, 8, 2048},
       "(fallback)",
       "sm_90's row: not measured on other architectures"},
      {90,
       {},
       {256, 8, 128, 17, 8, 2048},
       "obsidian-bench-topk --runs 30 (bench/RESULTS.md, 'Top-k')",
       "H100, 2026-11-27, f32, k 16 and 100: 0.41-0.46 of torch.topk's time from 2^26, "
       "0.57-0.65 at 2^20 and 2^24. Not swept: the split's tile is device::Select's (128 x 17 x "
       "8, obsidian-bench-select), the count kernel's the radix sort's histogram's (256 x 8); "
       "2048 candidates (besides k <= 2048) fit the final sort's one block (256 x 16)"},
  };
  /// The kernels: count (keys[, at], counts, shift, blocks), split (keys[, at], shift, bound)
  /// -> (below, equal, counts[2]), gather (keys, at) -> keys[at].
  template <RadixSortable K>
  static Kernel count(const Target& t, const Policy& p, bool largest) {
    using Bits = typename RadixKey<K>::Bits;
    const std::string type = obsidian::detail::radixTypeName<K>();
    return kernelFor<TopK>(t, p, "-", {"count", type, largest ? "l" : "s"}, [&] {
      return capture("topKCount_" + type, p.threads,
                     [=](DPull<Exp<K>> keys, DMutable<uint32_t> counts, EWord32 shift,
                         Exp<Bits> mask, Exp<Bits> prefix, EWord32 blocks) {
                       return obsidian::detail::topKCount<K>(keys, counts, shift, mask, prefix,
                                                             blocks, largest, p);
                     });
    });
  }
  template <RadixSortable K>  ///< (see count)
  static Kernel split(const Target& t, const Policy& p, bool largest) {
    using Bits = typename RadixKey<K>::Bits;
    const std::string type = obsidian::detail::radixTypeName<K>();
    return kernelFor<TopK>(t, p, "-", {"split", type, largest ? "l" : "s"}, [&] {
      CaptureOptions o;
      o.minBlocksPerSm = p.splitBlocks;
      return capture(
          "topKSplit_" + type, p.splitThreads,
          [=](DPull<Exp<K>> keys, EWord32 shift, Exp<Bits> bound) {
            return obsidian::detail::topKSplit<K>(keys, shift, bound, largest, p);
          },
          o);
    });
  }
  /// The final sort's block (finalSort): its threads,
  static constexpr uint32_t kFinalThreads = 256;
  /// the most candidates each thread holds (a power of two: 1, 2, 4, ... as the candidates
  /// need),
  static constexpr uint32_t kFinalItems = 16;
  /// and the most candidates it sorts.
  static constexpr uint32_t kFinalTile = kFinalThreads * kFinalItems;
  /// The final sort in one block of `items` candidates a thread: (keys, at, values, indices,
  /// k), at most kFinalThreads x items candidates.
  template <RadixSortable K>
  static Kernel finalSort(const Target& t, const Policy& p, bool largest, uint32_t items) {
    const std::string type = obsidian::detail::radixTypeName<K>();
    return kernelFor<TopK>(
        t, p, "-", {"final", type, largest ? "l" : "s", std::to_string(items)}, [&] {
          return capture("topKFinal_" + type, kFinalThreads,
                         [=](DPull<Exp<K>> keys, DPull<EWord32> at, DMutable<K> values,
                             DMutable<uint32_t> indices, EWord32 k) {
                           return obsidian::detail::topKFinal<K>(keys, at, values, indices, k,
                                                                 largest, kFinalThreads, items);
                         });
        });
  }
  template <RadixSortable K>  ///< (see count)
  static Kernel gather(const Target& t, const Policy& p) {
    const std::string type = obsidian::detail::radixTypeName<K>();
    return kernelFor<TopK>(t, p, "-", {"gather", type}, [&] {
      return capture("topKGather_" + type, 256, [](DPull<Exp<K>> keys, DPull<EWord32> at) {
        return push<Grid>(mkPull(len(at), [=](const EWord32& j) { return keys[at[j]]; }));
      });
    });
  }
  /// segmentedTopK's kernels: the keys' indices (out[i] = i), and the first k of each
  /// sorted segment (sorted keys, their indices, offsets, k, values, indices).
  static Kernel iota(const Target& t, const Policy& p) {
    return kernelFor<TopK>(t, p, "-", {"iota"}, [&] {
      return capture("topKIota", 256, [](DMutable<uint32_t> out) {
        return effect([=](const Program<Grid>& g) {
          g.distrPar((len(out) + 255u) / 256u, [&](const Program<Block>& p, const EWord32& bid) {
            p.forAll(256u, [&](const Program<Thread>& t, const EWord32& tid) {
              const EWord32 i = t.declare(bid * 256u + tid);
              t.cond(i < len(out), [&](const Program<Thread>& u) { write(u, out, i, i); });
            });
          });
        });
      });
    });
  }
  template <RadixSortable K>  ///< (see iota)
  static Kernel firsts(const Target& t, const Policy& p) {
    const std::string type = obsidian::detail::radixTypeName<K>();
    return kernelFor<TopK>(t, p, "-", {"firsts", type}, [&] {
      return capture("topKFirsts_" + type, 256,
                     [](DPull<Exp<K>> keys, DPull<EWord32> at, DPull<EWord32> offsets, EWord32 k,
                        DMutable<K> values, DMutable<uint32_t> indices) {
                       return obsidian::detail::segmentFirsts<K>(keys, at, offsets, k, values,
                                                                 indices);
                     });
    });
  }
};

/// Storage a top-k on the GPU keeps from one call to the next (as RadixSortTemp): its index
/// arrays (as long as the input) and its final sort's. Calls that share one must not overlap; a
/// call without one makes its own.
class TopKTemp {
 public:
  /// The bytes held now (its sort's included).
  size_t bytes() const {
    size_t b = sort.bytes();
    for (const auto& a : arrays_) b += a ? a->size() * sizeof(uint32_t) : 0;
    return b;
  }
  /// @cond INTERNAL
  // Index array `which` (0: the chosen, 1: the equal ones, 2: the counts) with room for at
  // least n elements.
  gpu::DeviceBuffer<uint32_t>& indices(size_t which, size_t n) {
    auto& a = arrays_.at(which);
    if (!a || a->size() < std::max<size_t>(n, 1)) a.emplace(std::max<size_t>(n, 1));
    return *a;
  }
  RadixSortTemp sort;
  /// @endcond

 private:
  std::array<std::optional<gpu::DeviceBuffer<uint32_t>>, 3> arrays_;
};

namespace detail {
// Where a top-k's arrays are: device memory (the GPU) or host vectors (the simulator). Arrays
// of u32 indices and of keys, views of their parts as kernel arguments, counts read back.
template <class K, bool Gpu>
struct TopKSide;
template <class K>
struct TopKSide<K, true> {
  using Indices = gpu::DeviceBuffer<uint32_t>;
  using Keys = gpu::DeviceBuffer<K>;
  // Index array `which` of the call's storage.
  struct Store {
    TopKTemp own;
    TopKTemp& temp;
    explicit Store(TopKTemp* t) : temp(t ? *t : own) {}
    Indices& indices(size_t which, size_t n) { return temp.indices(which, n); }
    RadixSortTemp* sort() { return &temp.sort; }
  };
  template <class B>
  static KernelArg view(B& b, size_t first, size_t count) {
    using X = ElementOf<B>;
    return KernelArg::deviceArray(scalarTypeOf<X>, b.address() + first * sizeof(X), count, true);
  }
  static std::vector<uint32_t> read(const Indices& b) { return b.download(); }
  static void zero(Indices& b, const gpu::Stream* stream) { b.fill(0u, stream); }
};
template <class K>
struct TopKSide<K, false> {
  using Indices = std::vector<uint32_t>;
  using Keys = std::vector<K>;
  struct Store {
    std::array<Indices, 3> arrays;
    explicit Store(TopKTemp*) {}
    Indices& indices(size_t which, size_t n) {
      Indices& a = arrays.at(which);
      if (a.size() < std::max<size_t>(n, 1)) a.resize(std::max<size_t>(n, 1));
      return a;
    }
    RadixSortTemp* sort() { return nullptr; }
  };
  template <class B>
  static KernelArg view(B& b, size_t first, size_t count) {
    return KernelArg(std::span<ElementOf<B>>(b.data() + first, count));
  }
  static std::vector<uint32_t> read(const Indices& b) { return b; }
  static void zero(Indices& b, const gpu::Stream*) { std::fill(b.begin(), b.end(), 0u); }
};

// The top-k of `in` into values and indices (sized k: host vectors are resized, device
// buffers must hold k).
template <class In, class Values, class Idx>
void topK(const In& in, size_t k, Values& values, Idx& indices, bool largest,
          const Options& options, TopKTemp* temp) {
  using K = ElementOf<In>;
  using Bits = typename RadixKey<K>::Bits;
  constexpr bool gpu = BufferSide<std::remove_cvref_t<In>>::gpu;
  using Side = TopKSide<K, gpu>;
  const size_t n = in.size();
  if (k > n) {
    throw Error("topK: k is at most the input's length; got k " + std::to_string(k) + " of " +
                std::to_string(n) + " elements");
  }
  if (n > 0xffffffffull) {
    throw Error("topK: at most 2^32 - 1 elements (u32 indices); got " + std::to_string(n));
  }
  fitOutput("topK", "values' output", values, k);
  fitOutput("topK", "indices' output", indices, k);
  if (k == 0) return;
  const Target t = targetOf<In>();
  const TopKPolicy policy =
      policyFor<TopK>(t, {sizeof(K), OperatorClass::Any, obsidian::Values::KeysOnly}, options);
  Options async = options, wait = options;
  async.synchronize = false;
  wait.synchronize = true;  // the host reads the counts next
  const Kernel copy = radixCopyKernel<uint32_t>();
  // chosen: the wanted elements below the prefix, then the candidates; equal: the split's
  // elements equal to the prefix.
  typename Side::Store store(temp);
  typename Side::Indices& chosen = store.indices(0, n);
  typename Side::Indices& equalOnes = store.indices(1, n);
  typename Side::Indices& counts = store.indices(2, 258);
  size_t found = 0, need = k, equal = n;
  Bits prefix = 0;  // the order word's digits chosen so far: its bits from `shift` up
  const uint32_t bits = RadixKey<K>::bits;
  uint32_t shift = bits;
  const Kernel c = TopK::count<K>(t, policy, largest);
  const uint32_t blocks = options.blocks ? options.blocks : (gpu ? gpu::occupancyBlocks(c) : 3u);
  while (shift == bits || (shift > 0 && equal > policy.candidates)) {  // one level at least
    // The digit below the prefix, over the keys that agree with it.
    const Bits mask = shift >= bits ? Bits{0} : static_cast<Bits>(~Bits{0} << shift);
    const Bits top = shift >= bits ? Bits{0} : static_cast<Bits>(prefix << shift);
    shift -= 8;
    Side::zero(counts, options.stream);
    launchOn(t, c, {in, Side::view(counts, 0, 256), shift, mask, top, blocks}, wait);
    const std::vector<uint32_t> h = Side::read(counts);
    uint32_t digit = 0;
    size_t below = 0;
    while (digit < 255 && below + h[digit] < need) below += h[digit++];
    equal = h[digit];
    found += below;
    need -= below;
    prefix = static_cast<Bits>((shift + 8 >= bits ? Bits{0} : prefix << 8) | digit);
  }
  // The split: the `found` keys below the prefix at chosen[0..], the `equal` ones at equalOnes.
  launchOn(t, TopK::split<K>(t, policy, largest),
           {in, shift, prefix, Side::view(chosen, 0, n), Side::view(equalOnes, 0, n),
            Side::view(counts, 256, 2)},
           async);
  // At the last digit the equal keys are one key: the first `need` of them by index.
  const size_t take = shift == 0 ? need : equal;
  launchOn(t, copy, {Side::view(equalOnes, 0, take), Side::view(chosen, found, take)}, async);
  const size_t total = found + take;
  if (total <= TopK::kFinalTile) {  // one block sorts them and writes the first k
    uint32_t items = 1;
    while (TopK::kFinalThreads * items < total) items *= 2;
    launchOn(t, TopK::finalSort<K>(t, policy, largest, items),
             {in, Side::view(chosen, 0, total), values, indices, static_cast<uint32_t>(k)},
             options);
    return;
  }
  // Else the candidates' keys, sorted with their indices by the device sort; the first k are the
  // result.
  typename Side::Indices at(total);
  typename Side::Keys keys(total);
  launchOn(t, copy, {Side::view(chosen, 0, total), Side::view(at, 0, total)}, async);
  launchOn(t, TopK::gather<K>(t, policy),
           {in, Side::view(at, 0, total), Side::view(keys, 0, total)}, async);
  const RadixOrder order{largest, 0, 0};
  // The sort takes its own table's policy (the options' settings are the top-k's fields).
  Options sortAsync = async, sortWait = options;
  sortAsync.policy.clear();
  sortWait.policy.clear();
  if constexpr (gpu) {
    if (total == k) {
      radixSortPairs(keys, values, at, indices, order, sortWait, store.sort());
      return;
    }
    gpu::DeviceBuffer<K> sk(total);
    gpu::DeviceBuffer<uint32_t> si(total);
    radixSortPairs(keys, sk, at, si, order, sortAsync, store.sort());
    launchOn(t, radixCopyKernel<K>(), {Side::view(sk, 0, k), values}, async);
    launchOn(t, copy, {Side::view(si, 0, k), indices}, options);
  } else {
    std::vector<K> sortedKeys;
    std::vector<uint32_t> sortedAt;
    radixSortPairs(keys, sortedKeys, at, sortedAt, order, sortWait);
    values.assign(sortedKeys.begin(), sortedKeys.begin() + static_cast<std::ptrdiff_t>(k));
    indices.assign(sortedAt.begin(), sortedAt.begin() + static_cast<std::ptrdiff_t>(k));
  }
}
}  // namespace detail

/// topK(in, k, values, indices, largest, options): the k largest elements of `in` (or the k
/// smallest: largest = false), in order (largest first; smallest first), in values[0 .. k - 1],
/// and their indices in `in` (u32) in indices; equal elements in index order (torch.topk with
/// sorted=True, and a stable order among ties). Keys of any RadixSortable type, in their radix
/// order (floats: -0 before +0, NaNs at the ends). On the GPU for device buffers (values and
/// indices hold k elements), on the simulator for host vectors (sized k). k at most the
/// input's length. The host reads each level's 256 counts (a synchronization a level: two
/// levels for random 32-bit keys of 2^24). temp: the GPU's storage kept between calls (null:
/// the call's own; not used on the simulator).
template <Buffer In, Buffer Out, class Idx>
requires SameSide<In, Out> && CountsOf<Idx, In> && RadixSortable<ElementOf<In>>
void topK(const In& in, size_t k, Out& values, Idx& indices, bool largest = true,
          const Options& options = {}, TopKTemp* temp = nullptr) {
  detail::topK(in, k, values, indices, largest, options, temp);
}

namespace detail {
template <class In, class Offsets, class Values, class Idx>
void segmentedTopK(const In& in, const Offsets& offsets, size_t k, Values& values, Idx& indices,
                   bool largest, const Options& options, TopKTemp* temp) {
  using K = ElementOf<In>;
  constexpr bool gpu = BufferSide<std::remove_cvref_t<In>>::gpu;
  using Side = TopKSide<K, gpu>;
  const char* what = "segmentedTopK";
  const size_t n = in.size();
  const Target t = targetOf<In>();
  const SegmentedCall c =
      segmentedCall<K>(what, t, n, offsets.size(), true, RadixOrder{largest, 0, 0}, options);
  const size_t segments = offsets.size() - 1;
  if (k > 0 && segments > 0xffffffffull / k) {
    throw Error(std::string(what) + ": segments x k must be below 2^32; got " +
                std::to_string(segments) + " x " + std::to_string(k));
  }
  if constexpr (!gpu) checkSegmentOffsets(what, offsets, n);
  fitOutput(what, "values' output", values, segments * k);
  fitOutput(what, "indices' output", indices, segments * k);
  if (k == 0 || segments == 0) return;
  const TopKPolicy policy =
      policyFor<TopK>(t, {sizeof(K), OperatorClass::Any, obsidian::Values::KeysOnly});
  Options async = options;
  async.synchronize = false;
  typename Side::Store store(temp);
  // The keys' indices, then each segment sorted with them (stable: ties in index order), then
  // the first k of each.
  typename Side::Indices& at = store.indices(0, std::max<size_t>(n, 1));
  typename Side::Indices& sortedAt = store.indices(1, std::max<size_t>(n, 1));
  typename Side::Indices& altAt = store.indices(2, std::max<size_t>(n, 258));
  typename Side::Keys sorted(std::max<size_t>(n, 1)), alt(std::max<size_t>(n, 1));
  if (n > 0) {
    launchOn(t, TopK::iota(t, policy), {Side::view(at, 0, n)}, async);
    const Kernel sort = SegmentedSort::kernel<K, uint32_t>(t, c.policy, c.begin, c.end, largest);
    launchOn(t, sort,
             {in, Side::view(sorted, 0, n), Side::view(alt, 0, n), Side::view(at, 0, n),
              Side::view(sortedAt, 0, n), Side::view(altAt, 0, n), offsets},
             async);
  }
  launchOn(t, TopK::firsts<K>(t, policy),
           {Side::view(sorted, 0, n), Side::view(sortedAt, 0, n), offsets, static_cast<uint32_t>(k),
            values, indices},
           options);
}
}  // namespace detail

/// segmentedTopK(in, offsets, k, values, indices, largest, options, temp): for every segment s
/// of `in` (offsets[s] .. offsets[s + 1] - 1, as segmentedSortKeys), its k largest (or
/// smallest) elements in order at values[s * k .. s * k + k - 1] and their indices within the
/// segment at indices[s * k ..]; equal elements in index order (torch.topk along the rows of a
/// matrix, with offsets r * cols). A segment of fewer than k elements fills its places past
/// them with K{} and index 2^32 - 1. offsets as segmentedSortKeys' (checked on the simulator;
/// on the GPU, offsets out of order or range leave those segments' places unspecified, and
/// nothing outside the arrays is read or written). On the GPU for device buffers (values and
/// indices hold segments x k), on the simulator for host vectors (sized so). Each segment is
/// sorted whole by the segmented sort (options.policy sets its fields), with its indices, and
/// the first k taken: a block a segment.
template <Buffer In, Buffer Offsets, Buffer Out, class Idx>
requires SameSide<In, Out> && CountsOf<Offsets, In> && CountsOf<Idx, In> &&
    RadixSortable<ElementOf<In>>
void segmentedTopK(const In& in, const Offsets& offsets, size_t k, Out& values, Idx& indices,
                   bool largest = true, const Options& options = {}, TopKTemp* temp = nullptr) {
  detail::segmentedTopK(in, offsets, k, values, indices, largest, options, temp);
}

}  // namespace device
}  // namespace obsidian
