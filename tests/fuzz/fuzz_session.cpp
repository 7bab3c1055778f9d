// libFuzzer target for the session reader: parse; when it accepts, the session must validate,
// survive forward(), and read back equal (and write back byte for byte) after write_session.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/attention/forward.hpp"
#include "core/io/session_file.hpp"
#include "fuzz_check.hpp"

namespace core = attnviz::core;
using attnviz::fuzz::check;

namespace {

std::string problems_text(const core::Problems& problems) {
    std::string out;
    for (const core::Problem& p : problems) out += p.str() + "\n";
    return out;
}

// forward() on the largest configs takes seconds; the parser is what is fuzzed, so skip it there.
constexpr std::int64_t max_forward_numbers = 100000;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const core::Result<core::Session> parsed = core::parse_session(attnviz::fuzz::as_text(data, size));
    if (!parsed) {
        check(!parsed.problems.empty(), "parse_session failed without saying why");
        return 0;
    }
    const core::Session& session = *parsed.value;
    const core::Problems problems = core::validate(session);
    if (!problems.empty())
        attnviz::fuzz::fail("parse_session accepted a session that validate() rejects", problems_text(problems));

    const std::string written = core::write_session(session);
    const core::Result<core::Session> again = core::parse_session(written);
    if (!again)
        attnviz::fuzz::fail("parse_session rejects what write_session wrote",
                            written + "\n" + problems_text(again.problems));
    // The file carries W_O only while the projection is on.
    core::Session expected = session;
    if (!expected.config.output_projection) expected.params.W_O = core::Matrix();
    check(*again.value == expected, "parse_session(write_session(s)) != s", written);
    check(core::write_session(*again.value) == written, "writing the session again gave other bytes", written);

    if (core::total_numbers(session.config) <= max_forward_numbers) {
        const core::Trace trace = core::forward<double>(session.config, session.params);
        check(!core::write_trace(trace).empty(), "write_trace wrote nothing");
    }
    return 0;
}
