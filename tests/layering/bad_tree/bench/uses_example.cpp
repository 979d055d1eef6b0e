// A fixture for the layering test: a benchmark that takes a reduction from examples/.
#include "../../examples/reduce/reduce.hpp"
