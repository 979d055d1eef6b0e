// The per-capture Context (names, arrays, preconditions) and the length checks that the
// array library shares.
#include <atomic>
#include <mutex>
#include <optional>
#include <sstream>

#include "ir/identifiers.hpp"
#include "obsidian/kernel.hpp"
#include "obsidian/library.hpp"

namespace obsidian {

namespace {
std::atomic<uint32_t> nextSerial{1};

// The names of recent captures, for messages about values that leaked from one (a ring: a
// process may capture millions of kernels).
constexpr size_t kNamesKept = 4096;
std::mutex namesMutex;
std::vector<std::pair<uint32_t, std::string>> names(kNamesKept);
}  // namespace

Context::Context(uint32_t threadsPerBlock, uint32_t serial) {
  kernel_.threadsPerBlock = threadsPerBlock;
  kernel_.capture = serial != 0 ? serial : nextSerial++;
}

void Context::checkOwn(const ArrayRef& a, const char* what) const {
  if (a.origin == serial()) return;
  throw detail::foreignValue(kernel_.name, std::string(what) + " uses an array of", a.origin);
}

std::string Context::fresh(const std::string& prefix) {
  uint32_t& n = counters_[prefix];
  return prefix + std::to_string(n++);
}

ArrayId Context::addArray(ArrayDecl decl) {
  kernel_.arrays.push_back(std::move(decl));
  return static_cast<ArrayId>(kernel_.arrays.size() - 1);
}

void Context::require(const Exp<bool>& holds, const std::string& message) {
  const ExpPtr& e = holds.node();
  if (e->isLiteral()) {
    if (e->bits == 0) throw Error(message);
    return;
  }
  kernel_.preconditions.push_back(Precondition{e, message});
}

namespace detail {

namespace {
thread_local Context* current = nullptr;
}

Context* currentContext() { return current; }

ContextScope::ContextScope(Context& ctx) : previous_(current), capture_(ctx.serial()) {
  current = &ctx;
}

Error foreignValue(const std::string& kernel, const std::string& what, uint32_t origin) {
  std::string name;
  {
    std::lock_guard<std::mutex> lock(namesMutex);
    if (names[origin % kNamesKept].first == origin) name = names[origin % kNamesKept].second;
  }
  return Error("capture(" + kernel + "): " + what + " another capture" +
               (name.empty() ? "" : " (kernel " + name + ")") +
               "; arrays, lengths and values belong to the capture that made them: pass the "
               "data to this kernel as a parameter instead");
}
ContextScope::~ContextScope() { current = previous_; }

void requireLength(const Exp<bool>& holds, const std::string& message) {
  if (Context* ctx = currentContext()) {
    ctx->require(holds, message);
  } else if (holds.node()->isLiteral() && holds.node()->bits == 0) {
    throw Error(message);
  }
}

void checkDivisible(const char* what, uint32_t n, uint32_t length) {
  const std::string call = std::string(what) + "(" + std::to_string(n) + ")";
  if (n == 0) throw Error(call + " needs a chunk size of at least 1");
  if (length % n != 0) {
    throw Error(call + " needs a length divisible by " + std::to_string(n) + "; got " +
                std::to_string(length));
  }
}

void checkDivisible(const char* what, uint32_t n, const EWord32& length) {
  const std::string call = std::string(what) + "(" + std::to_string(n) + ")";
  if (n == 0) throw Error(call + " needs a chunk size of at least 1");
  requireLength(length % n == 0u, call + " needs a length divisible by " + std::to_string(n));
}

namespace {
constexpr uint64_t kMaxLength = 0xffffffffu;
std::string tooLong(const char* what) {
  return std::string(what) +
         ": the result's length must be at most 4294967295 (lengths are "
         "32-bit)";
}
}  // namespace

uint32_t lenMul(const char* what, uint32_t a, uint32_t b) {
  const uint64_t r = uint64_t{a} * b;
  if (r > kMaxLength) {
    throw Error(tooLong(what) + "; got " + std::to_string(a) + " x " + std::to_string(b) + " = " +
                std::to_string(r));
  }
  return static_cast<uint32_t>(r);
}

EWord32 lenMul(const char* what, const EWord32& a, const EWord32& b) {
  // Known to fit from the lengths' shapes (e.g. (n / 512) * 512): no precondition.
  if (ir::upperBound(a.node()) * ir::upperBound(b.node()) > kMaxLength) {
    requireLength(cast<uint64_t>(a) * cast<uint64_t>(b) <= EWord64(kMaxLength), tooLong(what));
  }
  return a * b;
}

uint32_t lenAdd(const char* what, uint32_t a, uint32_t b) {
  const uint64_t r = uint64_t{a} + b;
  if (r > kMaxLength) {
    throw Error(tooLong(what) + "; got " + std::to_string(a) + " + " + std::to_string(b) + " = " +
                std::to_string(r));
  }
  return static_cast<uint32_t>(r);
}

EWord32 lenAdd(const char* what, const EWord32& a, const EWord32& b) {
  if (ir::upperBound(a.node()) + ir::upperBound(b.node()) > kMaxLength) {
    requireLength(cast<uint64_t>(a) + cast<uint64_t>(b) <= EWord64(kMaxLength), tooLong(what));
  }
  return a + b;
}

void checkAtMost(const char* what, uint32_t k, uint32_t length) {
  if (k > length) {
    throw Error(std::string(what) + "(" + std::to_string(k) + ") needs a length of at least " +
                std::to_string(k) + "; got " + std::to_string(length));
  }
}

void checkAtMost(const char* what, uint32_t k, const EWord32& length) {
  requireLength(EWord32(k) <= length, std::string(what) + "(" + std::to_string(k) +
                                          ") needs a length of at least " + std::to_string(k));
}

void checkNonEmpty(const char* what, uint32_t length) {
  if (length == 0) throw Error(std::string(what) + " needs a non-empty array; got length 0");
}

void checkNonEmpty(const char* what, const EWord32& length) {
  requireLength(length != 0u, std::string(what) + " needs a non-empty array");
}

ArrayId allocateArray(const Program<Thread>*, Context& ctx, Body& body, MemorySpace space,
                      Level level, ScalarType type, uint32_t n) {
  ArrayDecl d;
  d.name = ctx.fresh(space == MemorySpace::Local      ? "loc"
                     : space == MemorySpace::Register ? "reg"
                                                      : "arr");
  d.type = type;
  d.space = space;
  d.level = level;
  d.length = n;
  d.writable = true;
  const ArrayId id = ctx.addArray(std::move(d));
  body.push_back(Allocate{id});
  return id;
}

ArrayId addGlobalArray(Context& ctx, const std::string& name, ScalarType type, bool writable) {
  ArrayDecl d;
  d.name = name;
  d.type = type;
  d.space = MemorySpace::Global;
  d.level = Level::Grid;
  d.writable = writable;
  return ctx.addArray(std::move(d));
}

ArrayId addGridState(Context& ctx, ScalarType type, uint32_t n) {
  ArrayDecl d;
  // Module-scope names: the kernel's name keeps two kernels' state apart in one header.
  d.name = ctx.kernel().name + "_" + ctx.fresh("state");
  d.type = type;
  d.space = MemorySpace::GridState;
  d.level = Level::Grid;
  d.length = n;
  d.writable = true;
  return ctx.addArray(std::move(d));
}

uint32_t nextStaticLength(CaptureState& s, size_t position) {
  if (s.staticUsed >= s.options.staticLengths.size()) {
    throw Error("capture(" + s.ctx.kernel().name + "): parameter " + std::to_string(position) +
                " is an SPull (static length) but CaptureOptions::staticLengths has only " +
                std::to_string(s.options.staticLengths.size()) + " length(s)");
  }
  const uint32_t n = s.options.staticLengths[s.staticUsed++];
  if (n == 0) {
    throw Error("capture(" + s.ctx.kernel().name + "): parameter " + std::to_string(position) +
                " needs a static length of at least 1; got 0");
  }
  return n;
}

void checkAllStaticLengthsUsed(const CaptureState& s) {
  if (s.staticUsed != s.options.staticLengths.size()) {
    throw Error("capture(" + s.ctx.kernel().name + "): CaptureOptions::staticLengths has " +
                std::to_string(s.options.staticLengths.size()) + " length(s) but the kernel has " +
                std::to_string(s.staticUsed) + " SPull parameter(s)");
  }
}

void addLengthParam(Context& ctx, const std::string& name) {
  ctx.kernel().params.push_back(Param{ParamKind::Length, name, ScalarType::U32, 0, false, nullptr});
}

void addArrayParam(Context& ctx, const std::vector<ArrayId>& ids, const ExpPtr& length,
                   bool output) {
  for (ArrayId id : ids) {
    const ArrayDecl& a = ctx.array(id);
    ctx.kernel().params.push_back(Param{ParamKind::Array, a.name, a.type, id, output, length});
  }
}

void addScalarParam(Context& ctx, const std::string& name, ScalarType type) {
  ctx.kernel().params.push_back(Param{ParamKind::Scalar, name, type, 0, false, nullptr});
}

Context& newCaptureContext(std::unique_ptr<Context>& holder, const std::string& name,
                           uint32_t threadsPerBlock) {
  if (name.empty()) throw Error("capture: a kernel needs a name; got an empty string");
  if (!ir::isIdentifier(name)) {
    throw Error("capture: a kernel name must be a C identifier (letters, digits, _); got '" + name +
                "'");
  }
  if (const std::optional<std::string> why = ir::reservedIdentifierReason(name)) {
    throw Error("capture: kernel name '" + name + "' is " + *why + "; choose another name");
  }
  if (threadsPerBlock == 0 || threadsPerBlock > 1024) {
    throw Error("capture(" + name +
                "): threadsPerBlock must be in 1..1024 (CUDA's limit; "
                "larger blocks are virtualized); got " +
                std::to_string(threadsPerBlock));
  }
  holder = std::make_unique<Context>(threadsPerBlock);
  holder->kernel().name = name;
  {
    std::lock_guard<std::mutex> lock(namesMutex);
    names[holder->serial() % kNamesKept] = {holder->serial(), name};
  }
  return *holder;
}

}  // namespace detail
}  // namespace obsidian
