/// Matrices: 2-D pull and push arrays (rows x cols, element (r, c), row-major), their tiles and
/// transposed views, 2-D grids of blocks (pConcat2), shared tiles padded against bank conflicts
/// (force2), and stencils whose tiles are loaded with their halo into shared memory once and
/// read there by every neighbour (stencil; Barracuda's automatic shared memory, seed 000).
/// A kernel parameter DPull2<T> is a row-major matrix in global memory with a pitch (its rows,
/// cols and pitch are scalar parameters); a Push2<Grid> result is a dense row-major output.
///
/// A tiled transpose, one 32 x 32 tile per block, both sides coalesced:
/// @code
///   capture("transpose", 256, [](DPull2<EFloat> in) {
///     return pConcat2(fmap([](const SPull2<EFloat>& t) {
///       return exec<Block>([t](const Program<Block>& p) {
///         return push2<Block>(transpose(force2(p, t)));  // padded: 32 x 33
///       });
///     }, transpose(tiles(32, 32, in))), in.cols(), in.rows());
///   });
/// @endcode
/// @file
#pragma once

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "obsidian/library.hpp"

namespace obsidian {

// ------------------------------------------------------------------ 2-D pull arrays
/// Pull2<R, C, T>: rows x cols elements, element (r, c) = f(r, c). R and C are each uint32_t
/// (static) or EWord32 (dynamic).
template <class R, class C, class T>
class Pull2 {
  static_assert(ASize<R> && ASize<C>,
                "a Pull2's rows and cols are each uint32_t (static) or EWord32 (dynamic)");

 public:
  using Rows = R;     ///< uint32_t (static) or EWord32 (dynamic)
  using Cols = C;     ///< uint32_t (static) or EWord32 (dynamic)
  using Element = T;  ///< the element type
  using Function = std::function<T(const EWord32&, const EWord32&)>;  ///< (r, c) to element

  /// The rows x cols matrix whose element (r, c) is f(r, c).
  Pull2(R rows, C cols, Function f)
      : rows_(std::move(rows)), cols_(std::move(cols)), f_(std::move(f)) {}

  const R& rows() const { return rows_; }  ///< its number of rows
  const C& cols() const { return cols_; }  ///< its number of columns
  /// Element (r, c).
  T operator()(const EWord32& r, const EWord32& c) const { return f_(r, c); }

 private:
  R rows_;
  C cols_;
  Function f_;
};

template <class T>
using SPull2 = Pull2<uint32_t, uint32_t, T>;  ///< a matrix of static shape (a tile)
template <class T>
using DPull2 = Pull2<EWord32, EWord32, T>;  ///< a matrix of dynamic shape (a kernel parameter)

/// RowAligned<W, T>: a matrix kernel parameter, as DPull2<T>, whose pitch is a multiple of W
/// elements (a power of two of at least 2): the launch checks it (an Error naming the matrix),
/// and its elements are read at r * pitch + c with the pitch known to be such a multiple, so
/// each row (rowsOf) starts at a multiple of W and may be read with vectors<W> (whose launch
/// check of the pointer's alignment then covers every row).
template <uint32_t W, class T>
class RowAligned : public DPull2<T> {
  static_assert(W >= 2 && (W & (W - 1)) == 0,
                "RowAligned<W, T>: W is a power of two of at least 2 elements");

