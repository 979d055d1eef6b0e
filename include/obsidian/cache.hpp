/// Kernel cache: compiled kernels keyed by a hash of (CUDA source, NVRTC options, target arch),
/// kept in memory and, when a directory is given, on disk so later processes skip NVRTC.
///
/// On-disk entry `<dir>/<key>.obsk`: one JSON header line, `'\n'`, the CUBIN bytes, the PTX
/// bytes.
/// @code{.unparsed}
///   {"magic":"obsidian-kernel-cache","version":2,"key":"<16 hex>","kernel":"<name>",
///    "arch":"sm_90","options":[...options used...],"registers":N,"spillStoreBytes":N,
///    "spillLoadBytes":N,"stackBytes":N,"staticSharedBytes":N,"seconds":S,
///    "cubinBytes":N,"ptxBytes":N,"checksum":"<16 hex>"}
/// @endcode
/// written as compact JSON in this order. The checksum is FNV-1a 64 over the header line
/// without its "checksum" field (the same compact JSON), then the cubin bytes, then the ptx
/// bytes: it covers every header field as well as the payload.
/// An entry is accepted only when the magic, version, key, kernel name and arch match, every
/// field has its type and range (registers -1..255, where -1 means ptxas reported none; spill,
/// stack and static shared bytes 0..INT_MAX; seconds finite and >= 0; options strings), the
/// file is exactly header + cubinBytes + ptxBytes long and the checksum matches. Entries are
/// written to a temp file in the same directory and renamed into place, so readers (threads or
/// other processes) see either no entry or a complete one.
/// @file
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "obsidian/nvrtc.hpp"

namespace obsidian {

/// Compiled kernels by key, in memory and, given a directory, on disk (the entry format is in
/// this file's description); the runtime compiles through KernelCache::global().
class KernelCache {
 public:
  /// dir empty: memory only. The directory is created on first write.
  explicit KernelCache(std::filesystem::path dir);
  ~KernelCache();  ///< drops the in-memory layer; the disk entries stay
  /// @{
  /// Not copyable: a cache is one set of entries and compiles in flight, shared by reference.
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;
  /// @}

  /// The process-wide cache: $OBSIDIAN_CACHE_DIR, else $HOME/.cache/obsidian, else memory only.
  /// OBSIDIAN_CACHE_DIR set to the empty string also means memory only (turns the disk off).
  static KernelCache& global();

  /// Stable across processes and machines: 16 lower-case hex digits of FNV-1a 64 over these
  /// fields, each fed as a netstring "<decimal byte length>:<bytes>,":
  ///   "obsidian-kernel-cache/2" (format version), decimal nvrtcVersion(), options.arch,
  ///   decimal options.extraOptions.size(), each extra option in order, the source.
  /// The options compileCuda always adds (-arch, -std, --ptxas-options) follow from the arch and
  /// the format version. The kernel name is not part of the key (see get()).
  static std::string key(const std::string& source, const CompileOptions& options);

  /// The compiled kernel: from memory, else from disk, else compileCuda(...) and stored.
  /// - A result restored from disk has cubin, ptx, options and the ptxas figures (registers,
  ///   spills, stack, static shared) of the original compile; its log is empty and its seconds
  ///   is the original compile's wall time, not the time of the load.
  /// - Threads of one process asking for the same kernel at once share one compile.
  /// - An entry that is corrupt or truncated (bad header or header field, wrong sizes, checksum
  ///   mismatch) is reported once on std::cerr, counted in stats().corrupt, recompiled and
  ///   rewritten; it is never served, so no forged figure reaches a report.
  ///   So is anything but a regular file at the entry path (a FIFO, socket, device, directory
  ///   or symbolic link): it is never opened in a way that could block, and the rewrite
  ///   replaces it, except a directory, which cannot be replaced (a write failure, below).
  /// - An entry for the same key but another kernelName (one source holding several kernels)
  ///   counts as a miss: it is recompiled so the ptxas figures are those of kernelName, and the
  ///   disk entry is replaced.
  /// - A disk write failure (read-only or unusable directory, a directory at the entry path)
  ///   prints one warning and turns disk writes off for this cache (reads continue); it never
  ///   throws.
  /// - CompileError from compileCuda propagates; nothing is cached then.
  CompileResult get(const std::string& source, const std::string& kernelName,
                    const CompileOptions& options = {});

  /// What get() did, counted since the cache was made.
  struct Stats {
    uint64_t memoryHits = 0;  ///< served from memory (or by waiting on another thread's compile)
    uint64_t diskHits = 0;    ///< loaded from a valid disk entry
    uint64_t misses = 0;      ///< compiled with NVRTC
    uint64_t corrupt = 0;     ///< corrupt disk entries found (each also counts as a miss)
  };
  Stats stats() const;  ///< the counts so far

  void clearMemory();  ///< drop the in-memory layer (tests use it to force disk reads)

  std::filesystem::path pathFor(const std::string& key) const;  ///< `<dir>/<key>.obsk`
  const std::filesystem::path& directory() const;  ///< the disk directory; empty: memory only

 private:
  struct State;
  std::filesystem::path dir_;
  std::unique_ptr<State> state_;
};

}  // namespace obsidian
