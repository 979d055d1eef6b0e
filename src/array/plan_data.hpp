// Whole-array programs: what the planner decides (schedule.cpp), the kernels made from it
// (emit.cpp) and what a run needs (run.cpp). Internal to src/array/.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "obsidian/array/plan.hpp"

namespace obsidian::array::detail {

// An extent of the program (a vector's length, a matrix's rows or cols), shared by every value
// the operations tie together; its length comes from the inputs bound at run (or a generate).
struct DimSource {
  enum class Kind : uint8_t { Length, Rows, Cols, Static, Minus, Quotient, Product } kind;
  std::string input;    // the input it is read from (Length, Rows, Cols)
  uint64_t length = 0;  // Static: the length; Minus: the amount; Quotient: the divisor
  int dim = -1;         // Minus: `length` less than this dim's length (a slice; CSR segments);
                        // Quotient: this dim's length over `length` (a reshape's rows: a
                        // multiple of it); Product: this dim's length times dim2's (a flatten)
  int dim2 = -1;
  // The dims it is computed from (none, one or two).
  std::vector<int> from() const {
    if (kind == Kind::Product) return {dim, dim2};
    if (kind == Kind::Minus || kind == Kind::Quotient) return {dim};
    return {};
  }
};
struct Dim {
  std::vector<DimSource> sources;
};

// How a matrix pass walks its matrix (the kernel's shape), or a vector or scalar pass.
enum class Layout : uint8_t {
  Scalar,   // one thread: scalar outputs that are not reductions
  Vector,   // a grid-stride loop over tiles of a vector; whole reductions by partials + last block
  Matrix,   // a grid loop over the elements of a matrix (stores only)
  RowWarp,  // a warp per row: row reductions (and an epilogue over the row's results); with
            // Pass::offsets, a warp per segment of a vector (segmented reductions)
  ColumnBand,  // a thread per column over a band of rows: column reductions' partials
  Scan,        // a scan (device::scanAll: tiles, look-back), its input computed as it loads
  Sort,        // a sort (device::radixSortKeys/Pairs: several kernels), of stored arrays
  Call,        // the user's kernel (call), launched as it is on stored arrays
  Tile         // a warp per (band of rows, tile of 32 x kTileLanes columns): row and column
               // reductions of one matrix from one read (BiCGK's q = A p and s = A^T r), both
               // as partials
};
// Columns each lane of a Tile pass owns (a warp's tile: 32 x kTileLanes columns).
inline constexpr uint32_t kTileLanes = 4;
const char* layoutName(Layout l);
// A pass whose kernels are not the planner's (the device sort, the user's kernel): planSort and
// planCall give its arguments, its operands' arrays and then its result's.
inline bool opaque(Layout l) { return l == Layout::Sort || l == Layout::Call; }

// How a node's value is kept between kernels.
enum class Storage : uint8_t {
  Inline,    // recomputed wherever it is read
  Full,      // a buffer of all its elements (a scalar: one element)
  Partials,  // a column reduction: ceil(rows / band) x cols partials, folded where read
};

struct NodeInfo {
  NodePtr node;
  std::vector<int> args;       // node ids
  int slot0 = -1, slot1 = -1;  // dims (vector: slot0; matrix: rows, cols), resolved
  Storage storage = Storage::Inline;
  bool finish = false;  // a column reduction also folded into a Full buffer (`finished`)
  int level = 0;        // the pass level that computes it
  int randomLevel = 0;  // inlined: the level from which it can be read at any index
  int initLevel = -1;   // a permute: the level whose pass copies its defaults
  int producer = -1;    // the pass that computes and stores it (-1: inline or input)
  int finisher = -1;    // the pass that folds a column reduction's partials (finish)
  int buffer = -1;      // its buffer (Full, or Partials)
  int finished = -1;    // the Full buffer of a finished column reduction
  std::string output;   // the output it is, if any
};

// An array a plan's kernels pass among themselves or to the user.
struct BufferInfo {
  std::string name;  // the output's name, or a name for the report
  ScalarType type;
  bool output = false;       // the user's storage (Bindings::output)
  int dimA = -1, dimB = -1;  // elements: len(dimA) * len(dimB) (-1: 1)
  int partsDim = -1;         // Partials: ceil(len(partsDim) / band) x len(dimA), where band is
  int bandPass = -1;         // the band of the pass that writes them (chosen at run), or
  uint32_t width = 0;        // a fixed width (a Tile pass's row partials: one per column tile)
  int lastPass = -1;         // the last pass that reads or writes it
};

// One kernel argument, by what the run fills it with.
struct ArgRef {
  enum class Kind : uint8_t { Input, Buffer, DimLength, Parts, Band, Literal } kind;
  std::string input;  // Input: the bound name
  int buffer = -1;    // Buffer; Parts: the partials' buffer
  int dim = -1;       // DimLength
  int pass = -1;      // Band: the column pass
  int node = -1;      // Literal: a Constant node (its value)
};

struct Pass {
  Layout layout;
  int level = 0;
  int dimA = -1, dimB = -1;      // its space: vector: dimA; matrix: rows, cols
  int offsets = -1;              // a segment pass: the offsets' node (dimA: the segments)
  std::vector<int> stores;       // nodes it stores (in their space)
  std::vector<int> reductions;   // reductions it computes
  std::vector<int> finishes;     // column reductions whose partials it folds into Full buffers
  std::vector<int> epilogue;     // RowWarp: row-space nodes stored from the row's results
  std::vector<int> inits;        // permutes whose defaults it copies into their buffers
  std::vector<int> scatters;     // permutes whose values it combines in (atomics)
  std::vector<int> leaves;       // nodes it reads from arrays (found by emit's walk)
  std::optional<Kernel> kernel;  // made by emitKernels
  std::vector<ArgRef> args;
  std::string boundary;  // why it is not part of the next pass
};

struct Pool;
struct PlanData {
  PlanOptions options;
  std::shared_ptr<Pool> pool;   // the run's intermediates (run.cpp)
  std::vector<NodeInfo> nodes;  // in topological order (operands first)
  std::vector<Dim> dims;
  std::vector<Pass> passes;
  std::vector<BufferInfo> buffers;
  std::vector<std::pair<std::string, int>> outputs;   // name, node
  std::vector<std::pair<int, int>> checks;            // contract node, its check node
  std::vector<std::pair<std::string, bool>> choices;  // the decisions met, and the side taken
  double planMilliseconds = 0;
  uint32_t unfusedKernels = 0;
  // The same program planned without fusion, made by the first report() (its outputs kept
  // for that).
  std::vector<Output> program;
  std::shared_ptr<PlanData> unfused;
  std::mutex unfusedMutex;
};

// The planner: nodes, dims, storage, levels and passes (no kernels yet).
std::shared_ptr<PlanData> schedule(const std::vector<Output>& outputs, const PlanOptions& options);
// The kernels of every pass, and their arguments.
void emitKernels(PlanData& plan);
// A node's description for reports: "zipWith#3", "x", "rowReduce(sum)#5".
std::string describe(const PlanData& plan, int node);
// The structural key of a program (its nodes and outputs) and planning options.
std::string structuralKey(const std::vector<Output>& outputs, const PlanOptions& options);

// A sort pass (sort.cpp): its arguments and kernel (planned); its run, with the storage the
// GPU's sort keeps between runs (the radix sort's temporary storage, a pair sort's keys); the
// bytes it moves.
struct SortStorage;
std::shared_ptr<SortStorage> makeSortStorage();
void planSort(PlanData& plan, int pass);
void runSort(const PlanData& plan, int pass, const std::vector<KernelArg>& args, bool gpu,
             const RunOptions& options, bool last, SortStorage& storage);
double sortBytes(const PlanData& plan, int pass, uint64_t count);
// What an exported sort pass launches, as radixSortAt does (exportHeader prints it): the
// histogram over the keys, the digits' starts, then the pass kernel once a digit, with the
// storage's sizes for n keys.
struct SortLaunches {
  Kernel histogram, starts, pass;
  uint32_t tile = 0, radixBits = 0, stateWords = 0;
  uint64_t mostKeys = 0;                              // keys a sort takes
  std::vector<std::pair<uint32_t, uint32_t>> digits;  // each pass's shift and mask
  ScalarType keyType = ScalarType::U32;
  uint32_t valueBytes = 0;  // the words values move as (0: keys alone)
};
SortLaunches sortLaunches(const PlanData& plan, int pass);
// A call pass (call.cpp): its arguments (the operands, the result) and kernel (the user's).
void planCall(PlanData& plan, int pass);
// The argument an operand read as a whole array is: an input as bound, or its stored buffer.
ArgRef storedArray(const PlanData& plan, int id);

// Calls f.template operator()<X>() for the element type t (u32, i32, u64, f32, f64).
template <class F>
decltype(auto) withType(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::U32: return f.template operator()<uint32_t>();
    case ScalarType::I32: return f.template operator()<int32_t>();
    case ScalarType::U64: return f.template operator()<uint64_t>();
    case ScalarType::F32: return f.template operator()<float>();
    case ScalarType::F64: return f.template operator()<double>();
    default: break;
  }
  throw Error("array programs: element type not supported (u32, i32, u64, f32, f64)");
}

}  // namespace obsidian::array::detail
