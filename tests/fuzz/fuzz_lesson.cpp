// libFuzzer target for the lesson reader: parse, then fill every step's text and formula as a template
// on the worked example (and with an exercise hiding a matrix).
#include <cstddef>
#include <cstdint>

#include "core/attention/config.hpp"
#include "core/attention/forward.hpp"
#include "core/attention/presets.hpp"
#include "core/teach/lesson.hpp"
#include "fuzz_check.hpp"

namespace core = attnviz::core;
using attnviz::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const core::Result<core::Lesson> parsed = core::parse_lesson(attnviz::fuzz::as_text(data, size));
    if (!parsed) {
        check(!parsed.problems.empty(), "parse_lesson failed without saying why");
        return 0;
    }
    static const core::Session session = core::worked_example();
    static const core::Trace trace = core::forward<double>(session.config, session.params);
    for (const core::LessonStep& step : parsed.value->steps)
        for (const bool exercise : {false, true}) {
            core::LessonContext context{&session, &trace, true, std::nullopt};
            if (exercise && step.has_result) context.hidden = step.result;
            (void)core::fill_template(step.text, context);
            (void)core::fill_template(step.formula, context);
        }
    return 0;
}
