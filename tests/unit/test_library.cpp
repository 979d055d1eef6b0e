// Tests for the array library's semantics. Pull arrays are index functions, and with literal
// indices the smart constructors fold every element to a literal, so the library is checked
// here by evaluating elements of arrays built from input[i] = 10 * i against plain C++ models.
#include <doctest/doctest.h>

#include <cstdint>
#include <obsidian/report_json.hpp>
#include <string>
#include <vector>

#include "ir/ir_walk.hpp"
#include "ir/print.hpp"
#include "obsidian/obsidian.hpp"

using namespace obsidian;

namespace {

// The literal value of e (the test fails if e did not fold to a uint32 literal).
uint32_t val(const EWord32& e) {
  uint32_t v = 0;
  INFO("not a literal: " << ir::printExp(e.node(), {}));
  REQUIRE(ir::literalU32(e.node(), v));
  return v;
}

SPull<EWord32> input(uint32_t n) {
  return mkPull(n, [](EWord32 i) { return i * 10u; });
}

std::vector<uint32_t> values(const SPull<EWord32>& p) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < p.len(); ++i) out.push_back(val(p[EWord32(i)]));
  return out;
}

std::vector<uint32_t> times10(std::vector<uint32_t> ix) {
  for (uint32_t& x : ix) x *= 10;
  return ix;
}

EWord32 plus(const EWord32& a, const EWord32& b) { return a + b; }

template <class T>
SPull<T> reverse(const SPull<T>& a) {
  const uint32_t n = a.len();
  return SPull<T>(n, [a, n](const EWord32& i) { return a[EWord32(n - 1) - i]; });
}

// The paper's fan (Section 5.3): the last element of the first half added to the second half.
SPull<EWord32> fanPlus(const SPull<EWord32>& arr) {
  auto [a1, a2] = halve(arr);
  const EWord32 c = a1[EWord32(a1.len() - 1)];
  return conc(a1, fmap([c](const EWord32& x) { return c + x; }, a2));
}

