// Whole-array programs, running: the plan cache, binding data to the plan's inputs and outputs
// (every length checked against the extents the operations tie together), intermediates from
// a pool by liveness, the kernels launched in order on the GPU or run on the simulator, and
// the plan's report.
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "array/plan_data.hpp"

namespace obsidian::array {

using detail::ArgRef;
using detail::BufferInfo;
using detail::PlanData;

const Bindings::Entry* Bindings::find(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

Bindings& Bindings::add(const std::string& name, Entry e) {
  if (!entries_.emplace(name, std::move(e)).second) {
    throw Error("array::Bindings: '" + name + "' is bound twice");
  }
  return *this;
}

namespace {

// The plan cache: plans by structural key, the least recently used evicted past the capacity
// (a plan holds its kernels and its intermediates' pool; a Plan that holds it keeps it alive).
struct Cached {
  std::shared_ptr<PlanData> plan;
  uint64_t lastUse = 0;
};
std::mutex cacheMutex;
std::map<std::string, Cached>& planCache() {
  static std::map<std::string, Cached> cache;
  return cache;
}
size_t made = 0;
uint64_t uses = 0;
size_t capacity = 256;
// (under cacheMutex)
void evictPastCapacity() {
  auto& cache = planCache();
  while (cache.size() > capacity) {
    auto oldest = cache.begin();
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (it->second.lastUse < oldest->second.lastUse) oldest = it;
    }
    cache.erase(oldest);
  }
}

void checkOptions(const PlanOptions& o) {
  const uint32_t warps = o.threads / 32;
  if (o.threads % 32 != 0 || o.threads == 0 || o.threads > 1024 || (warps & (warps - 1)) != 0) {
    throw Error("array::PlanOptions: threads must be 32, 64, 128, 256, 512 or 1024; got " +
                std::to_string(o.threads));
  }
  if (o.items == 0 || o.items > 16) {
    throw Error("array::PlanOptions: items must be 1..16; got " + std::to_string(o.items));
  }
  if (o.reduceItems == 0 || o.reduceItems > 16) {
    throw Error("array::PlanOptions: reduceItems must be 1..16; got " +
                std::to_string(o.reduceItems));
  }
  if (o.segmentLanes == 0 || o.segmentLanes > 32 || (o.segmentLanes & (o.segmentLanes - 1)) != 0) {
    throw Error("array::PlanOptions: segmentLanes must be 1, 2, 4, 8, 16 or 32; got " +
                std::to_string(o.segmentLanes));
  }
  if (o.unroll == 0 || o.unroll > 16) {
    throw Error("array::PlanOptions: unroll must be 1..16; got " + std::to_string(o.unroll));
  }
  if (o.band > (1u << 16)) {
    throw Error("array::PlanOptions: band must be at most 65536 (0: by the sizes); got " +
                std::to_string(o.band));
  }
  if (o.blocks > (1u << 16)) {
    throw Error("array::PlanOptions: blocks must be at most 65536; got " +
                std::to_string(o.blocks));
  }
}

// The lengths of a plan's dims at the data's sizes, every binding checked.
struct Sizes {
  std::vector<uint64_t> dims;
  std::vector<uint32_t> bands;  // per pass: a column pass's band (rows a thread folds)
};

std::string shapeWord(Shape s) {
  return s == Shape::Scalar ? "a scalar" : s == Shape::Vector ? "a vector" : "a matrix";
}

void chooseBands(const PlanData& plan, Sizes& s);

// (side: where the arrays must be: on the GPU (true), on the host (false: a simulator run, or a
// GPU plan simulated), or either (a report needs only the extents))
Sizes resolve(const PlanData& plan, const Bindings& data, bool requireOutputs,
              std::optional<bool> side) {
  const bool gpu = side.value_or(false);
  const std::string where = gpu ? "device data (gpu::DeviceBuffer)" : "host data (std::vector)";
  // Inputs: bound, of their shape and type, on the plan's side.
  for (const detail::NodeInfo& n : plan.nodes) {
    if (n.node->op != OpKind::Input) continue;
    const std::string& name = n.node->name;
    const Bindings::Entry* e = data.find(name);
    if (!e) throw Error("array::Plan::run: input '" + name + "' is not bound");
    const bool scalar = n.node->shape == Shape::Scalar;
    if ((e->data.kind() == KernelArg::Kind::Scalar) != scalar ||
        (!scalar && e->shape != n.node->shape)) {
      throw Error("array::Plan::run: input '" + name + "' is " + shapeWord(n.node->shape) +
                  "; it is bound as " + shapeWord(e->shape));
    }
    if (e->data.type() != n.node->type) {
      throw Error("array::Plan::run: input '" + name + "' holds " +
                  std::string(scalarInfo(n.node->type).cudaName) + " elements; it is bound to " +
                  std::string(scalarInfo(e->data.type()).cudaName));
    }
    if (!scalar && side && e->data.onDevice() != gpu) {
      throw Error("array::Plan::run: input '" + name + "' must be " + where +
                  " for this plan's target");
    }
    if (n.node->shape == Shape::Matrix) {
      if (e->pitch < e->cols) {
        throw Error("array::Plan::run: matrix '" + name + "': the pitch (" +
                    std::to_string(e->pitch) + ") is less than the cols (" +
                    std::to_string(e->cols) + ")");
      }
      if (uint64_t{e->rows} * e->pitch > e->data.count()) {
        throw Error("array::Plan::run: matrix '" + name +
                    "': rows x pitch = " + std::to_string(uint64_t{e->rows} * e->pitch) +
                    " elements; its data holds " + std::to_string(e->data.count()));
      }
    }
  }
  Sizes s;
  s.dims.assign(plan.dims.size(), 0);
  std::vector<bool> done(plan.dims.size(), false);
  // A dim one less than another's (segments of CSR offsets) waits for that one.
  for (size_t round = 0; round < plan.dims.size(); ++round) {
    for (size_t di = 0; di < plan.dims.size(); ++di) {
      const detail::Dim& d = plan.dims[di];
      if (done[di]) continue;
      bool ready = true;
      for (const detail::DimSource& src : d.sources) {
        for (int f : src.from()) ready = ready && done[f];
      }
      if (!ready) continue;
      uint64_t len = 0;
      std::string first;
      for (const detail::DimSource& src : d.sources) {
        uint64_t v = src.length;
        std::string what;
        if (src.kind == detail::DimSource::Kind::Minus) {
          if (s.dims[src.dim] < src.length) {
            throw Error(
                "array::Plan::run: a slice (or a segmentedReduce's offsets) needs at least " +
                std::to_string(src.length) + " element(s) to drop; its vector has " +
                std::to_string(s.dims[src.dim]));
          }
          v = s.dims[src.dim] - src.length;
          what = "a slice or the segments of an offsets array (" + std::to_string(v) + ")";
        } else if (src.kind == detail::DimSource::Kind::Quotient) {
          if (s.dims[src.dim] % src.length != 0) {
            throw Error("array::Plan::run: reshape(v, " + std::to_string(src.length) + "): v's " +
                        std::to_string(s.dims[src.dim]) + " elements are not whole rows of " +
                        std::to_string(src.length));
          }
          v = s.dims[src.dim] / src.length;
          what = "a reshape's rows (" + std::to_string(v) + ")";
        } else if (src.kind == detail::DimSource::Kind::Product) {
          v = s.dims[src.dim] * s.dims[src.dim2];  // (each below 2^32: no overflow)
          what = "a flatten's length (" + std::to_string(v) + ")";
        } else if (src.kind == detail::DimSource::Kind::Static) {
          what = "a generate of " + std::to_string(v) + " elements";
        } else {
          const Bindings::Entry* e = data.find(src.input);
          v = src.kind == detail::DimSource::Kind::Length ? e->data.count()
              : src.kind == detail::DimSource::Kind::Rows ? e->rows
                                                          : e->cols;
          what = "'" + src.input + "' (" +
                 (src.kind == detail::DimSource::Kind::Length ? "its length"
                  : src.kind == detail::DimSource::Kind::Rows ? "its rows"
                                                              : "its cols") +
                 ", " + std::to_string(v) + ")";
        }
        if (first.empty()) {
          len = v;
          first = what;
        } else if (v != len) {
          throw Error("array::Plan::run: the program ties " + first + " to " + what +
                      " (zipWith, gemv and the other operations need equal extents)");
        }
      }
      if (len > 0xffffffffull) throw Error("array::Plan::run: an extent over 2^32 - 1 elements");
      s.dims[di] = len;
      done[di] = true;
    }
  }
  for (size_t d = 0; d < plan.dims.size(); ++d) {
    if (!done[d]) throw Error("array::Plan::run: internal: an extent was not resolved");
  }
  chooseBands(plan, s);
  // Outputs: bound, writable, of their type, large enough.
  for (const auto& [name, id] : plan.outputs) {
    const detail::NodeInfo& n = plan.nodes[id];
    const Bindings::Entry* e = data.find(name);
    if (!e) {
      if (!requireOutputs) continue;
      throw Error("array::Plan::run: output '" + name + "' is not bound (Bindings::output)");
    }
    if (e->data.kind() != KernelArg::Kind::Array || !e->data.writable()) {
      throw Error("array::Plan::run: output '" + name + "' must be bound to writable storage");
    }
    if (e->data.type() != n.node->type) {
      throw Error("array::Plan::run: output '" + name + "' holds " +
                  std::string(scalarInfo(n.node->type).cudaName) + " elements; it is bound to " +
                  std::string(scalarInfo(e->data.type()).cudaName));
    }
    if (side && e->data.onDevice() != gpu) {
      throw Error("array::Plan::run: output '" + name + "' must be " + where +
                  " for this plan's target");
    }
    const uint64_t need = n.slot0 < 0   ? 1
                          : n.slot1 < 0 ? s.dims[n.slot0]
                                        : s.dims[n.slot0] * s.dims[n.slot1];
    if (need > 0xffffffffull)
      throw Error("array::Plan::run: output '" + name + "' over 2^32 - 1 elements");
    if (e->data.count() < need) {
      throw Error("array::Plan::run: output '" + name + "' needs " + std::to_string(need) +
                  " elements; its storage holds " + std::to_string(e->data.count()));
    }
  }
  return s;
}

// A column pass's band: PlanOptions::band, or the largest of 256, 128, 64 that still gives
// the device about 24 warps an SM (the blas example's tuned rule: with fewer bands a tall matrix
// leaves SMs idle, with more each thread's fold is short and its partials many).
void chooseBands(const PlanData& plan, Sizes& s) {
  const PlanOptions& o = plan.options;
  s.bands.assign(plan.passes.size(), 0);
  for (size_t p = 0; p < plan.passes.size(); ++p) {
    const detail::Pass& pass = plan.passes[p];
    if (pass.layout != detail::Layout::ColumnBand && pass.layout != detail::Layout::Tile) continue;
    if (o.band) {
      s.bands[p] = o.band;
      continue;
    }
    const uint64_t rows = s.dims[pass.dimA], cols = s.dims[pass.dimB];
    const uint64_t fill = uint64_t{24} * o.target.smCount;
    if (pass.layout == detail::Layout::Tile) {  // a warp per (band, tile): 128 down to 16 rows
      const uint64_t tiles = (cols + 32 * detail::kTileLanes - 1) / (32 * detail::kTileLanes);
      uint32_t band = 128;
      for (; band > 16; band /= 2) {
        if ((rows + band - 1) / band * tiles >= fill) break;
      }
      s.bands[p] = band;
      continue;
    }
    const uint64_t tiles = (cols + o.threads - 1) / o.threads;
    uint32_t band = 256;
    for (; band > 64; band /= 2) {
      if ((rows + band - 1) / band * tiles * (o.threads / 32) >= fill) break;
    }
    s.bands[p] = band;
  }
}
uint64_t parts(const Sizes& s, const BufferInfo& b) {
  const uint32_t band = b.width ? b.width : s.bands[b.bandPass];
  return (s.dims[b.partsDim] + band - 1) / band;
}
uint64_t elements(const BufferInfo& b, const Sizes& s) {
  if (b.partsDim >= 0) return parts(s, b) * s.dims[b.dimA];
  uint64_t n = 1;
  if (b.dimA >= 0) n *= s.dims[b.dimA];
  if (b.dimB >= 0) n *= s.dims[b.dimB];
  return n;
}

// The first pass that touches each buffer.
std::vector<int> firstPasses(const PlanData& plan) {
  std::vector<int> first(plan.buffers.size(), -1);
  for (size_t p = 0; p < plan.passes.size(); ++p) {
    for (const ArgRef& a : plan.passes[p].args) {
      if (a.kind == ArgRef::Kind::Buffer && first[a.buffer] < 0) first[a.buffer] = int(p);
    }
  }
  return first;
}

}  // namespace

namespace detail {
// The pool's slots: intermediates whose lives do not overlap share one.
struct Pool {
  std::vector<int> slotOf;          // per buffer (-1: an output, or unused)
  std::vector<uint64_t> slotBytes;  // what each slot held last
  std::vector<std::vector<uint64_t>> host;
  std::vector<std::unique_ptr<gpu::DeviceBuffer<uint64_t>>> device;
  std::vector<std::shared_ptr<SortStorage>> sorts;  // per pass: a sort pass's storage
  std::mutex mutex;
};
}  // namespace detail

namespace {
// Assigns the plan's intermediates to slots by liveness (first fit on the pass intervals).
void assignSlots(const PlanData& plan, detail::Pool& pool) {
  const std::vector<int> first = firstPasses(plan);
  pool.slotOf.assign(plan.buffers.size(), -1);
  std::vector<int> busyUntil;  // per slot: the last pass of its current buffer
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    if (plan.buffers[b].output || first[b] < 0) continue;
    int slot = -1;
    for (size_t k = 0; k < busyUntil.size(); ++k) {
      if (busyUntil[k] < first[b]) {
        slot = static_cast<int>(k);
        break;
      }
    }
    if (slot < 0) {
      slot = static_cast<int>(busyUntil.size());
      busyUntil.push_back(-1);
    }
    busyUntil[slot] = plan.buffers[b].lastPass;
    pool.slotOf[b] = slot;
  }
  pool.slotBytes.assign(busyUntil.size(), 0);
  for (const detail::Pass& pass : plan.passes) {
    pool.sorts.push_back(pass.layout == detail::Layout::Sort ? detail::makeSortStorage() : nullptr);
  }
  pool.host.resize(busyUntil.size());
  pool.device.resize(busyUntil.size());
}
}  // namespace

