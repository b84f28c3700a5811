// launch: every block of a grid, warps of 32 threads in lockstep (docs/ptx-executor.md).
//
// Reconvergence (the contract): each thread has its own program counter; a warp issues the
// instruction at the lowest PC among its runnable threads, to exactly the threads at that PC
// (min-PC scheduling). With the forward branches and backward loop edges compilers emit for
// structured code, threads that diverge meet again at the first instruction after the
// if/else (the lower PC waits for nobody; the higher PC waits for the lower to arrive), and a
// loop runs to its exit before the code after it. Warp-collective instructions (shfl.sync,
// vote.sync, bar.warp.sync) demand that every lane of their member mask is in the issuing
// group, else the launch is an Error: a schedule the hardware might run differently is refused,
// never guessed. bar.sync parks a thread until every thread of the block is parked or has
// exited (exited threads count as arrived).
//
// Guards and branch predicates are concrete (P::concrete) except under a policy with
// select_value (the symbolic one), where a node guard on an ALU instruction, or on a forward
// branch over ALU instructions only, is if-converted (data_guard: both sides run, each register
// write selected by the predicate; docs/ptx-proof.md, "If-conversion"); any other node guard is
// refused with the line, "not provable by tracing". The concrete policy's path is unchanged.
#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <optional>

#include "ptx/concrete.hpp"
#include "ptx/ptx.hpp"
#include "ptx/symbolic.hpp"

namespace bitproof::ptx {
namespace {

constexpr int kWarp = 32;

// The mnemonic of an instruction the executor runs itself (module.hpp, executor_runs), for messages.
const char* executor_op_name(Op op) {
  switch (op) {
    case Op::kLd: return "ld";
    case Op::kSt: return "st";
    case Op::kBra: return "bra";
    case Op::kExit: return "exit";
    case Op::kBar: return "bar";
    case Op::kShfl: return "shfl";
    case Op::kVote: return "vote";
    case Op::kStmatrix: return "stmatrix";
    case Op::kMma: return "mma";
    case Op::kLdmatrix: return "ldmatrix";
    default: return "bar.warp.sync";
  }
}

template <class P>
class Runner {
 public:
  using Value = typename P::Value;
  Runner(const Module& m, const Kernel& k, const LaunchConfig& c, Memory& mem, P& policy)
      : mod_(m), k_(k), cfg_(c), mem_(mem), policy_(policy) {}
  Expected<LaunchResult> run(std::span<const Arg> args);

 private:
  // A warp's lanes are running (`run`), parked at a barrier (`parked`) or exited (neither).
  // Converged (`conv`): every running lane is at `cpc`, and pc[] is stale for running lanes;
  // otherwise pc[] is every running lane's PC. A parked lane's PC is always in pc[]. This is only
  // a cache of min-PC scheduling's state (the issuing group is the same either way): a branch
  // that splits the group ends it, and a scan that finds every running lane at one PC restores it.
  struct Warp {
    std::vector<Value> regs;  // slot * 32 + lane
    std::uint32_t pc[kWarp] = {};
    std::uint32_t run = 0, parked = 0;
    bool conv = true;
    std::uint32_t cpc = 0;
    std::uint32_t lanes = 0;  // the lanes that exist (a partial last warp has fewer)
    std::vector<std::uint8_t> local;
  };
  struct Span {
    std::uint8_t* data = nullptr;
    std::uint64_t size = 0;
  };
  const Module& mod_;
  const Kernel& k_;
  const LaunchConfig& cfg_;
  Memory& mem_;
  P& policy_;
  std::vector<std::uint8_t> params_, shared_;
  std::vector<std::vector<std::uint8_t>> globals_;
  std::vector<Warp> warps_;
  std::vector<std::uint32_t> init_slots_;  // the slots that do not start at 0
  std::vector<typename P::LaneLoop> alu_;  // per instruction: P's loop over a warp's lanes (ALU ops)
  std::vector<Span> args_;                 // the argument buffers, for the accesses' fast path
  Dim3 block_id_;
  LaunchResult result_;
  std::optional<Error> error_;  // why step() returned kFailed

