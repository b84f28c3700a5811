#include "report/time_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "hash/digest.hpp"
#include "report/markup.hpp"

namespace bitproof {
namespace {

using timing::Protocol;
using timing::Sample;
using timing::Session;
using timing::Statistics;

const char* const kSampleFields[] = {"arm", "block", "position", "us", "clock_mhz", "throttled"};

Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json protocol_json(const TimeProtocol& p) {
  const timing::SessionOptions& s = p.session;
  const timing::VerdictOptions& v = p.verdict;
  return Json{{"name", s.protocol == Protocol::kNaive ? "naive" : "counterbalanced"},
              {"order", s.order == timing::BlockOrder::kAbba ? "abba" : "random"},
              {"cache", s.flush_l2 ? "cold" : "hot"},
              {"isolate", p.isolate},
              {"min_samples", s.min_samples},
              {"max_samples", s.max_samples},
              {"noise_target", s.noise_target},
              {"min_time_s", s.min_time_s},
              {"timeout_s", s.timeout_s},
              {"naive_samples", s.naive_samples},
              {"seed", s.seed},
              {"throttle_fraction", s.throttle_fraction},
              {"reference_clock_mhz", s.reference_clock_mhz},
              {"same_within", v.same_within},
              {"alpha", v.alpha},
              {"order_alpha", v.order_alpha},
              {"bootstrap_resamples", v.resamples},
              {"level", v.level},
              {"bootstrap_seed", v.seed}};
}

TimeProtocol protocol_from_json(const Json& j) {
  TimeProtocol p;
  timing::SessionOptions& s = p.session;
  timing::VerdictOptions& v = p.verdict;
  s.protocol = j["name"] == "naive" ? Protocol::kNaive : Protocol::kCounterbalanced;
  s.order = j["order"] == "random" ? timing::BlockOrder::kRandom : timing::BlockOrder::kAbba;
  s.flush_l2 = j["cache"] == "cold";
  p.isolate = j["isolate"].get<bool>();
  s.min_samples = j["min_samples"].get<std::size_t>();
  s.max_samples = j["max_samples"].get<std::size_t>();
  s.noise_target = j["noise_target"].get<double>();
  s.min_time_s = j["min_time_s"].get<double>();
  s.timeout_s = j["timeout_s"].get<double>();
  s.naive_samples = j["naive_samples"].get<std::size_t>();
  s.seed = j["seed"].get<std::uint64_t>();
  s.throttle_fraction = j["throttle_fraction"].get<double>();
  s.reference_clock_mhz = j["reference_clock_mhz"].get<double>();
  v.same_within = j["same_within"].get<double>();
  v.alpha = j["alpha"].get<double>();
  v.order_alpha = j["order_alpha"].get<double>();
  v.resamples = j["bootstrap_resamples"].get<int>();
  v.level = j["level"].get<double>();
  v.seed = j["bootstrap_seed"].get<std::uint64_t>();
  return p;
}

Json session_json(const Session& s) {
  Json warmup = Json::array();
  for (const timing::Warmup& w : s.warmup) {
    warmup.push_back({{"replays", w.replays}, {"settled", w.settled}, {"last_median_us", w.last_median_us}});
  }
  Json samples = Json::array();
  for (const Sample& x : s.samples) samples.push_back({x.arm, x.block, x.position, x.us, x.clock_mhz, x.throttled});
  return Json{{"warmup", warmup}, {"stopped", s.stopped}, {"seconds", s.seconds}, {"samples", samples}};
}

Session session_from_json(const Json& j) {
  Session s;
  for (std::size_t arm = 0; arm < 2; ++arm) {
    const Json& w = j["warmup"][arm];
    s.warmup[arm] = {w["replays"].get<int>(), w["settled"].get<bool>(), w["last_median_us"].get<double>()};
  }
  s.stopped = j["stopped"].get<std::string>();
  s.seconds = j["seconds"].get<double>();
  for (const Json& x : j["samples"]) {
    s.samples.push_back({x[0].get<int>(), x[1].get<std::size_t>(), x[2].get<int>(), x[3].get<double>(),
                         x[4].get<double>(), x[5].get<bool>()});
  }
  return s;
}

Json statistics_json(const Statistics& s, Protocol protocol) {
  Json order = Json::array();
  for (const timing::OrderTest& t : s.order) {
    order.push_back({{"kind", t.kind}, {"arm", t.arm}, {"statistic", number(t.test.statistic)}, {"p", number(t.test.p)},
                     {"effect", number(t.effect)}, {"flagged", t.flagged}});
  }
  return Json{{"samples", s.samples},
              {"throttled", s.throttled},
              {"centre", protocol == Protocol::kNaive ? "mean" : "median"},
              {"centre_us", {number(s.centre_us[0]), number(s.centre_us[1])}},
              {"ratio", number(s.ratio)},
              {"resolution_us", number(s.resolution_us)},
              {"same_band", number(s.same_band)},
              {"interval", {number(s.interval.lo), number(s.interval.hi)}},
              {"mann_whitney", {{"u", number(s.test.statistic)}, {"p", number(s.test.p)}, {"exact", s.test.exact}}},
              {"order_tests", order}};
}

// A session's samples, statistics, verdict and sentence.
Json judged_session(const Session& s, const TimeProtocol& p, const std::array<std::string, 2>& names,
                    Statistics& stats) {
  stats = timing::analyse(s.samples, p.session.protocol, p.verdict);
  Json j = session_json(s);
  j["statistics"] = statistics_json(stats, p.session.protocol);
  j["verdict"] = stats.verdict;
  j["sentence"] = timing::verdict_sentence(stats, names, p.session.protocol);
  return j;
}

Json assemble(const Json& spec_json, const std::array<std::string, 2>& names, const TimeProtocol& p, const TimeRun& run) {
  Json result;
  result["spec"] = spec_json;
  result["spec_sha256"] = sha256_hex(spec_json.dump());
  result["arms"] = names;
  result["protocol"] = protocol_json(p);
  result["sample_fields"] = kSampleFields;
  Statistics stats;
  result["run"] = judged_session(run.session, p, names, stats);
  result["claim"] = nullptr;
  bool passes = true;
  if (run.claim) {
    const timing::ClaimJudgement j = timing::judge_claim(*run.claim, stats, names);
    result["claim"] = {{"text", run.claim->text}, {"passes", j.passes}, {"why", j.why}};
    passes = j.passes;
  }
  result["calibration"] = nullptr;
  if (run.calibration) {
    Statistics cal;
    result["calibration"] = judged_session(*run.calibration, p, {names[0], names[0] + "'"}, cal);
  }
  result["passes"] = passes;
  return result;
}

Error bad(const std::string& path, const std::string& field, const std::string& what) {
  return Error{fmt::format("{}: {}: {}", path, field, what)};
}

Expected<Ok> check_session(const Json& session, const TimeProtocol& p, const std::string& path, const std::string& field) {
  const Json& samples = session["samples"];
  const bool naive = p.session.protocol == Protocol::kNaive;
  std::size_t per_arm[2] = {0, 0};
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Json& x = samples[i];
    const std::string f = fmt::format("{}.samples[{}]", field, i);
    const int arm = x[0].get<int>();
    const auto block = x[1].get<std::size_t>();
    const int position = x[2].get<int>();
    const double us = x[3].get<double>(), clock = x[4].get<double>();
    if (arm != 0 && arm != 1) return bad(path, f, "arm must be 0 (A) or 1 (B)");
    ++per_arm[arm];
    if (!(us > 0) || !std::isfinite(us) || !(clock >= 0)) return bad(path, f, "a time must be positive and a clock non-negative");
    const bool throttled = p.session.reference_clock_mhz > 0 && clock < p.session.throttle_fraction * p.session.reference_clock_mhz;
    if (x[5].get<bool>() != throttled) return bad(path, f, "the throttle mark disagrees with the recorded clock and threshold");
    if (naive) {
      const std::size_t want_arm = i / std::max<std::size_t>(p.session.naive_samples, 1);
      if (block != 0 || static_cast<std::size_t>(arm) != want_arm ||
          static_cast<std::size_t>(position) != i % p.session.naive_samples) {
        return bad(path, f, "the naive protocol times A's replays, then B's, in block 0");
      }
      continue;
    }
    const std::vector<int> order = timing::block_arms(p.session.order, i / 4, p.session.seed);
    if (block != i / 4 || static_cast<std::size_t>(position) != i % 4 || order[i % 4] != arm) {
      return bad(path, f, "is not where the recorded block order puts it");
    }
  }
  if (naive ? samples.size() != 2 * p.session.naive_samples : samples.size() % 4 != 0) {
    return bad(path, field + ".samples", "does not hold whole blocks");
  }
  if (per_arm[0] == 0 || per_arm[1] == 0) return bad(path, field + ".samples", "an arm has no samples");
  return Ok{};
}

std::string percent(double fraction) { return fmt::format("{:.2g} %", 100 * fraction); }

}  // namespace