Plan::Plan(std::vector<Output> outputs, const PlanOptions& options) : options_(options) {
  checkOptions(options);
  for (const Output& o : outputs) {
    if (!o.node) throw Error("array::Plan: output '" + o.name + "' is an empty value");
  }
  const std::string key = detail::structuralKey(outputs, options);
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    const auto it = planCache().find(key);
    if (it != planCache().end()) {
      it->second.lastUse = ++uses;
      data_ = it->second.plan;
      cached_ = true;
      return;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<PlanData> plan = detail::schedule(outputs, options);
  detail::emitKernels(*plan);
  plan->pool = std::make_shared<detail::Pool>();
  assignSlots(*plan, *plan->pool);
  plan->program = outputs;
  plan->planMilliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard<std::mutex> lock(cacheMutex);
  const auto [it, fresh] = planCache().emplace(key, Cached{plan, 0});
  it->second.lastUse = ++uses;
  data_ = it->second.plan;
  cached_ = !fresh;
  made += fresh;
  evictPastCapacity();
}

size_t Plan::plansMade() {
  std::lock_guard<std::mutex> lock(cacheMutex);
  return made;
}

void Plan::setCacheCapacity(size_t plans) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  capacity = plans;
  evictPastCapacity();
}

size_t Plan::cachedPlans() {
  std::lock_guard<std::mutex> lock(cacheMutex);
  return planCache().size();
}

