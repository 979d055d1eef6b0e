// Writes whole-array programs exported by array::Plan::exportHeader (one header each, in its
// own namespace) for tests/array_export/checks.cu. Planned for a GPU target built by hand
// (sm_90, 132 SMs), so that the generator runs without a GPU.
// Usage: obsidian-array-export-gen <output directory>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <obsidian/array.hpp>
#include <obsidian/obsidian.hpp>

using namespace obsidian;
using namespace obsidian::array;

namespace {

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw Error("cannot write " + path.string());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " <output directory>\n";
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    PlanOptions o;
    o.target = device::Target{true, 90, 132};
    {  // AXPYDOT: z = w - 0.75 v; r = z . u (one vector pass)
      const auto w = vectorInput<float>("w"), v = vectorInput<float>("v"),
                 u = vectorInput<float>("u");
      const auto z = w - 0.75f * v;
      write(dir / "array_axpydot.cuh",
            Plan({{"z", z}, {"r", dot(z, u)}}, o).exportHeader("axpydot", "arrays::axpydot"));
    }
    {  // GEMVER: B = A + u1 v1^T; x = -1.25 B^T y + z; w = 0.75 B x (column, vector, row passes)
      const auto A = matrixInput<float>("A");
      const auto u1 = vectorInput<float>("u1"), v1 = vectorInput<float>("v1"),
                 y = vectorInput<float>("y"), z = vectorInput<float>("z");
      const auto B = A + outer(u1, v1);
      const auto x = -1.25f * gemvT(B, y) + z;
      const auto w = 0.75f * gemv(B, x);
      write(dir / "array_gemver.cuh",
            Plan({{"B", B}, {"x", x}, {"w", w}}, o).exportHeader("gemver", "arrays::gemver"));
    }
    {  // GEMVER unfused: one kernel per operation, every intermediate stored (the liveness frees)
      PlanOptions unfused = o;
      unfused.fuse = false;
      const auto A = matrixInput<float>("A");
      const auto u1 = vectorInput<float>("u1"), v1 = vectorInput<float>("v1"),
                 y = vectorInput<float>("y"), z = vectorInput<float>("z");
      const auto B = A + outer(u1, v1);
      const auto x = -1.25f * gemvT(B, y) + z;
      const auto w = 0.75f * gemv(B, x);
      write(
          dir / "array_gemver_unfused.cuh",
          Plan({{"B", B}, {"x", x}, {"w", w}}, unfused).exportHeader("gemver", "arrays::unfused"));
    }
    {  // One conjugate-gradient step: a scalar input, scalars computed between kernels
      const auto values = vectorInput<float>("values");
      const auto columns = vectorInput<uint32_t>("columns"),
                 offsets = vectorInput<uint32_t>("offsets");
      const auto p = vectorInput<float>("p"), x = vectorInput<float>("x"),
                 r = vectorInput<float>("r");
      const auto rho = scalarInput<float>("rho");
      const auto q = spmv(values, columns, offsets, p);
      const auto alpha = rho / dot(p, q);
      const auto r1 = r - alpha * q;
      write(dir / "array_cg.cuh",
            Plan({{"x1", x + alpha * p}, {"r1", r1}, {"rho1", dot(r1, r1)}}, o)
                .exportHeader("cgStep", "arrays::cg"));
    }
    {  // Reads at computed places (row, column, at) and a product's diagonal (m square)
      const auto m = matrixInput<float>("m");
      const auto k = scalarInput<uint32_t>("k");
      write(dir / "array_pick.cuh",
            Plan({{"r", row(m, k) * at(column(m, k), k)}, {"d", diagonal(matmul(m, m))}}, o)
                .exportHeader("pick", "arrays::pick"));
    }
    {  // Reshapes: row sums of v as rows of 7 (len(v) a multiple of 7), and a pitched m flattened
      const auto v = vectorInput<float>("v");
      const auto m = matrixInput<float>("m");
      write(dir / "array_reshape.cuh",
            Plan({{"rs", rowReduce(Sum{}, reshape(v, 7))}, {"fl", 2.0f * flatten(m)}}, o)
                .exportHeader("reshape", "arrays::reshape"));
    }
    {  // The user's kernels: z = a (2 v) + u (elementwise, its map stored first), then z
       // (of 100003 elements) reversed by another kernel (reads anywhere) plus 1, and z's sum
      const Kernel axpy = capture("userAxpy", 128, [](EFloat a, DPull<EFloat> x, DPull<EFloat> y) {
        return push<Grid>(
            zipWith([a](const EFloat& p, const EFloat& q) { return a * p + q; }, x, y));
      });
      const Kernel reverse = capture("userReverse", 64, [](DPull<EFloat> x) {
        return push<Grid>(ixMap([n = len(x)](const EWord32& i) { return n - 1u - i; }, x));
      });
      const auto a = scalarInput<float>("a");
      const auto v = vectorInput<float>("v"), u = vectorInput<float>("u");
      const auto z = callElementwise<float>(axpy, a, 2.0f * v, u);
      const auto w = call<float>(reverse, 100003, z) + 1.0f;  // (checks.cu's length)
      write(dir / "array_call.cuh",
            Plan({{"z", z}, {"w", w}, {"r", sum(z)}}, o).exportHeader("calls", "arrays::calls"));
    }
    {  // Sorts: a computed u32 operand ascending and an input descending (the histograms of
       // both orders), f32 keys' order as indices read by a gather after the sort, and u64
       // keys moving f32 values (eight digits: another starts kernel)
      const auto k = vectorInput<uint32_t>("k");
      const auto f = vectorInput<float>("f");
      const auto w = vectorInput<uint64_t>("w");
      write(dir / "array_sorts.cuh", Plan({{"up", sort(k * 3u)},
                                           {"down", sort(k, Order::Descending)},
                                           {"byF", gather(k, sortIndices(f, Order::Descending))},
                                           {"byW", sortByKey(w, f)}},
                                          o)
                                         .exportHeader("sorts", "arrays::sorts"));
    }
    {  // A histogram (permute: the defaults' pass, then atomics)
      const auto idx = vectorInput<uint32_t>("idx");
      write(
          dir / "array_histogram.cuh",
          Plan({{"counts", histogram(64, idx)}}, o).exportHeader("histogram", "arrays::histogram"));
    }
    {  // BiCGK: q = A p, s = A^T r from one read of A (a tile pass)
      const auto A = matrixInput<float>("A");
      const auto p = vectorInput<float>("p"), r = vectorInput<float>("r");
      write(
          dir / "array_bicgk.cuh",
          Plan({{"q", gemv(A, p)}, {"s", gemvT(A, r)}}, o).exportHeader("bicgk", "arrays::bicgk"));
    }
    {  // CSR SpMV with an epilogue: out = 2 A x - y (segments: len(offsets) - 1)
      const auto values = vectorInput<float>("values"), x = vectorInput<float>("x"),
                 y = vectorInput<float>("y");
      const auto columns = vectorInput<uint32_t>("columns"),
                 offsets = vectorInput<uint32_t>("offsets");
      write(dir / "array_spmv.cuh", Plan({{"out", 2.0f * spmv(values, columns, offsets, x) - y}}, o)
                                        .exportHeader("spmv", "arrays::spmv"));
    }
    {  // A scan of a map with a scalar input, a sum and a forward difference (slices)
      const auto v = vectorInput<uint32_t>("v");
      const auto s = scalarInput<uint32_t>("s");
      write(dir / "array_scan.cuh", Plan({{"inc", inclusiveScan(Sum{}, v * s)},
                                          {"total", sum(v)},
                                          {"diff", slice(v, 1, 0) - slice(v, 0, 1)}},
                                         o)
                                        .exportHeader("scan", "arrays::scan"));
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
