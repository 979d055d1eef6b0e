/// MemoryOps<T>: what the library can store. An element type is an Exp<X> or a Boost.Hana tuple
/// of storable types; a tuple is stored struct-of-arrays (one array or variable per component).
/// @file
#pragma once

#include <boost/hana/at.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/tuple.hpp>
#include <string>
#include <utility>
#include <vector>

#include "obsidian/program.hpp"

namespace obsidian {

namespace hana = boost::hana;

/// How the library stores elements of type T: specialised for Exp<X> and hana tuples of storable
/// types; any other T is a static_assert naming the rule.
template <class T>
struct MemoryOps {
  static_assert(alwaysFalse<T>,
                "this element type cannot be stored in memory: use Exp<X> or a hana::tuple "
                "of them (nested arrays must be flattened with pConcat/tConcat first)");
};
/// An element type the library can store (MemoryOps<T> is specialised for it).

template <class T>
concept Storable = requires {
  typename MemoryOps<T>::Handle;
};

namespace detail {
ArrayId allocateArray(const Program<Thread>* unusedTag, Context& ctx, Body& body, MemorySpace space,
                      Level level, ScalarType type, uint32_t n);
ArrayId addGlobalArray(Context& ctx, const std::string& name, ScalarType type, bool writable);
// A MemorySpace::GridState array of the kernel (newGlobal), named after the kernel.
ArrayId addGridState(Context& ctx, ScalarType type, uint32_t n);
}  // namespace detail

/// A scalar element: one array (or variable) of X.
template <KernelScalar X>
struct MemoryOps<Exp<X>> {
  using Handle = ArrayRef;                 ///< the array that holds the elements
  static constexpr size_t components = 1;  ///< scalar arrays per element

  /// A fresh array of n elements in `space`, owned by the level-`level` program of `body`.
  static Handle allocate(Context& ctx, Body& body, MemorySpace space, Level level, uint32_t n) {
    return ctx.ref(detail::allocateArray(nullptr, ctx, body, space, level, scalarTypeOf<X>, n));
  }
  /// The kernel's global array parameter `name` (writable: an output or DMutable).
  static Handle global(Context& ctx, const std::string& name, bool writable) {
    return ctx.ref(detail::addGlobalArray(ctx, name, scalarTypeOf<X>, writable));
  }
  /// Emits h[i] = v in thread t's program.
  static void write(const Program<Thread>& t, Handle h, const EWord32& i, const Exp<X>& v) {
    t.context().checkOwn(h, "a write");
    t.emit(Assign{h.id, i.node(), v.node()});
  }
  /// h[i], read when the expression is evaluated.
  static Exp<X> read(Handle h, const EWord32& i) {
    return Exp<X>(ir::index(scalarTypeOf<X>, h.id, i.node(), h.origin));
  }
  /// A variable of p's program, initialised to `init`.
  template <class L>
  static Exp<X> declare(const Program<L>& p, const Exp<X>& init) {
    return p.declare(init);
  }
  /// Emits var = v in p's program.
  template <class L>
  static void assign(const Program<L>& p, const Exp<X>& var, const Exp<X>& v) {
    p.assign(var, v);
  }
  /// c ? a : b.
  static Exp<X> select(const EBool& c, const Exp<X>& a, const Exp<X>& b) {
    return Exp<X>(ir::select(c.node(), a.node(), b.node()));
  }
  /// Appends the array's id to `out`.
  static void ids(Handle h, std::vector<ArrayId>& out) { out.push_back(h.id); }
};

/// A tuple element: one array (or variable) per component, struct-of-arrays.
template <class... Ts>
struct MemoryOps<hana::tuple<Ts...>> {
  using T = hana::tuple<Ts...>;                                   ///< the element type
  using Handle = hana::tuple<typename MemoryOps<Ts>::Handle...>;  ///< one handle per component
  /// Scalar arrays per element, over all components.
  static constexpr size_t components = (MemoryOps<Ts>::components + ... + 0);

