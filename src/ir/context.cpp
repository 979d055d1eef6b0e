// The per-capture Context: fresh names, the array table, preconditions, and which capture
// made a value (so a value used in another capture is an error that names both).
#include <atomic>
#include <mutex>
#include <optional>
#include <sstream>

#include "obsidian/memory_ops.hpp"
#include "obsidian/program.hpp"

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
  std::string name = prefix + std::to_string(n++);
  while (reserved_.count(name)) name = prefix + std::to_string(n++);
  return name;
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
  for (const Precondition& c : kernel_.preconditions) {
    if (c.message == message && ir::equal(c.holds, e)) return;  // a generator run again (exec)
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

void rememberCaptureName(uint32_t serial, const std::string& name) {
  std::lock_guard<std::mutex> lock(namesMutex);
  names[serial % kNamesKept] = {serial, name};
}

void requireLength(const Exp<bool>& holds, const std::string& message) {
  if (Context* ctx = currentContext()) {
    ctx->require(holds, message);
  } else if (holds.node()->isLiteral() && holds.node()->bits == 0) {
    throw Error(message);
  }
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

}  // namespace detail
}  // namespace obsidian
