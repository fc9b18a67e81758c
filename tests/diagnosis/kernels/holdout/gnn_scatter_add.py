"""Graph neural network message aggregation over an edge list: for every edge e,
out[dst[e], :] += w[e] * x[src[e], :], with FEAT = 128 fp32 features per node, one program per block of edges.

Root cause (global-atomics): each weighted message is gathered from its source node and added into its
destination node's row with element-wise global atomic adds; edges into the same node (high-degree nodes
receive thousands) serialize on the same addresses in the L2, and no partial sum is formed per destination
before the atomics (the edges are not sorted by destination, so they cannot be segment-reduced first).
"""

import triton
import triton.language as tl


@triton.jit
def gnn_aggregate_kernel(src_ptr, dst_ptr, w_ptr, x_ptr, out_ptr, n_edges, FEAT: tl.constexpr, BLOCK_E: tl.constexpr):
    edges = tl.program_id(0) * BLOCK_E + tl.arange(0, BLOCK_E)
    emask = edges < n_edges
    src = tl.load(src_ptr + edges, mask=emask, other=0).to(tl.int64)
    dst = tl.load(dst_ptr + edges, mask=emask, other=0).to(tl.int64)
    weight = tl.load(w_ptr + edges, mask=emask, other=0.0)
    feats = tl.arange(0, FEAT)
    msg = tl.load(x_ptr + src[:, None] * FEAT + feats[None, :], mask=emask[:, None], other=0.0)
    msg = msg * weight[:, None]
    tl.atomic_add(out_ptr + dst[:, None] * FEAT + feats[None, :], msg, mask=emask[:, None], sem="relaxed")