 public:
  /// The matrix m, whose pitch the caller has made a multiple of W (capture does).
  explicit RowAligned(DPull2<T> m) : DPull2<T>(std::move(m)) {}
};

/// Whether T is a Pull2 (value), for generic code.
template <class T>
struct IsPull2 : std::false_type {};
/// A Pull2 is one.
template <class R, class C, class T>
struct IsPull2<Pull2<R, C, T>> : std::true_type {};
/// Whether T (ignoring const and references) is a Pull2.
template <class T>
inline constexpr bool isPull2 = IsPull2<std::remove_cvref_t<T>>::value;

namespace detail {
template <class N>
auto asSize(const N& n) {
  if constexpr (std::is_integral_v<N>) {
    return toStaticLength(n);
  } else {
    static_assert(std::is_same_v<N, EWord32>, "a matrix side is an integer or an EWord32");
    return n;
  }
}
template <class N>
using SizeOf = decltype(asSize(std::declval<N>()));
}  // namespace detail

/// mkPull2(rows, cols, f): the matrix whose element (r, c) is f(r, c); rows and cols are each
/// an integer (static) or an EWord32.
template <class NR, class NC, class F>
auto mkPull2(NR rows, NC cols, F f) {
  using T = std::invoke_result_t<F, EWord32, EWord32>;
  return Pull2<detail::SizeOf<NR>, detail::SizeOf<NC>, T>(detail::asSize(rows),
                                                          detail::asSize(cols), std::move(f));
}

/// rowsOf(m): m as the pull array of its rows, row r being the pull array of its cols elements
/// (row r of a kernel's matrix parameter reads in[r * pitch + c]: a RowAligned<W> row may be
/// read with vectors<W>).
template <class R, class C, class T>
Pull<R, Pull<C, T>> rowsOf(const Pull2<R, C, T>& m) {
  return Pull<R, Pull<C, T>>(m.rows(), [m](const EWord32& r) {
    return Pull<C, T>(m.cols(), [m, r](const EWord32& c) { return m(r, c); });
  });
}

/// fmap(f, m): the matrix whose element (r, c) is f(m(r, c)).
template <class F, class R, class C, class T>
auto fmap(F f, const Pull2<R, C, T>& m) {
  using U = std::invoke_result_t<F, T>;
  return Pull2<R, C, U>(m.rows(), m.cols(),
                        [f, m](const EWord32& r, const EWord32& c) { return f(m(r, c)); });
}

/// zipWith(f, a, b): element (r, c) is f(a(r, c), b(r, c)), over the rows and cols both have.
template <class F, class RA, class CA, class A, class RB, class CB, class B>
auto zipWith(F f, const Pull2<RA, CA, A>& a, const Pull2<RB, CB, B>& b) {
  using R = detail::JoinLen<RA, RB>;
  using C = detail::JoinLen<CA, CB>;
  using U = std::invoke_result_t<F, A, B>;
  return Pull2<R, C, U>(
      detail::lenMin<R>(a.rows(), b.rows()), detail::lenMin<C>(a.cols(), b.cols()),
      [f, a, b](const EWord32& r, const EWord32& c) { return f(a(r, c), b(r, c)); });
}

/// transpose(m): the cols x rows view whose element (r, c) is m(c, r).
template <class R, class C, class T>
Pull2<C, R, T> transpose(const Pull2<R, C, T>& m) {
  return Pull2<C, R, T>(m.cols(), m.rows(),
                        [m](const EWord32& r, const EWord32& c) { return m(c, r); });
}

// ------------------------------------------------------------------ 2-D push arrays
/// What a Push2 writes through: writer(t, value, r, c) emits the Thread-level code that stores
/// element (r, c).
template <class T>
using Writer2 =
    std::function<void(const Program<Thread>&, const T&, const EWord32& r, const EWord32& c)>;

/// Push2<L, R, C, T>: a rows x cols array and the level-L program that writes every element
/// (value, r, c) through a Writer2.
template <class L, class R, class C, class T>
class Push2 {
  static_assert(HierarchyLevel<L>, "Push2<L, ...> needs L to be Thread, Warp, Block or Grid");
  static_assert(ASize<R> && ASize<C>,
                "a Push2's rows and cols are each uint32_t (static) or EWord32 (dynamic)");

 public:
  using Level = L;                ///< the level whose program writes the elements
  using Rows = R;                 ///< uint32_t (static) or EWord32 (dynamic)
  using Cols = C;                 ///< uint32_t (static) or EWord32 (dynamic)
  using Element = T;              ///< the element type
  using Sink = Writer2<T>;        ///< what the generator writes through (as Push::Sink)
  using Shape = std::pair<R, C>;  ///< (rows, cols) (as Push::Shape)
  /// Emits the level-L program, given the writer of one element.
  using Generator = std::function<void(const Program<L>&, const Writer2<T>&)>;

  /// The rows x cols array that `gen` writes.
  Push2(R rows, C cols, Generator gen)
      : shape_(std::move(rows), std::move(cols)), gen_(std::move(gen)) {}
  /// The array of `shape` that `gen` writes.
  Push2(Shape shape, Generator gen) : shape_(std::move(shape)), gen_(std::move(gen)) {}

  const R& rows() const { return shape_.first; }   ///< its number of rows
  const C& cols() const { return shape_.second; }  ///< its number of columns
  const Shape& shape() const { return shape_; }    ///< (rows, cols)
  /// Emit the program that writes every element through `w`.
  void operator()(const Program<L>& p, const Writer2<T>& w) const { gen_(p, w); }

