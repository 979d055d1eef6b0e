/// The warp layer, exchanges: moving a warp's 32 x items elements between the striped
/// arrangement (lane l holds elements l, l + 32, ...: what coalesced global accesses need) and
/// the blocked one (lane l holds elements l * items .. l * items + items - 1: what a thread-
/// sequential scan or reduction needs), through the warp's own slice of shared memory. A warp
/// needs no block barrier for it (__syncwarp only). The block layer's load/store arrangements
/// (obsidian/block/load_store.hpp) build on these.
/// @file
#pragma once

#include "obsidian/library.hpp"

namespace obsidian {

namespace detail {
inline void checkWarpTile(const char* what, uint32_t items, uint32_t length) {
  if (items == 0 || length != 32 * items) {
    throw Error(std::string(what) + " needs 32 x items elements (items >= 1); got " + str(length) +
                " elements for items " + str(items));
  }
}
}  // namespace detail

/// warpLoadStriped(p, items, arr): arr (32 x items elements, typically a warp's slice of a
/// global array) read striped, lane l reading elements l, l + 32, ... (each read instruction of
/// the warp covers 32 consecutive elements), into the warp's shared memory; the result reads it
/// there, so each lane may then read its own consecutive elements (the blocked arrangement).
/// Cost: 32 x items elements of shared memory per warp, one __syncwarp.
template <class T>
SPull<T> warpLoadStriped(const Program<Warp>& p, uint32_t items, const SPull<T>& arr) {
  detail::checkWarpTile("warpLoadStriped", items, arr.len());
  return force(p, load<Warp>(items, arr));
}

/// warpStoreStriped(p, items, arr): the reverse. Lane l computes elements l * items ..
/// l * items + items - 1 of arr (blocked) into the warp's shared memory; the result is a push
/// array in which lane l writes elements l, l + 32, ... (striped: coalesced when they go to
/// global memory). Cost: as warpLoadStriped.
template <class T>
SPush<Warp, T> warpStoreStriped(const Program<Warp>& p, uint32_t items, const SPull<T>& arr) {
  detail::checkWarpTile("warpStoreStriped", items, arr.len());
  const SPull<T> staged = force(
      p,
      tConcat<Warp>(fmap([](const SPull<T>& c) { return push<Thread>(c); }, splitUp(items, arr))));
  return push<Warp>(staged);
}

}  // namespace obsidian