std::vector<std::string> preconditionMessages(const Kernel& k) {
  std::vector<std::string> out;
  const nlohmann::json report = toJson(k.report());
  for (const auto& p : report["preconditions"]) out.push_back(p["message"].get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("library: splitUp cuts consecutive chunks") {
  const auto chunks = splitUp(4, input(16));
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(chunks)>, SPull<SPull<EWord32>>>);
  CHECK(chunks.len() == 4);
  for (uint32_t c = 0; c < 4; ++c) {
    const SPull<EWord32> chunk = chunks[EWord32(c)];
    CHECK(chunk.len() == 4);
    CHECK(values(chunk) == times10({4 * c, 4 * c + 1, 4 * c + 2, 4 * c + 3}));
  }
  // Nested splits: splitUp(2) of chunk 3 of splitUp(8) of 32 elements.
  const auto nested = splitUp(2, splitUp(8, input(32))[EWord32(3u)]);
  CHECK(nested.len() == 4);
  CHECK(values(nested[EWord32(1u)]) == times10({26, 27}));
}

TEST_CASE("library: coalesce gives strided chunks (the paper's Figure 5, right)") {
  const uint32_t n = 4, len = 16, s = len / n;
  const auto chunks = coalesce(n, input(len));
  CHECK(chunks.len() == s);
  std::vector<uint32_t> seen(len, 0);
  for (uint32_t i = 0; i < s; ++i) {
    const SPull<EWord32> chunk = chunks[EWord32(i)];
    CHECK(chunk.len() == n);
    for (uint32_t j = 0; j < n; ++j) {
      const uint32_t v = val(chunk[EWord32(j)]);
      CHECK(v == 10 * (i + s * j));
      seen.at(v / 10) += 1;
    }
  }
  // A permutation of the input: every element in exactly one chunk.
  CHECK(seen == std::vector<uint32_t>(len, 1));
  // Step j of consecutive chunks reads consecutive elements (coalesced), unlike splitUp.
  const auto split = splitUp(n, input(len));
  CHECK(val(chunks[EWord32(1u)][EWord32(2u)]) - val(chunks[EWord32(0u)][EWord32(2u)]) == 10);
  CHECK(val(split[EWord32(1u)][EWord32(2u)]) - val(split[EWord32(0u)][EWord32(2u)]) == 40);
}

TEST_CASE("library: evenOdds and halve, odd lengths too") {
  auto [evens, odds] = evenOdds(input(7));
  CHECK(evens.len() == 4);
  CHECK(odds.len() == 3);
  CHECK(values(evens) == times10({0, 2, 4, 6}));
  CHECK(values(odds) == times10({1, 3, 5}));

  auto [h1, h2] = halve(input(7));
  CHECK(h1.len() == 3);  // the first half is the shorter
  CHECK(h2.len() == 4);
  CHECK(values(h1) == times10({0, 1, 2}));
  CHECK(values(h2) == times10({3, 4, 5, 6}));
  auto [e1, e2] = halve(input(8));
  CHECK(values(e1) == times10({0, 1, 2, 3}));
  CHECK(values(e2) == times10({4, 5, 6, 7}));

  // Dynamic lengths: the same split as expressions.
  const DPull<EWord32> dyn = mkPull(variable<uint32_t>("n"), [](EWord32 i) { return i * 10u; });
  auto [d1, d2] = halve(dyn);
  CHECK(ir::printExp(d1.len().node(), {}) == "n / 2u");
  CHECK(ir::printExp(d2.len().node(), {}) == "n - n / 2u");
  CHECK(ir::printExp(d2[EWord32(1u)].node(), {}) == "(n / 2u + 1u) * 10u");
  const DPull<EWord32> seven = mkPull(EWord32(7u), [](EWord32 i) { return i * 10u; });
  auto [s1, s2] = halve(seven);
  CHECK(val(s1.len()) == 3);
  CHECK(val(s2.len()) == 4);
  CHECK(val(s2[EWord32(0u)]) == 30);
}

TEST_CASE("library: splitAt") {
  auto [a, b] = splitAt(3, input(10));
  CHECK(a.len() == 3);
  CHECK(b.len() == 7);
  CHECK(values(a) == times10({0, 1, 2}));
  CHECK(values(b) == times10({3, 4, 5, 6, 7, 8, 9}));
  auto [all, none] = splitAt(10, input(10));
  CHECK(all.len() == 10);
  CHECK(none.len() == 0);
  CHECK_THROWS_WITH_AS(splitAt(11, input(10)), "splitAt(11) needs a length of at least 11; got 10",
                       Error);
}

TEST_CASE("library: conc selects between its two arrays") {
  const auto b = mkPull(4u, [](EWord32 i) { return i + 100u; });
  const auto c = conc(input(3), b);
  CHECK(c.len() == 7);
  CHECK(values(c) == std::vector<uint32_t>{0, 10, 20, 100, 101, 102, 103});
  // With an unknown index it is a conditional per element, which folds once i is known.
  const EWord32 e = c[variable<uint32_t>("i")];
  CHECK(e.node()->kind == ExpKind::Select);
  CHECK(val(EWord32(ir::substitute(e.node(), "i", ir::u32(5)))) == 102);
  CHECK(val(EWord32(ir::substitute(e.node(), "i", ir::u32(2)))) == 20);
  // concP: the push version has the same length.
  CHECK(concP(push<Block>(input(3)), push<Block>(b)).len() == 7);
}

TEST_CASE("library: zip, unzip and upair") {
  const auto b = mkPull(3u, [](EWord32 i) { return i + 1u; });
  const auto z = zip(input(5), b);
  CHECK(z.len() == 3);  // the shorter length
  const auto z2 = z[EWord32(2u)];
  CHECK(val(hana::at_c<0>(z2)) == 20);
  CHECK(val(hana::at_c<1>(z2)) == 3);
  auto [xs, ys] = unzip(z);
  CHECK(xs.len() == 3);
  CHECK(values(xs) == times10({0, 1, 2}));
  CHECK(values(ys) == std::vector<uint32_t>{1, 2, 3});
  const auto u = upair(z);
  CHECK(u.len() == 6);
  CHECK(values(u) == std::vector<uint32_t>{0, 1, 10, 2, 20, 3});
  // zipWith takes the shorter length too.
  const auto sum = zipWith(plus, input(5), b);
  CHECK(sum.len() == 3);
  CHECK(values(sum) == std::vector<uint32_t>{1, 12, 23});
}

TEST_CASE("library: replicate, singleton, first and last") {
  const auto r = replicate(5u, EWord32(7u));
  CHECK(r.len() == 5);
  CHECK(values(r) == std::vector<uint32_t>(5, 7));
  const auto s = singleton(EWord32(9u));
  CHECK(s.len() == 1);
  CHECK(val(s[EWord32(0u)]) == 9);
  CHECK(val(first(input(5))) == 0);
  CHECK(val(last(input(5))) == 40);
  // On a dynamic length, last reads element n - 1.
  const DPull<EWord32> dyn = mkPull(variable<uint32_t>("n"), [](EWord32 i) { return i * 10u; });
  CHECK(ir::printExp(last(dyn).node(), {}) == "(n - 1u) * 10u");
  const auto dr = replicate(variable<uint32_t>("n"), EWord32(3u));
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(dr)>, DPull<EWord32>>);
  CHECK(val(dr[EWord32(100u)]) == 3);
}

