// The umbrella header: everything a user of obsidian needs.
#pragma once

#include "obsidian/atomic.hpp"
#include "obsidian/error.hpp"
#include "obsidian/exp.hpp"
#include "obsidian/force.hpp"
#include "obsidian/ir.hpp"
#include "obsidian/kernel.hpp"
#include "obsidian/level.hpp"
#include "obsidian/library.hpp"
#include "obsidian/memory_ops.hpp"
#include "obsidian/nvrtc.hpp"
#include "obsidian/program.hpp"
#include "obsidian/pull.hpp"
#include "obsidian/push.hpp"
#include "obsidian/types.hpp"