Json time_result_json(const timing::TimeSpec& spec, const TimeProtocol& protocol, const TimeRun& run) {
  return assemble(spec.json, spec.arm_names(), protocol, run);
}

Json time_report(const timing::TimeSpec& spec, const TimeProtocol& protocol, const TimeRun& run, const Json& device) {
  Json env = environment_json();
  env["device"] = device;
  return Json{{"bitproof_report", kReportVersion}, {"kind", "time"}, {"result", time_result_json(spec, protocol, run)},
              {"environment", env}};
}

Expected<Ok> check_time_consistency(const Json& result, const std::string& path) {
  if (sha256_hex(result["spec"].dump()) != result["spec_sha256"].get<std::string>()) {
    return bad(path, "result.spec_sha256", "is not the digest of the recorded spec");
  }
  const TimeProtocol p = protocol_from_json(result["protocol"]);
  if (auto ok = check_session(result["run"], p, path, "result.run"); !ok) return ok;
  if (!result["calibration"].is_null()) return check_session(result["calibration"], p, path, "result.calibration");
  return Ok{};
}

Expected<Json> rederive_time_result(const Json& result, const std::string& path) {
  if (auto ok = check_time_consistency(result, path); !ok) return ok.error();
  const TimeProtocol p = protocol_from_json(result["protocol"]);
  const std::array<std::string, 2> names{result["arms"][0].get<std::string>(), result["arms"][1].get<std::string>()};
  TimeRun run;
  run.session = session_from_json(result["run"]);
  if (!result["calibration"].is_null()) run.calibration = session_from_json(result["calibration"]);
  if (!result["claim"].is_null()) {
    auto claim = timing::parse_claim(result["claim"]["text"].get<std::string>(), names);
    if (!claim) return bad(path, "result.claim.text", claim.error().message);
    run.claim = *claim;
  }
  return assemble(result["spec"], names, p, run);
}

