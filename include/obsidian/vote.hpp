/// Warp votes: a warp's lanes each contribute one value and see what the whole warp voted
/// (CUDA's __ballot_sync, __any_sync, __all_sync and __match_any_sync). Like forceReg's
/// shuffles they use no shared memory and no barrier, and every lane of the warp must reach them
/// together: the kernel is rejected (verify) or the simulator reports the warp (a hazard) where
/// only some lanes do. With popc, ffs and the lane index they give a warp's stable ranks,
/// compaction inside a warp and warp-aggregated atomics.
/// @file
#pragma once

#include <string>
#include <type_traits>

#include "obsidian/force.hpp"
#include "obsidian/pull.hpp"
#include "obsidian/push.hpp"

namespace obsidian {

namespace detail {
template <class A>
struct IsPullArray : std::false_type {};
template <class Len, class T>
struct IsPullArray<Pull<Len, T>> : std::true_type {};

// arr (one value per lane: a Pull or a Push<Warp> of 32 elements) in a register array of the
// warp: lane l writes element l, as forceReg.
template <KernelScalar X, class A>
ArrayRef laneRegisters(const Program<Warp>& p, const A& arr, const char* who) {
  if constexpr (IsPullArray<A>::value) {
    return laneRegisters<X>(p, push<Warp>(arr), who);
  } else {
    if (arr.len() != 32) {
      throw Error(std::string(who) + " needs one value per lane of the warp (32 elements); got " +
                  std::to_string(arr.len()));
    }
    using Ops = MemoryOps<Exp<X>>;
    const ArrayRef h = Ops::allocate(p.context(), p.body(), MemorySpace::Register, Level::Warp, 32);
    arr(p, [h](const Program<Thread>& t, const Exp<X>& v, const EWord32& i) {
      Ops::write(t, h, i, v);
    });
    return h;
  }
}

template <class A>
constexpr bool isLaneArray() {
  if constexpr (IsPullArray<A>::value) {
    return true;
  } else if constexpr (requires { typename A::Level; }) {
    return std::is_same_v<typename A::Level, Warp>;
  } else {
    return false;
  }
}

// A vote of one EBool per lane (ballot, voteAny, voteAll), with the shape rules they share.
template <WarpVote V, class L, class A>
ExpPtr predicateVote(const Program<L>& p, const A& preds, const char* who) {
  static_assert(std::is_same_v<L, Warp>,
                "ballot, voteAny and voteAll are collectives of a warp: they need a Program<Warp>");
  static_assert(isLaneArray<A>(),
                "ballot, voteAny and voteAll need a Pull or a Push<Warp> array with one value per "
                "lane");
  static_assert(std::is_same_v<typename A::Length, uint32_t>,
                "ballot, voteAny and voteAll need a static length (32, one per lane)");
  static_assert(std::is_same_v<typename A::Element, EBool>,
                "ballot, voteAny and voteAll vote on one EBool per lane");
  const ArrayRef h = laneRegisters<bool>(p, preds, who);
  return ir::warpVote(V, ScalarType::Bool, h.id, h.origin);
}
}  // namespace detail

/// ballot(p, preds): a word with bit l set where lane l's predicate holds; every lane gets the
/// same word. `preds` holds one EBool per lane (32 elements): a Pull, or a Push<Warp> with one
/// element per lane (push<Warp>, tConcat<Warp>). Cost: one vote instruction per lane.
template <class L, class A>
EWord32 ballot(const Program<L>& p, const A& preds) {
  return EWord32(detail::predicateVote<WarpVote::Ballot>(p, preds, "ballot"));
}

/// voteAny(p, preds): whether the predicate holds on some lane (the same for every lane).
/// `preds` as for ballot.
template <class L, class A>
EBool voteAny(const Program<L>& p, const A& preds) {
  return EBool(detail::predicateVote<WarpVote::Any>(p, preds, "voteAny"));
}

/// voteAll(p, preds): whether the predicate holds on every lane (the same for every lane).
/// `preds` as for ballot.
template <class L, class A>
EBool voteAll(const Program<L>& p, const A& preds) {
  return EBool(detail::predicateVote<WarpVote::All>(p, preds, "voteAll"));
}

/// matchAny(p, values): for each lane l, the mask of the lanes whose value has the same bits as
/// lane l's (its own bit included), as a warp register array (what forceReg gives): element l
/// is lane l's mask, read as lane l's register, other lanes' by a shuffle. `values` holds one
/// value per lane (any scalar type but bool; floats compare by their bits, so NaNs with one
/// payload match and -0 does not match +0). popc(mask & ((1u << lane) - 1u)) is a lane's rank
/// among its equals, in lane order (a radix sort's stable in-warp rank).
/// Cost: one match instruction per lane, and the register array.
template <class L, class A>
Pull<uint32_t, EWord32> matchAny(const Program<L>& p, const A& values) {
  static_assert(std::is_same_v<L, Warp>,
                "matchAny is a collective of a warp: it needs a Program<Warp>");
  static_assert(detail::isLaneArray<A>(),
                "matchAny needs a Pull or a Push<Warp> array with one value per lane");
  static_assert(std::is_same_v<typename A::Length, uint32_t>,
                "matchAny needs a static length (32, one per lane)");
  using T = typename A::Element;
  static_assert(isExp<T> && !std::is_same_v<T, EBool>,
                "matchAny compares one scalar per lane: an Exp<X> of a type other than bool "
                "(compare bools with ballot)");
  using X = typename T::Scalar;
  const ArrayRef h = detail::laneRegisters<X>(p, values, "matchAny");
  const EWord32 mine(ir::warpVote(WarpVote::MatchAny, scalarTypeOf<X>, h.id, h.origin));
  return forceReg(p, push<Warp>(mkPull(32u, [mine](const EWord32&) { return mine; })));
}

}  // namespace obsidian