size_t Plan::kernelCount() const { return data_->passes.size(); }

std::vector<std::pair<std::string, bool>> Plan::choices() const { return data_->choices; }

std::vector<Kernel> Plan::kernels() const {
  std::vector<Kernel> ks;
  for (const detail::Pass& p : data_->passes) ks.push_back(*p.kernel);
  return ks;
}

void Plan::run(const Bindings& data, const RunOptions& options) const {
  const PlanData& plan = *data_;
  const bool gpu = plan.options.target.gpu && !options.simulate;
  const Sizes sizes = resolve(plan, data, true, gpu);
  detail::Pool& pool = *plan.pool;
  std::lock_guard<std::mutex> lock(pool.mutex);  // one run of a plan at a time (its pool)
  // Slots big enough for this run.
  std::vector<uint64_t> need(pool.slotBytes.size(), 0);
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    if (pool.slotOf[b] < 0) continue;
    const uint64_t bytes =
        elements(plan.buffers[b], sizes) * scalarInfo(plan.buffers[b].type).bytes;
    need[pool.slotOf[b]] = std::max(need[pool.slotOf[b]], bytes);
  }
  for (size_t k = 0; k < need.size(); ++k) {
    const uint64_t words = std::max<uint64_t>(1, (need[k] + 7) / 8);
    if (gpu) {
      if (!pool.device[k] || pool.device[k]->size() < words) {
        pool.device[k] = std::make_unique<gpu::DeviceBuffer<uint64_t>>(words);
      }
    } else if (pool.host[k].size() < words) {
      pool.host[k].assign(words, 0);
    }
  }
  const auto bufferArg = [&](int b) -> KernelArg {
    const BufferInfo& info = plan.buffers[b];
    const uint64_t count = elements(info, sizes);
    if (info.output) {
      const KernelArg& bound = data.find(info.name)->data;
      if (bound.onDevice())
        return KernelArg::deviceArray(info.type, reinterpret_cast<uintptr_t>(bound.data()), count,
                                      true);
      return detail::withType(info.type, [&]<class X>() {
        return KernelArg(std::span<X>(static_cast<X*>(bound.data()), count));
      });
    }
    const int slot = pool.slotOf[b];
    if (gpu) return KernelArg::deviceArray(info.type, pool.device[slot]->address(), count, true);
    return detail::withType(info.type, [&]<class X>() {
      return KernelArg(std::span<X>(reinterpret_cast<X*>(pool.host[slot].data()), count));
    });
  };
  if (options.simulated) options.simulated->clear();
  for (size_t p = 0; p < plan.passes.size(); ++p) {
    const detail::Pass& pass = plan.passes[p];
    std::vector<KernelArg> args;
    for (const ArgRef& a : pass.args) {
      switch (a.kind) {
        case ArgRef::Kind::DimLength:
          args.emplace_back(static_cast<uint32_t>(sizes.dims[a.dim]));
          break;
        case ArgRef::Kind::Parts:
          args.emplace_back(static_cast<uint32_t>(parts(sizes, plan.buffers[a.buffer])));
          break;
        case ArgRef::Kind::Band: args.emplace_back(sizes.bands[a.pass]); break;
        case ArgRef::Kind::Literal: {
          const ExpPtr& v = plan.nodes[a.node].node->body;
          args.push_back(detail::withType(v->type, [&]<class X>() {
            if constexpr (std::is_floating_point_v<X>) return KernelArg(static_cast<X>(v->real));
            return KernelArg(static_cast<X>(v->bits));
          }));
          break;
        }
        case ArgRef::Kind::Buffer: args.push_back(bufferArg(a.buffer)); break;
        case ArgRef::Kind::Input: {
          const Bindings::Entry& e = *data.find(a.input);
          args.push_back(e.data);
          if (e.shape == Shape::Matrix) {
            args.emplace_back(e.rows);
            args.emplace_back(e.cols);
            args.emplace_back(e.pitch);
          }
          break;
        }
      }
    }
    const bool last = p + 1 == plan.passes.size();
    if (pass.layout == detail::Layout::Sort) {
      detail::runSort(plan, int(p), args, gpu, options, last, *pool.sorts[p]);
    } else if (gpu) {
      gpu::LaunchOptions lo;
      lo.stream = options.stream;
      lo.synchronize = options.synchronize && last;
      gpu::launch(*pass.kernel, args, lo);
    } else {
      const SimStats stats = simulate(*pass.kernel, args, options.simulation);
      if (options.simulated) options.simulated->push_back(stats);
    }
  }
  // Contracts: each check holds the first failing element's index (~0u: none). Reading one
  // on the GPU waits for the plan.
  for (const auto& [contract, check] : plan.checks) {
    const detail::NodeInfo& c = plan.nodes[check];
    const int slot = pool.slotOf[c.buffer];
    uint32_t first = ~0u;
    if (gpu) {
      // (the plan's kernels ran on options.stream, which the default stream does not wait for)
      if (options.stream) options.stream->synchronize();
      gpu::detail::copyToHost(gpu::Device::get(), &first, pool.device[slot]->address(),
                              sizeof(first));
    } else {
      std::memcpy(&first, pool.host[slot].data(), sizeof(first));
    }
    if (first == ~0u) continue;
    const detail::NodeInfo& k = plan.nodes[contract];
    const bool scalar = k.node->shape == Shape::Scalar;
    throw Error("array::Plan::run: " + k.node->label + "(" + detail::describe(plan, k.args[0]) +
                ", ..., \"" + k.node->name + "\") fails" +
                (scalar ? std::string() : " at element " + std::to_string(first)));
  }
}

