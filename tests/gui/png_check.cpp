// png_check FILE WIDTH HEIGHT: exits 0 when FILE is a WIDTH×HEIGHT PNG that is not blank —
// at least 32 distinct colours and no single colour covering more than 90% of the pixels.
#include <stb_image.h>

#include <cstdio>
#include <cstdlib>
#include <map>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: png_check FILE WIDTH HEIGHT\n");
        return 2;
    }
    int w = 0, h = 0, channels = 0;
    unsigned char* pixels = stbi_load(argv[1], &w, &h, &channels, 4);
    if (!pixels) {
        std::fprintf(stderr, "%s: not a readable PNG (%s)\n", argv[1], stbi_failure_reason());
        return 1;
    }
    const int want_w = std::atoi(argv[2]), want_h = std::atoi(argv[3]);
    int status = 0;
    if (w != want_w || h != want_h) {
        std::fprintf(stderr, "%s: %dx%d, expected %dx%d\n", argv[1], w, h, want_w, want_h);
        status = 1;
    }
    std::map<unsigned, long> counts;
    const long total = static_cast<long>(w) * h;
    for (long k = 0; k < total; ++k) {
        const unsigned char* p = pixels + 4 * k;
        ++counts[(unsigned(p[0]) << 16) | (unsigned(p[1]) << 8) | p[2]];
    }
    long top = 0;
    for (const auto& [colour, n] : counts) top = n > top ? n : top;
    std::printf("%s: %dx%d, %zu colours, most common covers %.1f%%\n", argv[1], w, h, counts.size(),
                100.0 * top / total);
    if (counts.size() < 32 || top > total * 9 / 10) {
        std::fprintf(stderr, "%s: looks blank\n", argv[1]);
        status = 1;
    }
    stbi_image_free(pixels);
    return status;
}
