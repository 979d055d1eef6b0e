// Wide loads and stores (see include/obsidian/vector_load.hpp).
#include "obsidian/vector_load.hpp"

#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "obsidian/program.hpp"

namespace obsidian::detail {
namespace {

bool mentionsProbe(const ExpPtr& e) {
  std::set<std::string> vars;
  ir::varsIn(e, vars);
  return vars.count(kProbe) > 0;
}

// base such that ix == base + probe, for an index that adds the probe once (through nested
// additions); null otherwise.
ExpPtr baseOf(const ExpPtr& ix) {
  if (ix->kind == ExpKind::Var && ix->name == kProbe) return ir::u32(0);
  if (ix->depth > 4096) return nullptr;  // runs on the user's stack: no deep recursion
  if (ix->kind != ExpKind::Binary || ix->binOp != BinOp::Add) return nullptr;
  const bool left = mentionsProbe(ix->args[0]), right = mentionsProbe(ix->args[1]);
  if (left == right) return nullptr;
  const ExpPtr& withProbe = left ? ix->args[0] : ix->args[1];
  const ExpPtr& other = left ? ix->args[1] : ix->args[0];
  ExpPtr inner = baseOf(withProbe);
  return inner ? ir::binary(BinOp::Add, inner, other) : nullptr;
}

}  // namespace

VectorSource vectorSource(uint32_t width, const ExpPtr& probed) {
  const std::string call = "vectors<" + std::to_string(width) + ">";
  Context* ctx = currentContext();
  if (!ctx) throw Error(call + " is used inside a kernel capture");
  KernelIR& k = ctx->kernel();
  if (probed->kind == ExpKind::Index)
    ctx->checkOwn(ArrayRef{probed->array, probed->origin}, call.c_str());
  if (probed->kind != ExpKind::Index || probed->vecWidth > 1 ||
      k.arrays.at(probed->array).space != MemorySpace::Global) {
    throw Error(call +
                " needs an array that reads a global array directly (a kernel parameter "
                "or a splitUp/splitAt/halve piece of one); element i of this one is " +
                ir::printExp(probed, k.arrays));
  }
  ArrayDecl& a = k.arrays[probed->array];
  ExpPtr base = baseOf(probed->args[0]);
  if (!base) {
    throw Error(call + " needs element i to be " + a.name + "[base + i]; got " +
                ir::printExp(probed, k.arrays));
  }
  if (ir::knownMultiple(base) % width != 0) {
    throw Error(call + " needs the array to start at a multiple of " + std::to_string(width) +
                " elements of " + a.name + " (so that every vector is aligned); it starts at " +
                ir::printExp(base, k.arrays));
  }
  a.alignment = std::max(a.alignment, width * sizeOf(a.type));
  return VectorSource{probed->array, base, probed->origin};
}

ExpPtr vectorLane(const VectorSource& s, ScalarType t, uint32_t width, const EWord32& j,
                  uint32_t lane) {
  const ExpPtr w = ir::u32(width);
  const ExpPtr element =
      ir::binary(BinOp::Add, s.base,
                 ir::binary(BinOp::Add, ir::binary(BinOp::Mul, j.node(), w), ir::u32(lane)));
  const ExpPtr vector = ir::binary(BinOp::Add, ir::binary(BinOp::Div, s.base, w), j.node());
  return ir::vectorIndex(t, s.array, element, vector, width, lane, s.origin);
}

uint32_t unvectorsLength(uint32_t width, uint32_t n) {
  if (uint64_t{n} * width > 0xffffffffu) {
    throw Error("unvectors<" + std::to_string(width) + ">: " + std::to_string(n) +
                " vectors are more than 2^32 - 1 elements");
  }
  return n * width;
}

EWord32 unvectorsLength(uint32_t width, const EWord32& n) {
  requireLength(n <= EWord32(0xffffffffu / width), "unvectors<" + std::to_string(width) +
                                                       ">: the vectors' elements number at most "
                                                       "2^32 - 1");
  return n * EWord32(width);
}

void writeVector(const Program<Thread>& t, ScalarType type, const ScalarWriter& w,
                 const std::vector<ExpPtr>& values, const EWord32& j) {
  const auto width = static_cast<uint32_t>(values.size());
  const std::string call = "unvectors<" + std::to_string(width) + ">";
  // Probe the writer with variables for the value and the index; its statements are dropped.
  const std::string valueProbe = "__vector_value";
  Body scratch;
  w(Program<Thread>(t.context(), scratch), ir::var(type, valueProbe), variable<uint32_t>(kProbe));
  const Assign* a = scratch.size() == 1 ? std::get_if<Assign>(&scratch[0].node) : nullptr;
  KernelIR& k = t.context().kernel();
  ExpPtr base;
  if (a && k.arrays.at(a->array).space == MemorySpace::Global && a->value->kind == ExpKind::Var &&
      a->value->name == valueProbe && (base = baseOf(a->index))) {
    std::set<std::string> vars;
    ir::varsIn(base, vars);
    if (vars.count(valueProbe) == 0) {
      ArrayDecl& arr = k.arrays[a->array];
      OBSIDIAN_ASSERT(arr.type == type, "a writer of X writes an array of X");
      if (ir::knownMultiple(base) % width != 0) {
        throw Error(call + " needs its output to start at a multiple of " + std::to_string(width) +
                    " elements of " + arr.name +
                    " (so that every vector is aligned); it starts "
                    "at " +
                    ir::printExp(base, k.arrays));
      }
      arr.alignment = std::max(arr.alignment, width * sizeOf(type));
      const ExpPtr wE = ir::u32(width);
      const ExpPtr index = ir::binary(BinOp::Add, base, ir::binary(BinOp::Mul, j.node(), wE));
      const ExpPtr vector = ir::binary(BinOp::Add, ir::binary(BinOp::Div, base, wE), j.node());
      t.emit(StoreVector{a->array, index, vector, values});
      return;
    }
  }
  for (uint32_t lane = 0; lane < width; ++lane) {
    w(t, values[lane], j * EWord32(width) + EWord32(lane));
  }
}

}  // namespace obsidian::detail