namespace {
std::vector<std::string> names(const PlanData& plan, const std::vector<int>& ids) {
  std::vector<std::string> out;
  for (int id : ids) out.push_back(detail::describe(plan, id));
  return out;
}

// The operations a pass computes: its stores, reductions and finishes and every inlined value
// under them (not other passes' values).
void inlined(const PlanData& plan, int p, int id, std::set<int>& seen, std::vector<int>& out) {
  if (!seen.insert(id).second) return;
  const detail::NodeInfo& n = plan.nodes[id];
  if (n.node->op == OpKind::Input || n.node->op == OpKind::Constant) return;
  if (n.producer >= 0 && n.producer != p) return;
  for (int a : n.args) inlined(plan, p, a, seen, out);
  out.push_back(id);
}

double passBytes(const PlanData& plan, const detail::Pass& pass, const Bindings& data,
                 const Sizes& sizes, std::vector<std::string>* reads,
                 std::vector<std::string>* writes) {
  double bytes = 0;
  for (const ArgRef& a : pass.args) {
    if (a.kind == ArgRef::Kind::Input) {
      const Bindings::Entry* e = data.find(a.input);
      if (!e || e->data.kind() != KernelArg::Kind::Array) {
        if (reads) reads->push_back(a.input);
        continue;
      }
      const uint64_t n = e->shape == Shape::Matrix ? uint64_t{e->rows} * e->cols : e->data.count();
      bytes += double(n) * scalarInfo(e->data.type()).bytes;
      if (reads) reads->push_back(a.input);
    } else if (a.kind == ArgRef::Kind::Buffer) {
      const BufferInfo& b = plan.buffers[a.buffer];
      bytes += double(elements(b, sizes)) * scalarInfo(b.type).bytes;
      bool written = false;
      for (int s : pass.stores) written |= plan.nodes[s].buffer == a.buffer;
      for (int s : pass.epilogue) written |= plan.nodes[s].buffer == a.buffer;
      for (int s : pass.reductions) written |= plan.nodes[s].buffer == a.buffer;
      for (int s : pass.finishes) written |= plan.nodes[s].finished == a.buffer;
      for (int s : pass.inits) written |= plan.nodes[s].buffer == a.buffer;
      for (int s : pass.scatters) written |= plan.nodes[s].buffer == a.buffer;
      if (written && writes) writes->push_back(b.name);
      if (!written && reads) reads->push_back(b.name);
    }
  }
  if (pass.layout == detail::Layout::Sort) {  // (its digits' passes read and write it again)
    bytes = detail::sortBytes(plan, int(&pass - plan.passes.data()), sizes.dims[pass.dimA]);
  }
  return bytes;
}
}  // namespace

