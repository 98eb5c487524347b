"""NumPy references of composite operations (direct loops, float64) shared by the compiler's ops suite."""

import math

import numpy as np


def softmax_ref(x, axis):
    """Softmax along axis."""
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def conv2d_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct convolution (cross-correlation) in float64."""
    st = (stride, stride) if isinstance(stride, int) else stride
    pd = (padding, padding) if isinstance(padding, int) else padding
    dl = (dilation, dilation) if isinstance(dilation, int) else dilation
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pd[0], pd[0]), (pd[1], pd[1])))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh, ow = (h - dl[0] * (kh - 1) - 1) // st[0] + 1, (wd - dl[1] * (kw - 1) - 1) // st[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = x[:, g * cg:(g + 1) * cg, i * st[0]:i * st[0] + dl[0] * (kh - 1) + 1:dl[0],
                          j * st[1]:j * st[1] + dl[1] * (kw - 1) + 1:dl[1]]
                out[:, oc, i, j] = (patch * w[oc]).sum((1, 2, 3))
    return out if b is None else out + b.reshape(1, -1, 1, 1)


def pool_ref(x, k, s, p, fn, pad_value, dilation=1):
    """Pooling over the last two dimensions by direct loops."""
    x = np.pad(x, ((0, 0),) * (x.ndim - 2) + ((p, p), (p, p)), constant_values=pad_value)
    h, w = x.shape[-2:]
    span = dilation * (k - 1) + 1
    oh, ow = (h - span) // s + 1, (w - span) // s + 1
    out = np.zeros(x.shape[:-2] + (oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            win = x[..., i * s:i * s + span:dilation, j * s:j * s + span:dilation]
            out[..., i, j] = fn(win, axis=(-2, -1))
    return out


def sdpa_ref(q, k, v, causal=False, mask=None):
    """softmax(q k^T / sqrt(d)) v with optional causal and boolean masks."""
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    return softmax_ref(s, -1) @ v
