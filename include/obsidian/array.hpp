/// Whole-array programs (the seeds' systems: Accelerate, Barracuda, the kernel-fusion compiler,
/// SafeGPU): values over vectors, matrices and scalars (array/values.hpp) that a Plan fuses into
/// kernels, caches and runs (array/plan.hpp).
/// @file
#pragma once

#include "obsidian/array/plan.hpp"
#include "obsidian/array/values.hpp"
