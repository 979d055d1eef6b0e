// Whole-array programs, a sort pass: what it reads and writes (planned with the other passes'
// arguments) and its run, the device layer's radix sort (device/radix_sort.hpp) over the
// plan's arrays, on the GPU or the simulator. A sort's kernels (a digit histogram, the digits'
// starts, a pass a digit) are the radix sort's own: the plan keeps only their storage, and
// sortLaunches tells exportHeader what they are.
#include <cassert>
#include <cstring>

#include "array/plan_data.hpp"
#include "obsidian/device/radix_sort.hpp"

namespace obsidian::array::detail {

struct SortStorage {
  device::RadixSortTemp temp;
  std::unique_ptr<gpu::DeviceBuffer<uint64_t>> keys;
};
std::shared_ptr<SortStorage> makeSortStorage() { return std::make_shared<SortStorage>(); }

namespace {

// Calls f.template operator()<V>() with V the unsigned word of t's size (values are moved as
// bits, never read) or void for none.
template <class F>
void withValueWord(const NodeInfo* values, F&& f) {
  if (!values) return f.template operator()<void>();
  if (scalarInfo(values->node->type).bytes == 8) return f.template operator()<uint64_t>();
  return f.template operator()<uint32_t>();
}
}  // namespace

void planSort(PlanData& plan, int p) {
  Pass& pass = plan.passes[p];
  const NodeInfo& n = plan.nodes[pass.stores.front()];
  pass.args.clear();
  for (int a : n.args) pass.args.push_back(storedArray(plan, a));
  pass.args.push_back({ArgRef::Kind::Buffer, "", n.buffer, -1, -1});
  // Its kernel, for Plan::kernels (compiled ahead): the pass a digit.
  const NodeInfo& keys = plan.nodes[n.args[0]];
  const NodeInfo* values = n.args.size() > 1 ? &plan.nodes[n.args[1]] : nullptr;
  const device::Target& t = plan.options.target;
  withType(keys.node->type, [&]<class K>() {
    withValueWord(values, [&]<class V>() {
      const device::detail::RadixCall c =
          device::detail::radixCall("array sort", t, 0, RadixKey<K>::bits, sizeof(K),
                                    !std::is_void_v<V>, {}, device::Options{});
      pass.kernel.emplace(device::RadixSort::pass<K, V>(t, c.policy, c.maxPasses, n.node->a != 0));
    });
  });
}

void runSort(const PlanData& plan, int p, const std::vector<KernelArg>& args, bool gpu,
             const RunOptions& options, bool last, SortStorage& storage) {
  const Pass& pass = plan.passes[p];
  const NodeInfo& n = plan.nodes[pass.stores.front()];
  const NodeInfo& keys = plan.nodes[n.args[0]];
  const NodeInfo* values = n.args.size() > 1 ? &plan.nodes[n.args[1]] : nullptr;
  const size_t count = args.back().count();
  if (count == 0) return;  // (nothing to sort; an empty array's data may be null)
  RadixOrder order;
  order.descending = n.node->a != 0;
  device::Options o;
  o.stream = options.stream;
  o.synchronize = options.synchronize && last;
  o.simulation = options.simulation;
  o.simulatedEach = options.simulated;
  const std::string what = "array::Plan::run: " + describe(plan, pass.stores.front());
  withType(keys.node->type, [&]<class K>() {
    withValueWord(values, [&]<class V>() {
      constexpr bool pairs = !std::is_void_v<V>;
      if (gpu) {
        device::detail::RadixArrays a;
        a.n = count;
        a.keysIn = reinterpret_cast<uintptr_t>(args[0].data());
        if constexpr (pairs) {
          // (the sorted keys are the sort's own: only the values are the node's)
          if (!storage.keys || storage.keys->size() * 8 < count * sizeof(K)) {
            storage.keys.reset();
            storage.keys = std::make_unique<gpu::DeviceBuffer<uint64_t>>(
                std::max<size_t>(1, (count * sizeof(K) + 7) / 8));
          }
          a.keysOut = storage.keys->address();
          a.valuesIn = reinterpret_cast<uintptr_t>(args[1].data());
          a.valuesOut = reinterpret_cast<uintptr_t>(args[2].data());
        } else {
          a.keysOut = reinterpret_cast<uintptr_t>(args[1].data());
        }
        device::detail::radixSortAt<K, V>(what.c_str(), a, order, o, &storage.temp);
        return;
      }
      // The simulator: the same kernels over copies of the host arrays.
      std::vector<K> in(count), out;
      std::memcpy(in.data(), args[0].data(), count * sizeof(K));
      if constexpr (pairs) {
        std::vector<V> valuesIn(count), valuesOut;
        std::memcpy(valuesIn.data(), args[1].data(), count * sizeof(V));
        device::radixSortPairs(in, out, valuesIn, valuesOut, order, o);
        std::memcpy(args[2].data(), valuesOut.data(), count * sizeof(V));
      } else {
        device::radixSortKeys(in, out, order, o);
        std::memcpy(args[1].data(), out.data(), count * sizeof(K));
      }
    });
  });
}

SortLaunches sortLaunches(const PlanData& plan, int p) {
  const Pass& pass = plan.passes[p];
  const NodeInfo& n = plan.nodes[pass.stores.front()];
  const NodeInfo& keys = plan.nodes[n.args[0]];
  const NodeInfo* values = n.args.size() > 1 ? &plan.nodes[n.args[1]] : nullptr;
  const device::Target& t = plan.options.target;
  const bool descending = n.node->a != 0;
  std::optional<SortLaunches> out;
  withType(keys.node->type, [&]<class K>() {
    withValueWord(values, [&]<class V>() {
      const device::detail::RadixCall c =
          device::detail::radixCall("array sort", t, 0, RadixKey<K>::bits, sizeof(K),
                                    !std::is_void_v<V>, {}, device::Options{});
      out.emplace(
          SortLaunches{device::RadixSort::histogram<K>(t, c.policy, c.begin, c.end, descending),
                       device::RadixSort::starts(t, c.policy, c.passes),
                       *pass.kernel,
                       0,
                       0,
                       0,
                       0,
                       {},
                       keys.node->type,
                       0});
      out->tile = c.policy.threads * c.policy.items;
      out->radixBits = c.policy.radixBits;
      out->stateWords = static_cast<uint32_t>(device::detail::radixStateWords(c));
      out->mostKeys = uint64_t{0xffffffffu} - out->tile + 1;
      for (uint32_t q = 0; q < c.passes; ++q) {
        const auto [shift, mask] =
            obsidian::detail::passDigit(c.begin, c.end, c.policy.radixBits, q);
        out->digits.emplace_back(shift, mask);
      }
      if constexpr (!std::is_void_v<V>) out->valueBytes = sizeof(V);
    });
  });
  return *out;
}

double sortBytes(const PlanData& plan, int p, uint64_t count) {
  const Pass& pass = plan.passes[p];
  const NodeInfo& n = plan.nodes[pass.stores.front()];
  const NodeInfo& keys = plan.nodes[n.args[0]];
  const uint32_t keyBytes = scalarInfo(keys.node->type).bytes;
  const uint32_t valueBytes = n.args.size() > 1 ? scalarInfo(n.node->type).bytes : 0;
  const device::detail::RadixCall c = device::detail::radixCall(
      "array sort", plan.options.target, 0, keyBytes * 8, keyBytes, valueBytes > 0, {}, {});
  // The histogram reads the keys; each digit's pass reads and writes keys and values.
  return double(count) * (keyBytes + 2.0 * c.passes * (keyBytes + valueBytes));
}

}  // namespace obsidian::array::detail
