// attnviz flash SESSION --block-rows R --block-cols C [--head H] [-o OUT.json]: FlashAttention's
// online softmax step by step on a head of the session (core/attention/online_softmax.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace attnviz::app {

struct FlashOptions {
    std::string session;
    int block_rows = 0, block_cols = 0;  // B_r query rows and B_c keys a tile
    int head = 1;                        // from 1
    std::string out_path;                // "" or "-": stdout
    std::int64_t memory_budget = 0;
};

// Writes {"format": "attnviz-flash", "head", "block_rows", "block_cols", "steps": [{"rows": [a, b],
// "cols": [c, d], "m": [...], "l": [...]}, …] (m: null while a row has seen no unmasked key),
// "O": n × d_v, "max_difference_from_Z", "accesses": {"standard_nn", "standard_kv", "tiled_kv"}}.
// Exit 2 with "error: …" for a bad session, head or tile size; 1 for I/O.
int flash_command(const FlashOptions& options);

}  // namespace attnviz::app
