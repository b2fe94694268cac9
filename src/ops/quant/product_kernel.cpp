// One product's dispatch: q4_gemv's, dense_gemv's or tiled's kernel variant for the node (its
// stage, reduction, pipeline constants) and the launch for the rows of x now.
#include <algorithm>

#include "ops/quant/product_parts.h"
#include "runtime/options.h"

namespace wgx::ops::quant::products {

namespace {

// q4_gemv's params that do not change with M (the comb variants' head_dim and slots too): its
// pipeline constants.
const FixedParams kQ4GemvFixed{
    "p_", {"n", "k", "flags", "tpc", "tiles_n", "group_shift", "groups", "tile_stride", "head_dim", "slots"}};

// `reduce`: q4_gemv's reduction variant (wg or sgwg); `touch`: its TOUCH constant
// (touch_first before the staging); `fixed`: kQ4GemvFixed's values for this product.
const gpu::Kernel& kernel_of(const NodeContext& ctx, Kernel k, const Facts& f, uint64_t rows, Stage stage,
                             const std::string& reduce, bool touch, const std::vector<uint32_t>& fixed,
                             const Persist* persist = nullptr, const Q4Params* down = nullptr) {
  std::string name = info(k).variant_prefix;
  std::vector<std::pair<std::string, double>> constants;
  if (k == Kernel::Q4Gemv) {
    // A kernel per product shape (kQ4GemvFixed): the driver compiles the chunk loop and
    // the reduction with known trip counts and the flags' branches away. On the H200 that took
    // decode from 1,173 to 1,315 tok/s on Llama-3.2-1B and from 902 to 981 on Qwen3-0.6B
    // (PERFORMANCE.md, 2026-11-30), against one kernel reading them from params.
    kQ4GemvFixed.constants(constants, fixed);
    name += std::string(f.q8_in ? "q8" : f.f16 ? "f16" : "f32") + "." + reduce + ".r" + std::to_string(rows);
    if (f.q8_out) constants.emplace_back("YQ", static_cast<double>(kWorkgroup));
    if (stage != Stage::None) {
      name += stage == Stage::Norm ? ".norm" : stage == Stage::Comb ? ".comb" : ".xs";
      if (x8(ctx, f)) {
        name += ".i8";
        constants.emplace_back("XQ", static_cast<double>(f.k / 16));
        constants.emplace_back("XD", static_cast<double>(f.k / 32));
      } else {
        name += ".f32";
        constants.emplace_back("XS", static_cast<double>(f.k / 4));
      }
      if (touch) constants.emplace_back("TOUCH", 1.0);
    }
    if (persist) {
      name += ".persist";
      for (const auto& [c, v] : std::initializer_list<std::pair<const char*, uint32_t>>{
               {"PERSIST", 1},
               {"D_N", persist->n},
               {"D_K", persist->k},
               {"D_TPC", persist->tpc},
               {"D_TILES", persist->tiles},
               {"D_GROUP_SHIFT", down->group_shift},
               {"D_GROUPS", down->groups},
               {"D_SCALE_BASE", down->scale_base},
               {"D_SCALE_F16", down->scale_f16 ? 1u : 0u},
               {"D_CLAIMS", kPersistClaims},
               {"D_ACT", kPersistAct}}) {
        constants.emplace_back(c, static_cast<double>(v));
      }
      if (persist->act_vec4s) constants.emplace_back("ACTS", static_cast<double>(persist->act_vec4s));
      if (persist->fault) constants.emplace_back("FAULT_NOW", 1.0);
      if (persist->help) constants.emplace_back("HELP_TEST", 1.0);
    }
    // Diagnostics: the kernel ends after one of its phases (q4_gemv.wgsl's STOP, stop_code); the
    // product's output is not written.
    if (const uint32_t stop = stop_code(ctx); stop != 0) constants.emplace_back("STOP", static_cast<double>(stop));
  }
  std::vector<gpu::Binding> b{gpu::Binding::Uniform};
  for (uint32_t i = 0; i < info(k).buffers; ++i) {
    b.push_back(i + 3 < info(k).buffers ? gpu::Binding::ReadOnlyStorage : gpu::Binding::Storage);
  }
  if (stage == Stage::Norm || stage == Stage::Comb) {
    b.insert(b.end(), {gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  }
  if (k != Kernel::Q4Gemv) return product_kernel(ctx, name, b, "params.n", std::move(constants));
  return product_kernel(ctx, name, b, "p_n()", std::move(constants), &kQ4GemvFixed, persist != nullptr);
}

}  // namespace

// `rows`: rows of x per workgroup (q4_gemv: 1 or 4; dense_gemv: 4; tiled: 64); `comb`: the
// partial results Stage::Comb merges; `persist`: the down product the kernel makes after its own
// (`down`: that product's weight), over persist->workgroups workgroups.
std::unique_ptr<DispatchExec> product(const NodeContext& ctx, Kernel k, const Facts& f,
                                      const std::vector<gpu::BufferBinding>& buffers, uint64_t rows,
                                      Stage stage, const SplitPartials* comb, const Persist* persist,
                                      const Q4Params* down) {
  uint32_t tpc = lanes(f);
  // Workgroups per row of x: one per column tile, or at most stage_workgroups where x is staged
  // (each stages x once and takes every G-th tile).
  const uint64_t stage_wgs = stage == Stage::None ? 0 : persist ? persist->workgroups : stage_workgroups(ctx, f);
  // q4_gemv's column tiles per row of x at `lanes` lanes per column group (C columns a group).
  const auto q4_tiles = [&f](uint32_t lanes) { return ceil_div(f.n, kQ4GemvColumns * kWorkgroup / lanes); };
  // A staged q4_gemv with more column tiles than workgroups halves its lanes per column group
  // (each lane then takes more chunks of a row, a tile twice the columns) where that once makes
  // one tile per workgroup, so that it touches its first weights below: Llama-3.2-1B's gate/up
  // (2 tiles at 64 lanes) went from ~340 to ~306 us per decode token on the H200, -4% of the
  // step (PERFORMANCE.md, 2026-11-30). Narrower still, until one tile however few lanes that
  // takes (lm_head: 4), measured no better.
  if (k == Kernel::Q4Gemv && stage != Stage::None && tpc > 1 && q4_tiles(tpc) > stage_wgs &&
      q4_tiles(tpc / 2) <= stage_wgs) {
    tpc /= 2;
  }
  // Q8_OUT: a tile makes whole runs of 16 outputs (2 * 256 / lanes of them).
  if (f.q8_out) tpc = std::min(tpc, kQ8OutLanes);
  const bool direct = f.direct(k);
  uint32_t flags = (f.bias ? kBias : 0) | (f.q4p.scale_f16 ? kScaleF16 : 0) | (direct && f.pairs ? kOutF16 : 0) |
                   (f.f16 ? kXF16 : 0) | (f.q4 ? kWQ4 : f.f16 ? kWF16 : 0) | (direct && f.swiglu ? kSwiglu : 0) |
                   (f.q8_out ? kQ8Out : 0);
  // The scratch holds all of the product's columns: one output as far as the product is concerned.
  const uint64_t split0 = direct ? f.widths[0] : f.n;
  const uint64_t split1 = direct ? f.widths[0] + f.widths[1] : f.n;
  // A staged q4_gemv whose workgroups take one column tile each loads the first words of its
  // tile before staging x (touch_first in q4_gemv.wgsl, compiled in by the TOUCH constant): on
  // the H200 that took Qwen3-0.6B's decode step from ~1,400 to ~1,240 us and Llama-3.2-1B's
  // from ~990 to ~960; in workgroups of two or more tiles (Llama's gate/up, every lm_head) it
  // cost more than it saved (PERFORMANCE.md, 2026-11-30). Touching each next tile's first words
  // as a tile starts, in workgroups of several tiles, paid with generic kernels but not once each
  // was built for its product (Llama-3.2-1B 1,140 -> 1,158 tok/s at 3,900 rows without it,
  // the same at 128: PERFORMANCE.md, 2026-11-30 (late)), and is gone.
  const bool touch = k == Kernel::Q4Gemv && stage != Stage::None && q4_tiles(tpc) <= stage_wgs;
  // sgwg where a column group is whole subgroups (subgroupAdd, then one barrier where it is
  // several), else wg.
  const uint32_t sg_size = ctx.gpu().adapter().subgroup_min_size;
  const bool sgwg = k == Kernel::Q4Gemv && subgroups_fixed(ctx) && sg_size > 0 && tpc >= sg_size &&
                    tpc % sg_size == 0 && (!persist || persist->sgwg);
  const std::string reduce = sgwg ? "sgwg" : "wg";
  const uint32_t eps = stage == Stage::Norm ? std::bit_cast<uint32_t>(static_cast<float>(ctx.attr("eps").as_float())) : 0;
  std::shared_ptr<const uint32_t> chunks = comb ? comb->chunks : nullptr;
  const uint32_t slots = comb ? comb->slots : 0, head_dim = comb ? comb->head_dim : 0;
  const uint64_t cols = k == Kernel::Q4Gemv    ? kQ4GemvColumns * kWorkgroup / tpc
                        : k == Kernel::DenseGemv ? 2 * kWorkgroup / tpc
                                                 : kTile;
  const uint64_t tiles_n = ceil_div(f.n, cols);
  // The persist variant launches all its workgroups: the down product's tiles may outnumber the
  // gate/up product's.
  const uint64_t per_row = persist ? persist->workgroups : stage_wgs ? std::min(tiles_n, stage_wgs) : tiles_n;
  const std::vector<uint32_t> fixed{static_cast<uint32_t>(f.n), static_cast<uint32_t>(f.k), flags, tpc,
                                    static_cast<uint32_t>(tiles_n), f.q4p.group_shift, f.q4p.groups,
                                    static_cast<uint32_t>(per_row), head_dim, slots};
  auto update = [k, f, tpc, flags, split0, split1, rows, eps, tiles_n, per_row, chunks, slots,
                 head_dim](const NodeContext& c) {
    const uint64_t m = rows_now(c);
    auto u32 = [](uint64_t v) { return static_cast<uint32_t>(v); };
    DispatchExec::Launch l;
    l.params = {u32(m),       u32(f.n),          u32(f.k),       flags,  u32(split0), u32(split1),
                u32(tiles_n), tpc,               f.q4p.scale_base, f.q4p.group_shift, f.q4p.groups, eps};
    if (k == Kernel::Q4Gemv) {
      l.params.insert(l.params.end(), {u32(per_row), 0, 0, 0, chunks ? *chunks : 0, slots, head_dim, 0});
    }
    l.workgroups = ceil_div(m, rows) * per_row;
    return l;
  };
  return std::make_unique<DispatchExec>(ctx, kernel_of(ctx, k, f, rows, stage, reduce, touch, fixed, persist, down),
                                        buffers, k == Kernel::Q4Gemv ? kQ4GemvParamWords : kParamWords, update);
}

}  // namespace wgx::ops::quant::products
