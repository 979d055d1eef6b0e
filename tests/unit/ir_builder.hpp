// Hand-built IR for the pass tests: a kernel with input in0, output out0 and length n0, and
// short names for the expressions and statements the tests assemble.
#pragma once

#include <obsidian/ir.hpp>
#include <string>

#include "codegen/virtualize.hpp"

namespace obsidian::testing {

inline ExpPtr V(const char* name) { return ir::var(ScalarType::U32, name); }
inline ExpPtr lit(uint32_t n) { return ir::u32(n); }
inline ExpPtr add(const ExpPtr& a, const ExpPtr& b) { return ir::binary(BinOp::Add, a, b); }
inline ExpPtr mul(const ExpPtr& a, const ExpPtr& b) { return ir::binary(BinOp::Mul, a, b); }
inline ExpPtr sub(const ExpPtr& a, const ExpPtr& b) { return ir::binary(BinOp::Sub, a, b); }
inline ExpPtr rd(ArrayId a, const ExpPtr& i) { return ir::index(ScalarType::U32, a, i); }

struct Ir {
  KernelIR k;
  ArrayId in, out;

  explicit Ir(uint32_t threads, const std::string& name = "hand") {
    k.name = name;
    k.threadsPerBlock = threads;
    in = array("in0", MemorySpace::Global, Level::Grid, 0);
    out = array("out0", MemorySpace::Global, Level::Grid, 0);
    k.params = {Param{ParamKind::Array, "in0", ScalarType::U32, in, false, V("n0")},
                Param{ParamKind::Length, "n0", ScalarType::U32, 0, false, nullptr},
                Param{ParamKind::Array, "out0", ScalarType::U32, out, true, V("n0")}};
  }
  ArrayId array(const std::string& name, MemorySpace space, Level level, uint32_t length) {
    ArrayDecl d;
    d.name = name;
    d.space = space;
    d.level = level;
    d.length = length;
    d.writable = name != "in0";
    k.arrays.push_back(d);
    return static_cast<ArrayId>(k.arrays.size() - 1);
  }
  ArrayId shared(const std::string& name, uint32_t length, Level level = Level::Block) {
    return array(name, MemorySpace::Shared, level, length);
  }
  // dst[ix] = value for var < n, in parallel at `level`.
  static Stmt par(Level level, uint32_t n, const char* var, ArrayId dst, const ExpPtr& ix,
                  const ExpPtr& value) {
    return ForAll{level, lit(n), var, {Assign{dst, ix, value}}};
  }
  // The block program runs over n0 virtual blocks.
  void blocks(Body b) { k.body.push_back(DistrPar{Level::Block, V("n0"), "bid", std::move(b)}); }
  Body& blockBody() { return std::get<DistrPar>(k.body.at(0).node).body; }
};

}  // namespace obsidian::testing
