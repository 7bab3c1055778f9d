#include "core/attention/pooling.hpp"

#include <limits>

namespace attnviz::core {

Pooling pooling_for(ColorScale colors) {
    return colors == ColorScale::unit_interval ? Pooling::mean : Pooling::largest;
}

const char* pooling_text(Pooling pooling) {
    return pooling == Pooling::mean ? "the mean of the weights it covers"
                                    : "the value of largest magnitude of the cells it covers";
}

double BlockPool::result(Pooling pooling) const {
    if (cells == 0) return std::numeric_limits<double>::quiet_NaN();
    if (finite == 0) return -std::numeric_limits<double>::infinity();
    return pooling == Pooling::mean ? value / finite : value;
}

}  // namespace attnviz::core
