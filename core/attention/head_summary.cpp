#include "core/attention/head_summary.hpp"

#include <cmath>
#include <cstdlib>

namespace attnviz::core {

HeadSummary summarize_head(const Matrix& w) {
    HeadSummary s;
    if (w.rows() == 0 || w.cols() == 0) return s;
    for (Eigen::Index i = 0; i < w.rows(); ++i) {
        for (Eigen::Index j = 0; j < w.cols(); ++j) {
            const double a = w(i, j);
            if (a > 0) s.mean_entropy -= a * std::log(a);
            s.mean_distance += a * static_cast<double>(std::llabs(static_cast<long long>(i - j)));
        }
        s.first_share += w(i, 0);
        if (i < w.cols()) s.diagonal_share += w(i, i);
    }
    const double n = static_cast<double>(w.rows());
    s.mean_entropy /= n;
    s.mean_distance /= n;
    s.first_share /= n;
    s.diagonal_share /= n;
    return s;
}

}  // namespace attnviz::core