 private:
  Shape shape_;
  Generator gen_;
};

/// Whether T is a Push2 (value), for generic code.
template <class T>
struct IsPush2 : std::false_type {};
/// A Push2 is one.
template <class L, class R, class C, class T>
struct IsPush2<Push2<L, R, C, T>> : std::true_type {};
/// Whether T (ignoring const and references) is a Push2.
template <class T>
inline constexpr bool isPush2 = IsPush2<std::remove_cvref_t<T>>::value;

/// push2<L>(m): one element per instance of level L, row after row: instance i writes element
/// (i / cols, i % cols), so consecutive threads take consecutive columns (coalesced in a
/// row-major matrix). At Thread level, a sequential loop.
template <class L, class R, class C, class T>
Push2<L, R, C, T> push2(const Pull2<R, C, T>& m) {
  static_assert(HierarchyLevel<L>, "push2<L>: L must be Thread, Warp, Block or Grid");
  const EWord32 count = [&] {
    if constexpr (std::is_same_v<R, uint32_t> && std::is_same_v<C, uint32_t>) {
      return EWord32(detail::lenMul("push2", m.rows(), m.cols()));
    } else {
      return detail::lenMul("push2", sizeConv(m.rows()), sizeConv(m.cols()));
    }
  }();
  return Push2<L, R, C, T>(m.rows(), m.cols(),
                           [m, count](const Program<L>& p, const Writer2<T>& w) {
                             const EWord32 cols = sizeConv(m.cols());
                             auto body = [&](const Program<Thread>& t, const EWord32& i) {
                               const EWord32 r = i / cols, c = i % cols;
                               w(t, m(r, c), r, c);
                             };
                             if constexpr (std::is_same_v<L, Thread>) {
                               p.seqFor(count, body);
                             } else {
                               p.forAll(count, body);
                             }
                           });
}

/// A 2-D arrangement of a Warp's or Block's threads for push2: `rows` x `cols` threads, thread
/// t at (t / cols, t % cols) of it.
struct ThreadLayout2 {
  uint32_t rows = 1;  ///< threads down a column
  uint32_t cols = 32;  ///< threads along a row (consecutive threads: consecutive columns)
};

/// push2<L>(m, layout): m's elements written by a 2-D arrangement of layout.rows x
/// layout.cols instances of level L (Warp or Block) over a static tile: instance (ty, tx)
/// writes elements (ty + a * layout.rows, tx + b * layout.cols) for every a, b inside the tile,
/// so no instance divides by the tile's (padded) width, and consecutive instances still take
/// consecutive columns. Elements past a side that the layout does not divide are skipped by a
/// guard. Error when a side of the layout is 0.
template <class L, class T>
Push2<L, uint32_t, uint32_t, T> push2(const SPull2<T>& m, ThreadLayout2 layout) {
  static_assert(std::is_same_v<L, Warp> || std::is_same_v<L, Block>,
                "push2<L>(m, layout): a thread layout arranges a Warp's or a Block's threads");
  if (layout.rows == 0 || layout.cols == 0) {
    throw Error("push2: a thread layout of " + std::to_string(layout.rows) + " x " +
                std::to_string(layout.cols) + " threads (each side is at least 1)");
  }
  const uint32_t instances = detail::lenMul("push2", layout.rows, layout.cols);
  return Push2<L, uint32_t, uint32_t, T>(
      m.rows(), m.cols(), [m, layout, instances](const Program<L>& p, const Writer2<T>& w) {
        p.forAll(instances, [&](const Program<Thread>& t, const EWord32& i) {
          const EWord32 ty = i / layout.cols, tx = i % layout.cols;
          for (uint32_t a = 0; a < m.rows(); a += layout.rows) {
            for (uint32_t b = 0; b < m.cols(); b += layout.cols) {
              const EWord32 r = ty + a, c = tx + b;
              const bool rowsCovered = a + layout.rows <= m.rows();
              const bool colsCovered = b + layout.cols <= m.cols();
              if (rowsCovered && colsCovered) {
                w(t, m(r, c), r, c);
              } else {
                const EBool inside = (rowsCovered ? EBool(true) : r < m.rows()) &&
                                     (colsCovered ? EBool(true) : c < m.cols());
                t.cond(inside, [&](const Program<Thread>& u) { w(u, m(r, c), r, c); });
              }
            }
          }
        });
      });
}

/// fmap(f, m) of a 2-D push array: f applied to each element as the program writes it.
template <class F, class L, class R, class C, class T>
auto fmap(F f, const Push2<L, R, C, T>& m) {
  using U = std::invoke_result_t<F, T>;
  return Push2<L, R, C, U>(m.shape(), [f, m](const Program<L>& p, const Writer2<U>& w) {
    m(p, [&](const Program<Thread>& t, const T& v, const EWord32& r, const EWord32& c) {
      w(t, f(v), r, c);
    });
  });
}

/// flatten(m): the rows * cols push array of m's elements in row-major order (element (r, c)
/// at r * cols + c): how a Push2<Grid> result is written to its dense output.
template <class L, class R, class C, class T>
auto flatten(const Push2<L, R, C, T>& m) {
  using Len = detail::JoinLen<R, C>;
  const Len n = [&] {
    if constexpr (std::is_same_v<Len, uint32_t>) {
      return detail::lenMul("flatten", m.rows(), m.cols());
    } else {
      return detail::lenMul("flatten", sizeConv(m.rows()), sizeConv(m.cols()));
    }
  }();
  return Push<L, Len, T>(n, [m](const Program<L>& p, const Writer<T>& w) {
    const EWord32 cols = sizeConv(m.cols());
    m(p, [&](const Program<Thread>& t, const T& v, const EWord32& r, const EWord32& c) {
      w(t, v, r * cols + c);
    });
  });
}

// ------------------------------------------------------------------ shared tiles
/// The padding force2 gives a shared tile: none, or Auto: enough that the tile's rows start in
/// different banks (its row pitch, counted in 4-byte banks, or in elements for 8-byte ones, is
/// odd), so a warp reading a column of a 32-row tile touches 32 banks instead of one.
enum class Padding : uint8_t {
  Auto,  ///< rows padded so that they start in different banks
  None   ///< no padding
};

namespace detail {
// The row pitch, in elements, of a shared tile of `cols` elements of `bytes` bytes each.
uint32_t sharedPitch(uint32_t cols, uint32_t bytes, Padding padding);
}  // namespace detail

/// force2(p, m): the rows x cols array m writes, made manifest in shared memory (Warp, Block)
/// or per-thread memory (Thread) with padded rows (Padding::Auto), the level's barrier
/// inserted; the result reads it. The shape must be static.
template <class L, class M, class R, class C, class X>
SPull2<Exp<X>> force2(const Program<L>& p, const Push2<M, R, C, Exp<X>>& m,
                      Padding padding = Padding::Auto) {
  static_assert(level_le<L, Block>,
                "force2 is not available at Grid level: blocks cannot synchronize");
  static_assert(std::is_same_v<L, M>,
                "force2 at level L needs a Push2<L> array: the array's level must match the "
                "program's level");
  static_assert(std::is_same_v<R, uint32_t> && std::is_same_v<C, uint32_t>,
                "force2 needs a static shape (uint32_t rows and cols): shared memory is sized "
                "at generation time");
  const uint32_t rows = m.rows(), cols = m.cols();
  if (rows == 0 || cols == 0) {
    throw Error("force2: cannot make a matrix of " + std::to_string(rows) + " x " +
                std::to_string(cols) + " elements manifest");
  }
  const uint32_t pitch = detail::sharedPitch(cols, sizeof(X), padding);
  const uint32_t n = detail::lenMul("force2", rows, pitch);
  using Ops = MemoryOps<Exp<X>>;
  const MemorySpace space = std::is_same_v<L, Thread> ? MemorySpace::Local : MemorySpace::Shared;
  const typename Ops::Handle h = Ops::allocate(p.context(), p.body(), space, L::value, n);
  m(p, [h, pitch](const Program<Thread>& t, const Exp<X>& v, const EWord32& r, const EWord32& c) {
    Ops::write(t, h, r * pitch + c, v);
  });
  if constexpr (!std::is_same_v<L, Thread>) p.sync();
  return SPull2<Exp<X>>(rows, cols, [h, pitch](const EWord32& r, const EWord32& c) {
    return Ops::read(h, r * pitch + c);
  });
}

/// force2(p, m) of a pull matrix (static shape) at Warp or Block level: as force2(p,
/// push2<L>(m)), but each thread reads all of its elements (consecutive threads along a row)
/// into registers before it stores any, so its loads are in flight together: what a tile load
/// from global memory needs to reach the device's bandwidth. Measured on the H100 (the tiled
/// transpose of tests/matrix_kernels.hpp, 8192 x 8192 u32, bench/RESULTS.md): 190.8 us this way
/// against 304.5 us element by element (32 x 32 tiles, 256 threads).
template <class L, class X>
SPull2<Exp<X>> force2(const Program<L>& p, const SPull2<Exp<X>>& m,
                      Padding padding = Padding::Auto) {
  static_assert(std::is_same_v<L, Block> || std::is_same_v<L, Warp>,
                "force2 of a pull matrix is for Warp and Block programs: at Thread level, "
                "force2(p, push2<Thread>(m))");
  const uint32_t rows = m.rows(), cols = m.cols();
  if (rows == 0 || cols == 0) {
    throw Error("force2: cannot make a matrix of " + std::to_string(rows) + " x " +
                std::to_string(cols) + " elements manifest");
  }
  const uint32_t n = detail::lenMul("force2", rows, cols);
  const uint32_t threads = std::is_same_v<L, Warp> ? 32u : p.context().threadsPerBlock();
  const uint32_t each = n / threads + (n % threads != 0);
  return force2(p,
                Push2<L, uint32_t, uint32_t, Exp<X>>(
                    rows, cols,
                    [m, n, threads, each, cols](const Program<L>& q, const Writer2<Exp<X>>& w) {
                      q.forAll(threads, [&](const Program<Thread>& t, const EWord32& tid) {
                        std::vector<Exp<X>> held;
                        std::vector<EBool> inside;
                        for (uint32_t k = 0; k < each; ++k) {
                          const EWord32 e = tid + k * threads;
                          inside.push_back(n % threads == 0 || k + 1 < each ? EBool(true) : e < n);
                          held.push_back(t.declare(
                              ifThenElse(inside.back(), m(e / cols, e % cols), Exp<X>(X{}))));
                        }
                        for (uint32_t k = 0; k < each; ++k) {
                          const EWord32 e = tid + k * threads;
                          if (n % threads == 0 || k + 1 < each) {
                            w(t, held[k], e / cols, e % cols);
                          } else {
                            t.cond(inside[k], [&](const Program<Thread>& u) {
                              w(u, held[k], e / cols, e % cols);
                            });
                          }
                        }
                      });
                    }),
                padding);
}

// ------------------------------------------------------------------ tiles
namespace detail {
// ceil(n / k), without n + k - 1 (which could wrap).
inline uint32_t tileCount(uint32_t n, uint32_t k) { return n / k + (n % k != 0); }
inline EWord32 tileCount(const EWord32& n, uint32_t k) {
  return n / k + ifThenElse(n % k != 0u, EWord32(1u), EWord32(0u));
}
void checkTile(const char* what, uint32_t tileRows, uint32_t tileCols);
// The rows (or cols) `n` of a matrix read `reach` at a time from a tile's first: the last
// tile's indices (32-bit, as the generated code computes them) stay below 2^32 when
// n + reach <= 2^32. An Error now for a static n, a launch precondition for a dynamic one.
void checkExtent(const char* what, const char* side, uint32_t n, uint32_t reach);
void checkExtent(const char* what, const char* side, const EWord32& n, uint32_t reach);
template <class N>
void checkExtent(const char* what, const char* side, const N& n, uint32_t reach) {
  if constexpr (std::is_same_v<N, uint32_t>) {
    checkExtent(what, side, static_cast<uint32_t>(n), reach);
  } else {
    checkExtent(what, side, sizeConv(n), reach);
  }
}
}  // namespace detail

/// tiles(th, tw, m): the tile grid of m: ceil(rows / th) x ceil(cols / tw) tiles, tile (i, j)
/// the th x tw matrix of m's elements (i * th + r, j * tw + c). Elements of the right and bottom
/// tiles that lie outside m read as zero (m is not read there).
template <class R, class C, class X>
auto tiles(uint32_t th, uint32_t tw, const Pull2<R, C, Exp<X>>& m) {
  detail::checkTile("tiles", th, tw);
  detail::checkExtent("tiles", "rows", m.rows(), th);
  detail::checkExtent("tiles", "cols", m.cols(), tw);
  const R tr = detail::tileCount(m.rows(), th);
  const C tc = detail::tileCount(m.cols(), tw);
  return Pull2<R, C, SPull2<Exp<X>>>(tr, tc, [m, th, tw](const EWord32& i, const EWord32& j) {
    return SPull2<Exp<X>>(th, tw, [m, th, tw, i, j](const EWord32& r, const EWord32& c) {
      const EWord32 row = i * th + r, col = j * tw + c;
      return ifThenElse(row < sizeConv(m.rows()) && col < sizeConv(m.cols()), m(row, col),
                        Exp<X>(X{}));
    });
  });
}

/// What a stencil reads beyond the matrix's edges.
enum class Boundary : uint8_t {
  Clamp,  ///< the nearest element inside (the edge row or column repeated)
  Zero,   ///< zero
};

/// haloTiles(th, tw, radius, m, boundary): tiles(th, tw, m)'s grid, each tile with the `radius`
/// elements around it: tile (i, j) is the (th + 2 radius) x (tw + 2 radius) matrix whose
/// element (r, c) is m's (i * th + r - radius, j * tw + c - radius), read as `boundary` says
/// outside m.
template <class R, class C, class X>
auto haloTiles(uint32_t th, uint32_t tw, uint32_t radius, const Pull2<R, C, Exp<X>>& m,
               Boundary boundary = Boundary::Clamp) {
  detail::checkTile("haloTiles", th, tw);
  const uint32_t hr = detail::lenAdd("haloTiles", th, detail::lenMul("haloTiles", 2u, radius));
  const uint32_t hc = detail::lenAdd("haloTiles", tw, detail::lenMul("haloTiles", 2u, radius));
  detail::checkExtent("haloTiles", "rows", m.rows(), hr);
  detail::checkExtent("haloTiles", "cols", m.cols(), hc);
  const R tr = detail::tileCount(m.rows(), th);
  const C tc = detail::tileCount(m.cols(), tw);
  return Pull2<R, C, SPull2<Exp<X>>>(
      tr, tc, [m, th, tw, hr, hc, radius, boundary](const EWord32& i, const EWord32& j) {
        return SPull2<Exp<X>>(hr, hc, [=](const EWord32& r, const EWord32& c) {
          // Row i * th + r - radius, kept unsigned: below zero when i * th + r < radius.
          const EWord32 rows = sizeConv(m.rows()), cols = sizeConv(m.cols());
          const EWord32 row = i * th + r, col = j * tw + c;
          if (boundary == Boundary::Clamp) {
            const EWord32 cr = ifThenElse(row < radius, EWord32(0u), min(row - radius, rows - 1u));
            const EWord32 cc = ifThenElse(col < radius, EWord32(0u), min(col - radius, cols - 1u));
            return m(cr, cc);
          }
          return ifThenElse(
              row >= radius && row - radius < rows && col >= radius && col - radius < cols,
              m(row - radius, col - radius), Exp<X>(X{}));
        });
      });
}

// ------------------------------------------------------------------ 2-D grids
// A 2-D grid of blocks is one DistrPar over tr x tc instances, each decoding its tile (i, j)
// from its linear index (one division per block): the launch stays one-dimensional, so
// virtualization (fewer real blocks than tiles, each looping over several) works unchanged and
// no side is limited to gridDim.y's 65535.
namespace detail {
// `tiles` tiles of `side` elements cover `wanted`: now for static sides; for dynamic ones, a
// launch precondition unless `tiles` is tileCount(wanted, side) (tiles' own count).
void checkCovers(const char* what, uint32_t tiles, uint32_t side, uint32_t wanted);
void checkCovers(const char* what, const EWord32& tiles, uint32_t side, const EWord32& wanted);
template <class A, class B>
void checkCovers(const char* what, const A& tiles, uint32_t side, const B& wanted) {
  if constexpr (std::is_same_v<A, uint32_t> && std::is_same_v<B, uint32_t>) {
    checkCovers(what, static_cast<uint32_t>(tiles), side, static_cast<uint32_t>(wanted));
  } else {
    checkCovers(what, sizeConv(tiles), side, sizeConv(wanted));
  }
}
}  // namespace detail

/// @{
/// pConcat2(arr, rows, cols): a 2-D grid of level-`Step<L>` instances (Block programs over the
/// grid, ...), one per element of arr, a tr x tc matrix of th x tw `Push2<L>` tiles; tile (i, j)
/// writes the elements (i * th + r, j * tw + c) of the rows x cols result, those outside it
/// dropped. The tiles must cover the result (rows <= tr * th, cols <= tc * tw: an Error now,
/// or a launch precondition). pConcat2(arr) is the whole tr * th x tc * tw.
template <class RA, class CA, class Inner, class NR, class NC>
auto pConcat2(const Pull2<RA, CA, Inner>& arr, const NR& rows, const NC& cols) {
  static_assert(isPush2<Inner>, "pConcat2: the elements must be Push2 arrays (push2<L>)");
  using L = typename Inner::Level;
  static_assert(level_le<L, Block>,
                "pConcat2 steps exactly one level up: there is no level above Grid");
  if constexpr (level_le<L, Block>) {
    using Up = Step<L>;
    static_assert(std::is_same_v<typename Inner::Rows, uint32_t> &&
                      std::is_same_v<typename Inner::Cols, uint32_t>,
                  "pConcat2: the inner arrays need a static shape (uint32_t rows and cols)");
    using R = detail::SizeOf<NR>;
    using C = detail::SizeOf<NC>;
    const R outRows = detail::asSize(rows);
    const C outCols = detail::asSize(cols);
    const Inner first = arr(0u, 0u);
    const uint32_t th = first.rows(), tw = first.cols();
    detail::checkCovers("rows", arr.rows(), th, outRows);
    detail::checkCovers("cols", arr.cols(), tw, outCols);
    using T = typename Inner::Element;
    const EWord32 count = detail::lenMul("pConcat2", sizeConv(arr.rows()), sizeConv(arr.cols()));
    return Push2<Up, R, C, T>(
        outRows, outCols,
        [arr, th, tw, count, outRows, outCols](const Program<Up>& p, const Writer2<T>& w) {
          const EWord32 across = sizeConv(arr.cols());
          p.distrPar(count, [&](const Program<L>& q, const EWord32& b) {
            const EWord32 i = b / across, j = b % across;  // the instance's tile
            arr(i, j)(
                q, [&](const Program<Thread>& t, const T& v, const EWord32& r, const EWord32& c) {
                  const EWord32 row = i * th + r, col = j * tw + c;
                  t.cond(row < sizeConv(outRows) && col < sizeConv(outCols),
                         [&](const Program<Thread>& u) { w(u, v, row, col); });
                });
          });
        });
  }
}
template <class RA, class CA, class Inner>
auto pConcat2(const Pull2<RA, CA, Inner>& arr) {
  static_assert(isPush2<Inner>, "pConcat2: the elements must be Push2 arrays (push2<L>)");
  const Inner first = arr(0u, 0u);
  if constexpr (std::is_same_v<RA, uint32_t> && std::is_same_v<CA, uint32_t>) {
    return pConcat2(arr, detail::lenMul("pConcat2", arr.rows(), first.rows()),
                    detail::lenMul("pConcat2", arr.cols(), first.cols()));
  } else {
    return pConcat2(arr, detail::lenMul("pConcat2", sizeConv(arr.rows()), EWord32(first.rows())),
                    detail::lenMul("pConcat2", sizeConv(arr.cols()), EWord32(first.cols())));
  }
}
/// @}

// ------------------------------------------------------------------ stencils
/// The neighbourhood of one element in a stencil: nb(dr, dc) is the element dr rows below and
/// dc columns right of it (negative: above, left), |dr| and |dc| at most the stencil's radius;
/// nb.row() and nb.col() are the element's position in the matrix. It reads a halo tile:
/// element (r, c) of the tile's output is the halo's (r + radius, c + radius).
template <class X>
class Neighbourhood {
 public:
  /// The neighbourhood of output (r, c) in `tile`, the halo tile of a stencil of `radius`, the
  /// element at (row, col) of the matrix.
  Neighbourhood(SPull2<Exp<X>> tile, EWord32 r, EWord32 c, uint32_t radius, EWord32 row,
                EWord32 col)
      : tile_(std::move(tile)),
        r_(std::move(r)),
        c_(std::move(c)),
        radius_(radius),
        row_(std::move(row)),
        col_(std::move(col)) {}
  /// The same for a stencil written out by hand (blocks over haloTiles), which knows no position:
  /// row() and col() are then an Error.
  Neighbourhood(SPull2<Exp<X>> tile, EWord32 r, EWord32 c, uint32_t radius)
      : tile_(std::move(tile)), r_(std::move(r)), c_(std::move(c)), radius_(radius) {}
  /// The element dr rows below and dc columns right (an Error beyond the radius).
  Exp<X> operator()(int dr, int dc) const {
    const int64_t k = radius_;
    if (dr < -k || dr > k || dc < -k || dc > k) {
      throw Error("stencil: the neighbour (" + std::to_string(dr) + ", " + std::to_string(dc) +
                  ") is outside the radius " + std::to_string(radius_) +
                  " (each offset must be within -" + std::to_string(radius_) + " .. " +
                  std::to_string(radius_) + ")");
    }
    return tile_(r_ + static_cast<uint32_t>(dr + k), c_ + static_cast<uint32_t>(dc + k));
  }
  uint32_t radius() const { return radius_; }  ///< the stencil's radius
  /// The element's row in the matrix.
  const EWord32& row() const { return position(row_); }
  /// The element's column in the matrix.
  const EWord32& col() const { return position(col_); }