PlanReport Plan::report(const Bindings& data) const {
  const PlanData& plan = *data_;
  const Sizes sizes = resolve(plan, data, false, std::nullopt);
  PlanReport r;
  for (size_t p = 0; p < plan.passes.size(); ++p) {
    const detail::Pass& pass = plan.passes[p];
    PassReport k;
    k.name = pass.layout == detail::Layout::Sort ? "pass" + std::to_string(p) + "_sort"
                                                 : pass.kernel->name();
    k.kind = detail::layoutName(pass.layout);
    std::set<int> seen;
    std::vector<int> ops;
    for (const auto* list :
         {&pass.stores, &pass.reductions, &pass.finishes, &pass.epilogue, &pass.scatters}) {
      for (int id : *list) inlined(plan, int(p), id, seen, ops);
    }
    for (int id : pass.inits) inlined(plan, int(p), plan.nodes[id].args[0], seen, ops);
    k.fuses = names(plan, ops);
    for (int id : pass.inits) k.fuses.push_back("the defaults of " + detail::describe(plan, id));
    k.bytes = passBytes(plan, pass, data, sizes, &k.reads, &k.writes);
    k.boundary = pass.boundary.empty() ? "the last kernel" : pass.boundary;
    r.bytes += k.bytes;
    r.kernels.push_back(std::move(k));
  }
  std::shared_ptr<PlanData> unfusedPlan;
  if (plan.options.fuse) {
    std::lock_guard<std::mutex> lock(data_->unfusedMutex);
    if (!data_->unfused) {
      PlanOptions o = plan.options;
      o.fuse = false;
      o.choices.clear();
      data_->unfused = detail::schedule(plan.program, o);
      detail::emitKernels(*data_->unfused);
    }
    unfusedPlan = data_->unfused;
  }
  const PlanData& unfused = unfusedPlan ? *unfusedPlan : plan;
  r.unfusedKernels = static_cast<uint32_t>(unfused.passes.size());
  const Sizes unfusedSizes = resolve(unfused, data, false, std::nullopt);
  for (const detail::Pass& pass : unfused.passes) {
    r.unfusedBytes += passBytes(unfused, pass, data, unfusedSizes, nullptr, nullptr);
  }
  r.planMilliseconds = cached_ ? 0 : plan.planMilliseconds;
  return r;
}

std::string PlanReport::str() const {
  std::ostringstream o;
  o << kernels.size() << " kernel(s), " << bytes / 1e6 << " MB moved (unfused: " << unfusedKernels
    << " kernel(s), " << unfusedBytes / 1e6 << " MB)\n";
  for (const PassReport& k : kernels) {
    o << "  " << k.name << " (" << k.kind << ", " << k.bytes / 1e6 << " MB)\n    computes:";
    for (const std::string& f : k.fuses) o << " [" << f << "]";
    o << "\n    reads:";
    for (const std::string& x : k.reads) o << " " << x;
    o << "\n    writes:";
    for (const std::string& x : k.writes) o << " [" << x << "]";
    o << "\n    ends: " << k.boundary << "\n";
  }
  return o.str();
}

}  // namespace obsidian::array
