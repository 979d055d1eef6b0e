// Pass: reuse barriers (see reuse_barriers.hpp).
#include "memmap/reuse_barriers.hpp"

#include "ir/ir_walk.hpp"

namespace obsidian {
namespace {

bool endsWithSync(const Body& b, Level level) {
  if (b.empty()) return false;
  const auto* s = std::get_if<Sync>(&b.back().node);
  return s && s->level == level;
}

bool visit(Body& b, const Liveness& live) {
  bool changed = false;
  for (Stmt& s : b) {
    for (Body* child : ir::childBodies(s)) changed = visit(*child, live) || changed;
  }
  const auto it = live.needsTrailingSync.find(&b);
  if (it != live.needsTrailingSync.end() && !endsWithSync(b, it->second)) {
    b.push_back(Sync{it->second});
    changed = true;
  }
  return changed;
}

}  // namespace

bool insertReuseBarriers(KernelIR& k, const Liveness& live) {
  return live.needsTrailingSync.empty() ? false : visit(k.body, live);
}

}  // namespace obsidian
