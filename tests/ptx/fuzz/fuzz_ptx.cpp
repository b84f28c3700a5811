// libFuzzer target for the PTX parser and executor (src/ptx): any text is either refused with a
// "NAME:LINE: ..." message, or decodes into instructions whose operand slots and branch targets
// are in range; a decoded kernel is then launched (one block of 64 threads, 256-byte buffers for
// the 64-bit parameters, zeros for the others, a small step limit) and must end in a result or
// an Error, never in undefined behaviour; then traced by the symbolic policy, its first 64-bit
// parameter an input of 128 f16 leaves (the rest as before): a result or an Error again. Seeds:
// tests/ptx/data/*.ptx and tests/cli/data/kernel_prove/*.ptx (scripts/fuzz.sh).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/graph.hpp"
#include "ptx/ptx.hpp"
#include "ptx/symbolic.hpp"

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace bitproof::ptx;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = parse_module(text, "fuzz.ptx");
  if (!m) {
    require(m.error().message.starts_with("fuzz.ptx:"));
    return 0;
  }
  for (const Kernel& k : m->kernels) {
    require(!k.code.empty() && k.code.back().op == Op::kExit);
    for (const Inst& in : k.code) {
      require(in.target < k.code.size());
      for (std::uint32_t d : in.dst) require(d == kNoSlot || d < k.slots.size());
      for (std::uint32_t s : in.src) require(s == kNoSlot || s < k.slots.size());  // st.v4 uses all 5
      require(in.op != Op::kPrmt || in.mode <= static_cast<std::uint8_t>(PrmtMode::kRc16));
      require(in.guard == kNoSlot || in.guard < k.slots.size());
      if (in.op == Op::kMma) {  // its registers in Kernel::lists
        require(in.mode < std::size(kMmaForms) && in.list + in.ndst + in.nsrc <= k.lists.size());
        for (std::uint32_t i = 0; i < std::uint32_t{in.ndst} + in.nsrc; ++i)
          require(k.lists[in.list + i] < k.slots.size());
      }
    }
    Memory mem;
    std::vector<Arg> args;
    for (const Param& p : k.params) {
      if (p.pointer_sized) {
        args.push_back(Arg::buf(mem.add(std::vector<std::uint8_t>(256))));
      } else {
        Arg a;
        a.size = p.size;
        args.push_back(a);
      }
    }
    LaunchConfig cfg;
    cfg.grid = {2}, cfg.block = {64}, cfg.max_warp_steps = 20000;
    auto r = launch(*m, k, cfg, args, mem);
    if (!r) require(!r.error().message.empty());
    sym::Graph graph;
    const std::uint32_t x = graph.add_tensor({"x", 128, 16, {}, 0});
    SymMemory smem;
    std::vector<Arg> sargs;
    bool input = false;
    for (const Param& p : k.params) {
      if (!p.pointer_sized) {
        Arg a;
        a.size = p.size;
        sargs.push_back(a);
      } else if (!input) {
        auto b = smem.add_input(graph, x);
        require(b.ok());
        sargs.push_back(Arg::buf(*b));
        input = true;
      } else {
        sargs.push_back(Arg::buf(smem.add_plain(std::vector<std::uint8_t>(256))));
      }
    }
    auto t = trace_launch(*m, k, cfg, sargs, smem, graph, 0);
    if (!t) require(!t.error().message.empty());
  }
  return 0;
}
