// Whole-array programs (obsidian/array.hpp) as a tuning family, "array": a point is a registered
// program on one problem, planned by array::Plan with one alternative of its fusion space
// (array::fusionSpace) and the plan's options, run on the simulator or the GPU and checked
// against the program's reference. Any array program becomes tunable by one call,
// registerArrayProgram; the eleven BLAS scripts (examples/blas/scripts.hpp) are registered so.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <obsidian/array.hpp>
#include <string>
#include <vector>

#include "family.hpp"

namespace tuning {

// A problem of an array program: vectors of n elements, or a rows x cols matrix whose rows
// start pitch elements apart (pitch >= cols).
struct ArrayProblem {
  uint32_t n = 0;
  uint32_t rows = 0, cols = 0, pitch = 0;
};

// A program's data for the runs of one point: its inputs and outputs bound for the plan, and
// the check of the outputs against the reference.
class ProgramData {
 public:
  virtual ~ProgramData() = default;
  // The data of run r: every input and output of the program bound (on the GPU the inputs may
  // be held in rotation: run r reads copy r % rotations(); every run writes the same outputs).
  virtual const obsidian::array::Bindings& bindings(size_t run) const = 0;
  virtual size_t rotations() const { return 1; }
  // "" when the outputs of the last run agree with the reference, else what differs.
  virtual std::string check() = 0;
  // Bytes a run must move (every input read once, every output written once), so that GB/s
  // compares the alternatives as the useful bandwidth they reach; 0: the plan's own
  // (Plan::report's bytes).
  virtual double bytes() const { return 0; }
};

// A program the array family can sweep.
struct ArrayProgram {
  std::string name;         // the value of the family's `program` parameter
  std::string description;  // for --list-families
  bool matrix = false;      // its problem: a matrix (size rows, cols, pitch), else vectors (size)
  // The PlanOptions fields its plans read, among "items", "reduceItems", "unroll", "band" and
  // "segmentLanes"; the others are dropped from its points (they would time one plan twice).
  std::vector<std::string> options;
  // The program, as its user writes it.
  std::function<std::vector<obsidian::array::Output>()> outputs;
  // Its data at a problem on the host (the simulator) and on the device (the GPU): random
  // inputs, outputs poisoned (so an element no kernel writes fails the check), the reference.
  // Data shared by the points of one problem comes from `cache` (held while they run).
  std::function<std::unique_ptr<ProgramData>(const ArrayProblem&, DataCache&cache)> onHost, onGpu;
};

// Makes `program` a value of the array family's `program` parameter. Programs register before
// the family is made (families()' first call): an Error after, or for a name taken. The BLAS
// scripts are registered first.
void registerArrayProgram(ArrayProgram program);
// Every registered program, the BLAS scripts first.
const std::vector<ArrayProgram>& arrayPrograms();

// The family.
Family arrayFamily();

// The fusion space of a point of the array family (canonical params): the alternatives its
// `alternative` parameter indexes, cheapest predicted first. It is array::fusionSpace unpruned
// (the plans the model says are dominated are the ones to measure), at the simulator's sizes of
// the point's problem (those Family::canonical caps it to), so that a simulated point and the
// GPU point it stands for plan the same alternative.
std::vector<obsidian::array::Alternative> arrayAlternatives(const Params& p);

}  // namespace tuning
