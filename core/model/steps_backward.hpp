// The small steps of steps.hpp backwards: from the gradient of a step's output to that of its input
// and of its weights, each on a whole n×d matrix (one token per row), in the compute type:
//
//   LayerNorm  y = x̂·w + b, x̂ = (x − μ)/σ     g = d_y ⊙ w: d_x = (g − mean(g) − x̂·mean(g ⊙ x̂)) / σ,
//                                              d_w = Σ_rows d_y ⊙ x̂, d_b = Σ_rows d_y
//   RMSNorm    y = x·ρ·w (ρ = 1/√(mean(x²) + eps); w → 1 + w for `plus_one`)
//                                              g = d_y ⊙ w: d_x = ρ·g − x·ρ³·mean(g ⊙ x),
//                                              d_w = Σ_rows d_y ⊙ x·ρ
//   Projection y = x·W + b (or x·Wᵀ + b)       d_x = d_y·Wᵀ (or d_y·W), d_W = xᵀ·d_y (or d_yᵀ·x),
//                                              d_b = Σ_rows d_y
//   MLP        plain: h = act(u), u = up(x)    d_u = d_h ⊙ act′(u)
//              gated: h = act(g) ⊙ v            d_g = d_h ⊙ v ⊙ act′(g), d_v = d_h ⊙ act(g)
//              (g = gate(x), v = up(x); Phi-3's fused gate_up: [g v] = gate_up(x))
//
// The weights' gradients go into a NamedGradients under the tensors' names (model_folder.hpp),
// summed where a name comes twice (tied embeddings). Without one (null) only the inputs' gradients
// are computed.
#pragma once

#include <map>
#include <set>
#include <string>

#include "core/model/model_folder.hpp"
#include "core/model/steps.hpp"

namespace attnviz::model {

// The gradients of a model's tensors by name, each shaped as the tensor is stored (a 1-D tensor as
// one row). A pass (begin()) writes each entry anew: its first write sets it, later ones add to it
// (a tied table's two uses); an entry of the same shape as the last pass's keeps its storage, so
// a pass after the first allocates (and page-faults) nothing new.
template <class Scalar>
class NamedGradients {
public:
    using Map = std::map<std::string, MatrixT<Scalar>>;

    void begin() { written_.clear(); }
    // [name] = d, or += d after the pass's first write; nothing for an empty name.
    template <class Expression>
    void add(const std::string& name, const Expression& d) {
        if (name.empty()) return;
        MatrixT<Scalar>& m = values_[name];
        if (written_.insert(name).second)
            m.noalias() = d;
        else
            m.noalias() += d;
    }
    // [name] = or += aᵀ·b (a n×p, b n×q: a weight's gradient from its input and output gradient), by
    // the blocked product (gemm.hpp), a transposed once.
    void add_product(const std::string& name, const MatrixT<Scalar>& a, const MatrixT<Scalar>& b);
    // The entry as zeros of rows × cols on its pass's first use (rows then added into it), else as it is.
    MatrixT<Scalar>& zeros(const std::string& name, Eigen::Index rows, Eigen::Index cols);

    const Map& values() const { return values_; }
    // The entries not written by this pass dropped (after a pass: a model's whole set).
    void drop_unwritten();

private:
    Map values_;
    std::set<std::string> written_;
};

// act′(u) for every entry of u.
template <class Scalar>
MatrixT<Scalar> activation_derivative(Activation activation, const MatrixT<Scalar>& u);

// d_x of the norm of each row of x given d_y (n×d); a norm without weights passes d_y through.
template <class Scalar>
void norm_backward(const Norm<Scalar>& norm, const MatrixT<Scalar>& x, const MatrixT<Scalar>& d_y, MatrixT<Scalar>& d_x,
                   NamedGradients<Scalar>* grads, const std::string& w_name, const std::string& b_name);

// d_x (when not null) of y = the projection of x, given d_y.
template <class Scalar>
void projection_backward(const Projection<Scalar>& p, const MatrixT<Scalar>& x, const MatrixT<Scalar>& d_y,
                         MatrixT<Scalar>* d_x, NamedGradients<Scalar>* grads, const std::string& w_name,
                         const std::string& b_name);

// d_x of out = mlp(x) given d_out (n×d_model); its forward recomputed from x.
template <class Scalar>
void mlp_backward(const Mlp<Scalar>& mlp, const MatrixT<Scalar>& x, const MatrixT<Scalar>& d_out, MatrixT<Scalar>& d_x,
                  NamedGradients<Scalar>* grads, const BlockNames& names);

}  // namespace attnviz::model
