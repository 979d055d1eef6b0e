// The parts of the radix sort (include/obsidian/block/radix_sort.hpp,
// include/obsidian/device/radix_sort.hpp) that need no template: the shape rules, the starts
// kernel, the checks of a call and the storage kept between calls.
#include "obsidian/device/radix_sort.hpp"

#include <limits>

namespace obsidian {

namespace detail {

void checkRadixBlock(const char* what, uint32_t threads, uint32_t radixBits) {
  if (radixBits == 0 || radixBits > 8) {
    throw Error(std::string(what) + ": a digit has 1 to 8 bits; got " + std::to_string(radixBits));
  }
  if (threads == 0 || threads % 32 != 0 || threads > 1024) {
    throw Error(std::string(what) +
                " needs a block of whole warps (a multiple of 32 threads, at "
                "most 1024); got " +
                std::to_string(threads) + " threads");
  }
  if (threads < (uint32_t{1} << radixBits)) {
    throw Error(std::string(what) + ": thread d counts digit d, so a block of " +
                std::to_string(threads) + " threads ranks at most " + std::to_string(threads) +
                " digits; " + std::to_string(radixBits) + "-bit digits are " +
                std::to_string(uint32_t{1} << radixBits));
  }
}

void checkRadixPolicy(const char* what, const RadixSortPolicy& p) {
  checkRadixBlock(what, p.threads, p.radixBits);
  if (p.items == 0 || p.items > 32) {
    throw Error(std::string(what) + ": items (keys a thread holds) must be 1..32; got " +
                std::to_string(p.items));
  }
  if (p.histogramItems == 0 || p.histogramItems > 32) {
    throw Error(std::string(what) + ": histogram_items must be 1..32; got " +
                std::to_string(p.histogramItems));
  }
}

std::pair<uint32_t, uint32_t> radixRange(const char* what, const RadixOrder& o, uint32_t width) {
  const uint32_t end = o.endBit == 0 ? width : o.endBit;
  if (end > width || o.beginBit > end) {
    throw Error(std::string(what) + ": the bits " + std::to_string(o.beginBit) + " .. " +
                std::to_string(end) + " must lie within the key's " + std::to_string(width) +
                " bits, the first not past the last");
  }
  return {o.beginBit, end};
}

size_t radixStatusWords(size_t n, const RadixSortPolicy& p) {
  const size_t tile = size_t{p.threads} * p.items;
  return (n / tile + 1) * (size_t{1} << p.radixBits);
}

}  // namespace detail

Kernel radixStartsKernel(const RadixSortPolicy& policy, uint32_t passes) {
  detail::checkRadixPolicy("radixStartsKernel", policy);
  const uint32_t digits = uint32_t{1} << policy.radixBits;
  // (named by its passes: an exported program may sort 32- and 64-bit keys)
  return capture(
      "radixStarts_" + std::to_string(passes), policy.threads, [=](DMutable<uint32_t> state) {
        detail::requireLength(
            len(state) >= passes * digits,
            "radix sort: the state holds " + std::to_string(passes * digits) + " counters");
        return effect([=](const Program<Grid>& g) {
          g.distrPar(passes, [&](const Program<Block>& p, const EWord32& pass) {
            const ThreadArray<uint32_t> counts = threadArray<uint32_t>(p, 1);
            p.forAll(policy.threads, [&](const Program<Thread>& t, const EWord32& tid) {
              counts.write(t, 0, ifThenElse(tid < digits, state[pass * digits + tid], EWord32(0u)));
            });
            const ThreadArray<uint32_t> starts = digitStarts(p, counts);
            p.forAll(policy.threads, [&](const Program<Thread>& t, const EWord32& tid) {
              t.cond(tid < digits, [&](const Program<Thread>& u) {
                write(u, state, pass * digits + tid, starts[0]);
              });
            });
          });
        });
      });
}

namespace device {

RadixSortTemp::Reserved RadixSortTemp::reserve(size_t status, size_t rest, size_t state,
                                               uint32_t passes, const gpu::Stream* stream) {
  // Flags are epoch * 4 + 1 or 2 in 32 bits: epochs stay below 2^30.
  constexpr uint32_t lastEpoch = (uint32_t{1} << 30) - 1;
  if (!words_ || status_ < status || words_->size() - status_ < rest) {
    const size_t keep = std::max(status, status_);
    words_.reset();  // freed before the larger one is made
    words_.emplace(keep + rest);
    words_->fill(0, 0, keep, stream);
    status_ = keep;
    epoch_ = 1;
  } else if (epoch_ > lastEpoch - passes) {
    words_->fill(0, 0, status_, stream);
    epoch_ = 1;
  }
  if (state > 0) words_->fill(0, status_, state, stream);
  const Reserved r{epoch_, words_->address(), status_, words_->address() + status_ * 8};
  epoch_ += passes;
  return r;
}

namespace detail {

RadixCall radixCall(const char* what, const Target& t, size_t n, uint32_t keyBits,
                    uint32_t keyBytes, bool pairs, const RadixOrder& order,
                    const Options& options) {
  RadixCall c;
  c.policy = policyFor<RadixSort>(
      t, {keyBytes, OperatorClass::Any, pairs ? Values::Pairs : Values::KeysOnly, Scale::Any},
      options);
  obsidian::detail::checkRadixPolicy(what, c.policy);
  const auto [begin, end] = obsidian::detail::radixRange(what, order, keyBits);
  c.begin = begin;
  c.end = end;
  c.passes = obsidian::detail::radixPasses(begin, end, c.policy.radixBits);
  c.maxPasses = std::max<uint32_t>(1, (keyBits + c.policy.radixBits - 1) / c.policy.radixBits);
  const uint64_t tile = uint64_t{c.policy.threads} * c.policy.items;
  const uint64_t most = uint64_t{std::numeric_limits<uint32_t>::max()} - tile + 1;
  if (n > most) {
    throw Error(std::string(what) + ": at most " + std::to_string(most) +
                " keys a call (32-bit places, and a tile past the last key); got " +
                std::to_string(n));
  }
  return c;
}

}  // namespace detail
}  // namespace device
}  // namespace obsidian
