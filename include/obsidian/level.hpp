/// The GPU hierarchy as types: Thread < Warp < Block < Grid, Step (one level up) and the
/// ordering every level-restricted function checks at C++ compile time.
/// @file
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace obsidian {

/// The same levels as values, for the IR.
enum class Level : uint8_t {
  Thread,  ///< the obsidian::Thread level
  Warp,    ///< the obsidian::Warp level
  Block,   ///< the obsidian::Block level
  Grid     ///< the obsidian::Grid level
};

/// The thread level: one thread's sequential code.
struct Thread {
  static constexpr Level value = Level::Thread;  ///< Level::Thread
};
/// The warp level: the 32 lanes of a warp, which exchange values through shuffles or shared memory.
struct Warp {
  static constexpr Level value = Level::Warp;  ///< Level::Warp
};
/// The block level: the threads of a block, which share memory and synchronise at barriers.
struct Block {
  static constexpr Level value = Level::Block;  ///< Level::Block
};
/// The grid level: all the blocks of a launch (the kernel's results are Push<Grid> arrays).
struct Grid {
  static constexpr Level value = Level::Grid;  ///< Level::Grid
};

/// A level of the GPU hierarchy: Thread, Warp, Block or Grid.
template <class L>
concept HierarchyLevel = std::is_same_v<L, Thread> || std::is_same_v<L, Warp> ||
    std::is_same_v<L, Block> || std::is_same_v<L, Grid>;

/// The one ordering trait: level_le<A, B> is true when A is at or below B.
template <class A, class B>
inline constexpr bool level_le = static_cast<uint8_t>(A::value) <= static_cast<uint8_t>(B::value);

namespace detail {
template <class L>
struct StepImpl {
  using type = void;  // no level above Grid
};
template <>
struct StepImpl<Thread> {
  using type = Warp;
};
template <>
struct StepImpl<Warp> {
  using type = Block;
};
template <>
struct StepImpl<Block> {
  using type = Grid;
};
template <class L>
struct StepDownImpl {
  using type = void;  // no level below Thread
};
template <>
struct StepDownImpl<Warp> {
  using type = Thread;
};
template <>
struct StepDownImpl<Block> {
  using type = Warp;
};
template <>
struct StepDownImpl<Grid> {
  using type = Block;
};
}  // namespace detail

/// Step<Thread> = Warp, Step<Warp> = Block, Step<Block> = Grid; Step<Grid> = void.
template <class L>
using Step = typename detail::StepImpl<L>::type;
/// StepDown<Warp> = Thread, StepDown<Block> = Warp, StepDown<Grid> = Block; StepDown<Thread> =
/// void.
template <class L>
using StepDown = typename detail::StepDownImpl<L>::type;

/// The level's name ("Thread", "Warp", "Block", "Grid"), for messages.
constexpr std::string_view levelName(Level l) {
  switch (l) {
    case Level::Thread: return "Thread";
    case Level::Warp: return "Warp";
    case Level::Block: return "Block";
    case Level::Grid: return "Grid";
  }
  return "?";
}

/// False for every T, but only when instantiated: the condition of a static_assert that fires
/// only in the branch or specialisation that is used.
template <class T>
inline constexpr bool alwaysFalse = false;

}  // namespace obsidian
