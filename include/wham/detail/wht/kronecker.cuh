/// \file wham/detail/wht/kronecker.cuh
/// \brief The Kronecker-split schedule for rows too long for one block:
/// H_n = H_{bits of stage k} (x) ... (x) H_lo, one pass over memory per factor.
///
/// Stage 0 is the fused kernel (fused.cuh; streamed.cuh where it serves) over
/// contiguous segments of 2^lo, with the caller's input policy addressed by the flat
/// index sample * 2^n + x, written through the caller's output policy with scale 1.
/// Every later stage is a strided pass over the output buffer in place (strided.cuh;
/// strided_cluster.cuh for a stage wider than one block's tile, strided_streamed.cuh for
/// a 10-bit stage of float rows): the buffer is the workspace, nothing is allocated.
/// Loaded rows may take the middle plan instead (kronecker_plan.cuh). The plans are in
/// kronecker_plan.cuh; the resident schedule (both stages in one kernel) in
/// kronecker_resident.cuh.
///
/// The output policy must expose the buffer as `out` (stored_output<Out, V>).
#pragma once

#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/fused.cuh>
#include <wham/detail/wht/kronecker_index.hpp>
#include <wham/detail/wht/kronecker_plan.cuh>
#include <wham/detail/wht/policies.cuh>
#include <wham/detail/wht/streamed.cuh>
#include <wham/detail/wht/strided.cuh>
#include <wham/detail/wht/strided_cluster.cuh>
#include <wham/detail/wht/strided_streamed.cuh>
#include <wham/detail/wht/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace wham::detail::wht {

/// Stage 0: the fused kernel over segments of 2^lo, 10 <= lo <= the compiled
/// maximum (the only segment lengths the split uses, so only these are instantiated).
template <class V, class Input, class Output>
inline void launch_kronecker_stage0(int lo, std::int64_t segments, Input input, Output output,
                                    cudaStream_t stream) {
  // Loaded rows of V (the FWHT's stage 0; a chunk's offset on both sides): the
  // streamed schedule where it serves.
  if constexpr (std::is_same_v<Input, offset_input<loaded_input<V, V>>> &&
                std::is_same_v<Output, offset_output<stored_output<V, V>>>) {
    const V* in = input.inner.in + input.offset;
    if (input.offset == output.offset && streamed_serves<V>(lo, in)) {
      return launch_streamed<V>(lo, in, output.inner.out + output.offset, segments, real_t<V>(1),
                                stream);
    }
  }
  const bool built =
      arch::dispatch_int<10, kronecker_stage0_compiled_max<V> + 1>(lo, [&](auto bits) {
        launch_fused_n<V, decltype(bits)::value>(input, output, segments, real_t<V>(1), stream);
      });
  if (!built) {
    throw_invalid_argument("kronecker path", "stage-one bits", lo,
                           "10.." + std::to_string(kronecker_stage0_compiled_max<V>));
  }
}

/// One strided stage over row bits [bit, bit + bits) of `total` elements at `data`, in
/// place, scaled: as clusters where the limits say so, streamed where that serves
/// (float, 10 bits), else one block a tile.
template <class T>
inline void launch_strided_stage(int bits, T* data, std::int64_t total, int bit, scale_t<T> scale,
                                 const strided_limits& lim, cudaStream_t stream) {
  // The clustered stage moves elements of their compute type only (loaded_rows_config
  // turns it off for the 16-bit floats).
  if constexpr (std::is_same_v<T, compute_t<T>>) {
    if (strided_stage_clustered(bits, lim)) {
      return launch_strided_cluster<T, strided_cluster_part_bits>(bits, data, total, bit, scale,
                                                                  stream);
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    if (strided_streamed_serves<T>(bits, data)) {
      return launch_strided_streamed(data, total, bit, scale, stream);
    }
  }
  launch_strided<T>(bits, data, total, bit, scale, stream);
}

/// Transforms `batch` rows of 2^log_n elements (kronecker_min_log_n <= log_n <= 30):
/// input from the policy (loaded or generated; policies.cuh), result times `scale`
/// written through `output`, whose buffer
/// (`output.out`) is also the workspace (no allocation).
template <class V, class Input, class Output>
inline void launch_kronecker_config(int log_n, std::int64_t batch, Input input, Output output,
                                    real_t<V> scale, cudaStream_t stream,
                                    const kronecker_config& cfg) {
  using Out = std::remove_cv_t<std::remove_pointer_t<decltype(output.out)>>;
  if (!kronecker_serves<V>(log_n)) {
    throw_invalid_argument(
        "kronecker path", "log_n", log_n,
        std::to_string(kronecker_min_log_n) + ".." + std::to_string(fwht_max_log_n));
  }
  check_range("kronecker path", "batch", batch, 1, INT64_MAX >> log_n);
  const strided_limits lim = strided_stage_limits<V>(cfg);
  const kron::plan plan = kronecker_plan<V>(log_n, cfg, lim);

  const std::int64_t row = std::int64_t(1) << log_n;
  const std::int64_t row_bytes = row * std::int64_t(sizeof(Out));
  const std::int64_t budget = cfg.chunk_bytes;
  std::int64_t rows_per_chunk = batch;
  if (budget > 0 && row_bytes <= budget)
    rows_per_chunk = std::max<std::int64_t>(1, budget / row_bytes);

  // The middle plan: loaded rows of an element type with a streamed schedule.
  constexpr bool middle_built = streamed_log_n_max < V >> 0 &&
                                std::is_same_v<Input, loaded_input<V, V>> &&
                                std::is_same_v<Output, stored_output<V, V>>;
  bool middle = false;
  if constexpr (middle_built) {
    middle = cfg.middle && kronecker_middle_serves<V>(log_n, input.in, output.out, cfg);
  }

  using RO = scale_t<Out>;
  const RO out_scale = static_cast<RO>(scale);
  for (std::int64_t r0 = 0; r0 < batch; r0 += rows_per_chunk) {
    const std::int64_t rows = std::min(rows_per_chunk, batch - r0);
    const std::int64_t offset = r0 * row;
    const std::int64_t total = rows * row;
    if constexpr (middle_built) {
      if (middle) {
        constexpr int lo_run = 10;  // streamed_gathered_rows::log_run
        V* const data = output.out + offset;
        launch_streamed_gathered<V>(log_n, input.in + offset, data, rows, real_t<V>(1), stream);
        launch_strided_stage<V>(log_n - streamed_log_n_max<V>, data, total, lo_run, out_scale, lim,
                                stream);
        continue;
      }
    }
    launch_kronecker_stage0<V>(plan.stages[0].bits, total >> plan.stages[0].bits,
                               offset_input<Input>{input, offset},
                               offset_output<Output>{output, offset}, stream);
    for (int k = 1; k < plan.num_stages; ++k) {
      const RO s = k + 1 == plan.num_stages ? out_scale : RO(1);
      launch_strided_stage<Out>(plan.stages[k].bits, output.out + offset, total, plan.stages[k].bit,
                                s, lim, stream);
    }
  }
}

}  // namespace wham::detail::wht
