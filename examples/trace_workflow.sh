#!/bin/sh
# Record a program's driver traffic, list it, replay it on a fresh simulated GPU, compare two runs and
# export a Perfetto timeline.   sh examples/trace_workflow.sh [OUTDIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out"
export MOCKGPU=1

simgpu trace record -o "$out/a.trace" -- python "$here/llvm_ir_kernel.py"     # SIMGPU_TRACE for the command
simgpu trace record -o "$out/b.trace" -- python "$here/llvm_ir_kernel.py"
simgpu trace show "$out/a.trace" --kind mmio,note                             # doorbells, decoded packets, kernels
simgpu trace replay "$out/a.trace"                                            # exit 1 at the first divergence
simgpu trace diff "$out/a.trace" "$out/b.trace"                               # same program: identical traces
simgpu trace export --perfetto "$out/a.trace" "$out/a.json"                   # open in ui.perfetto.dev
