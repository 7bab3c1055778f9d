// libFuzzer target for the lesson reader: parse, then fill the placeholders of every step's text.
#include <cstddef>
#include <cstdint>

#include "core/config.hpp"
#include "core/lesson.hpp"
#include "fuzz_check.hpp"

namespace core = attnviz::core;
using attnviz::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const core::Result<core::Lesson> parsed = core::parse_lesson(attnviz::fuzz::as_text(data, size));
    if (!parsed) {
        check(!parsed.problems.empty(), "parse_lesson failed without saying why");
        return 0;
    }
    const core::Config config;
    for (const core::LessonStep& step : parsed.value->steps) {
        (void)core::fill_placeholders(step.text, config, 1.0);
        (void)core::fill_placeholders(step.formula, config, 1.0);
    }
    return 0;
}