 private:
  const EWord32& position(const std::optional<EWord32>& p) const {
    if (!p) {
      throw Error(
          "stencil: this Neighbourhood was made without its position (the 4-argument "
          "constructor); row() and col() need the one that takes them");
    }
    return *p;
  }

  SPull2<Exp<X>> tile_;
  EWord32 r_, c_;
  uint32_t radius_;
  std::optional<EWord32> row_, col_;
};

/// How stencil tiles its output and reads past the matrix's edges.
struct StencilOptions {
  /// @{
  /// Each block's tile of outputs.
  uint32_t tileRows = 16;
  uint32_t tileCols = 32;
  /// @}
  Boundary boundary = Boundary::Clamp;  ///< what a neighbour outside the matrix reads
  /// Steps of the stencil in one kernel (temporal blocking): the result is the stencil applied
  /// `steps` times, each intermediate matrix read past its edges as `boundary` says, as if each
  /// step were a kernel of its own. A block loads its tile with a halo of steps * radius and
  /// keeps the intermediate tiles in shared memory, computing steps - 1 rings of halo twice
  /// where neighbouring blocks overlap, in exchange for one read and one write of the matrix.
  uint32_t steps = 1;
};

/// stencil(m, radius, f, options): the rows x cols matrix whose element (r, c) is f(nb), nb the
/// neighbourhood of m's element (r, c) (nb(0, 0) is that element), applied options.steps times.
/// Each block computes one tile: it loads the tile with its halo (haloTiles) into a padded
/// shared tile once (force2), then every thread computes its elements from it, so each input
/// element is read from global memory about once however many neighbours use it. With several
/// steps, each intermediate tile (smaller by the radius on each side) goes to shared memory in
/// turn; an intermediate element outside the matrix is what `boundary` reads there: zero, or
/// (Clamp) the intermediate element at the nearest position inside, which lies in the same tile
/// and is computed again where it is needed.
template <class R, class C, class X, class F>
auto stencil(const Pull2<R, C, Exp<X>>& m, uint32_t radius, F f,
             const StencilOptions& options = {}) {
  using U = std::invoke_result_t<F, const Neighbourhood<X>&>;
  static_assert(isExp<U>, "stencil(m, radius, f): f takes a Neighbourhood and returns an Exp");
  const uint32_t th = options.tileRows, tw = options.tileCols, steps = options.steps;
  detail::checkTile("stencil", th, tw);
  if (steps == 0) throw Error("stencil: steps must be at least 1 (got 0)");
  if (!std::is_same_v<U, Exp<X>> && steps > 1) {
    throw Error("stencil: " + std::to_string(steps) +
                " steps need f to return an element of m's type (each step reads the last "
                "one's result)");
  }
  const uint32_t reach = detail::lenMul("stencil", radius, steps);  // the first tile's halo
  const Boundary boundary = options.boundary;
  const auto halos = haloTiles(th, tw, reach, m, boundary);
  return pConcat2(
      mkPull2(halos.rows(), halos.cols(),
              [=](const EWord32& i, const EWord32& j) {
                const SPull2<Exp<X>> halo = halos(i, j);
                return exec<Block>([=](const Program<Block>& p) {
                  const EWord32 rows = sizeConv(m.rows()), cols = sizeConv(m.cols());
                  const EWord32 top = i * th, left = j * tw;  // the tile's first output
                  SPull2<Exp<X>> s = force2(p, halo);
                  // Step k's tile reaches h = (steps - k) * radius past the output tile; its
                  // element (r, c) is the intermediate matrix's (top + r - h, left + c - h).
                  for (uint32_t k = 1; k < steps; ++k) {
                    if constexpr (std::is_same_v<U, Exp<X>>) {
                      const uint32_t h = (steps - k) * radius;
                      const SPull2<Exp<X>> last = s;
                      s = force2(
                          p, push2<Block>(mkPull2(
                                 th + 2 * h, tw + 2 * h, [=](const EWord32& r, const EWord32& c) {
                                   const EWord32 row = top + r, col = left + c;  // plus h
                                   if (boundary == Boundary::Zero) {
                                     const EBool inside =
                                         row >= h && row - h < rows && col >= h && col - h < cols;
                                     return ifThenElse(
                                         inside,
                                         f(Neighbourhood<X>(last, r, c, radius, row - h, col - h)),
                                         Exp<X>(X{}));
                                   }
                                   // The nearest position inside, and where it is in this tile.
                                   const EWord32 cr =
                                       ifThenElse(row < h, EWord32(0u), min(row - h, rows - 1u));
                                   const EWord32 cc =
                                       ifThenElse(col < h, EWord32(0u), min(col - h, cols - 1u));
                                   return f(Neighbourhood<X>(last, cr + h - top, cc + h - left,
                                                             radius, cr, cc));
                                 })));
                    }
                  }
                  return push2<Block>(mkPull2(th, tw, [=](const EWord32& r, const EWord32& c) {
                    return f(Neighbourhood<X>(s, r, c, radius, top + r, left + c));
                  }));
                });
              }),
      m.rows(), m.cols());
}

}  // namespace obsidian