bool time_report_passes(const Json& report) { return report["result"]["passes"].get<bool>(); }

std::vector<std::string> time_summary_lines(const Json& report) {
  const Json& r = report["result"];
  std::vector<std::string> lines{r["run"]["sentence"].get<std::string>()};
  const Json& st = r["run"]["statistics"];
  lines.push_back(fmt::format("  samples {} + {} ({} + {} throttled, discarded); {}; {:.1f} s", st["samples"][0].dump(),
                              st["samples"][1].dump(), st["throttled"][0].dump(), st["throttled"][1].dump(),
                              r["run"]["stopped"].get<std::string>(), r["run"]["seconds"].get<double>()));
  for (const Json& t : st["order_tests"]) {
    if (t["flagged"].get<bool>()) {
      lines.push_back(fmt::format("  order effect: {} of {}: {:.1f} %, p = {:.2g}", t["kind"].get<std::string>(),
                                  r["arms"][t["arm"].get<std::size_t>()].get<std::string>(),
                                  100 * t["effect"].get<double>(), t["p"].get<double>()));
    }
  }
  if (!r["calibration"].is_null()) lines.push_back("calibration: " + r["calibration"]["sentence"].get<std::string>());
  if (!r["claim"].is_null()) {
    lines.push_back(fmt::format("claim \"{}\": {}: {}", r["claim"]["text"].get<std::string>(),
                                r["claim"]["passes"].get<bool>() ? "PASS" : "FAIL", r["claim"]["why"].get<std::string>()));
  }
  return lines;
}

