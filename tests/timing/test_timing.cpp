// The timing gate on the CPU: its statistics against published values, its
// protocol and verdicts on simulated arms (a cold shared state, extra work, a
// carryover between arms, throttling), claims, and timing reports read back.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>

#include "report/render.hpp"
#include "report/time_report.hpp"
#include "splitmix.hpp"
#include "timing/session.hpp"
#include "timing/stats.hpp"
#include "timing/verdict.hpp"

namespace bitproof::timing {
namespace {

// ---- statistics, against published values ----

TEST_SUITE("timing") {
  TEST_CASE("Mann-Whitney U: exact p of R's wilcox.test example (Hollander & Wolfe), and the 10 x 10 table") {
    // R: wilcox.test(x, y): W = 35; two-sided exact p = 0.2544 (scipy 1.10: 0.2544122544122544).
    const std::vector<double> x{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46};
    const std::vector<double> y{1.15, 0.88, 0.90, 0.74, 1.21};
    const RankTest t = mann_whitney(x, y);
    CHECK(t.exact);
    CHECK(t.statistic == 35);
    CHECK(t.p == doctest::Approx(0.2544122544122544).epsilon(1e-12));
    // Published critical value for n1 = n2 = 10, two-sided alpha = 0.05: U <= 23 rejects, 24 does not.
    const std::vector<double> b{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    const auto with_u = [&](std::vector<int> below) {
      std::vector<double> a;
      for (int k : below) a.push_back(k - 0.5);
      return mann_whitney(a, b);
    };
    const RankTest at23 = with_u({0, 0, 0, 1, 2, 3, 3, 4, 5, 5}), at24 = with_u({0, 0, 0, 1, 2, 3, 3, 4, 5, 6});
    CHECK(at23.statistic == 23);
    CHECK(at24.statistic == 24);
    CHECK(at23.p <= 0.05);
    CHECK(at24.p > 0.05);
    // Symmetric: b against a gives the same p.
    CHECK(mann_whitney(y, x).p == doctest::Approx(t.p).epsilon(1e-12));
  }

  TEST_CASE("Mann-Whitney U: the normal approximation with ties and continuity (scipy 1.10)") {
    const std::vector<double> a{1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 7, 7, 7, 8};
    const std::vector<double> b{3, 4, 4, 5, 6, 6, 7, 8, 8, 9, 9, 9, 10, 10, 11};
    const RankTest t = mann_whitney(a, b);
    CHECK_FALSE(t.exact);
    CHECK(t.statistic == 43);
    CHECK(t.p == doctest::Approx(0.006974238117944038).epsilon(1e-9));
    // Negative control: identical samples are not different.
    CHECK(mann_whitney(a, a).p == doctest::Approx(1.0));
  }

  TEST_CASE("Kruskal-Wallis H: R's kruskal.test example (Hollander & Wolfe)") {
    const RankTest t = kruskal_wallis({{2.9, 3.0, 2.5, 2.6, 3.2}, {3.8, 2.7, 4.0, 2.4}, {2.8, 3.4, 3.7, 2.2, 2.0}});
    CHECK(t.statistic == doctest::Approx(0.7714285714285722).epsilon(1e-12));
    CHECK(t.p == doctest::Approx(0.6799647735788936).epsilon(1e-9));
    CHECK(kruskal_wallis({{1, 2, 3}, {10, 11, 12}, {20, 21, 22}}).p < 0.05);
    CHECK(kruskal_wallis({{1, 2, 3}}).p == 1);
  }

  TEST_CASE("median, bootstrap interval and the median's noise") {
    CHECK(median({3, 1, 2}) == 2);
    CHECK(median({4, 1, 3, 2}) == 2.5);
    std::vector<double> a, b;
    std::uint64_t s = 5;
    for (int i = 0; i < 400; ++i) {
      a.push_back(100 + static_cast<double>(splitmix64_next(s) % 1000) / 100);
      b.push_back(90 + static_cast<double>(splitmix64_next(s) % 1000) / 100);
    }
    const Interval i1 = bootstrap_median_ratio(a, b, 7, 1000, 0.95), i2 = bootstrap_median_ratio(a, b, 7, 1000, 0.95);
    CHECK(i1.lo == i2.lo);  // a pure function of the samples and the seed
    CHECK(i1.hi == i2.hi);
    const double truth = median(b) / median(a);
    CHECK(i1.lo < truth);
    CHECK(i1.hi > truth);
    CHECK(i1.hi < 1);  // b is about 9 % faster: the interval excludes 1
    CHECK(median_relative_halfwidth(a) < 0.01);
    CHECK(std::isinf(median_relative_halfwidth({1, 2})));
  }

  // ---- simulated arms ----

  // A simulated device: its cold state (paid by the first replay anyone runs), and the last arm run.
  struct Lab {
    bool cold = true;
    int last = -1;
    std::uint64_t noise = 11;
    std::size_t replays = 0;
    std::size_t throttle_every = 0;  // every k-th replay runs at half clock
  };

  class SimArm final : public TimedArm {
   public:
    SimArm(Lab& lab, int id, double us, double carryover = 0, double noise = 0.004, double tick = 0)
        : lab_(lab), id_(id), us_(us), carryover_(carryover), noise_(noise), tick_(tick) {}
    Expected<Warmup> prepare(bool settle) override {
      if (!settle) return Warmup{};
      return warm_until_settled([&]() -> Expected<double> { return replay(); });
    }
    Expected<Timed> sample(bool) override {
      const double clock = lab_.throttle_every != 0 && lab_.replays % lab_.throttle_every == 0 ? 900 : 1980;
      const double t = replay();
      return Timed{clock < 1000 ? t * 2 : t, clock};
    }
    [[nodiscard]] std::string name() const override { return fmt::format("sim{}", id_); }

   private:
    double replay() {
      ++lab_.replays;
      double t = us_ * (1 + noise_ * (static_cast<double>(splitmix64_next(lab_.noise) % 2001) / 1000 - 1));
      if (lab_.cold) t += 40 * us_;  // lazy module load, first graph upload: the first replay of the process
      lab_.cold = false;
      if (lab_.last >= 0 && lab_.last != id_) t *= 1 + carryover_;
      lab_.last = id_;
      return tick_ > 0 ? std::round(t / tick_) * tick_ : t;
    }
    Lab& lab_;
    int id_;
    double us_;
    double carryover_;
    double noise_;
    double tick_;  // a timer that reads in whole ticks (CUDA events: about 0.5 us)
  };

  SessionOptions quick() {
    SessionOptions o;
    o.timeout_s = 30;
    o.max_samples = 400;
    o.min_samples = 40;
    o.reference_clock_mhz = 1980;
    return o;
  }

  Statistics run(double a_us, double b_us, double carryover = 0, Protocol protocol = Protocol::kCounterbalanced,
                 BlockOrder order = BlockOrder::kAbba) {
    Lab lab;
    SimArm a(lab, 0, a_us, carryover), b(lab, 1, b_us, carryover);
    SessionOptions o = quick();
    o.protocol = protocol;
    o.order = order;
    auto s = run_session(a, b, o);
    REQUIRE(s.ok());
    return analyse(s->samples, protocol, VerdictOptions{});
  }

  TEST_CASE("verdicts: A against A is same; twice the work is slower; 10 % less is faster") {
    CHECK(run(50, 50).verdict == "same");
    const Statistics slower = run(50, 100);
    CHECK(slower.verdict == "slower");
    CHECK(slower.ratio == doctest::Approx(2).epsilon(0.01));
    const Statistics faster = run(50, 45);
    CHECK(faster.verdict == "faster");
    CHECK(faster.interval.hi < 1);
    CHECK(run(50, 50, 0, Protocol::kCounterbalanced, BlockOrder::kRandom).verdict == "same");
  }

  TEST_CASE("a coarse timer: one tick apart on a short kernel is same; the band is recorded") {
    const auto quantised = [](double b_us, double tick) {
      Lab lab;
      SimArm a(lab, 0, 6.0, 0, 0.004, tick), b(lab, 1, b_us, 0, 0.004, tick);
      auto s = run_session(a, b, quick());
      REQUIRE(s.ok());
      return analyse(s->samples, Protocol::kCounterbalanced, VerdictOptions{});
    };
    const Statistics tick = quantised(5.5, 0.5);  // 6.0 against 5.5: one 0.5 us tick, 8 %
    CHECK(tick.resolution_us == doctest::Approx(0.5));
    CHECK(tick.same_band == doctest::Approx(1.5 * 0.5 / 5.5));
    CHECK(tick.verdict == "same");
    // Negative control: the same 8 % with a fine timer is a difference.
    const Statistics fine = quantised(5.5, 0.001);
    CHECK(fine.same_band == doctest::Approx(0.01));
    CHECK(fine.verdict == "faster");
  }

  TEST_CASE("the PR's mistake: naive A-then-B reports a large speed-up; the gate reports same") {
    const Statistics naive = run(50, 50, 0, Protocol::kNaive);
    CHECK(naive.verdict == "faster");
    CHECK(naive.ratio < 0.2);  // A paid the process's cold state in its first replay
    CHECK(run(50, 50).verdict == "same");
  }

  TEST_CASE("order effects: a carryover between arms is order-dependent; without it, nothing is flagged") {
    const Statistics carried = run(50, 50, 0.05);
    CHECK(carried.verdict == "order-dependent");
    bool flagged = false;
    for (const OrderTest& t : carried.order) flagged = flagged || (t.flagged && t.kind == "carryover");
    CHECK(flagged);
    const Statistics clean = run(50, 50, 0);
    for (const OrderTest& t : clean.order) CHECK_FALSE(t.flagged);
  }

  TEST_CASE("throttled samples are recorded, counted and left out") {
    Lab lab;
    lab.throttle_every = 5;
    SimArm a(lab, 0, 50), b(lab, 1, 50);
    auto s = run_session(a, b, quick());
    REQUIRE(s.ok());
    const Statistics st = analyse(s->samples, Protocol::kCounterbalanced, VerdictOptions{});
    CHECK(st.throttled[0] + st.throttled[1] > 10);
    CHECK(st.verdict == "same");  // the half-clock samples (twice as slow) did not count
    CHECK(st.centre_us[0] == doctest::Approx(50).epsilon(0.01));
  }

  TEST_CASE("block orders: A B B A then B A A B; random blocks hold two of each") {
    CHECK(block_arms(BlockOrder::kAbba, 0, 1) == std::vector<int>{0, 1, 1, 0});
    CHECK(block_arms(BlockOrder::kAbba, 1, 1) == std::vector<int>{1, 0, 0, 1});
    int differ = 0;
    for (std::size_t block = 0; block < 64; ++block) {
      std::vector<int> r = block_arms(BlockOrder::kRandom, block, 3);
      CHECK(std::count(r.begin(), r.end(), 0) == 2);
      differ += r != block_arms(BlockOrder::kRandom, 0, 3);
    }
    CHECK(differ > 20);
  }

  TEST_CASE("claims: parsed strictly, judged on the whole interval and the order tests") {
    const std::array<std::string, 2> names{"ordinary", "folded"};
    auto c = parse_claim("folded faster by 5%", names);
    REQUIRE(c.ok());
    CHECK(c->arm == 1);
    CHECK(c->fraction == doctest::Approx(0.05));
    CHECK(parse_claim("B faster by 5%", names)->arm == 1);
    CHECK(parse_claim("same within 2%", names)->kind == Claim::Kind::kSame);
    for (const char* bad : {"folded faster", "C faster by 5%", "B faster by 5", "B faster by 150%", "B quicker by 5%", ""}) {
      CHECK_FALSE(parse_claim(bad, names).ok());
    }
    const Statistics ten = run(50, 45);
    CHECK(judge_claim(*parse_claim("B faster by 5%", names), ten, names).passes);
    CHECK_FALSE(judge_claim(*parse_claim("B faster by 15%", names), ten, names).passes);
    CHECK_FALSE(judge_claim(*parse_claim("A faster by 5%", names), ten, names).passes);
    CHECK(judge_claim(*parse_claim("A slower by 5%", names), ten, names).passes);
    CHECK(judge_claim(*parse_claim("same within 2%", names), run(50, 50), names).passes);
    CHECK_FALSE(judge_claim(*parse_claim("same within 2%", names), ten, names).passes);
    // An order effect fails any claim, even one the interval supports.
    const Statistics carried = run(50, 40, 0.08);
    CHECK(carried.interval.hi < 0.95);
    CHECK_FALSE(judge_claim(*parse_claim("B faster by 5%", names), carried, names).passes);
  }

  // ---- reports ----

  Json simulated_report(double b_us, const char* claim) {
    TimeSpec spec;
    spec.name = "sim";
    spec.arms[0].name = "ordinary";
    spec.arms[1].name = "folded";
    spec.json = {{"bitproof_time", 1}, {"name", "sim"}};
    TimeProtocol p;
    p.session = quick();
    Lab lab;
    SimArm a(lab, 0, 50), b(lab, 1, b_us);
    TimeRun r;
    r.session = *run_session(a, b, p.session);
    Lab lab2;
    SimArm a1(lab2, 0, 50), a2(lab2, 1, 50);
    r.calibration = *run_session(a1, a2, p.session);
    if (claim != nullptr) r.claim = *parse_claim(claim, spec.arm_names());
    return time_report(spec, p, r, Json{{"device", {{"name", "simulated"}}}});
  }

  TEST_CASE("time reports: schema-valid, read back, re-derived from their samples; tampering is caught") {
    const Json report = simulated_report(45, "B faster by 5%");
    auto back = parse_report(report.dump(), "t.json");
    REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error().message));
    auto again = rederive_time_result((*back)["result"], "t.json");
    REQUIRE(again.ok());
    CHECK(*again == (*back)["result"]);
    CHECK(time_report_passes(*back));
    CHECK((*back)["result"]["calibration"]["verdict"] == "same");

    Json slower = report;  // a faster sample makes the recorded statistics stale
    slower["result"]["run"]["samples"][5][3] = 1.0;
    auto stale = rederive_time_result(slower["result"], "t.json");
    REQUIRE(stale.ok());
    CHECK(*stale != slower["result"]);
    Json verdict = report;
    verdict["result"]["run"]["verdict"] = "slower";
    CHECK(*rederive_time_result(verdict["result"], "t.json") != verdict["result"]);
    Json moved = report;  // a sample of A where the block order has B
    moved["result"]["run"]["samples"][1][0] = 0;
    CHECK_FALSE(parse_report(moved.dump(), "t.json").ok());
    Json throttle = report;  // a throttle mark the clock does not support
    throttle["result"]["run"]["samples"][2][5] = true;
    auto refused = parse_report(throttle.dump(), "t.json");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find("throttle") != std::string::npos);
    Json negative = report;
    negative["result"]["run"]["samples"][3][3] = -1.0;
    CHECK_FALSE(parse_report(negative.dump(), "t.json").ok());
    Json spec = report;
    spec["result"]["spec"]["name"] = "other";
    CHECK_FALSE(parse_report(spec.dump(), "t.json").ok());
  }

  TEST_CASE("time reports render: Markdown, JUnit, SVG") {
    const Json pass = simulated_report(45, "B faster by 5%"), fail = simulated_report(50, "B faster by 5%");
    const std::string md = render_markdown(pass);
    CHECK(md.find("is 10.") != std::string::npos);
    CHECK(md.find("Claim \"B faster by 5%\": **PASS**") != std::string::npos);
    CHECK(md.find("Calibration") != std::string::npos);
    CHECK_FALSE(time_report_passes(fail));
    CHECK(render_junit(fail).find("<failure") != std::string::npos);
    CHECK(render_junit(pass).find("<failure") == std::string::npos);
    auto svg = render_svg(pass, "p.svg");
    REQUIRE(svg.ok());
    CHECK(svg->find("<circle") != std::string::npos);
  }
}

}  // namespace
}  // namespace bitproof::timing
