// libFuzzer target for the CSV/TSV reader (the clipboard): parse; when it accepts, write_csv must
// read back to the same matrix.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/io/csv.hpp"
#include "fuzz_check.hpp"

namespace core = attnviz::core;
using attnviz::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const core::Result<core::Matrix> parsed = core::parse_matrix_text(attnviz::fuzz::as_text(data, size));
    if (!parsed) {
        check(!parsed.problems.empty(), "parse_matrix_text failed without saying why");
        return 0;
    }
    const std::string csv = core::write_csv(*parsed.value);
    const core::Result<core::Matrix> again = core::parse_matrix_text(csv);
    check(bool(again), "parse_matrix_text rejects what write_csv wrote", csv);
    check(core::same(*again.value, *parsed.value), "parse_matrix_text(write_csv(m)) != m", csv);
    return 0;
}