std::string render_time_markdown(const Json& report) {
  const Json& r = report["result"];
  const Json& spec = r["spec"];
  const Json& st = r["run"]["statistics"];
  const Json& p = r["protocol"];
  std::string md = fmt::format("## bitproof time: {}\n\n", md_text(spec["name"].get<std::string>()));
  if (spec.contains("title")) md += md_text(spec["title"].get<std::string>(), true) + "\n\n";
  md += fmt::format("**{}**\n\n", md_text(r["run"]["sentence"].get<std::string>()));
  if (!r["claim"].is_null()) {
    md += fmt::format("Claim \"{}\": **{}**: {}\n\n", md_text(r["claim"]["text"].get<std::string>()),
                      r["claim"]["passes"].get<bool>() ? "PASS" : "FAIL", md_text(r["claim"]["why"].get<std::string>()));
  }
  if (!r["calibration"].is_null()) {
    const Json& c = r["calibration"]["statistics"]["interval"];
    md += fmt::format("Calibration, A against an independently prepared A in the same session: {} (the gate resolves "
                      "differences beyond about {})\n\n",
                      md_text(r["calibration"]["sentence"].get<std::string>()),
                      c[0].is_number() ? percent(std::max(1 - c[0].get<double>(), c[1].get<double>() - 1)) : "?");
  }
  md += fmt::format("| arm | samples | throttled | {} µs | warm-up replays |\n|---|---:|---:|---:|---|\n",
                    md_cell(st["centre"].get<std::string>()));
  for (std::size_t arm = 0; arm < 2; ++arm) {
    const Json& w = r["run"]["warmup"][arm];
    md += fmt::format("| {} {} | {} | {} | {} | {}{} |\n", arm == 0 ? "A" : "B", md_cell(r["arms"][arm].get<std::string>()),
                      st["samples"][arm].dump(), st["throttled"][arm].dump(),
                      st["centre_us"][arm].is_number() ? fmt::format("{:.3f}", st["centre_us"][arm].get<double>()) : "-",
                      w["replays"].dump(), w["settled"].get<bool>() ? ", settled" : ", not settled");
  }
  if (!st["order_tests"].empty()) {
    md += "\n| order test | arm | p | effect | flagged |\n|---|---|---:|---:|---|\n";
    for (const Json& t : st["order_tests"]) {
      md += fmt::format("| {} | {} | {:.2g} | {:.2f} % | {} |\n", md_cell(t["kind"].get<std::string>()),
                        md_cell(r["arms"][t["arm"].get<std::size_t>()].get<std::string>()), t["p"].get<double>(),
                        100 * t["effect"].get<double>(), t["flagged"].get<bool>() ? "**yes**" : "no");
    }
  }
  const bool naive = p["name"] == "naive";
  md += naive ? fmt::format("\nProtocol: **naive** (A prepared and timed first, then B; {} replays each, no warm-up, "
                            "no flush): shown to demonstrate the mistake, never a verdict.\n",
                            p["naive_samples"].dump())
              : fmt::format("\nProtocol: each arm prepared and warmed on its own{}, then {} blocks ({}); L2 {}; "
                            "samples below {} of the {} MHz clock discarded; stopped: {} after {:.1f} s.\n",
                            p["isolate"].get<bool>() ? " in its own process" : "",
                            p["order"] == "abba" ? "counterbalanced A B B A / B A A B" : "randomly interleaved",
                            "one CUDA Graph replay per sample, timed with events behind a blocking kernel",
                            p["cache"] == "cold" ? "flushed before every sample" : "not flushed (hot)",
                            percent(p["throttle_fraction"].get<double>()), p["reference_clock_mhz"].dump(),
                            md_text(r["run"]["stopped"].get<std::string>()), r["run"]["seconds"].get<double>());
  const Json& env = report["environment"];
  if (env.contains("device") && env["device"].contains("device")) {
    md += fmt::format("Device: {}.\n", md_text(env["device"]["device"].value("name", "?")));
  }
  markdown_reproduce(md, report);
  return md;
}

