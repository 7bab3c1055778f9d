#include "shell/teach_menu.hpp"

#include <imgui.h>

#include "widgets/fitted_text.hpp"

namespace attnviz::app {

void draw_teach_menu(TeachPanel& teach, bool teach_mode, UiContext& ui) {
    if (!ImGui::BeginMainMenuBar()) return;
    if (ImGui::BeginMenu("Teach")) {
        if (ImGui::IsWindowAppearing()) teach.library = core::list_lessons(lesson_folders());
        if (ImGui::MenuItem("Teach mode: the lesson step by step", "F2", teach_mode))
            ui.request(command::ToggleTeach{});
        ui.report_item(teach_mode ? "teach: teach mode (checked)" : "teach: teach mode");
        ImGui::Separator();
        ImGui::TextDisabled("Lessons (each opens with its own session; Edit > Undo brings yours back)");
        for (const core::LessonEntry& e : teach.library) {
            // The title is the lesson's text: cut to the menu's width, and never read as an ID
            // (a "##" in it is drawn apart).
            std::string title = fitted_text(e.title, ImGui::GetFontSize() * 24);
            for (size_t at = title.find("##"); at != std::string::npos; at = title.find("##", at + 2))
                title.insert(at + 1, " ");
            ImGui::PushID(e.path.c_str());
            const bool open = teach.lesson && e.path == teach.lesson_path;
            const std::string steps = std::to_string(e.steps) + " steps";
            if (ImGui::MenuItem((title + "##lesson").c_str(), e.problem.empty() ? steps.c_str() : "cannot be read",
                                open, e.problem.empty()))
                ui.request(command::OpenLesson{e.path});
            if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
                ImGui::BeginTooltip();
                ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
                text_bounded(e.problem.empty() ? e.summary : e.problem);
                ImGui::PopTextWrapPos();
                ImGui::EndTooltip();
            }
            ui.report_item("teach: lesson " + e.name + (open ? " (checked)" : ""));
            ImGui::PopID();
        }
        ImGui::EndMenu();
    }
    ImGui::EndMainMenuBar();
}

}  // namespace attnviz::app
