// The cost of the buffer helpers a callback uses: for_each_element and for_each_contiguous_slice
// against a plain hand-written loop nest over the same buffers (out = a + b on floats; ranks 1 to 4,
// inner extents 1 to 4096, dense, and with padded rows and a broadcast operand), the same over many
// small rank-1 buffers (the cost per call), and the descriptor helpers (slice, crop, can_fuse,
// fuse, fuse_contiguous_dims, optimize_dims) on rank-4 buffers. Target: helper / hand <= 1.10 for
// inner extents >= 16. Usage: for_each_benchmark [--quick] [--reps N] [--csv FILE]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "benchmark_util.h"
#include "slinky/runtime/buffer.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

// The elements of each buffer of the loop table: 128 KiB of floats, so the three operands stay in
// a 512 KiB L2 cache.
constexpr index_t total_elements = index_t{1} << 15;
// Each timed sample runs a variant over about this many elements (or helper calls).
constexpr index_t elements_per_sample = index_t{1} << 20;
constexpr index_t helper_calls_per_sample = 2000;
constexpr double target_ratio = 1.10;
constexpr index_t target_min_inner_extent = 16;

// Makes the compiler assume p's memory is read and written here, so that work on it is neither
// hoisted out of a timing loop nor dropped.
template <typename T>
inline void escape(T* p) {
  asm volatile("" : : "g"(p) : "memory");
}

bool has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return true;
  }
  return false;
}

// A buffer of floats with the given dims over its own memory.
struct owned_buffer {
  std::vector<float> mem;
  buffer<float, 4> buf;

  // Strides are in elements here; extra_stride is added at every level above dim 0 (row padding).
  owned_buffer(const std::vector<index_t>& extents, index_t extra_stride) : buf(extents.size()) {
    index_t stride = 1, size = 1;
    for (std::size_t d = 0; d < extents.size(); ++d) {
      buf.mutable_dim(d) = dim(0, extents[d] - 1, stride * static_cast<index_t>(sizeof(float)));
      size = stride * extents[d];
      stride = size + extra_stride;
    }
    mem.resize(size);
    buf.raw_buffer::base = mem.data();
  }
  owned_buffer(const owned_buffer&) = delete;
  owned_buffer& operator=(const owned_buffer&) = delete;
};

// out = a + b: out dense; a dense or with padded rows; b dense or one row broadcast over the outer
// dims.
struct operands {
  owned_buffer out, a_mem, b_mem;
  buffer<const float, 4> a, b;

  operands(const std::vector<index_t>& extents, bool strided)
      : out(extents, 0), a_mem(extents, strided ? 4 : 0),
        b_mem(strided ? std::vector<index_t>{extents[0]} : extents, 0), a(a_mem.buf), b(b_mem.buf) {
    for (std::size_t i = 0; i < a_mem.mem.size(); ++i) a_mem.mem[i] = static_cast<float>(i % 1000) * 0.5f;
    for (std::size_t i = 0; i < b_mem.mem.size(); ++i) b_mem.mem[i] = static_cast<float>(i % 7);
  }

  void clear() { std::fill(out.mem.begin(), out.mem.end(), -1.0f); }

  // Checks out == a + b at every coordinate, addressed through the descriptors.
  void check(const std::string& what) const {
    const raw_buffer& o = out.buf;
    std::vector<index_t> c(o.rank, 0);
    for (index_t i = 0; i < total_elements; ++i) {
      const span<const index_t> at(c.data(), c.size());
      const float expected =
          *static_cast<const float*>(a.address_at(at)) + *static_cast<const float*>(b.address_at(at));
      if (*static_cast<const float*>(o.address_at(at)) != expected) {
        wrong_result(what + ": element " + std::to_string(i));
      }
      for (std::size_t d = 0; d < c.size() && ++c[d] == o.dim(d).extent(); ++d) c[d] = 0;
    }
  }
};

