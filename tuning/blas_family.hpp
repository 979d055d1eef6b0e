// The kernel-fusion BLAS sequences (examples/blas, seed 002) as a tuning family: the choices the
// paper's compiler searched (which calls to fuse, tile sizes, serial iterations per instance).
#pragma once

#include "family.hpp"

namespace tuning {

Family blasFamily();

}  // namespace tuning
