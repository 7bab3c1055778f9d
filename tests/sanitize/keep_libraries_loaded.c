// Linked into attnviz in the sanitizer build only (ATTNVIZ_SANITIZE, see the top-level CMakeLists.txt).
//
// dlclose() does nothing here, so the libraries the GL stack loads at run time (Mesa's driver
// swrast_dri.so and its libLLVM) stay mapped until the process ends. glfwTerminate() would otherwise
// unload them before LeakSanitizer's check at exit: the memory their globals still point to then
// looks leaked (~240 bytes a run, a 10-line GLFW program shows the same), and the report can only say
// "<unknown module>", which no suppression in tests/lsan.supp can match (GCC 12, LLVM < 15).
// Kept mapped, that memory is reachable and anything the driver really leaks is named.
#include <dlfcn.h>

int dlclose(void* handle) {
    (void)handle;
    return 0;
}
