// KernelReport::traffic and gridPasses (see traffic.hpp).
#include "kernel/traffic.hpp"

#include "ir/ir_walk.hpp"
#include "obsidian/types.hpp"

namespace obsidian {
namespace {

bool isGlobal(const ArrayDecl& a) {
  return a.space == MemorySpace::Global || a.space == MemorySpace::GridState;
}

void countSites(const Body& body, const std::vector<ArrayDecl>& arrays,
                std::vector<ReportTraffic>& out) {
  for (const Stmt& s : body) {
    ir::forEachExp(s, [&](const ExpPtr& e) {
      ir::anyNode(e, [&](const ExpNode& n) {
        if (n.kind == ExpKind::Index && isGlobal(arrays[n.array])) ++out[n.array].loads;
        return false;
      });
    });
    if (const auto* a = std::get_if<Assign>(&s.node); a && isGlobal(arrays[a->array])) {
      ++out[a->array].stores;
    }
    if (const auto* a = std::get_if<StoreVector>(&s.node)) ++out[a->array].stores;  // global
    if (const auto* a = std::get_if<Atomic>(&s.node); a && isGlobal(arrays[a->array])) {
      ++out[a->array].atomics;
    }
    for (const Body* b : ir::childBodies(s)) countSites(*b, arrays, out);
  }
}

}  // namespace

std::vector<ReportTraffic> globalTraffic(const KernelIR& k) {
  std::vector<ReportTraffic> all(k.arrays.size());
  countSites(k.body, k.arrays, all);
  std::vector<ReportTraffic> out;
  for (size_t a = 0; a < k.arrays.size(); ++a) {
    if (!isGlobal(k.arrays[a])) continue;
    all[a].array = k.arrays[a].name;
    all[a].type = std::string(cudaTypeName(k.arrays[a].type));
    out.push_back(std::move(all[a]));
  }
  return out;
}

uint32_t gridPasses(const KernelIR& reified) {
  uint32_t n = 0;
  auto visit = [&](const Body& body, auto& self) -> void {
    for (const Stmt& s : body) {
      if (std::holds_alternative<DistrPar>(s.node) || std::holds_alternative<ForAll>(s.node)) {
        ++n;  // a grid loop; what it nests is inside the pass
      } else {
        for (const Body* b : ir::childBodies(s)) self(*b, self);
      }
    }
  };
  visit(reified.body, visit);
  return n;
}

}  // namespace obsidian
