"""A GPT-2-style language model with one transformer block (token and position embeddings, causal multi-head
attention, a GELU MLP, pre-layernorms, a tied-free head): a forward pass and one AdamW training step on a
synthetic token sequence, written against tinygrad's API; nnlib picks the library."""

import json

import numpy as np
from nnlib import Context, Tensor, load_numpy_weights, nn

VOCAB, DIM, HEADS, SEQ, BATCH = 16, 16, 2, 8, 2


class Attention:
    def __init__(self, dim: int, heads: int):
        self.c_attn, self.c_proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.heads, self.head_dim = heads, dim // heads

    def __call__(self, x: Tensor) -> Tensor:
        b, t, d = x.shape
        qkv = self.c_attn(x)
        q, k, v = (qkv[:, :, i * d:(i + 1) * d].reshape(b, t, self.heads, self.head_dim).transpose(1, 2)
                   for i in range(3))
        out = q.scaled_dot_product_attention(k, v, is_causal=True)
        return self.c_proj(out.transpose(1, 2).reshape(b, t, d))


class FeedForward:
    def __init__(self, dim: int, hidden: int):
        self.c_fc, self.c_proj = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    def __call__(self, x: Tensor) -> Tensor:
        return self.c_proj(self.c_fc(x).gelu())


class Block:
    def __init__(self, dim: int, heads: int):
        self.ln_1, self.attn = nn.LayerNorm(dim), Attention(dim, heads)
        self.ln_2, self.mlp = nn.LayerNorm(dim), FeedForward(dim, 4 * dim)

    def __call__(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT:
    def __init__(self):
        self.wte, self.wpe = nn.Embedding(VOCAB, DIM), nn.Embedding(SEQ, DIM)
        self.h = [Block(DIM, HEADS)]
        self.ln_f, self.lm_head = nn.LayerNorm(DIM), nn.Linear(DIM, VOCAB, bias=False)

    def __call__(self, tokens: Tensor) -> Tensor:
        x = self.wte(tokens) + self.wpe(Tensor.arange(tokens.shape[1]).reshape(1, -1))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def main() -> dict:
    """The next-token loss before and after one training step, and the logits of the first forward pass."""
    rng = np.random.default_rng(4)
    seq = rng.integers(0, VOCAB, (BATCH, SEQ + 1)).astype(np.int32)
    tokens, targets = Tensor(seq[:, :-1]), Tensor(seq[:, 1:])
    model = GPT()
    load_numpy_weights(model, seed=5)
    opt = nn.optim.AdamW(nn.state.get_parameters(model), lr=0.01)

    def loss_fn() -> tuple[Tensor, Tensor]:
        logits = model(tokens)
        return logits, -(logits.log_softmax(-1) * targets.one_hot(VOCAB)).sum(-1).mean()
    with Context(TRAINING=1):
        opt.zero_grad()
        logits, loss = loss_fn()
        loss.backward()
        before, first = loss.item(), logits.numpy()  # before step(): tinygrad would use the new weights
        opt.step()
    _, after = loss_fn()
    return {"losses": [before, after.item()], "logits": first.tolist()}


if __name__ == "__main__":
    print(json.dumps(main()))
