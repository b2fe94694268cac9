#include "runtime/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace wgx::runtime {

using graph::ValueId;

namespace {

void propagate_views(const graph::Graph& g, const std::vector<bool>& views, std::vector<ValueId>& root) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    if (views[i] && !n.inputs.empty() && !n.outputs.empty() &&
        g.values[n.inputs[0]].kind == graph::ValueKind::Tensor) {
      root[n.outputs[0]] = root[n.inputs[0]];
    }
  }
}

}  // namespace

uint64_t MemoryPlan::planned_bytes() const {
  uint64_t total = 0;
  for (uint64_t b : slot_bytes) total += b;
  return total;
}

MemoryPlan plan_memory(const MemoryPlanInput& in) {
  const graph::Graph& g = *in.graph;
  const size_t nv = g.values.size();
  const uint32_t nn = static_cast<uint32_t>(g.nodes.size());
  MemoryPlan plan;
  plan.root.resize(nv);
  std::iota(plan.root.begin(), plan.root.end(), ValueId{0});
  plan.slot.assign(nv, kNoSlot);
  plan.copies_after.resize(nn);
  propagate_views(g, in.views, plan.root);

  // Mutations: write in place when nothing can observe the buffer changing early.
  const std::vector<uint32_t> producer = graph::producers(g);
  for (const graph::Mutation& mu : g.mutations) {
    const ValueId buf = g.buffers.at(mu.buffer).value;
    const uint32_t p = producer[mu.value];
    bool in_place = p != graph::kNoIndex && !in.views[p] && plan.root[mu.value] == mu.value;
    if (in_place) {
      const graph::Node& n = g.nodes[p];
      const auto out =
          static_cast<size_t>(std::find(n.outputs.begin(), n.outputs.end(), mu.value) - n.outputs.begin());
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        if (plan.root[n.inputs[k]] != buf) continue;
        // The node reads the buffer: only a kernel that updates this input where it lies, as the
        // mutation's output, may also write it (a dispatch cannot bind one buffer both read-only
        // and writable).
        const bool updates_it = in.in_place[p].updates(k, out) && g.type(n.inputs[k]) == g.type(mu.value);
        if (!updates_it) in_place = false;
      }
      // A later node that reads the old contents through a view would see the new ones.
      for (uint32_t j = p + 1; j < nn && in_place; ++j) {
        for (ValueId u : g.nodes[j].inputs) {
          if (u != mu.value && plan.root[u] == buf) in_place = false;
        }
      }
    }
    if (in_place) {
      plan.root[mu.value] = buf;
    } else if (p != graph::kNoIndex) {
      plan.copies_after[p].push_back({mu.value, mu.buffer});
    }
  }
  propagate_views(g, in.views, plan.root);

  // Lifetimes of intermediate roots: from the producing node to the last node that reads them
  // or any view of them; graph outputs live to the end.
  std::vector<bool> external(nv, false);  // inputs, constants, buffers: not in the arena
  for (const auto& v : g.inputs) external[v.value] = true;
  for (const auto& c : g.constants) external[c.value] = true;
  for (const auto& b : g.buffers) external[b.value] = true;
  std::vector<uint32_t> first(nv, UINT32_MAX), last(nv, 0);
  for (uint32_t i = 0; i < nn; ++i) {
    for (ValueId v : g.nodes[i].outputs) {
      const ValueId r = plan.root[v];
      first[r] = std::min(first[r], i);
      last[r] = std::max(last[r], i);
    }
    for (ValueId v : g.nodes[i].inputs) {
      if (g.values[v].kind != graph::ValueKind::Tensor) continue;
      last[plan.root[v]] = std::max(last[plan.root[v]], i);
    }
  }
  for (const auto& o : g.outputs) last[plan.root[o.value]] = nn;

  std::vector<ValueId> roots;
  for (ValueId v = 0; v < nv; ++v) {
    if (plan.root[v] == v && !external[v] && first[v] != UINT32_MAX && in.capacity[v] > 0) roots.push_back(v);
  }
  std::stable_sort(roots.begin(), roots.end(), [&](ValueId a, ValueId b) {
    return in.capacity[a] != in.capacity[b] ? in.capacity[a] > in.capacity[b] : first[a] < first[b];
  });
  // Largest first: a slot's first value is its largest, so later ones always fit. Each goes to
  // the smallest slot whose values are all dead while it lives.
  std::vector<std::vector<ValueId>> members;
  for (ValueId v : roots) {
    plan.unplanned_bytes += in.capacity[v];
    uint32_t best = kNoSlot;
    for (uint32_t s = 0; s < members.size(); ++s) {
      bool free = true;
      for (ValueId w : members[s]) free = free && (last[w] < first[v] || last[v] < first[w]);
      if (free && (best == kNoSlot || plan.slot_bytes[s] < plan.slot_bytes[best])) best = s;
    }
    if (best == kNoSlot) {
      best = static_cast<uint32_t>(members.size());
      members.emplace_back();
      plan.slot_bytes.push_back(in.capacity[v]);
    }
    members[best].push_back(v);
    plan.slot[v] = best;
  }
  return plan;
}

}  // namespace wgx::runtime
