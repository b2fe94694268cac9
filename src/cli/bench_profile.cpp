#include "cli/bench_profile.h"

#include "llm/sampler.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <tuple>
#include <utility>

namespace wgx::cli {

namespace {

double share(double part, double total) { return total > 0 ? 100.0 * part / total : 0.0; }

// A node label with its layer index starred ("layers.3.attn.o_proj" -> "layers.*.attn.o_proj"),
// so that a row adds up one kind of node over the layers; "" for a node without a label.
std::string node_kind(const std::string& label) {
  if (label.starts_with("#")) return "";
  std::string out;
  for (size_t i = 0; i < label.size();) {
    const bool after_dot = i > 0 && label[i - 1] == '.';
    if (after_dot && std::isdigit(static_cast<unsigned char>(label[i]))) {
      while (i < label.size() && std::isdigit(static_cast<unsigned char>(label[i]))) ++i;
      out += '*';
    } else {
      out += label[i++];
    }
  }
  return out;
}

}  // namespace

StepProfile profile_step(const runtime::Program& program, std::string step) {
  // Dispatches carry their node's label, or "#<node> <op>" for a node without one (as
  // NodeContext::label() names it).
  std::map<std::string, const runtime::RouteChoice*> by_label;
  for (const runtime::RouteChoice& r : program.routes()) {
    by_label.emplace(r.label.empty() ? "#" + std::to_string(r.node) + " " + r.op : r.label, &r);
  }
  StepProfile p;
  p.step = std::move(step);
  std::map<std::tuple<std::string, std::string, std::string, std::string>, ProfileRow> rows;
  for (const gpu::DispatchTiming& t : program.last_timings()) {
    const auto it = by_label.find(t.label);
    const std::string op = it == by_label.end() ? "?" : it->second->op;
    // One-token steps may take their own routes (RouteChoice::small_route): name the one that ran.
    const bool small = it != by_label.end() && program.last_execute_was_small() && !it->second->small_route.empty();
    const std::string route = it == by_label.end() ? t.label : small ? it->second->small_route : it->second->route;
    const std::string nodes = node_kind(t.label);
    ProfileRow& row = rows[{op, route, t.kernel, nodes}];
    row.op = op;
    row.route = route;
    row.kernel = t.kernel;
    row.nodes = nodes;
    ++row.dispatches;
    row.microseconds += t.microseconds();
    p.total_microseconds += t.microseconds();
    ++p.dispatches;
  }
  for (auto& [key, row] : rows) p.rows.push_back(std::move(row));
  std::stable_sort(p.rows.begin(), p.rows.end(),
                   [](const ProfileRow& a, const ProfileRow& b) { return a.microseconds > b.microseconds; });
  return p;
}

std::string profile_table(const StepProfile& p) {
  char line[256];
  std::snprintf(line, sizeof line, "profile      %s: %zu dispatches, %.1f us of GPU time\n", p.step.c_str(),
                p.dispatches, p.total_microseconds);
  std::string out = line;
  if (p.step_runs > 0) {
    std::snprintf(line, sizeof line, "             the step unprofiled: %.1f us of GPU time (median of %d)\n",
                  p.step_microseconds, p.step_runs);
    out += line;
  }
  if (p.queued_microseconds > 0) {
    std::snprintf(line, sizeof line, "             behind queued steps: %.1f us of GPU time\n", p.queued_microseconds);
    out += line;
  }
  // Each text column as wide as its longest entry (at least the widths of a typical model's).
  int op = 26, route = 34, kernel = 36, nodes = 30;
  for (const ProfileRow& r : p.rows) {
    op = std::max(op, static_cast<int>(r.op.size()));
    route = std::max(route, static_cast<int>(r.route.size()));
    kernel = std::max(kernel, static_cast<int>(r.kernel.size()));
    nodes = std::max(nodes, static_cast<int>(r.nodes.size()));
  }
  auto row = [&](const std::string& a, const std::string& b, const std::string& c, const std::string& d,
                 const std::string& numbers) {
    std::string l = "  ";
    for (const auto& [text, width] : {std::pair{&a, op}, {&b, route}, {&c, kernel}, {&d, nodes}}) {
      l += *text + std::string(static_cast<size_t>(width) - text->size() + 1, ' ');
    }
    return l + numbers + "\n";
  };
  std::snprintf(line, sizeof line, "%10s %12s %7s", "dispatches", "time (us)", "share");
  out += row("op", "route", "kernel", "nodes", line);
  for (const ProfileRow& r : p.rows) {
    std::snprintf(line, sizeof line, "%10zu %12.1f %6.1f%%", r.dispatches, r.microseconds,
                  share(r.microseconds, p.total_microseconds));
    out += row(r.op, r.route, r.kernel, r.nodes, line);
  }
  return out;
}

nlohmann::json profile_json(const StepProfile& p) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ProfileRow& r : p.rows) {
    rows.push_back({{"op", r.op},
                    {"route", r.route},
                    {"kernel", r.kernel},
                    {"nodes", r.nodes},
                    {"dispatches", r.dispatches},
                    {"us", r.microseconds},
                    {"share", share(r.microseconds, p.total_microseconds) / 100.0}});
  }
  return {{"step", p.step},       {"dispatches", p.dispatches},      {"total_us", p.total_microseconds},
          {"step_us", p.step_microseconds}, {"step_runs", p.step_runs}, {"queued_us", p.queued_microseconds},
          {"rows", rows}};
}