TEST_CASE("library: binSplit applies f to each of 2^n parts") {
  // Plain C++ model: cut into parts, apply f's model to each, concatenate.
  auto model = [](const std::vector<uint32_t>& in, uint32_t n, auto f) {
    const size_t parts = size_t{1} << n, partLen = in.size() / parts;
    std::vector<uint32_t> out;
    for (size_t p = 0; p < parts; ++p) {
      const std::vector<uint32_t> part(in.begin() + p * partLen, in.begin() + (p + 1) * partLen);
      for (uint32_t x : f(part)) out.push_back(x);
    }
    return out;
  };
  auto reversed = [](std::vector<uint32_t> v) {
    return std::vector<uint32_t>(v.rbegin(), v.rend());
  };
  auto firstHalf = [](std::vector<uint32_t> v) {
    return std::vector<uint32_t>(v.begin(), v.begin() + v.size() / 2);
  };
  const std::vector<uint32_t> in = values(input(16));
  for (uint32_t n = 0; n <= 4; ++n) {
    CAPTURE(n);
    const auto r = binSplit(n, reverse<EWord32>, input(16));
    CHECK(r.len() == 16);
    CHECK(values(r) == model(in, n, reversed));
  }
  for (uint32_t n = 0; n <= 3; ++n) {
    CAPTURE(n);
    // f may change the length: keep the first half of every part.
    const auto h = binSplit(
        n, [](const SPull<EWord32>& p) { return halve(p).first; }, input(16));
    CHECK(h.len() == 8);
    CHECK(values(h) == model(in, n, firstHalf));
  }
  CHECK_THROWS_WITH_AS(binSplit(3, reverse<EWord32>, input(12)),
                       "binSplit(3) needs a length divisible by 8 (2^3 parts); got 12", Error);
  CHECK_THROWS_WITH_AS(binSplit(32, reverse<EWord32>, input(12)),
                       "binSplit(32) needs fewer than 32 splits", Error);
}

TEST_CASE("library: sklansky from binSplit, fan and conc computes prefix sums") {
  // sklansky n = binSplit (n-1) fan, then sklansky (n-1): here without forcing in between.
  const SPull<EWord32> in = mkPull(16u, [](EWord32 i) { return (i * 7u) % 5u + 1u; });
  SPull<EWord32> arr = in;
  for (uint32_t k = 4; k >= 1; --k) arr = binSplit(k - 1, fanPlus, arr);
  std::vector<uint32_t> expected;
  uint32_t acc = 0;
  for (uint32_t i = 0; i < 16; ++i) expected.push_back(acc += (i * 7) % 5 + 1);
  CHECK(values(arr) == expected);
}

TEST_CASE("library: foldPull1 folds left over a static array") {
  CHECK(val(foldPull1(plus, input(5))) == 100);
  CHECK(val(foldPull1(plus, input(1))) == 0);
  auto minus = [](const EWord32& a, const EWord32& b) { return a - b; };
  // ((((100 - 0) - 10) - 20) - 30): the order is left to right.
  const auto a = mkPull(4u, [](EWord32 i) { return ifThenElse(i == 0u, EWord32(100u), i * 10u); });
  CHECK(val(foldPull1(minus, a)) == 40);
  // On unknown elements it builds one expression.
  const auto xs = mkPull(3u, [](EWord32 i) { return variable<uint32_t>("x") * (i + 1u); });
  CHECK(ir::printExp(foldPull1(plus, xs).node(), {}) == "x + x * 2u + x * 3u");
  const auto empty = mkPull(0u, [](EWord32 i) { return i; });
  CHECK_THROWS_WITH_AS(foldPull1(plus, empty), "foldPull1 needs a non-empty array; got length 0",
                       Error);
}