// out = a + b as a client writes it: the dims read once, nested loops over the outer dims with row
// pointers stepped by the byte strides, an inner loop over a dense row (dim 0 is dense in every
// operand of this benchmark).
template <int Rank>
void hand_add(const raw_buffer& out, const raw_buffer& a, const raw_buffer& b) {
  index_t n[4], so[4], sa[4], sb[4];
  for (int d = 0; d < Rank; ++d) {
    n[d] = out.dim(d).extent();
    so[d] = out.dim(d).stride();
    sa[d] = a.dim(d).stride();
    sb[d] = b.dim(d).stride();
  }
  char* const po = static_cast<char*>(out.base);
  const char* const pa = static_cast<const char*>(a.base);
  const char* const pb = static_cast<const char*>(b.base);
  const index_t n0 = n[0];
  auto row = [n0](char* o, const char* x, const char* y) {
    float* ro = reinterpret_cast<float*>(o);
    const float* rx = reinterpret_cast<const float*>(x);
    const float* ry = reinterpret_cast<const float*>(y);
    for (index_t i = 0; i < n0; ++i) ro[i] = rx[i] + ry[i];
  };
  if constexpr (Rank == 1) {
    row(po, pa, pb);
  } else if constexpr (Rank == 2) {
    for (index_t i1 = 0; i1 < n[1]; ++i1) row(po + i1 * so[1], pa + i1 * sa[1], pb + i1 * sb[1]);
  } else if constexpr (Rank == 3) {
    for (index_t i2 = 0; i2 < n[2]; ++i2) {
      for (index_t i1 = 0; i1 < n[1]; ++i1) {
        row(po + i1 * so[1] + i2 * so[2], pa + i1 * sa[1] + i2 * sa[2], pb + i1 * sb[1] + i2 * sb[2]);
      }
    }
  } else {
    static_assert(Rank == 4, "ranks 1 to 4");
    for (index_t i3 = 0; i3 < n[3]; ++i3) {
      for (index_t i2 = 0; i2 < n[2]; ++i2) {
        for (index_t i1 = 0; i1 < n[1]; ++i1) {
          row(po + i1 * so[1] + i2 * so[2] + i3 * so[3], pa + i1 * sa[1] + i2 * sa[2] + i3 * sa[3],
              pb + i1 * sb[1] + i2 * sb[2] + i3 * sb[3]);
        }
      }
    }
  }
}

void hand(const raw_buffer& out, const raw_buffer& a, const raw_buffer& b) {
  switch (out.rank) {
  case 1: hand_add<1>(out, a, b); return;
  case 2: hand_add<2>(out, a, b); return;
  case 3: hand_add<3>(out, a, b); return;
  case 4: hand_add<4>(out, a, b); return;
  default: wrong_result("hand loop: rank " + std::to_string(out.rank));
  }
}

void by_element(const buffer<float, 4>& out, const buffer<const float, 4>& a, const buffer<const float, 4>& b) {
  for_each_element([](float* o, const float* x, const float* y) { *o = *x + *y; }, out, a, b);
}