  /// One fresh array per component (see MemoryOps<Exp<X>>::allocate), in component order.
  static Handle allocate(Context& ctx, Body& body, MemorySpace space, Level level, uint32_t n) {
    return Handle{MemoryOps<Ts>::allocate(ctx, body, space, level, n)...};  // in order
  }
  /// One global array parameter per component, named `name`_0, `name`_1, ...
  static Handle global(Context& ctx, const std::string& name, bool writable) {
    return each(std::index_sequence_for<Ts...>{}, [&](auto k) {
      using C = std::tuple_element_t<decltype(k)::value, std::tuple<Ts...>>;
      return MemoryOps<C>::global(ctx, name + "_" + std::to_string(decltype(k)::value), writable);
    });
  }
  /// Writes each component to its array.
  static void write(const Program<Thread>& t, const Handle& h, const EWord32& i, const T& v) {
    forEach([&](auto k) {
      using C = std::tuple_element_t<decltype(k)::value, std::tuple<Ts...>>;
      MemoryOps<C>::write(t, hana::at_c<decltype(k)::value>(h), i,
                          hana::at_c<decltype(k)::value>(v));
    });
  }
  /// The tuple of the components' reads.
  static T read(const Handle& h, const EWord32& i) {
    return each(std::index_sequence_for<Ts...>{}, [&](auto k) {
      using C = std::tuple_element_t<decltype(k)::value, std::tuple<Ts...>>;
      return MemoryOps<C>::read(hana::at_c<decltype(k)::value>(h), i);
    });
  }
  /// A variable per component, initialised to `init`'s components.
  template <class L>
  static T declare(const Program<L>& p, const T& init) {
    return each(std::index_sequence_for<Ts...>{}, [&](auto k) {
      using C = std::tuple_element_t<decltype(k)::value, std::tuple<Ts...>>;
      return MemoryOps<C>::declare(p, hana::at_c<decltype(k)::value>(init));
    });
  }
  /// Components are assigned from temporaries so that every new component is computed from the
  /// old state (x' = f(x, y), y' = g(x, y)), never from a half-updated one.
  template <class L>
  static void assign(const Program<L>& p, const T& vars, const T& v) {
    const T next = declare(p, v);
    forEach([&](auto k) {
      using C = std::tuple_element_t<decltype(k)::value, std::tuple<Ts...>>;
      MemoryOps<C>::assign(p, hana::at_c<decltype(k)::value>(vars),
                           hana::at_c<decltype(k)::value>(next));
    });
  }
  /// c ? a : b, component by component.
  static T select(const EBool& c, const T& a, const T& b) {
    return each(std::index_sequence_for<Ts...>{}, [&](auto k) {
      using C = std::tuple_element_t<decltype(k)::value, std::tuple<Ts...>>;
      return MemoryOps<C>::select(c, hana::at_c<decltype(k)::value>(a),
                                  hana::at_c<decltype(k)::value>(b));
    });
  }
  /// Appends the components' array ids, in order.
  static void ids(const Handle& h, std::vector<ArrayId>& out) {
    forEach([&](auto k) {
      using C = std::tuple_element_t<decltype(k)::value, std::tuple<Ts...>>;
      MemoryOps<C>::ids(hana::at_c<decltype(k)::value>(h), out);
    });
  }

 private:
  // Braces evaluate f for the components in order (names and statements stay in order).
  template <class F, size_t... K>
  static auto each(std::index_sequence<K...>, F&& f) {
    return hana::tuple<decltype(f(std::integral_constant<size_t, K>{}))...>{
        f(std::integral_constant<size_t, K>{})...};
  }
  template <class F>
  static void forEach(F&& f) {
    [&]<size_t... K>(std::index_sequence<K...>) { (f(std::integral_constant<size_t, K>{}), ...); }
    (std::index_sequence_for<Ts...>{});
  }
};

/// ifThenElse(c, a, b): c ? a : b on any storable type (the paper's Choice); literals mix with
/// expressions as in ifThenElse(i < n, x, 0u).
/// Branches of two element types are one static_assert (cast one branch first).
template <class A, class B>
auto ifThenElse(const EBool& c, const A& a, const B& b) {
  if constexpr (isExp<A> && isExp<B>) {
    static_assert(std::is_same_v<A, B>,
                  "ifThenElse(c, a, b): both branches need one element type (cast one, e.g. "
                  "cast<uint32_t>(b))");
    if constexpr (std::is_same_v<A, B>)
      return MemoryOps<A>::select(c, a, b);
    else
      return a;  // after the static_assert: no errors that follow from it
  } else if constexpr (isExp<A>) {
    static_assert(std::is_constructible_v<A, B>,
                  "ifThenElse(c, a, b): the literal branch must be of the Exp branch's type");
    if constexpr (std::is_constructible_v<A, B>)
      return MemoryOps<A>::select(c, a, A(b));
    else
      return a;
  } else if constexpr (isExp<B>) {
    static_assert(std::is_constructible_v<B, A>,
                  "ifThenElse(c, a, b): the literal branch must be of the Exp branch's type");
    if constexpr (std::is_constructible_v<B, A>)
      return MemoryOps<B>::select(c, B(a), b);
    else
      return b;
  } else {
    static_assert(std::is_same_v<A, B>, "ifThenElse: both branches need one type");
    if constexpr (std::is_same_v<A, B>)
      return MemoryOps<A>::select(c, a, b);
    else
      return a;
  }
}

}  // namespace obsidian
