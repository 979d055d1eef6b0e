// EXPECT: conversion from [^ ]*double[^ ]* to non-scalar type [^ ]*(const )?obsidian::EWord32
// A floating point literal does not silently become an integer expression (2.5 would be 2).
// (Fix: an integer literal, 2u, or an EFloat and w32ToF/fToW32.)
#include <obsidian/obsidian.hpp>

using namespace obsidian;

int main() {
  capture("doubleLiteral", 256, [](DPull<EWord32> in) {
    return push<Grid>(fmap(
        [](const EWord32& x) {
          const EWord32 scale = 2.5;  // the violation
          return x * scale;
        },
        in));
  });
}
