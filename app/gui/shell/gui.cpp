#include "shell/gui.hpp"

#include <glad/gl.h>
// glad must come before GLFW so GLFW does not include the system GL header.
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui_internal.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "core/base/file_io.hpp"
#include "core/base/format.hpp"
#include "shell/frame.hpp"
#include "shell/frame_driver.hpp"
#include "shell/frame_fingerprint.hpp"
#include "shell/gui_detail.hpp"
#include "shell/layout_file.hpp"
#include "state/autosave.hpp"
#include "state/input_queue.hpp"
#include "state/worker.hpp"
#include "ui/fonts.hpp"
#include "ui/theme.hpp"

namespace attnviz::app {

using namespace gui_detail;

namespace {

// Where the window layout is kept: $XDG_CONFIG_HOME/attnviz or ~/.config/attnviz.
std::string layout_file() {
    const std::string dir = config_dir();
    return dir.empty() ? "" : dir + "/layout.ini";
}

// How many times a texture was made, replaced or deleted: a frame that draws the same quads with
// a texture whose pixels changed is another frame (FrameSkipper).
std::uint64_t texture_changes = 0;

ImTextureID upload_texture(ImTextureID previous, int cols, int rows, const std::uint32_t* rgba) {
    ++texture_changes;
    GLuint tex = static_cast<GLuint>(reinterpret_cast<std::uintptr_t>(previous));
    if (!tex) {
        glGenTextures(1, &tex);
        glBindTexture(GL_TEXTURE_2D, tex);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    }
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, cols, rows, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    return reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(tex));
}

void delete_texture(ImTextureID texture) {
    ++texture_changes;
    const GLuint tex = static_cast<GLuint>(reinterpret_cast<std::uintptr_t>(texture));
    glDeleteTextures(1, &tex);
}

// The window's pixels as PNG bytes (empty when encoding fails).
std::string window_png(GLFWwindow* window) {
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    std::vector<unsigned char> pixels(static_cast<size_t>(w) * h * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    for (size_t k = 3; k < pixels.size(); k += 4) pixels[k] = 255;  // opaque
    stbi_flip_vertically_on_write(1);                               // GL's rows go bottom-up
    std::string bytes;
    const auto append = [](void* to, void* data, int size) {
        static_cast<std::string*>(to)->append(static_cast<const char*>(data), static_cast<size_t>(size));
    };
    const bool ok = stbi_write_png_to_func(append, &bytes, w, h, 4, pixels.data(), w * 4) != 0;
    stbi_flip_vertically_on_write(0);
    return ok ? bytes : std::string();
}

// Writes the window as a PNG (atomically); the problems, empty on success.
core::Problems write_window_png(GLFWwindow* window, const std::string& path) {
    const std::string png = window_png(window);
    if (png.empty()) return {{path, "cannot encode the PNG"}};
    return core::write_file_atomic(path, png);
}

// Reads the layout file into ImGui: only what attnviz writes (layout_file.hpp), and one message
// (on stderr and in the app) for whatever was dropped. A missing file is the default layout.
void load_layout(const std::string& path, AppState& state) {
    static_assert(layout_max_columns == IMGUI_TABLE_MAX_COLUMNS);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return;
    const core::Result<std::string> saved = core::read_file(path, layout_max_bytes, "a window layout");
    const FilteredLayout layout = saved ? filter_layout(*saved.value) : FilteredLayout{"", 1};
    if (!layout.text.empty()) ImGui::LoadIniSettingsFromMemory(layout.text.data(), layout.text.size());
    if (layout.dropped == 0) return;
    const std::string message =
        "The window layout in " + path + " " +
        (saved ? "had " + std::to_string(layout.dropped) + " section" + (layout.dropped == 1 ? "" : "s") + " or line" +
                     (layout.dropped == 1 ? "" : "s") + " attnviz does not write; they were left out"
               : "could not be used (" + saved.problems.front().message + "); the default layout is shown") +
        " (it is written anew on exit)";
    std::cerr << "warning: " << message << "\n";
    if (!state.message().error) state.set_message(message, true);  // a session that did not open says so first
}

void save_layout(const std::string& path) {
    size_t size = 0;
    const char* text = ImGui::SaveIniSettingsToMemory(&size);
    ImGui::GetIO().WantSaveIniSettings = false;
    const core::Problems problems = core::write_file_atomic(path, std::string(text, size));
    if (!problems.empty()) std::cerr << "warning: the layout was not saved: " << problems.front().str() << "\n";
}

// What the window's callbacks reach through its user pointer: the UI context (for dropped files,
// once it exists), the input waiting for ImGui, and how many more frames to draw before the loop
// may sleep again.
struct WindowLink {
    UiContext* ui = nullptr;
    InputQueue input;
    int wake_frames = 3;
    bool damaged = true;             // the window's pixels must be drawn anew (exposed, resized)
    int windowed[4] = {0, 0, 0, 0};  // x, y, width, height before full screen, to go back to
};

WindowLink* link_of(GLFWwindow* w) { return static_cast<WindowLink*>(glfwGetWindowUserPointer(w)); }

// Any input, resize or redraw request wakes the loop for a few frames (ImGui settles hover and
// layout over two or three).
void wake(GLFWwindow* w) {
    if (WindowLink* link = link_of(w)) link->wake_frames = 3;
}

// The window's pixels were lost or resized: the next frame is drawn whatever it holds.
void damage(GLFWwindow* w) {
    wake(w);
    if (WindowLink* link = link_of(w)) link->damaged = true;
}

// The window's callbacks: keys, typed characters and mouse buttons go to the input queue (ImGui
// takes them a frame at a time, none lost); the rest to ImGui's backend as it would install them.
void install_input_callbacks(GLFWwindow* window) {
    glfwSetKeyCallback(window, [](GLFWwindow* w, int key, int, int action, int) {
        wake(w);
        if (action == GLFW_REPEAT) return;  // ImGui repeats a held key itself
        if (WindowLink* link = link_of(w)) link->input.key(key, action == GLFW_PRESS);
    });
    glfwSetCharCallback(window, [](GLFWwindow* w, unsigned c) {
        wake(w);
        if (WindowLink* link = link_of(w)) link->input.character(c);
    });
    glfwSetMouseButtonCallback(window, [](GLFWwindow* w, int button, int action, int) {
        wake(w);
        double x = 0, y = 0;
        glfwGetCursorPos(w, &x, &y);
        if (WindowLink* link = link_of(w))
            link->input.button(button, action == GLFW_PRESS, {static_cast<float>(x), static_cast<float>(y)});
    });
    glfwSetScrollCallback(window, [](GLFWwindow* w, double x, double y) {
        wake(w);
        ImGui_ImplGlfw_ScrollCallback(w, x, y);
    });
    glfwSetWindowFocusCallback(window, [](GLFWwindow* w, int focused) {
        wake(w);
        ImGui_ImplGlfw_WindowFocusCallback(w, focused);
    });
    glfwSetCursorEnterCallback(window, [](GLFWwindow* w, int entered) {
        wake(w);
        ImGui_ImplGlfw_CursorEnterCallback(w, entered);
    });
    glfwSetMonitorCallback(ImGui_ImplGlfw_MonitorCallback);
    glfwSetCursorPosCallback(window, [](GLFWwindow* w, double, double) { wake(w); });
    glfwSetFramebufferSizeCallback(window, [](GLFWwindow* w, int, int) { damage(w); });
    glfwSetWindowRefreshCallback(window, [](GLFWwindow* w) { damage(w); });
    glfwSetWindowCloseCallback(window, [](GLFWwindow* w) { wake(w); });
    glfwSetDropCallback(window, [](GLFWwindow* w, int count, const char** paths) {
        WindowLink* link = link_of(w);
        if (!link) return;
        link->wake_frames = 3;
        if (count > 0 && link->ui) link->ui->dropped_files.emplace_back(paths[0]);  // opened like File > Open
    });
}

// The GUI benchmarks draw a few frames to settle, then the measured ones.
constexpr int bench_warmup = 5;

// The window with an OpenGL 3.3 context, or null (said on stderr, GLFW ended).
GLFWwindow* open_window(int width, int height, bool screenshot, bool benchmark) {
    glfwSetErrorCallback(
        [](int code, const char* text) { std::cerr << "glfw error " << code << ": " << text << "\n"; });
    if (!glfwInit()) {
        std::cerr << "error: cannot open a window (no display? set DISPLAY or run under Xvfb)\n";
        return nullptr;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    if (screenshot) glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
    GLFWwindow* window = glfwCreateWindow(width, height, "attnviz", nullptr, nullptr);
    if (!window) {
        std::cerr << "error: cannot create an OpenGL 3.3 window\n";
        glfwTerminate();
        return nullptr;
    }
    glfwMakeContextCurrent(window);
    glfwSwapInterval(screenshot || benchmark ? 0 : 1);
    if (!gladLoadGL(glfwGetProcAddress)) {
        std::cerr << "error: cannot load OpenGL 3.3 functions\n";
        glfwDestroyWindow(window);
        glfwTerminate();
        return nullptr;
    }
    return window;
}

// ImGui on the window: the layout settings, recent files, the style and the backends. Returns the
// layout file ("" for a screenshot).
std::string set_up_imgui(GLFWwindow* window, WindowLink& link, Panels& panels, AppState& state, bool screenshot) {
    ImGuiIO& io = ImGui::GetIO();
    // The layout is read and written here (written atomically), never by ImGui itself; a screenshot
    // is made from the default layout, never from (or into) the user's saved one.
    io.IniFilename = nullptr;
    // The panels' state; the layout's shares are kept in the same file as ImGui's settings.
    install_layout_settings(panels);
    // Recent files live beside the layout (not for screenshots, which leave the user's files alone).
    if (!screenshot)
        if (const std::string dir = config_dir(); !dir.empty()) panels.menu.recent = RecentFiles(dir + "/recent.json");
    std::string ini = screenshot ? "" : layout_file();
    if (!ini.empty()) load_layout(ini, state);  // the style comes with the look (apply_appearance)
    glfwSetWindowUserPointer(window, &link);
    ImGui_ImplGlfw_InitForOpenGL(window, false);  // its input callbacks are ours (install_input_callbacks)
    install_input_callbacks(window);
    ImGui_ImplOpenGL3_Init("#version 330 core");
    return ini;
}

// A run of a fixed number of frames (screenshots, --frames, the frame benchmark) shows the trace of
// the session it opened, not one still being computed.
void wait_for_work(AppState& state, Panels& panels) {
    panels.model.layers.wait();  // and the model view's numbers
    panels.model.run.wait();     // and the model's run (taken in the next frame)
    state.wait_for_trace();
    wait_for_gradient(panels.gradients);        // and the gradient asked for in the last frame
    wait_for_compare(panels.compare);           // and the pinned session's trace
    wait_for_model_ablation(panels.lab.model);  // and the lab's ablation through the model
    wait_for_lab_tokens(panels.lab.tokens);     // and its token circuits and position split
    wait_for_attribution(panels.attribution);   // and the model's attribution
}

// The font atlas sampled nearest, as the heatmaps' textures are. Fonts are made at the size they are
// drawn (a new text size makes them anew, never scales them), so the text looks the same; but a
// software renderer (Mesa's llvmpipe, as under Xvfb) draws a frame in little more than half the time
// it takes with linear sampling, and the CPU that frees goes to the trace and the model's worker.
// Set every frame (three calls): the atlas made anew may take the old one's texture name.
void sample_fonts_nearest() {
    const ImTextureID fonts = ImGui::GetIO().Fonts->TexID;
    if (!fonts) return;
    glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(reinterpret_cast<std::uintptr_t>(fonts)));
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
}

// A new ImGui frame, with the input that came since the last.
void new_frame(GLFWwindow* window, WindowLink& link, UiContext& ui, bool screenshot) {
    ImGuiIO& io = ImGui::GetIO();
    if (link.wake_frames > 0) --link.wake_frames;
    if (glfwWindowShouldClose(window)) {  // the close button asks like File > Quit
        glfwSetWindowShouldClose(window, GLFW_FALSE);
        ui.request(command::Quit{});
    }
    ImGui_ImplOpenGL3_NewFrame();  // makes the font texture before the first frame
    sample_fonts_nearest();
    ImGui_ImplGlfw_NewFrame();
    link.input.feed(io);  // after the backend, whose reading of the buttons it replaces
    // A screenshot shows the app as it opens, not wherever the pointer happens to be.
    if (screenshot) io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    ImGui::NewFrame();
}

// The monitor's content scale (2 on a typical HiDPI screen) where the framebuffer has as many pixels
// as the window (X11); elsewhere the framebuffer is in the screen's pixels already, and ImGui draws
// at their scale.
float content_scale_of(GLFWwindow* window) {
    int w = 0, h = 0, fb_w = 0, fb_h = 0;
    glfwGetWindowSize(window, &w, &h);
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    float x = 1, y = 1;
    glfwGetWindowContentScale(window, &x, &y);
    return fb_w == w && std::isfinite(x) && x > 0 ? x : 1.0f;
}

// The look asked for, made between two frames: the style, the palette and, for a new text size, the
// fonts, whose texture the renderer then makes anew (before the first frame it makes it itself).
// Whether it had made one is read first: the atlas made anew has forgotten its texture.
void follow_appearance(UiContext& ui, const Appearance& wanted) {
    if (ui.look == wanted) return;
    const bool had_texture = ImGui::GetIO().Fonts->TexID != nullptr;
    if (apply_appearance(ui, wanted) && had_texture) {
        ImGui_ImplOpenGL3_DestroyFontsTexture();
        ++texture_changes;
        ImGui_ImplOpenGL3_CreateFontsTexture();
    }
}

// The monitor holding the window's centre, else the primary one (null without any).
GLFWmonitor* monitor_of(GLFWwindow* window) {
    int x = 0, y = 0, w = 0, h = 0;
    glfwGetWindowPos(window, &x, &y);
    glfwGetWindowSize(window, &w, &h);
    int count = 0;
    GLFWmonitor** monitors = glfwGetMonitors(&count);
    for (int k = 0; k < count; ++k) {
        int mx = 0, my = 0;
        glfwGetMonitorPos(monitors[k], &mx, &my);
        const GLFWvidmode* mode = glfwGetVideoMode(monitors[k]);
        if (mode && x + w / 2 >= mx && x + w / 2 < mx + mode->width && y + h / 2 >= my && y + h / 2 < my + mode->height)
            return monitors[k];
    }
    return glfwGetPrimaryMonitor();
}

// View > Full screen: the window over its monitor at the monitor's mode, or back to the size and
// place it had. Without a monitor to fill, full screen is not asked for any more.
void follow_full_screen(GLFWwindow* window, WindowLink& link, bool& wanted) {
    if ((glfwGetWindowMonitor(window) != nullptr) == wanted) return;
    int* r = link.windowed;
    if (!wanted) {
        glfwSetWindowMonitor(window, nullptr, r[0], r[1], r[2], r[3], GLFW_DONT_CARE);
        return;
    }
    GLFWmonitor* monitor = monitor_of(window);
    const GLFWvidmode* mode = monitor ? glfwGetVideoMode(monitor) : nullptr;
    if (!mode) {
        wanted = false;
        return;
    }
    glfwGetWindowPos(window, &r[0], &r[1]);
    glfwGetWindowSize(window, &r[2], &r[3]);
    glfwSetWindowMonitor(window, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
}

// File > Export… of the whole window: this frame was drawn after the dialog closed.
void export_window(GLFWwindow* window, AppState& state, Panels& panels) {
    if (std::string& png = panels.export_dialog.window_png_path; !png.empty()) {
        const core::Problems p = write_window_png(window, png);
        state.set_message(p.empty() ? "Exported the window to " + png : "Could not export: " + p.front().str(),
                          !p.empty());
        png.clear();
    }
}

// What the frame is cleared to: the background of the windows that tile it, which draw none.
ImVec4 clear_color(const UiContext& ui) { return window_background_over(ui.color_vec(Color::background)); }

// The frame ImGui has built, drawn in the back buffer.
void draw_to_back_buffer(GLFWwindow* window, const UiContext& ui) {
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    glViewport(0, 0, fb_w, fb_h);
    const ImVec4 background = clear_color(ui);
    glClearColor(background.x, background.y, background.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

// Ends ImGui's frame and draws it, unless it is the frame on screen already (then the window keeps
// it, and its CPU goes to the workers). Returns whether it was drawn (and is to be shown).
bool render(GLFWwindow* window, const UiContext& ui, FrameSkipper& skipper, bool damaged) {
    ImGui::Render();
    FrameInputs inputs;
    glfwGetFramebufferSize(window, &inputs.framebuffer_width, &inputs.framebuffer_height);
    inputs.background = clear_color(ui);
    inputs.texture_uploads = texture_changes;
    if (!skipper.must_draw(*ImGui::GetDrawData(), inputs, damaged)) return false;
    draw_to_back_buffer(window, ui);
    return true;
}

// What a run of a fixed number of frames leaves: the screenshot and the report. Returns the exit code.
int write_last_frame(GLFWwindow* window, const GuiOptions& o, const UiContext& ui, const DrawReport& report) {
    int exit_code = 0;
    if (!o.screenshot_path.empty())
        if (const core::Problems p = write_window_png(window, o.screenshot_path); !p.empty()) {
            std::cerr << "error: " << p.front().str() << "\n";
            exit_code = 1;
        }
    if (ui.report && !write_report(report, ImGui::GetIO().DisplaySize, o.report_path)) exit_code = 1;
    return exit_code;
}

// What the frame loop needs beyond the app's state: the window and the run's settings.
struct FrameLoop {
    GLFWwindow* window = nullptr;
    WindowLink& link;
    Autosaver& autosave;
    const DrawReport& report;
    const std::string& ini;
    int frames = 0;  // a fixed number of frames to draw, or 0
    bool screenshot = false, benchmark = false;
};

// The frames, until the user quits or the fixed number is drawn. Returns the exit code.
int run_frames(const GuiOptions& o, const FrameLoop& loop, AppState& state, UiContext& ui, Panels& panels) {
    GLFWwindow* window = loop.window;
    WindowLink& link = loop.link;
    const int frames = loop.frames;
    ImGuiIO& io = ImGui::GetIO();
    int exit_code = 0;
    std::string title;
    constexpr std::chrono::microseconds frame_period(16667);
    // While the model reruns (an edit going through its later blocks), at most 40 frames a second:
    // under a software renderer every frame's drawing is CPU the rerun waits for, and 25 ms a frame
    // keeps a drag smooth.
    constexpr std::chrono::microseconds computing_period(25000);
    auto last = std::chrono::steady_clock::now();
    float frame_ms = 0, draw_ms = 0;
    // The status bar's frame time (of the frames drawn), taken twice a second: a number changing
    // every frame cannot be read, and a frame showing it would never be the frame on screen again.
    float shown_draw_ms = 0;
    auto draw_ms_taken = last;
    FrameSkipper skipper;
    FrameTimes bench;
    std::uint64_t model_serial = 0;  // the model's results last seen
    int popups_seen = 0;             // ImGui's open popups after the last frame
    for (int frame = 0; !panels.quit; ++frame) {
        const int measured = frame - bench_warmup;
        const bool editing = o.bench_edits > 0 && measured >= 0;
        if (editing) bench_edit(o.bench_edits, measured, state, panels.model.run, bench, model_serial);
        // A run of a fixed number of frames (screenshots, --frames, the frame benchmark) shows
        // the trace of the session it opened, not one still being computed.
        if (frames > 0 && !editing) wait_for_work(state, panels);
        // Idle: with no input waiting, no animation and nothing to recompute, sleep until an
        // event instead of drawing frames. A text field's cursor blinks, and a desktop file
        // dialog's answer is looked for, every 0.2 s; any other wake with nothing to show draws
        // no frame (it only gives the autosave its turn).
        const bool busy = frames > 0 || link.wake_frames > 0 || !link.input.empty() || !ui.commands.empty() ||
                          ui.heatmaps.behind() || animating(panels, state) || !(ui.look == panels.appearance);
        const bool ticking = io.WantTextInput || ui.desktop_dialog;
        if (busy)
            glfwPollEvents();
        else
            glfwWaitEventsTimeout(ticking ? 0.2 : 1.0);
        if (!busy && !ticking && link.wake_frames == 0 && link.input.empty() && !animating(panels, state)) {
            loop.autosave.tick(state);
            continue;
        }
        const auto work_start = std::chrono::steady_clock::now();
        follow_full_screen(window, link, panels.full_screen);
        follow_appearance(ui, panels.appearance);
        new_frame(window, link, ui, loop.screenshot);
        const std::uint64_t shown_before = state.generation();
        // The last frame's drawing time, while frames follow one another (after a sleep it
        // would say nothing about the app's speed).
        if (shown_draw_ms == 0 || work_start - draw_ms_taken >= std::chrono::milliseconds(500)) {
            shown_draw_ms = draw_ms;
            draw_ms_taken = work_start;
        }
        draw_frame(state, ui, panels, busy ? shown_draw_ms : -1.0f);
        if (imgui_settling(popups_seen)) link.wake_frames = std::max(link.wake_frames, 2);
        loop.autosave.tick(state);
        if (std::string now_title = window_title(state, panels); now_title != title) {
            title = std::move(now_title);
            glfwSetWindowTitle(window, title.c_str());
        }
        if (editing && state.generation() != shown_before) bench.trace_ms.push_back(state.compute_ms());
        if (const ModelResults* r = panels.model.run.results(); editing && r && r->serial != model_serial) {
            model_serial = r->serial;
            if (r->edited_layer >= 0) bench.model_ms.push_back(r->compute_ms);
        }
        // The frame benchmark draws every frame: it measures what drawing one costs.
        bool drawn = render(window, ui, skipper, link.damaged || o.bench_frames > 0);
        link.damaged = false;
        if (!loop.ini.empty() && io.WantSaveIniSettings) save_layout(loop.ini);
        const auto draw_for_reading = [&] {  // an export or a screenshot reads the back buffer
            if (!drawn) draw_to_back_buffer(window, ui);
            drawn = true;
        };
        if (!panels.export_dialog.window_png_path.empty()) draw_for_reading();
        export_window(window, state, panels);
        // The edit benchmark ends once the last edit's trace is on screen (and, for a model's block,
        // the model view and prediction of its rerun).
        const bool edits_shown = editing && measured >= o.bench_edits - 1 && !state.computing() &&
                                 !(bench.model && panels.model.run.computing());
        const bool last_frame = o.bench_edits > 0 ? edits_shown || measured > o.bench_edits + 100000
                                                  : frames > 0 && frame + 1 >= frames;
        if (last_frame && loop.benchmark) {
            const auto now = std::chrono::steady_clock::now();
            bench.ms.push_back(std::chrono::duration<float, std::milli>(now - last).count());
            ++bench.drawn;  // it is drawn to be read (below)
            if (edits_shown)
                bench.last_edit_to_trace_ms = std::chrono::duration<double, std::milli>(now - bench.last_edit).count();
        }
        if (last_frame) {
            draw_for_reading();
            exit_code = write_last_frame(window, o, ui, loop.report);
            break;
        }
        if (drawn) {
            draw_ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - work_start).count();
            glfwSwapBuffers(window);
            if (loop.benchmark && measured >= 0) ++bench.drawn;
        }
        // At most 60 frames a second when the swap does not wait for the display (a software
        // renderer, Xvfb): the time left goes to the trace worker instead of frames nobody sees.
        // The edits of a model's block are measured so too (the window as used: a rerun of the
        // model needs the worker's core, which frames drawn flat out would take).
        if (frames == 0 || bench.model) {
            const auto elapsed = std::chrono::steady_clock::now() - last;
            const auto period = panels.model.run.computing() ? computing_period : frame_period;
            if (elapsed < period) std::this_thread::sleep_for(period - elapsed);
        }
        const auto now = std::chrono::steady_clock::now();
        frame_ms = std::chrono::duration<float, std::milli>(now - last).count();
        last = now;
        if (loop.benchmark && measured >= 0) bench.ms.push_back(frame_ms);
    }
    if (loop.benchmark) print_frame_times(bench, o.bench_edits > 0);
    return exit_code;
}

}  // namespace

int run_gui(const GuiOptions& o) {
    int width = 1280, height = 800;
    if (!parse_size(o.size, width, height)) {
        std::cerr << "error: --size: expected WxH between 320x240 and 16384x16384, got \"" << o.size << "\"\n";
        return 2;
    }
    if (o.ui_scale && !valid_ui_scale(*o.ui_scale)) {
        std::cerr << "error: --ui-scale: expected a text size from " << min_ui_scale << " to " << max_ui_scale
                  << ", got " << *o.ui_scale << "\n";
        return 2;
    }
    std::vector<std::pair<CellRef, double>> edits;
    std::optional<CellRef> selected;
    if (const int code = read_cells(o, edits, selected); code != 0) return code;
    if (!o.lesson.empty()) {
        std::string problem;
        const std::optional<core::LessonEntry> lesson = find_lesson(o.lesson, problem);
        if (!lesson || !lesson->problem.empty()) {
            std::cerr << "error: --lesson " << core::printable(o.lesson) << ": "
                      << (lesson ? lesson->path + ": " + lesson->problem : problem) << "\n";
            return 2;
        }
    }
    if (const int code = check_attention_options(o); code != 0) return code;
    const bool benchmark = o.bench_frames > 0 || o.bench_edits > 0;
    const int frames = benchmark      ? bench_warmup + std::max(o.bench_frames, 1)
                       : o.frames > 0 ? o.frames
                                      : (o.screenshot_path.empty() ? 0 : 3);
    // Every frame of a screenshot or --frames run waits for the workers: they keep their priority.
    if (frames > 0 && !benchmark) set_workers_lowered(false);
    // The session file is read before any window opens. One that cannot be opened is reported on
    // stderr in every mode; a run that only renders or measures (a screenshot, --frames, the
    // benchmarks) ends there, instead of showing the worked example in its place. The window opens
    // with the message, as File > Open shows it.
    bool opened = true;
    AppState state = initial_state(o, opened);
    if (!opened) {
        std::cerr << "error: " << state.message().text << "\n";
        if (frames > 0) {
            std::error_code ec;
            const bool readable = std::filesystem::is_regular_file(o.session_path, ec) &&
                                  std::ifstream(o.session_path, std::ios::binary).is_open();
            return readable ? 2 : 1;  // invalid, or an I/O failure (a missing file)
        }
    }
    const bool screenshot = !o.screenshot_path.empty();
    GLFWwindow* window = open_window(width, height, screenshot, benchmark);
    if (!window) return 1;

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    Panels panels;
    WindowLink link;
    const std::string ini = set_up_imgui(window, link, panels, state, screenshot);
    // The command line's look over the layout's (kept with it from now on).
    if (o.ui_scale) panels.appearance.scale = *o.ui_scale;
    if (const std::optional<Theme> theme = theme_named(o.theme)) panels.appearance.theme = *theme;
    if (const std::optional<core::Colormap> map = weights_colormap_named(o.colormap)) panels.appearance.weights = *map;

    int exit_code = 0;
    {
        // The UI context lives inside the ImGui and GL contexts: its textures go before either. Its
        // fonts, style and palette are the look's, at the monitor's content scale.
        UiContext ui;
        ui.content_scale = content_scale_of(window);
        apply_appearance(ui, panels.appearance);
        ui.heatmaps.set_texture_functions(upload_texture, delete_texture);
        DrawReport report;
        if (!o.report_path.empty()) ui.report = &report;
        state.set_notation(ui.notation());
        state.set_column_vectors(o.column_vectors);
        // Unsaved work is autosaved, and what a crashed instance left is offered; not for
        // screenshots and benchmarks, which show the app as it opens.
        Autosaver autosave(core::default_autosave_dir(),
                           o.autosave_seconds.value_or(screenshot || benchmark ? 0 : default_autosave_seconds));
        if (autosave.on()) {
            panels.recovery.store = &autosave.store();
            panels.recovery.offers = autosave.store().orphans();
        }
        apply_start_options(o, edits, selected, opened, frames, state, ui, panels);
        link.ui = &ui;  // files dropped on the window now reach the frame

        exit_code = run_frames(o, {window, link, autosave, report, ini, frames, screenshot, benchmark}, state, ui,
                               panels);
        autosave.finish();  // a clean exit: saved, or the user chose not to
        link.ui = nullptr;
        if (!ini.empty()) save_layout(ini);
    }  // the UI context frees its textures here, while the GL context exists
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    glfwSetWindowUserPointer(window, nullptr);
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    return exit_code;
}

}  // namespace attnviz::app