void by_slice(const buffer<float, 4>& out, const buffer<const float, 4>& a, const buffer<const float, 4>& b) {
  for_each_contiguous_slice(
      out,
      [](index_t n, float* o, const float* x, const float* y) {
        for (index_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
      },
      a, b);
}

// The extents of a rank-`rank` buffer of total_elements with dim 0 of `inner` elements: the outer
// elements spread as evenly as powers of two allow over the outer dims.
std::vector<index_t> shape_of(int rank, index_t inner) {
  if (rank == 1) return {total_elements};
  std::vector<index_t> extents = {inner};
  int bits = 0;
  while ((index_t{1} << bits) * inner < total_elements) ++bits;
  for (int d = 1; d < rank; ++d) {
    const int b = bits / (rank - 1) + (d - 1 < bits % (rank - 1) ? 1 : 0);
    extents.push_back(index_t{1} << b);
  }
  return extents;
}

std::string shape_name(const std::vector<index_t>& extents) {
  std::string s;
  for (index_t e : extents) {
    if (!s.empty()) s += 'x';
    s += std::to_string(e);
  }
  return s;
}

struct loop_result {
  std::string table, layout;
  int rank;
  index_t inner, elements_per_call, calls;
  double hand_ns, element_ns, slice_ns;  // per element

  double element_ratio() const { return element_ns / hand_ns; }
  double slice_ratio() const { return slice_ns / hand_ns; }
  bool targeted() const { return table == "loops" && inner >= target_min_inner_extent; }
};

// Times the three variants over the same operands, interleaved; each is checked before and after.
loop_result time_loops(operands& ops, const std::string& layout, int rank, index_t inner, int reps) {
  const index_t iters = std::max<index_t>(1, elements_per_sample / total_elements);
  const std::function<void()> variants[] = {
      [&] { hand(ops.out.buf, ops.a, ops.b); },
      [&] { by_element(ops.out.buf, ops.a, ops.b); },
      [&] { by_slice(ops.out.buf, ops.a, ops.b); },
  };
  const char* names[] = {"hand loop", "for_each_element", "for_each_contiguous_slice"};
  std::vector<std::function<void()>> timed;
  for (int v = 0; v < 3; ++v) {
    ops.clear();
    variants[v]();
    ops.check(std::string(names[v]) + ", " + layout + " " + shape_name(shape_of(rank, inner)));
    timed.push_back([&, v, iters] {
      for (index_t i = 0; i < iters; ++i) variants[v]();
    });
  }
  const std::vector<double> s = interleaved_median_seconds(timed, reps);
  ops.check("after timing, " + layout + " " + shape_name(shape_of(rank, inner)));
  const double per = 1e9 / static_cast<double>(iters * total_elements);
  return {"loops", layout, rank, inner, total_elements, 1, s[0] * per, s[1] * per, s[2] * per};
}

// The same over many small rank-1 buffers, one call per buffer: the per-call cost of the helpers.
loop_result time_calls(index_t extent, int reps) {
  const index_t rows = total_elements / extent;
  operands ops({extent, rows}, false);
  std::vector<buffer<float, 1>> outs;
  std::vector<buffer<const float, 1>> as, bs;
  for (index_t y = 0; y < rows; ++y) {
    buffer<float, 1> o(&ops.out.buf(0, y), extent);
    outs.push_back(o);
    as.push_back(buffer<const float, 1>(&ops.a(0, y), extent));
    bs.push_back(buffer<const float, 1>(&ops.b(0, y), extent));
  }
  const std::function<void()> variants[] = {
      [&] {
        for (index_t y = 0; y < rows; ++y) hand_add<1>(outs[y], as[y], bs[y]);
      },
      [&] {
        for (index_t y = 0; y < rows; ++y) {
          for_each_element([](float* o, const float* x, const float* z) { *o = *x + *z; }, outs[y], as[y], bs[y]);
        }
      },
      [&] {
        for (index_t y = 0; y < rows; ++y) {
          for_each_contiguous_slice(
              outs[y],
              [](index_t n, float* o, const float* x, const float* z) {
                for (index_t i = 0; i < n; ++i) o[i] = x[i] + z[i];
              },
              as[y], bs[y]);
        }
      },
  };
  const index_t iters = std::max<index_t>(1, elements_per_sample / total_elements);
  std::vector<std::function<void()>> timed;
  for (int v = 0; v < 3; ++v) {
    ops.clear();
    variants[v]();
    ops.check("calls on rank-1 buffers of " + std::to_string(extent));
    timed.push_back([&, v, iters] {
      for (index_t i = 0; i < iters; ++i) variants[v]();
    });
  }
  const std::vector<double> s = interleaved_median_seconds(timed, reps);
  ops.check("after timing, calls on rank-1 buffers of " + std::to_string(extent));
  const double per = 1e9 / static_cast<double>(iters * total_elements);
  return {"calls", "dense", 1, extent, extent, rows, s[0] * per, s[1] * per, s[2] * per};
}

// Two rank-4 descriptors (out and in of a callback) over dense 64x16x8x4 floats, restored from a
// template before every helper call.
struct helper_case {
  dim out_template[4], in_template[4];
  dim out_dims[4], in_dims[4];
  raw_buffer out, in;
  std::vector<float> mem;

  helper_case() : mem(64 * 16 * 8 * 4) {
    const index_t extents[] = {64, 16, 8, 4};
    index_t stride = sizeof(float);
    for (int d = 0; d < 4; ++d) {
      out_template[d] = dim(0, extents[d] - 1, stride);
      in_template[d] = out_template[d];
      stride *= extents[d];
    }
    reset();
  }
  SLINKY_INLINE void reset() {
    std::memcpy(static_cast<void*>(out_dims), out_template, sizeof(out_dims));
    std::memcpy(static_cast<void*>(in_dims), in_template, sizeof(in_dims));
    out = raw_buffer{mem.data(), sizeof(float), 4, out_dims};
    in = raw_buffer{mem.data(), sizeof(float), 4, in_dims};
  }
};

struct helper_result {
  std::string name;
  double ns;             // per call, including the reset
  double ns_over_reset;  // ns minus the reset's
};

// What a callback does to its buffers on each call: crop the outer dims to its part of the loop,
// fuse the inner dims if it can, optimize the rest and slice the innermost dim away for a kernel
// that walks rows.
SLINKY_INLINE void callback_sequence(raw_buffer& out, raw_buffer& in, index_t y) {
  out.crop(3, y, y);
  in.crop(3, y, y);
  out.crop(2, 2, 5);
  in.crop(2, 2, 5);
  if (can_fuse(out.dim(0), out.dim(1)) && can_fuse(in.dim(0), in.dim(1))) {
    fuse<fuse_type::remove>(0, 1, out);
    fuse<fuse_type::remove>(0, 1, in);
  }
  optimize_dims(out, in);
  out.slice(0);
  in.slice(0);
}

std::vector<helper_result> time_helpers(int reps, index_t& sink) {
  helper_case h;
  struct op {
    const char* name;
    std::function<void()> fn;
  };
  // Each op runs helper_calls_per_sample times: reset, escape, the helper, escape.
  auto loop = [&h](auto body) {
    return [&h, body] {
      for (index_t i = 0; i < helper_calls_per_sample; ++i) {
        h.reset();
        escape(&h);
        body(i);
        escape(&h);
      }
    };
  };
  std::vector<op> ops = {
      {"reset only (baseline)", loop([](index_t) {})},
      {"slice(0)", loop([&h](index_t) { h.out.slice(0); })},
      {"slice(2)", loop([&h](index_t) { h.out.slice(2); })},
      {"slice(1, at)", loop([&h](index_t i) { h.out.slice(1, i & 15); })},
      {"crop x4", loop([&h](index_t i) {
         h.out.crop(0, 1, 62);
         h.out.crop(1, i & 7, 15);
         h.out.crop(2, 0, 3);
         h.out.crop(3, 1, 1);
       })},
      {"can_fuse + fuse (dims)", loop([&h, &sink](index_t) {
         if (can_fuse(h.out.dim(0), h.out.dim(1))) h.out.dims[0] = fuse(h.out.dim(0), h.out.dim(1));
         sink += h.out.dims[0].max();
       })},
      {"fuse<remove>(0, 1)", loop([&h](index_t) { fuse<fuse_type::remove>(0, 1, h.out); })},
      {"fuse_contiguous_dims(out, in)", loop([&h, &sink](index_t) { sink += fuse_contiguous_dims(h.out, h.in); })},
      {"optimize_dims(out, in)", loop([&h, &sink](index_t) { sink += optimize_dims(h.out, h.in); })},
      {"callback sequence", loop([&h](index_t i) { callback_sequence(h.out, h.in, i & 3); })},
  };
  // Check what the sequence does: rows of 64 * 16 elements, 4 of them (dim 2 cropped to [2, 5]).
  h.reset();
  callback_sequence(h.out, h.in, 1);
  if (h.out.rank != 0 || h.in.rank != 0 || h.out.base != h.mem.data() + 64 * 16 * (2 + 8)) {
    wrong_result("callback sequence: rank " + std::to_string(h.out.rank));
  }
  h.reset();
  if (optimize_dims(h.out, h.in) != 3 || h.out.rank != 1 || h.out.dim(0).extent() != 64 * 16 * 8 * 4) {
    wrong_result("optimize_dims of dense buffers");
  }
  std::vector<std::function<void()>> fns;
  for (const op& o : ops) fns.push_back(o.fn);
  const std::vector<double> s = interleaved_median_seconds(fns, reps);
  std::vector<helper_result> results;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const double ns = s[i] * 1e9 / helper_calls_per_sample;
    const double base = s[0] * 1e9 / helper_calls_per_sample;
    results.push_back({ops[i].name, ns, ns - base});
  }
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = has_flag(argc, argv, "--quick");
  const int reps = std::stoi(arg(argc, argv, "--reps", quick ? "5" : "21"));
  print_machine("for_each_element, for_each_contiguous_slice and the buffer helpers against hand-written code");
#ifdef SLINKY_BENCHMARK_ALIGNED_LOOPS
  std::printf("- loops aligned to 32 bytes (-falign-loops=32; see apps/CMakeLists.txt)\n\n");
#else
  std::printf("- loops not aligned: where the compiler puts a loop can change its time by 1.5x to 2x\n\n");
#endif
  csv_writer csv(argc, argv,
                 {"table", "layout", "rank", "inner_extent", "elements_per_call", "variant", "time_ns_per_element",
                  "time_ns_per_call", "ratio_to_hand"});
  std::printf("out = a + b on floats, %lld elements per buffer (%lld KiB). Each cell: the median of %d samples of\n"
              "the three variants interleaved in a shuffled order; a sample runs a variant over about %lld elements.\n"
              "'dense': the three buffers dense; 'strided': a's rows padded (no dims fuse) and b one row broadcast\n"
              "over the outer dims. The hand loop reads the dims once and runs nested loops over dense rows.\n\n",
              static_cast<long long>(total_elements), static_cast<long long>(total_elements * 4 / 1024), reps,
              static_cast<long long>(elements_per_sample));

  std::vector<loop_result> results;
  const index_t inners[] = {1, 4, 16, 256, 4096};
  for (const char* layout : {"dense", "strided"}) {
    const bool strided = std::strcmp(layout, "strided") == 0;
    for (int rank = 1; rank <= 4; ++rank) {
      for (index_t inner : inners) {
        // A rank-1 buffer has one shape; with rows of a single element there is nothing to pad.
        if (rank == 1 && inner != inners[0]) continue;
        if (rank == 1 && strided) continue;
        operands ops(shape_of(rank, inner), strided);
        results.push_back(time_loops(ops, layout, rank, rank == 1 ? total_elements : inner, reps));
      }
    }
  }
  for (index_t extent : {16, 64, 256, 4096}) results.push_back(time_calls(extent, reps));

  table t({"layout", "rank", "shape", "hand (ns/elem)", "for_each_element (ns/elem)", "element / hand",
           "for_each_contiguous_slice (ns/elem)", "slice / hand", "target"});
  table c({"buffer (elements)", "calls", "hand (ns/call)", "for_each_element (ns/call)", "element / hand",
           "for_each_contiguous_slice (ns/call)", "slice / hand"});
  double worst_element = 0, worst_slice = 0;
  for (const loop_result& r : results) {
    if (r.table == "loops") {
      std::string target = "-";
      if (r.targeted()) {
        worst_element = std::max(worst_element, r.element_ratio());
        worst_slice = std::max(worst_slice, r.slice_ratio());
        target = pass_or_miss(r.element_ratio() <= target_ratio && r.slice_ratio() <= target_ratio);
      }
      t.add({r.layout, std::to_string(r.rank), shape_name(shape_of(r.rank, r.inner)), fmt(r.hand_ns, 3),
             fmt(r.element_ns, 3), fmt(r.element_ratio(), 2), fmt(r.slice_ns, 3), fmt(r.slice_ratio(), 2), target});
    } else {
      const double e = static_cast<double>(r.elements_per_call);
      c.add({std::to_string(r.inner), std::to_string(r.calls), fmt(r.hand_ns * e, 1), fmt(r.element_ns * e, 1),
             fmt(r.element_ratio(), 2), fmt(r.slice_ns * e, 1), fmt(r.slice_ratio(), 2)});
    }
    const double e = static_cast<double>(r.elements_per_call);
    const double ns[] = {r.hand_ns, r.element_ns, r.slice_ns};
    const char* variants[] = {"hand", "for_each_element", "for_each_contiguous_slice"};
    for (int v = 0; v < 3; ++v) {
      csv.add(
          {r.table, r.layout, r.rank, r.inner, r.elements_per_call, variants[v], ns[v], ns[v] * e, ns[v] / r.hand_ns});
    }
  }
  std::printf("## Loops over one buffer of %lld elements\n\n", static_cast<long long>(total_elements));
  t.print();
  std::printf("## One call per rank-1 buffer (many small buffers, %lld elements in all)\n\n",
              static_cast<long long>(total_elements));
  c.print();

  index_t sink = 0;
  const std::vector<helper_result> helpers = time_helpers(reps, sink);
  std::printf("## Buffer helpers on rank-4 descriptors (64x16x8x4 floats, dense; out and in)\n\n");
  std::printf("Each call first restores the descriptors (two rank-4 dims arrays); the last column subtracts that.\n\n");
  table h({"helper", "ns per call", "ns minus reset"});
  for (const helper_result& r : helpers) {
    h.add({r.name, fmt(r.ns, 2), fmt(r.ns_over_reset, 2)});
    csv.add({"helpers", "dense", 4, 64, 64 * 16 * 8 * 4, r.name, csv_writer::cell(), r.ns, csv_writer::cell()});
  }
  h.print();
  if (sink == 42) std::printf("\n");  // Uses sink.

  std::printf("for_each_element / hand loop, inner extents >= %lld: max %.2f (target <= %.2f): %s\n",
              static_cast<long long>(target_min_inner_extent), worst_element, target_ratio,
              pass_or_miss(worst_element <= target_ratio));
  std::printf("for_each_contiguous_slice / hand loop, inner extents >= %lld: max %.2f (target <= %.2f): %s\n",
              static_cast<long long>(target_min_inner_extent), worst_slice, target_ratio,
              pass_or_miss(worst_slice <= target_ratio));
  return 0;
}