namespace {

void feed(runtime::Program& p, std::span<const int32_t> ids, int64_t pos) {
  p.set_input<int32_t>("tokens", ids, {1, static_cast<int64_t>(ids.size())});
  p.set_sym("input_pos", pos);
  p.execute();
}

int32_t greedy(const runtime::Program& p) { return llm::argmax(p.read_f32("logits")); }

}  // namespace

std::string tokens_at(int64_t count, int64_t first) {
  if (count == 1) return "1 token at position " + std::to_string(first);
  return std::to_string(count) + " tokens at positions " + std::to_string(first) + ".." +
         std::to_string(first + count - 1);
}

namespace {

constexpr int kStepRuns = 24;  // decode steps timed whole for the profile (prefill: a quarter)
constexpr int kQueued = 7;     // untimed decode steps queued before a timed one

}  // namespace

// One prefill step (the prompt's last) and one decode step on a build with timestamps (the next
// token picked as in the timed runs), each run twice so the second, timed one finds the device
// warm. The timed program is released first.
std::pair<StepProfile, StepProfile> profile_steps(Model::Impl& m, std::span<const int32_t> prompt, int64_t start,
                                                  const runtime::RuntimeOptions& options,
                                                  const ops::sampling::Words& pick) {
  m.program.reset();
  runtime::Program p(*m.engine->gpu, m.built->graph, m.built->weights, options);
  if (m.limits.device_sampling) p.set_input<int32_t>("sampling", pick, {static_cast<int64_t>(pick.size())});
  std::pair<StepProfile, StepProfile> out;
  const size_t last = std::min(prompt.size(), static_cast<size_t>(m.limits.max_prefill));
  const int64_t first = start - static_cast<int64_t>(last);
  int32_t token = 0;
  for (int pass = 0; pass < 2; ++pass) {
    p.set_timing(gpu::Timing::Dispatches);
    p.reset_state();
    feed(p, prompt.last(last), first);
    out.first = profile_step(p, "prefill: " + tokens_at(static_cast<int64_t>(last), first));
    token = greedy(p);
    feed(p, std::span<const int32_t>(&token, 1), start);
    out.second = profile_step(p, "decode: " + tokens_at(1, start));
  }
  // The steps as they run unprofiled: the same work timed per pass (one pass but for copies),
  // repeated; the median. Then the decode step behind kQueued untimed ones submitted back to
  // back (as the pipelined loop submits them): what the GPU does with a full queue.
  const auto decode = [&] { feed(p, std::span<const int32_t>(&token, 1), start); };
  p.set_timing(gpu::Timing::Passes);
  out.first.step_runs = kStepRuns / 4;
  out.first.step_microseconds = median_step(out.first.step_runs, [&] {
    p.reset_state();
    feed(p, prompt.last(last), first);
  }, p);
  out.second.step_runs = kStepRuns;
  out.second.step_microseconds = median_step(kStepRuns, decode, p);
  out.second.queued_microseconds = median_step(kStepRuns / 4, [&] {
    p.set_timing(gpu::Timing::Off);
    for (int i = 0; i < kQueued; ++i) decode();
    p.set_timing(gpu::Timing::Passes);
    decode();
  }, p);
  return out;
}


}  // namespace wgx::cli
