#!/usr/bin/env bash
# ctest dump_attentions: scripts/dump-attentions.py --torch-demo writes a file, and core_tests'
# Attentions.WhatDumpAttentionsWritesIsRead reads it. Skipped (exit 77) without python3-torch.
# Usage: dump_attentions_test.sh CORE_TESTS SOURCE_DIR
set -euo pipefail
core_tests=$1 root=$2
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
    echo "SKIP: python3-torch is not installed (sudo apt-get install python3-torch)"
    exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 "$root/scripts/dump-attentions.py" --torch-demo --text "the cat sat on the mat" -o "$dir/demo.safetensors"
out=$(ATTNVIZ_DUMPED_ATTENTIONS="$dir/demo.safetensors" "$core_tests" --gtest_filter=Attentions.WhatDumpAttentionsWritesIsRead)
echo "$out"
grep -q "^\[       OK \] Attentions.WhatDumpAttentionsWritesIsRead" <<<"$out" || { echo "FAIL: the test did not run and pass"; exit 1; }
