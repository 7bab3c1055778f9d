// Input that arrives faster than frames: the window's queue hands ImGui one change of each key and
// button a frame, so a press and its release in one batch are both seen; an undo while a value is
// being typed commits the value first and takes back that, not an older step.
#include <gtest/gtest.h>

#include <imgui.h>
#include <imgui_internal.h>

#include "core/attention/presets.hpp"
#include "state/input_queue.hpp"
#include "window_test.hpp"

using namespace attnviz;
using app::AppState;

namespace {

constexpr int key_enter = 257;  // GLFW_KEY_ENTER, which the GLFW backend maps ImGuiKey_Enter to
using Mods = app::ModifierKeys;

class InputQueueTest : public test::WindowTest {
protected:
    void SetUp() override {
        WindowTest::SetUp();
        ImGui::GetIO().KeyMap[ImGuiKey_Enter] = key_enter;
    }
    // Frames as the window draws them: the queue fed before each.
    void fed_frames(AppState& state, int count) {
        for (int k = 0; k < count; ++k) {
            report.clear();
            queue.feed(ImGui::GetIO());
            ImGui::NewFrame();
            app::draw_frame(state, imgui_.ui, panels, 16.0f);
            ImGui::Render();
        }
    }
    ImVec2 middle(const std::string& name) {
        const app::DrawReport::Item* at = item(name);
        EXPECT_NE(at, nullptr) << name;
        return at ? ImVec2{(at->min.x + at->max.x) / 2, (at->min.y + at->max.y) / 2} : ImVec2{};
    }
    app::InputQueue queue;
};

}  // namespace

// Ctrl+click on X[0][1], "5", Return: every event in one batch, as xdotool sends them between two
// frames. ImGui 1.86 alone saw Return's press and release in one frame as no key at all.
TEST_F(InputQueueTest, APressAndItsReleaseInOneBatchAreBothSeen) {
    AppState state(core::worked_example());
    fed_frames(state, 2);
    const ImVec2 cell = middle("X[0][1]");
    ImGui::GetIO().MousePos = cell;
    fed_frames(state, 1);
    queue.key(Mods::left_control, true);
    queue.button(0, true, cell);
    queue.button(0, false, cell);
    queue.key(Mods::left_control, false);
    queue.character('5');
    queue.key(key_enter, true);
    queue.key(key_enter, false);
    int drawn = 0;
    for (; drawn < 20 && !queue.empty(); ++drawn) fed_frames(state, 1);
    fed_frames(state, 2);
    // A frame for each change of a key or button, and one for the characters.
    EXPECT_EQ(drawn, 7);
    EXPECT_EQ(state.session().params.X(0, 1), 5.0);
    EXPECT_EQ(state.undo_label(), "edit of X[0][1]");
    EXPECT_EQ(ImGui::GetActiveID(), 0u) << "the field is no longer in edit";
}

TEST(InputQueue, OneKindAndOneChangeOfEachKeyAFrame) {
    test::HeadlessImGui imgui;
    ImGuiIO& io = ImGui::GetIO();
    app::InputQueue q;
    q.key('A', true);
    q.key('B', true);
    q.key('A', false);  // A's second change: the next frame
    q.character('a');
    q.key(Mods::left_shift, true);
    q.feed(io);
    EXPECT_TRUE(io.KeysDown['A'] && io.KeysDown['B']);
    EXPECT_EQ(io.InputQueueCharacters.Size, 0);
    q.feed(io);
    EXPECT_FALSE(io.KeysDown['A']);
    EXPECT_EQ(io.InputQueueCharacters.Size, 0) << "a character after a key waits for its own frame";
    q.feed(io);
    ASSERT_EQ(io.InputQueueCharacters.Size, 1);
    EXPECT_EQ(io.InputQueueCharacters[0], 'a');
    EXPECT_FALSE(io.KeyShift);
    q.feed(io);
    EXPECT_TRUE(io.KeyShift);
    EXPECT_TRUE(q.empty());
    // A click at one place then another: each button change where it happened, a frame each.
    q.button(0, true, {10, 20});
    q.button(0, false, {10, 20});
    q.button(1, true, {30, 40});
    q.feed(io);
    EXPECT_TRUE(io.MouseDown[0]);
    EXPECT_EQ(io.MousePos.x, 10);
    io.MouseDown[0] = false;  // the backend's reading of the window: the queue's state wins
    q.feed(io);
    EXPECT_FALSE(io.MouseDown[0]);
    EXPECT_FALSE(io.MouseDown[1]) << "another place: the next frame";
    q.feed(io);
    EXPECT_TRUE(io.MouseDown[1]);
    EXPECT_EQ(io.MousePos.x, 30);
    io.MouseDown[1] = false;
    q.feed(io);
    EXPECT_TRUE(io.MouseDown[1]) << "held until released";
}

// An undo while a value is being typed (Edit > Undo): the value is committed, then undone; the step
// before it stays.
TEST_F(InputQueueTest, UndoWhileTypingTakesBackTheTypedValueNotAnOlderStep) {
    AppState state(core::worked_example());
    ASSERT_TRUE(state.set_cell({{core::MatrixId::X, 0}, 1, 0}, 7.0));  // an older step
    fed_frames(state, 2);
    const ImVec2 cell = middle("X[0][1]");
    ImGui::GetIO().MousePos = cell;
    fed_frames(state, 1);
    queue.key(Mods::left_control, true);
    queue.button(0, true, cell);
    queue.button(0, false, cell);
    queue.key(Mods::left_control, false);
    queue.character('5');
    fed_frames(state, 8);
    ASSERT_NE(ImGui::GetActiveID(), 0u) << "the value is being typed";
    EXPECT_EQ(state.session().params.X(0, 1), 0.0);
    imgui_.ui.request(app::command::Undo{});
    fed_frames(state, 3);
    EXPECT_EQ(ImGui::GetActiveID(), 0u);
    EXPECT_EQ(state.session().params.X(0, 1), 0.0);
    EXPECT_EQ(state.session().params.X(1, 0), 7.0) << "the older step stays";
    EXPECT_EQ(state.redo_label(), "edit of X[0][1]");
    ASSERT_TRUE(state.redo());
    EXPECT_EQ(state.session().params.X(0, 1), 5.0);
}
