// The parts of obsidian/matrix.hpp that need no template: shared tiles' padding and the shape
// checks of tiles and 2-D grids.
#include "obsidian/matrix.hpp"

namespace obsidian::detail {

uint32_t sharedPitch(uint32_t cols, uint32_t bytes, Padding padding) {
  if (padding == Padding::None) return cols;
  // Banks are 4 bytes wide; an 8-byte element spans two and is served per half warp. A pitch
  // that is odd in these units puts the rows of a column in distinct banks.
  const uint32_t unit = bytes >= 4 ? bytes : 4;         // bytes per unit
  const uint32_t perUnit = bytes >= 4 ? 1 : 4 / bytes;  // elements per unit
  const uint64_t units = (uint64_t{cols} * bytes + unit - 1) / unit;
  return units % 2 == 1 ? cols : lenAdd("force2", cols, perUnit);
}

void checkTile(const char* what, uint32_t tileRows, uint32_t tileCols) {
  if (tileRows == 0 || tileCols == 0) {
    throw Error(std::string(what) + " needs tiles of at least 1 x 1 elements; got " +
                std::to_string(tileRows) + " x " + std::to_string(tileCols));
  }
}

void checkExtent(const char* what, const char* side, uint32_t n, uint32_t reach) {
  if (uint64_t{n} + reach > (uint64_t{1} << 32)) {
    throw Error(std::string(what) + ": a matrix of " + std::to_string(n) + " " + side +
                " is too close to 2^32 " + side +
                ": the last tile's indices would pass 2^32 - 1 (" + side + " + " +
                std::to_string(reach) + " must be at most 2^32)");
  }
}

void checkExtent(const char* what, const char* side, const EWord32& n, uint32_t reach) {
  requireLength(cast<uint64_t>(n) + EWord64(reach) <= EWord64(uint64_t{1} << 32),
                std::string(what) + ": the matrix's " + side + " + " + std::to_string(reach) +
                    " must be at most 2^32 (the last tile's indices would pass 2^32 - 1)");
}

void checkCovers(const char* what, uint32_t tiles, uint32_t side, uint32_t wanted) {
  const uint64_t covered = uint64_t{tiles} * side;
  if (covered > (uint64_t{1} << 32)) {
    throw Error(std::string("pConcat2: ") + std::to_string(tiles) + " tiles of " +
                std::to_string(side) + " " + what + " pass 2^32 " + what +
                " (their indices would wrap)");
  }
  if (covered < wanted) {
    throw Error(std::string("pConcat2: the tiles cover ") + std::to_string(covered) + " " + what +
                " of the result's " + std::to_string(wanted) + " (" + std::to_string(tiles) +
                " tiles of " + std::to_string(side) + ")");
  }
}

void checkCovers(const char* what, const EWord32& tiles, uint32_t side, const EWord32& wanted) {
  if (ir::equal(tiles.node(), tileCount(wanted, side).node())) return;  // tiles(...)'s own count
  requireLength(cast<uint64_t>(tiles) * EWord64(side) >= cast<uint64_t>(wanted),
                std::string("pConcat2: the tiles cover the result's ") + what);
  requireLength(
      cast<uint64_t>(tiles) * EWord64(side) <= EWord64(uint64_t{1} << 32),
      std::string("pConcat2: the tiles' ") + what + " are at most 2^32 (their indices would wrap)");
}

}  // namespace obsidian::detail