  Error fail(const Warp& w, int lane, const Inst& in, const std::string& what) const;
  void start_block(const Dim3& b);
  enum Step { kIdle, kStepped, kFailed };
  Step step(Warp& w);  // kIdle: no running lane; kFailed: error_ says why
  Step failed(Error e) {
    error_ = std::move(e);
    return kFailed;
  }
  std::uint8_t* fast_resolve(const Inst& in, std::uint64_t addr, unsigned size, Where* at);
  Expected<std::uint8_t*> resolve(const Warp& w, int lane, const Inst& in, std::uint64_t addr, unsigned size,
                                  bool write, Where* at);
  Step lookup(Warp& w, int lane, const Inst& in);
  // If-conversion (a policy with select_value: the symbolic one). kIfConverts is false for the
  // concrete policy, whose guards are always concrete: none of this is instantiated for it.
  static constexpr bool kIfConverts = requires(P & p, const Value& v) { p.select_value(v, false, v, v, 1u, 0u); };
  Step data_guard(Warp& w, std::uint32_t pc, std::uint32_t group, std::uint32_t data);
  Step guarded(Warp& w, std::uint32_t index, std::uint32_t lanes, std::uint32_t cond_lanes, const Value* cond,
               bool cond_negate);
  Expected<Ok> collective(Warp& w, const Inst& in, std::uint32_t exec);
  Expected<Ok> warp_wide(Warp& w, const Inst& in, std::uint32_t exec);
  Expected<Ok> stmatrix(Warp& w, const Inst& in);
  Expected<Ok> ldmatrix(Warp& w, const Inst& in);
  Expected<Ok> mma(Warp& w, const Inst& in);
  Expected<Ok> matrix_rows(const Warp& w, const Inst& in, std::uint64_t (&row)[4][8]) const;
};

template <class P>
Error Runner<P>::fail(const Warp& w, int lane, const Inst& in, const std::string& what) const {
  const std::uint64_t t = static_cast<std::uint64_t>(&w - warps_.data()) * kWarp + static_cast<unsigned>(lane);
  const Dim3& b = cfg_.block;
  return Error{fmt::format("{}:{}: block ({},{},{}) thread ({},{},{}): {}", mod_.name, in.line, block_id_.x,
                           block_id_.y, block_id_.z, t % b.x, t / b.x % b.y, t / (std::uint64_t{b.x} * b.y), what)};
}

template <class P>
Expected<LaunchResult> Runner<P>::run(std::span<const Arg> args) {
  const Dim3 &g = cfg_.grid, &b = cfg_.block;
  const auto bad = [&](const std::string& m) { return Error{fmt::format("{}: kernel {}: {}", mod_.name, k_.name, m)}; };
  if (g.count() == 0 || b.count() == 0) return bad("a launch dimension is 0");
  if (b.count() > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64)
    return bad("the block is past the limits (1024 threads; 1024 x 1024 x 64)");
  if (g.x > 0x7FFFFFFFu || g.y > 65535 || g.z > 65535)
    return bad("the grid is past the limits (2^31-1 x 65535 x 65535)");
  const std::uint64_t shared = (k_.static_shared + 15) / 16 * 16 + std::uint64_t{cfg_.dynamic_shared};
  if (shared > 232448) return bad(fmt::format("{} bytes of shared memory: past the 227 KiB limit", shared));
  if (args.size() != k_.params.size())
    return bad(fmt::format("{} parameters, {} arguments", k_.params.size(), args.size()));
  params_.assign(k_.param_bytes, 0);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Param& p = k_.params[i];
    std::uint64_t bits = args[i].bits;
    if (args[i].is_buffer) {
      if (!p.pointer_sized)
        return bad(fmt::format("argument {}: a buffer for {}, which is not a 64-bit integer", i, p.name));
      if (args[i].buffer >= mem_.size() || args[i].buffer >= 0xEF)
        return bad(fmt::format("argument {}: no buffer {}", i, args[i].buffer));
      bits = (args[i].buffer + 1) << kWindowShift;
    } else if (args[i].size != p.size) {
      return bad(fmt::format("argument {}: {} bytes for {}, which has {}", i, args[i].size, p.name, p.size));
    }
    policy_.store(Where{Area::kParam, 0, p.offset}, params_.data() + p.offset, p.size, P::constant(bits));
  }
  for (const auto& gv : mod_.globals) globals_.push_back(gv.bytes);
  for (std::size_t s = 0; s < k_.slots.size(); ++s) {
    if (k_.slots[s].init != SlotInit::kZero) init_slots_.push_back(static_cast<std::uint32_t>(s));
  }
  alu_.resize(k_.code.size());
  for (std::size_t i = 0; i < k_.code.size(); ++i) alu_[i] = P::select(k_.code[i]);
  for (std::size_t i = 0; i < mem_.size() && i < 0xEF; ++i)
    args_.push_back({mem_.bytes(i).data(), mem_.bytes(i).size()});
  shared_.resize(shared);
  warps_.resize((b.count() + kWarp - 1) / kWarp);
  for (auto& w : warps_) {
    w.regs.resize(k_.slots.size() * kWarp);
    w.local.resize(std::size_t{k_.local_bytes} * kWarp);
  }
  for (std::uint32_t z = 0; z < g.z; ++z) {
    for (std::uint32_t y = 0; y < g.y; ++y) {
      for (std::uint32_t x = 0; x < g.x; ++x) {
        start_block({x, y, z});
        while (true) {
          for (auto& w : warps_) {
            Step r = kStepped;
            while ((r = step(w)) == kStepped) {
            }
            if (r == kFailed) return std::move(*error_);
          }
          // Every thread is parked at a barrier or has exited: release the barrier (the parked
          // lanes' PCs are in pc[]; the next step's scan finds whether they are converged).
          bool parked = false;
          for (auto& w : warps_) {
            if (w.parked == 0) continue;
            w.run |= w.parked, w.parked = 0, w.conv = false, parked = true;
          }
          if (!parked) break;
        }
      }
    }
  }
  return result_;
}

template <class P>
void Runner<P>::start_block(const Dim3& b) {
  block_id_ = b;
  std::fill(shared_.begin(), shared_.end(), 0);
  policy_.block_start(shared_.size(), k_.local_bytes);
  const Dim3& bd = cfg_.block;
  const std::uint64_t threads = bd.count();
  for (std::size_t wi = 0; wi < warps_.size(); ++wi) {
    Warp& w = warps_[wi];
    const std::uint64_t first = wi * kWarp;
    w.lanes = static_cast<std::uint32_t>(std::min<std::uint64_t>(kWarp, threads - first));
    for (int l = 0; l < kWarp; ++l) w.pc[l] = 0;
    w.run = w.lanes == kWarp ? 0xFFFFFFFFu : (1u << w.lanes) - 1, w.parked = 0, w.conv = true, w.cpc = 0;
    std::fill(w.local.begin(), w.local.end(), 0);
    std::fill(w.regs.begin(), w.regs.end(), P::constant(0));
    std::uint32_t tid[3][kWarp];
    for (int l = 0; l < kWarp; ++l) {
      const std::uint64_t t = first + static_cast<std::uint64_t>(l);
      tid[0][l] = static_cast<std::uint32_t>(t % bd.x), tid[1][l] = static_cast<std::uint32_t>(t / bd.x % bd.y);
      tid[2][l] = static_cast<std::uint32_t>(t / (std::uint64_t{bd.x} * bd.y));
    }
    const std::uint32_t ntid[3] = {bd.x, bd.y, bd.z}, ctaid[3] = {b.x, b.y, b.z};
    const std::uint32_t nctaid[3] = {cfg_.grid.x, cfg_.grid.y, cfg_.grid.z};
    for (std::uint32_t s : init_slots_) {
      const SlotSource& src = k_.slots[s];
      Value* r = &w.regs[std::size_t{s} * kWarp];
      for (int l = 0; l < kWarp; ++l) {
        std::uint64_t v = 0;
        switch (src.init) {
          case SlotInit::kZero: v = 0; break;
          case SlotInit::kConst: v = src.value; break;
          case SlotInit::kTid: v = tid[src.dim][l]; break;
          case SlotInit::kNtid: v = ntid[src.dim]; break;
          case SlotInit::kCtaid: v = ctaid[src.dim]; break;
          case SlotInit::kNctaid: v = nctaid[src.dim]; break;
          case SlotInit::kLaneId: v = static_cast<std::uint64_t>(l); break;
          case SlotInit::kWarpId: v = wi; break;
        }
        r[l] = P::constant(v);
      }
    }
  }
}

// The bytes an access of `size` at `addr` touches, or the Error naming thread, line and address.
template <class P>
Expected<std::uint8_t*> Runner<P>::resolve(const Warp& w, int lane, const Inst& in, std::uint64_t addr, unsigned size,
                                           bool write, Where* at) {
  const char* op = in.op == Op::kLd ? "ld" : in.op == Op::kLdmatrix ? "ldmatrix" : "st";
  static constexpr const char* kSpace[] = {"", ".global", ".shared", ".local", ".param", ".const"};
  const auto where = [&](const std::string& why) {
    return fail(w, lane, in,
                fmt::format("{}{} of {} bytes at 0x{:x}: {}", op, kSpace[static_cast<int>(in.space)], size, addr, why));
  };
  if (addr % size != 0) return where("misaligned");
  Space space = in.space;
  std::uint64_t off = addr;
  if (space == Space::kGeneric) {
    const std::uint64_t win = addr & ~kWindowMask;
    off = addr & kWindowMask;
    space = win == kSharedWindow  ? Space::kShared
            : win == kLocalWindow ? Space::kLocal
            : win == kParamWindow ? Space::kParam
                                  : Space::kGlobal;
    if (space == Space::kGlobal) off = addr;
  }
  const auto in_range = [&](std::uint64_t limit) { return off <= limit && size <= limit - off; };
  switch (space) {
    case Space::kShared:
      if (!in_range(shared_.size()))
        return where(fmt::format("outside the block's {} bytes of shared memory", shared_.size()));
      *at = {Area::kShared, 0, off};
      return shared_.data() + off;
    case Space::kLocal: {
      if (!in_range(k_.local_bytes))
        return where(fmt::format("outside the thread's {} bytes of local memory", k_.local_bytes));
      const auto thread = static_cast<std::uint32_t>(&w - warps_.data()) * kWarp + static_cast<unsigned>(lane);
      *at = {Area::kLocal, thread, off};
      return const_cast<std::uint8_t*>(w.local.data()) + std::size_t{k_.local_bytes} * static_cast<unsigned>(lane) +
             off;
    }
    case Space::kParam:
      if (write) return where("parameters are read-only");
      if (!in_range(params_.size())) return where(fmt::format("outside the {} bytes of parameters", params_.size()));
      *at = {Area::kParam, 0, off};
      return params_.data() + off;
    default: break;
  }
  const std::uint64_t win = addr >> kWindowShift, o = addr & kWindowMask;
  std::vector<std::uint8_t>* buf = nullptr;
  const bool is_arg = win >= 1 && win - 1 < mem_.size() && win - 1 < 0xEF;
  if (is_arg) {
    buf = &mem_.bytes(win - 1);
  } else if (win >= kGlobalVarWindow && win - kGlobalVarWindow < globals_.size()) {
    buf = &globals_[win - kGlobalVarWindow];
  }
  if (buf == nullptr) return where("outside every buffer");
  if (o > buf->size() || size > buf->size() - o) {
    const std::string name = is_arg ? fmt::format("buffer {}", win - 1) : mod_.globals[win - kGlobalVarWindow].name;
    return where(fmt::format("past the end of {} ({} bytes)", name, buf->size()));
  }
  *at = is_arg ? Where{Area::kBuffer, static_cast<std::uint32_t>(win - 1), o}
               : Where{Area::kGlobalVar, static_cast<std::uint32_t>(win - kGlobalVarWindow), o};
  return buf->data() + o;
}

// stmatrix, ldmatrix, mma: all 32 lanes issue them together (.aligned), else the Error naming the
// lanes that did.
template <class P>
Expected<Ok> Runner<P>::warp_wide(Warp& w, const Inst& in, std::uint32_t exec) {
  if (exec != 0xFFFFFFFFu) {
    return fail(
        w, std::countr_zero(exec), in,
        fmt::format("{} needs the whole warp converged here (issuing 0x{:08x})", executor_op_name(in.op), exec));
  }
  return in.op == Op::kStmatrix ? stmatrix(w, in) : in.op == Op::kLdmatrix ? ldmatrix(w, in) : mma(w, in);
}

// ldmatrix/stmatrix's rows: matrix m's row i starts at lane 8m + i's address (+ the offset), which
// must be concrete and 16-byte aligned.
template <class P>
Expected<Ok> Runner<P>::matrix_rows(const Warp& w, const Inst& in, std::uint64_t (&row)[4][8]) const {
  for (unsigned m = 0; m < in.vec; ++m) {
    for (int i = 0; i < 8; ++i) {
      const int owner = static_cast<int>(8 * m) + i;
      const auto base = P::concrete(w.regs[std::size_t{in.src[0]} * kWarp + static_cast<unsigned>(owner)]);
      if (!base) return fail(w, owner, in, "an address depends on tensor data (not provable by tracing)");
      row[m][i] = *base + static_cast<std::uint64_t>(in.offset);
      if (row[m][i] % 16 != 0)
        return fail(w, owner, in,
                    fmt::format("{}: row address 0x{:x} is not 16-byte aligned", executor_op_name(in.op), row[m][i]));
    }
  }
  return Ok{};
}

// stmatrix (module.hpp's card): bytes 4k..4k+3 of matrix m's row r are lane 4r + k's register r_m;
// every 4-byte piece bounds-checked and stored through the policy.
template <class P>
Expected<Ok> Runner<P>::stmatrix(Warp& w, const Inst& in) {
  std::uint64_t row[4][8];
  if (auto ok = matrix_rows(w, in, row); !ok) return ok.error();
  const Value* R = w.regs.data();
  for (unsigned m = 0; m < in.vec; ++m) {
    for (int r = 0; r < 8; ++r) {
      for (int k = 0; k < 4; ++k) {
        Where at{};
        auto p = resolve(w, 8 * static_cast<int>(m) + r, in, row[m][r] + 4 * static_cast<unsigned>(k), 4, true, &at);
        if (!p) return p.error();
        policy_.store(at, *p, 4, R[std::size_t{in.src[1 + m]} * kWarp + static_cast<unsigned>(4 * r + k)]);
      }
    }
  }
  return Ok{};
}

// ldmatrix (module.hpp's card): without .trans, lane 4i + k's r_m is matrix m's row i's 4 bytes at
// 4k (one 4-byte load, as ld.shared.b32 would read them); with .trans, lane 4j + k's r_m is the 2
// bytes at column j of row 2k (low) and of row 2k + 1 (high), read as one value (load_pieces). Every
// piece bounds-checked; the registers written after every read (a row address may be a destination).
template <class P>
Expected<Ok> Runner<P>::ldmatrix(Warp& w, const Inst& in) {
  std::uint64_t row[4][8];
  if (auto ok = matrix_rows(w, in, row); !ok) return ok.error();
  Value got[4][kWarp];
  const unsigned pieces = in.mode == 0 ? 1 : 2, size = in.mode == 0 ? 4 : 2;
  for (unsigned m = 0; m < in.vec; ++m) {
    for (int l = 0; l < kWarp; ++l) {
      const int a = l / 4, k = l % 4;  // without .trans: row a, bytes 4k..; with: column a, rows 2k, 2k + 1
      Where at[2]{};
      const std::uint8_t* p[2] = {};
      for (unsigned j = 0; j < pieces; ++j) {
        const std::uint64_t addr =
            in.mode == 0 ? row[m][a] + 4 * static_cast<unsigned>(k) : row[m][2 * k + static_cast<int>(j)] + 2 * a;
        auto q = resolve(w, l, in, addr, size, false, &at[j]);
        if (!q) return q.error();
        p[j] = *q;
      }
      got[m][l] = pieces == 1 ? policy_.load(at[0], p[0], 4, false) : policy_.load_pieces(at, p, 2, 2);
    }
  }
  for (unsigned m = 0; m < in.vec; ++m) {
    for (int l = 0; l < kWarp; ++l) w.regs[std::size_t{in.dst[m]} * kWarp + static_cast<unsigned>(l)] = got[m][l];
  }
  return Ok{};
}

// mma (module.hpp's card): the policy gets every lane's A, B and C registers (lane-major: lane l's
// a.., b.., c..) and gives every lane's D registers (lane-major).
template <class P>
Expected<Ok> Runner<P>::mma(Warp& w, const Inst& in) {
  const std::uint32_t* dst = k_.lists.data() + in.list;
  const std::uint32_t* src = dst + in.ndst;
  std::vector<Value> srcs(std::size_t{kWarp} * in.nsrc), dsts(std::size_t{kWarp} * in.ndst);
  for (int l = 0; l < kWarp; ++l) {
    for (int i = 0; i < in.nsrc; ++i)
      srcs[std::size_t{in.nsrc} * static_cast<unsigned>(l) + static_cast<unsigned>(i)] =
          w.regs[std::size_t{src[i]} * kWarp + static_cast<unsigned>(l)];
  }
  if (auto why = policy_.mma(in, srcs.data(), dsts.data())) return fail(w, 0, in, *why);
  for (int l = 0; l < kWarp; ++l) {
    for (int i = 0; i < in.ndst; ++i)
      w.regs[std::size_t{dst[i]} * kWarp + static_cast<unsigned>(l)] =
          dsts[std::size_t{in.ndst} * static_cast<unsigned>(l) + static_cast<unsigned>(i)];
  }
  return Ok{};
}

// shfl.sync / vote.sync / bar.warp.sync over the issuing group `exec`.
template <class P>
Expected<Ok> Runner<P>::collective(Warp& w, const Inst& in, std::uint32_t exec) {
  Value* R = w.regs.data();
  const auto reg = [&](std::uint32_t slot, int lane) -> Value& {
    return R[std::size_t{slot} * kWarp + static_cast<unsigned>(lane)];
  };
  const auto concrete = [&](std::uint32_t slot, int lane, const char* what) -> Expected<std::uint64_t> {
    const auto v = P::concrete(reg(slot, lane));
    if (!v) return fail(w, lane, in, fmt::format("{} depends on tensor data (not provable by tracing)", what));
    return *v;
  };
  const std::uint32_t mask_slot = in.op == Op::kShfl ? in.src[3] : in.op == Op::kVote ? in.src[1] : in.src[0];
  for (int l = 0; l < kWarp; ++l) {
    if (!(exec >> l & 1)) continue;
    auto m = concrete(mask_slot, l, "the member mask");
    if (!m) return m.error();
    const auto mask = static_cast<std::uint32_t>(*m);
    if (!(mask >> l & 1)) return fail(w, l, in, "the executing lane is not in the member mask (undefined)");
    if ((mask & ~exec) != 0) {
      return fail(w, l, in,
                  fmt::format("member mask 0x{:08x} names lanes not converged here (issuing 0x{:08x})", mask, exec));
    }
  }
  if (in.op == Op::kWarpSync) return Ok{};
  if (in.op == Op::kVote) {
    std::uint32_t ballot = 0;
    for (int l = 0; l < kWarp; ++l) {
      if (!(exec >> l & 1)) continue;
      auto p = concrete(in.src[0], l, "the vote's predicate");
      if (!p) return p.error();
      if (((*p & 1) != 0) != in.neg_src) ballot |= 1u << l;
    }
    for (int l = 0; l < kWarp; ++l) {
      if (!(exec >> l & 1)) continue;
      const auto mask = static_cast<std::uint32_t>(*P::concrete(reg(mask_slot, l)));
      const std::uint32_t b = ballot & mask;
      std::uint64_t v = 0;
      switch (in.vote) {
        case VoteMode::kBallot: v = b; break;
        case VoteMode::kAll: v = b == mask; break;
        case VoteMode::kAny: v = b != 0; break;
        case VoteMode::kUni: v = b == 0 || b == mask; break;
      }
      reg(in.dst[0], l) = P::constant(v);
    }
    return Ok{};
  }
  // shfl.sync (PTX ISA 9.7.8.6): c packs the clamp (c[4:0]) and the segment mask (c[12:8]).
  Value got[kWarp];
  bool valid[kWarp] = {};
  for (int l = 0; l < kWarp; ++l) {
    if (!(exec >> l & 1)) continue;
    auto bv = concrete(in.src[1], l, "the shuffle's lane operand");
    if (!bv) return bv.error();
    auto cv = concrete(in.src[2], l, "the shuffle's clamp operand");
    if (!cv) return cv.error();
    const std::uint32_t lane = static_cast<std::uint32_t>(l), b = *bv & 31, c = *cv & 31, seg = (*cv >> 8) & 31;
    const std::uint32_t max_lane = (lane & seg) | (c & ~seg), min_lane = lane & seg;
    std::int64_t j = 0;
    bool pval = false;
    switch (in.shfl) {
      case ShflMode::kUp:
        j = static_cast<std::int64_t>(lane) - b, pval = j >= static_cast<std::int64_t>(max_lane);
        break;
      case ShflMode::kDown: j = lane + b, pval = j <= static_cast<std::int64_t>(max_lane); break;
      case ShflMode::kBfly: j = lane ^ b, pval = j <= static_cast<std::int64_t>(max_lane); break;
      case ShflMode::kIdx: j = min_lane | (b & ~seg), pval = j <= static_cast<std::int64_t>(max_lane); break;
    }
    if (!pval) j = lane;
    if (j < 0 || j >= kWarp || !(exec >> j & 1)) {
      return fail(w, l, in, fmt::format("shfl.sync reads lane {}, which is not executing it (undefined)", j));
    }
    got[l] = reg(in.src[0], static_cast<int>(j));
    valid[l] = pval;
  }
  for (int l = 0; l < kWarp; ++l) {
    if (!(exec >> l & 1)) continue;
    reg(in.dst[0], l) = got[l];
    if (in.ndst == 2) reg(in.dst[1], l) = P::constant(valid[l]);
  }
  return Ok{};
}

// The bytes of an access that needs no message: an argument buffer's (global or generic
// address) or shared memory's, aligned and inside. nullptr: resolve() decides (other windows,
// and every error with its message).
template <class P>
std::uint8_t* Runner<P>::fast_resolve(const Inst& in, std::uint64_t addr, unsigned size, Where* at) {
  if (addr % size != 0) return nullptr;
  if (in.space == Space::kShared) {
    if (addr > shared_.size() || size > shared_.size() - addr) return nullptr;
    if constexpr (P::kLocates) *at = {Area::kShared, 0, addr};
    return shared_.data() + addr;
  }
  if (in.space != Space::kGlobal && in.space != Space::kGeneric) return nullptr;
  const std::uint64_t win = (addr >> kWindowShift) - 1, o = addr & kWindowMask;
  if (win >= args_.size()) return nullptr;
  const Span& b = args_[win];
  if (o > b.size || size > b.size - o) return nullptr;
  if constexpr (P::kLocates) *at = {Area::kBuffer, static_cast<std::uint32_t>(win), o};
  return b.data + o;
}

// A lane's ld or st whose address is not concrete. A policy with window()/lookup() (the symbolic
// one) may read a load from a fixed table: window() names the address window its value must lie
// in (an argument buffer or a module variable), and lookup() makes each element's value from that
// buffer's bytes. Anything else is refused with the line.
template <class P>
typename Runner<P>::Step Runner<P>::lookup(Warp& w, int l, const Inst& in) {
  const auto refuse = [&](const std::string& why) {
    return failed(fail(w, l, in, "an address depends on tensor data (not provable by tracing)" + why));
  };
  if constexpr (requires(P & p, const Value& v) { p.window(v); }) {
    if (in.op != Op::kLd) return refuse("");
    Value* R = w.regs.data();
    const Value& base = R[std::size_t{in.src[0]} * kWarp + l];
    const std::optional<std::uint64_t> win = policy_.window(base);
    Where at;
    const std::vector<std::uint8_t>* bytes = nullptr;
    if (win && *win >= 1 && *win - 1 < mem_.size() && *win - 1 < 0xEF) {
      at = {Area::kBuffer, static_cast<std::uint32_t>(*win - 1), 0};
      bytes = &mem_.bytes(*win - 1);
    } else if (win && *win >= kGlobalVarWindow && *win - kGlobalVarWindow < globals_.size()) {
      at = {Area::kGlobalVar, static_cast<std::uint32_t>(*win - kGlobalVarWindow), 0};
      bytes = &globals_[*win - kGlobalVarWindow];
    }
    if (bytes == nullptr || in.space == Space::kShared || in.space == Space::kLocal || in.space == Space::kParam)
      return refuse("");
    const unsigned size = std::max(in.type.bits / 8, 1);
    for (unsigned e = 0; e < in.vec; ++e) {
      if (in.dst[e] == kNoSlot) continue;
      const auto offset = static_cast<std::uint64_t>(in.offset) + e * size;
      auto v =
          policy_.lookup(at, *bytes, *win << kWindowShift, base, offset, size, in.type.kind == Kind::kSigned, in.line);
      if (!v) return refuse(": " + v.error().message);
      R[std::size_t{in.dst[e]} * kWarp + l] = *v;
    }
    return kStepped;
  } else {
    return refuse("");
  }
}

// A guard that is a node on the lanes `data` of the issuing group `group` at `pc` (if-conversion,
// docs/ptx-proof.md). An ALU instruction runs unguarded on those lanes and each destination
// becomes select_value(guard, new, old). A branch is if-converted when its region is a forward
// hammock or diamond of ALU instructions:
//   @p bra L; A...; L:                 (hammock: A runs where the branch is not taken)
//   @p bra L; A...; bra END; L: B...; END:   (diamond: A where not taken, B where taken)
// Every lane of the group then runs A under "not taken" and B under "taken" (a lane whose
// predicate is concrete runs only its side, unguarded by the branch; a data lane runs both, each
// write selected by the predicate), and the whole group continues at L or END, converged as it
// was. Anything else (a guarded ld/st/exit/bar/collective, a backward branch, a region holding a
// non-ALU instruction) is refused with the line, "not provable by tracing".
template <class P>
typename Runner<P>::Step Runner<P>::data_guard(Warp& w, std::uint32_t pc, std::uint32_t group, std::uint32_t data) {
  const Inst& in = k_.code[pc];
  const int lane = std::countr_zero(data);
  const auto refuse = [&](const std::string& why) {
    return failed(fail(w, lane, in, "a branch or guard depends on tensor data (not provable by tracing): " + why));
  };
  if constexpr (!kIfConverts) {
    return refuse("this policy has no if-conversion");
  } else {
    if (!executor_runs(in.op)) {  // a guarded ALU instruction (guarded() counts the lanes it runs)
      if (guarded(w, pc, group, 0, nullptr, false) == kFailed) return kFailed;
      if (w.conv) {
        w.cpc = pc + 1;
      } else {
        for (std::uint32_t m = group; m != 0; m &= m - 1) w.pc[std::countr_zero(m)] = pc + 1;
      }
      return kStepped;
    }
    if (in.op != Op::kBra) {
      return refuse(
          fmt::format("a guarded {} is not if-converted (only ALU instructions and forward branches over them)",
                      executor_op_name(in.op)));
    }
    const std::uint32_t target = in.target, size = static_cast<std::uint32_t>(k_.code.size());
    if (target <= pc) return refuse("a backward branch (a loop whose trip count is tensor data)");
    if (target >= size) return refuse("a branch past the kernel's last instruction");
    const auto first_non_alu = [&](std::uint32_t from, std::uint32_t to) -> std::optional<std::uint32_t> {
      for (std::uint32_t i = from; i < to; ++i) {
        if (executor_runs(k_.code[i].op)) return i;
      }
      return std::nullopt;
    };
    // A diamond when the instruction before L is an unguarded forward `bra END` (END >= L): both
    // sides must be ALU. Else a hammock: everything in (pc, L) ALU.
    std::uint32_t end = target;
    bool diamond = false;
    std::optional<std::uint32_t> bad;
    if (const Inst& jump = k_.code[target - 1]; target - 1 > pc && jump.op == Op::kBra && jump.guard == kNoSlot &&
                                                jump.target >= target && jump.target < size) {
      diamond = true, end = jump.target;
      bad = first_non_alu(pc + 1, target - 1);
      if (!bad) bad = first_non_alu(target, end);
    } else {
      bad = first_non_alu(pc + 1, target);
    }
    if (bad) {
      const Inst& b = k_.code[*bad];
      return refuse(fmt::format(
          "the branch skips {} at line {} (only a forward if or if/else over ALU instructions is if-converted)",
          executor_op_name(b.op), b.line));
    }
    // The predicate at the branch, per lane (the region may write its register).
    Value cond[kWarp];
    std::uint32_t taken = 0;
    const Value* g = w.regs.data() + std::size_t{in.guard} * kWarp;
    for (std::uint32_t m = group; m != 0; m &= m - 1) {
      const int l = std::countr_zero(m);
      cond[l] = g[l];
      if (!(data >> l & 1) && ((*P::concrete(g[l]) & 1) != 0) != in.neg_guard) taken |= 1u << l;
    }
    result_.thread_steps += static_cast<unsigned>(std::popcount(group));
    const std::uint32_t fall_end = diamond ? target - 1 : target;
    for (std::uint32_t i = pc + 1; i < fall_end; ++i) {
      if (guarded(w, i, group & ~taken, data, cond, !in.neg_guard) == kFailed) return kFailed;
    }
    if (diamond) {
      for (std::uint32_t i = target; i < end; ++i) {
        if (guarded(w, i, taken | data, data, cond, in.neg_guard) == kFailed) return kFailed;
      }
    }
    result_.warp_steps += (fall_end - pc - 1) + (end - target);
    if (w.conv) {
      w.cpc = end;
    } else {
      for (std::uint32_t m = group; m != 0; m &= m - 1) w.pc[std::countr_zero(m)] = end;
    }
    return kStepped;
  }
}

// ALU instruction `index` on `lanes`, with its own guard (concrete: as step() does; a node: the
// lane runs it and each destination is selected by the guard) and, on `cond_lanes`, the region's
// condition cond[lane] (negated by `cond_negate`) selecting each destination against its value
// before. The other lanes of `lanes` run it as step() would.
template <class P>
typename Runner<P>::Step Runner<P>::guarded(Warp& w, std::uint32_t index, std::uint32_t lanes, std::uint32_t cond_lanes,
                                            const Value* cond, bool cond_negate) {
  if constexpr (kIfConverts) {
    const Inst& in = k_.code[index];
    Value* R = w.regs.data();
    const auto reg = [&](std::uint32_t slot, int l) -> Value& {
      return R[std::size_t{slot} * kWarp + static_cast<unsigned>(l)];
    };
    std::uint32_t plain = 0, selected = 0, own_data = 0;
    for (std::uint32_t m = lanes; m != 0; m &= m - 1) {
      const int l = std::countr_zero(m);
      if (in.guard != kNoSlot) {
        const auto v = P::concrete(reg(in.guard, l));
        if (!v) {
          own_data |= 1u << l;
        } else if (((*v & 1) != 0) == in.neg_guard) {
          continue;  // its own guard is off
        }
      }
      if (((own_data | cond_lanes) >> l & 1) != 0)
        selected |= 1u << l;
      else
        plain |= 1u << l;
    }
    result_.thread_steps += static_cast<unsigned>(std::popcount(plain | selected));
    int bad = 0;
    if (plain != 0) {
      if (const char* why = alu_[index](policy_, in, R, plain, &bad)) return failed(fail(w, bad, in, why));
    }
    const unsigned bits =
        result_bits(in.op, in.type.bits, in.part == MulPart::kWide, in.vec, in.type.kind == Kind::kSigned);
    const unsigned width = bits == 0 ? 64 : bits;
    for (std::uint32_t m = selected; m != 0; m &= m - 1) {
      const int l = std::countr_zero(m);
      Value old[4];
      for (int i = 0; i < in.ndst; ++i) {
        if (in.dst[i] != kNoSlot) old[i] = reg(in.dst[i], l);
      }
      const Value own = in.guard != kNoSlot ? reg(in.guard, l) : P::constant(1);  // before a write to it
      if (const char* why = alu_[index](policy_, in, R, 1u << l, &bad)) {
        return failed(fail(w, l, in, fmt::format("{} (computed for a condition on tensor data)", why)));
      }
      for (int i = 0; i < in.ndst; ++i) {
        if (in.dst[i] == kNoSlot) continue;
        Value v = reg(in.dst[i], l);
        if (own_data >> l & 1) v = policy_.select_value(own, in.neg_guard, v, old[i], width, in.line);
        if (cond_lanes >> l & 1) v = policy_.select_value(cond[l], cond_negate, v, old[i], width, in.line);
        reg(in.dst[i], l) = v;
      }
    }
    return kStepped;
  } else {
    (void)w, (void)index, (void)lanes, (void)cond_lanes, (void)cond, (void)cond_negate;
    return kIdle;
  }
}

template <class P>
typename Runner<P>::Step Runner<P>::step(Warp& w) {
  std::uint32_t pc = 0xFFFFFFFFu, group = 0;
  if (w.run == 0) return kIdle;
  if (w.conv) {
    pc = w.cpc, group = w.run;
  } else {
    for (std::uint32_t m = w.run; m != 0; m &= m - 1) {
      const int l = std::countr_zero(m);
      if (w.pc[l] < pc)
        pc = w.pc[l], group = 1u << l;
      else if (w.pc[l] == pc)
        group |= 1u << l;
    }
    if (group == w.run) w.conv = true, w.cpc = pc;
  }
  const Inst& in = k_.code[pc];
  if (++result_.warp_steps > cfg_.max_warp_steps) {
    return failed(fail(w, std::countr_zero(group), in,
                       fmt::format("more than {} warp instructions: a loop that does not end?", cfg_.max_warp_steps)));
  }
  Value* R = w.regs.data();
  std::uint32_t exec = group;
  if (in.guard != kNoSlot) {
    exec = 0;
    std::uint32_t data = 0;  // lanes whose guard is a node (tensor data)
    const Value* g = R + std::size_t{in.guard} * kWarp;
    for (std::uint32_t m = group; m != 0; m &= m - 1) {
      const int l = std::countr_zero(m);
      const auto v = P::concrete(g[l]);
      if (!v) {
        data |= 1u << l;
        continue;
      }
      if (((*v & 1) != 0) != in.neg_guard) exec |= 1u << l;
    }
    if (data != 0) return data_guard(w, pc, group, data);
  }
  result_.thread_steps += static_cast<unsigned>(std::popcount(exec));
  const std::uint32_t next = pc + 1;
  switch (in.op) {
    case Op::kBra:
      if (w.conv && (exec == group || exec == 0)) {
        w.cpc = exec == 0 ? next : in.target;
        return kStepped;
      }
      for (std::uint32_t m = group; m != 0; m &= m - 1) {
        const int l = std::countr_zero(m);
        w.pc[l] = (exec >> l & 1) ? in.target : next;
      }
      w.conv = false;
      return kStepped;
    case Op::kExit: w.run &= ~exec; break;
    case Op::kBar:
      w.run &= ~exec, w.parked |= exec;
      for (std::uint32_t m = exec; m != 0; m &= m - 1) w.pc[std::countr_zero(m)] = next;
      break;
    case Op::kShfl:
    case Op::kVote:
    case Op::kWarpSync:
      if (exec != 0) {
        if (auto r = collective(w, in, exec); !r) return failed(r.error());
      }
      break;
    case Op::kStmatrix:
    case Op::kLdmatrix:
    case Op::kMma:
      if (exec != 0) {
        if (auto r = warp_wide(w, in, exec); !r) return failed(r.error());
      }
      break;
    case Op::kLd:
    case Op::kSt: {
      // Each lane's address concrete (else lookup(): a policy's table load, or the refusal),
      // resolved and bounds-checked, then each element through the policy with where it is.
      const unsigned size = std::max(in.type.bits / 8, 1);
      const bool sign = in.type.kind == Kind::kSigned;
      for (std::uint32_t m = exec; m != 0; m &= m - 1) {
        const int l = std::countr_zero(m);
        std::uint64_t addr = static_cast<std::uint64_t>(in.offset);
        if (in.src[0] != kNoSlot) {
          const auto base = P::concrete(R[std::size_t{in.src[0]} * kWarp + l]);
          if (!base) {
            if (lookup(w, l, in) == kFailed) return kFailed;
            continue;
          }
          addr += *base;
        }
        Where at{};
        std::uint8_t* p = fast_resolve(in, addr, size * in.vec, &at);
        if (p == nullptr) {
          auto r = resolve(w, l, in, addr, size * in.vec, in.op == Op::kSt, &at);
          if (!r) return failed(r.error());
          p = *r;
        }
        for (unsigned e = 0; e < in.vec; ++e) {
          const Where el{at.area, at.index, at.offset + e * size};
          if (in.op == Op::kLd) {
            if (in.dst[e] != kNoSlot)
              R[std::size_t{in.dst[e]} * kWarp + l] = policy_.load(el, p + e * size, size, sign);
          } else {
            policy_.store(el, p + e * size, size, R[std::size_t{in.src[1 + e]} * kWarp + l]);
          }
        }
      }
      break;
    }
    default:
      if (exec != 0) {
        int bad = 0;
        if (const char* why = alu_[pc](policy_, in, R, exec, &bad)) return failed(fail(w, bad, in, why));
      }
      break;
  }
  if (w.conv) {
    w.cpc = next;
  } else {
    for (std::uint32_t m = group & w.run; m != 0; m &= m - 1) w.pc[std::countr_zero(m)] = next;
  }
  return kStepped;
}

}  // namespace

Expected<LaunchResult> launch(const Module& module, const Kernel& kernel, const LaunchConfig& config,
                              std::span<const Arg> args, Memory& memory) {
  ConcretePolicy policy;
  Runner<ConcretePolicy> runner(module, kernel, config, memory, policy);
  return runner.run(args);
}

Expected<LaunchResult> launch_symbolic(const Module& module, const Kernel& kernel, const LaunchConfig& config,
                                       std::span<const Arg> args, Memory& memory, SymbolicPolicy& policy) {
  Runner<SymbolicPolicy> runner(module, kernel, config, memory, policy);
  return runner.run(args);
}

}  // namespace bitproof::ptx
