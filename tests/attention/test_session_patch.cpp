// Tests of core/attention/session_patch.hpp: a session made again from a patch of a base is the
// session exactly, and the patch copies only the matrices that changed (of those named, where the
// caller names them), unless more than values changed (then it is a whole copy).
#include "core/attention/session_patch.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/attention/presets.hpp"

namespace attnviz::core {
namespace {

Config layer_config() {
    Config c;
    c.n = 5;
    c.d_model = 12;
    c.heads = 4;
    c.d_k = c.d_v = 3;
    c.biases = true;
    c.kv_heads = 2;
    return c;
}

TEST(SessionPatch, AnEditedCellOfXCopiesXOnly) {
    const auto base = std::make_shared<const Session>(random_session(layer_config(), 7));
    Session edited = *base;
    edited.params.X(2, 3) += 0.5;
    const SessionPatch patch(base, edited);
    EXPECT_EQ(patch.copied_values(), 5 * 12);
    EXPECT_TRUE(patch.make() == edited);
    EXPECT_FALSE(patch.make() == *base);
}

TEST(SessionPatch, EditedWeightsOfHeadsAndTheLayerAreEachCopiedOnce) {
    const auto base = std::make_shared<const Session>(random_session(layer_config(), 8));
    Session edited = *base;
    edited.params.heads[2].W_K(0, 1) = -1;  // head 2's group owns its W_K
    edited.params.heads[3].b_Q(0, 2) = 0.25;
    edited.params.W_O(11, 0) *= 2;
    edited.params.b_O(0, 4) = 3;
    const SessionPatch patch(base, edited);
    EXPECT_EQ(patch.copied_values(), 12 * 3 + 3 + 12 * 12 + 12);
    EXPECT_TRUE(patch.make() == edited);
}

TEST(SessionPatch, TheSameSessionCopiesNothing) {
    const auto base = std::make_shared<const Session>(random_session(layer_config(), 9));
    const SessionPatch patch(base, *base);
    EXPECT_EQ(patch.copied_values(), 0);
    EXPECT_TRUE(patch.make() == *base);
}

// More than values changed (a setting, a label, a shape, no base): the patch is a whole copy and
// still makes the session exactly.
TEST(SessionPatch, AnotherConfigLabelOrShapeIsAWholeCopy) {
    const auto base = std::make_shared<const Session>(random_session(layer_config(), 10));
    std::int64_t every_value = 0;
    {
        const SessionPatch whole(nullptr, *base);
        every_value = whole.copied_values();
        EXPECT_TRUE(whole.make() == *base);
    }
    EXPECT_GT(every_value, 5 * 12 + 12 * 12);
    Session relabelled = *base;
    relabelled.tokens[1] = "cat";
    Session masked = *base;
    masked.config.mask = Mask::causal;
    Session resized = *base;
    resized.params.b_O.resize(1, 11);
    resized.params.b_O.setZero();
    for (const Session* s : {&relabelled, &masked, &resized}) {
        const SessionPatch patch(base, *s);
        EXPECT_TRUE(patch.make() == *s);
        EXPECT_GE(patch.copied_values(), every_value - 1);
    }
}

// Where the caller names the matrices it edited, only those are compared: each named and changed is
// copied once (a K/V group's W_K named through any head of the group), a change not named is not
// seen (the caller's promise), and more than values changed is still a whole copy.
TEST(SessionPatch, NamedMatricesAloneAreCompared) {
    const auto base = std::make_shared<const Session>(random_session(layer_config(), 11));
    Session edited = *base;
    edited.params.X(1, 1) += 1;
    Matrix* group_w_k = find_input(edited.params, {MatrixId::W_K, 3});  // head 3's is its group's, head 2's
    ASSERT_NE(group_w_k, nullptr);
    (*group_w_k)(0, 0) = 5;
    const std::vector<MatrixRef> named = {{MatrixId::X, 0}, {MatrixId::W_K, 3}, {MatrixId::W_V, 1}};
    const SessionPatch patch(base, edited, named);
    EXPECT_EQ(patch.copied_values(), 5 * 12 + 12 * 3);
    EXPECT_TRUE(patch.make() == edited);
    const SessionPatch partial(base, edited, std::vector<MatrixRef>{{MatrixId::X, 0}});
    EXPECT_EQ(partial.copied_values(), 5 * 12);
    const Session made = partial.make();
    EXPECT_EQ(made.params.X, edited.params.X);
    EXPECT_EQ(made.params.heads[2].W_K, base->params.heads[2].W_K);
    Session relabelled = edited;
    relabelled.tokens[0] = "dog";
    const SessionPatch whole(base, relabelled, named);
    EXPECT_TRUE(whole.make() == relabelled);
    EXPECT_GT(whole.copied_values(), 5 * 12 + 12 * 12);
}

}  // namespace
}  // namespace attnviz::core