TEST_CASE("library: insertZero, flipBit and zeroBits give sklansky2's index pattern") {
  // Phase i of sklansky2 on 16 elements, thread tid of 8: ix1 in the lower half of its block of
  // 2^(i+1), ix2 the matching element of the upper half, ix3 the last of the lower half.
  for (uint32_t i = 0; i < 4; ++i) {
    std::vector<uint32_t> covered(16, 0);
    for (uint32_t tid = 0; tid < 8; ++tid) {
      CAPTURE(i);
      CAPTURE(tid);
      const uint32_t ix1 = val(insertZero(i, EWord32(tid)));
      const uint32_t ix2 = val(flipBit(i, EWord32(ix1)));
      const uint32_t ix3 = val(zeroBits(i, EWord32(ix2)) - 1u);
      const uint32_t block = tid >> i, off = tid & ((1u << i) - 1u);
      CHECK(ix1 == (block << (i + 1)) + off);
      CHECK(ix2 == ix1 + (1u << i));
      CHECK(ix3 == (block << (i + 1)) + (1u << i) - 1u);
      covered.at(ix1) += 1;
      covered.at(ix2) += 1;
    }
    CHECK(covered == std::vector<uint32_t>(16, 1));
  }
  // Running the four phases with these indices scans the array.
  std::vector<uint32_t> v{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
  std::vector<uint32_t> expected;
  uint32_t acc = 0;
  for (uint32_t x : v) expected.push_back(acc += x);
  for (uint32_t i = 0; i < 4; ++i) {
    std::vector<uint32_t> next(16, 0);
    for (uint32_t tid = 0; tid < 8; ++tid) {
      const EWord32 ix1 = insertZero(i, EWord32(tid));
      const EWord32 ix2 = flipBit(i, ix1);
      const EWord32 ix3 = zeroBits(i, ix2) - 1u;
      next.at(val(ix1)) = v.at(val(ix1));
      next.at(val(ix2)) = v.at(val(ix3)) + v.at(val(ix2));
    }
    v = next;
  }
  CHECK(v == expected);
  // Bit helpers on literals.
  CHECK(val(insertZero(2, EWord32(0b1111u))) == 0b11011u);
  CHECK(val(flipBit(3, EWord32(0b1111u))) == 0b0111u);
  CHECK(val(zeroBits(3, EWord32(0b1111u))) == 0b1000u);
  CHECK(ir::printExp(insertZero(0, variable<uint32_t>("a")).node(), {}) == "a << 1u");
}

TEST_CASE("library: length errors on static lengths") {
  CHECK_THROWS_WITH_AS(splitUp(3, input(10)), "splitUp(3) needs a length divisible by 3; got 10",
                       Error);
  CHECK_THROWS_WITH_AS(splitUp(0, input(10)), "splitUp(0) needs a chunk size of at least 1", Error);
  CHECK_THROWS_WITH_AS(coalesce(4, input(10)), "coalesce(4) needs a length divisible by 4; got 10",
                       Error);
  CHECK_NOTHROW(splitUp(5, input(10)));
  // A dynamic length that is a known constant is checked now as well.
  const DPull<EWord32> ten = mkPull(EWord32(10u), [](EWord32 i) { return i; });
  CHECK_THROWS_WITH_AS(splitUp(3, ten), "splitUp(3) needs a length divisible by 3", Error);
  // An unknown length outside a capture cannot be checked (and nothing is recorded).
  const DPull<EWord32> dyn = mkPull(variable<uint32_t>("n"), [](EWord32 i) { return i; });
  CHECK_NOTHROW(splitUp(3, dyn));
}

TEST_CASE("library: dynamic lengths become launch preconditions of the capture") {
  const Kernel k = capture("chunks", 32, [](DPull<EWord32> in) {
    return pConcat(fmap([](const SPull<EWord32>& c) { return push<Block>(c); }, splitUp(32, in)));
  });
  const auto pre = toJson(k.report())["preconditions"];
  REQUIRE(pre.size() == 1);
  CHECK(pre[0]["message"].get<std::string>() == "splitUp(32) needs a length divisible by 32");
  CHECK(pre[0]["condition"].get<std::string>() == "n0 % 32u == 0u");
  REQUIRE(k.ir().preconditions.size() == 1);

  const Kernel c = capture("strided", 32, [](DPull<EWord32> in) {
    auto [head, rest] = splitAt(64, in);
    (void)rest;
    auto chunks = coalesce(2, head);
    return pConcat(fmap([](const SPull<EWord32>& x) { return push<Block>(x); },
                        splitUp(4, fmap([](const SPull<EWord32>& x) { return x[0u]; }, chunks))));
  });
  const std::vector<std::string> messages = preconditionMessages(c);
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == "splitAt(64) needs a length of at least 64");

  // A condition that folds to true is dropped; one that folds to false throws at capture.
  const Kernel one = capture("ones", 32, [](DPull<EWord32> in) {
    return pConcat(fmap([](const SPull<EWord32>& c) { return push<Block>(c); }, splitUp(1, in)));
  });
  CHECK(toJson(one.report())["preconditions"].empty());
  CHECK_THROWS_WITH_AS(
      capture("bad", 32,
              [](DPull<EWord32> in) {
                const DPull<EWord32> ten(EWord32(10u), in.indexFunction());
                return pConcat(
                    fmap([](const SPull<EWord32>& c) { return push<Block>(c); }, splitUp(3, ten)));
              }),
      "splitUp(3) needs a length divisible by 3", Error);
}