std::vector<JUnitCase> time_junit_cases(const Json& report) {
  const Json& r = report["result"];
  const std::string suite = r["spec"]["name"].get<std::string>();
  std::vector<JUnitCase> cases;
  const bool order = r["run"]["verdict"] == "order-dependent";
  cases.push_back(junit_case(suite, "verdict", order, order ? "order-dependent: the times are not attributable" : "",
                             r["run"]["sentence"].get<std::string>()));
  if (!r["claim"].is_null()) {
    const bool failed = !r["claim"]["passes"].get<bool>();
    cases.push_back(junit_case(suite, "claim: " + r["claim"]["text"].get<std::string>(), failed,
                               failed ? r["claim"]["why"].get<std::string>() : "", r["claim"]["why"].get<std::string>()));
  }
  if (!r["calibration"].is_null()) {
    const bool failed = r["calibration"]["verdict"] != "same";
    cases.push_back(junit_case(suite, "calibration: A against A", failed, failed ? "A against A is not \"same\"" : "",
                               r["calibration"]["sentence"].get<std::string>()));
  }
  return cases;
}

std::string render_time_svg(const Json& report) {
  const Json& r = report["result"];
  const Json& samples = r["run"]["samples"];
  double lo = INFINITY, hi = 0;
  for (const Json& x : samples) {
    if (x[5].get<bool>()) continue;
    lo = std::min(lo, x[3].get<double>());
    hi = std::max(hi, x[3].get<double>());
  }
  if (!(hi > 0)) lo = 0, hi = 1;
  const double pad = std::max((hi - lo) * 0.05, hi * 1e-4);
  lo -= pad;
  hi += pad;
  constexpr int kTop = 50, kHeight = 260, kLeft = 70, kRunWidth = 520, kStripLeft = 630, kStripWidth = 40;
  const auto y_of = [&](double us) { return kTop + kHeight - (std::clamp(us, lo, hi) - lo) / (hi - lo) * kHeight; };
  const char* colour[2] = {"#1f77b4", "#e6550d"};
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "  <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "  <text x=\"{}\" y=\"22\" font-size=\"14\" font-weight=\"bold\">{}: A {} (blue) against B {} (orange), µs per "
      "replay</text>\n",
      kStripLeft + 8 * kStripWidth + 30, kTop + kHeight + 60, kLeft, xml_escape(r["spec"]["name"].get<std::string>()),
      xml_escape(r["arms"][0].get<std::string>()), xml_escape(r["arms"][1].get<std::string>()));
  for (int tick = 0; tick <= 4; ++tick) {
    const double us = lo + (hi - lo) * tick / 4;
    svg += fmt::format("  <line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n"
                       "  <text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.4g}</text>\n",
                       kLeft, kStripLeft + 8 * kStripWidth, y_of(us), y_of(us), kLeft - 6, y_of(us) + 4, us);
  }
  const std::size_t n = std::max<std::size_t>(samples.size(), 1);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Json& x = samples[i];
    const int arm = x[0].get<int>();
    const bool throttled = x[5].get<bool>();
    const double cx = kLeft + (static_cast<double>(i) + 0.5) / static_cast<double>(n) * kRunWidth;
    const double sx = kStripLeft + (arm * 4 + x[2].get<int>() % 4 + 0.5) * kStripWidth + (static_cast<double>(i % 7) - 3) * 3;
    const char* fill = throttled ? "#999" : colour[arm];
    svg += fmt::format("  <circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"1.8\" fill=\"{}\" fill-opacity=\"0.6\"/>\n"
                       "  <circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"1.8\" fill=\"{}\" fill-opacity=\"0.6\"/>\n",
                       cx, y_of(x[3].get<double>()), fill, sx, y_of(x[3].get<double>()), fill);
  }
  const int label_y = kTop + kHeight + 18;
  svg += fmt::format("  <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">samples in run order ({} {})</text>\n",
                     kLeft + kRunWidth / 2, label_y + 16, samples.size(),
                     r["protocol"]["name"] == "naive" ? "naive: A, then B" : "in counterbalanced blocks");
  for (int col = 0; col < 8; ++col) {
    svg += fmt::format("  <text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">{}{}</text>\n",
                       kStripLeft + col * kStripWidth + kStripWidth / 2, label_y, colour[col / 4], col < 4 ? "A" : "B",
                       col % 4);
  }
  svg += fmt::format("  <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">by arm and position in the block</text>\n",
                     kStripLeft + 4 * kStripWidth, label_y + 16);
  svg += fmt::format("  <text x=\"{}\" y=\"{}\">{}</text>\n</svg>\n", kLeft, label_y + 36,
                     xml_escape(r["run"]["sentence"].get<std::string>()));
  return svg;
}

}  // namespace bitproof
