"""The other kinds of program a tinygrad user writes, against tinygrad's API (nnlib picks the library): an
embedding bag trained with cross_entropy and SGD with momentum, then cumsum/argmax/topk/sort on its scores, mixed
dtypes (int8, uint8, float16, bfloat16 promotion and casts), a chain of movement ops, and a sum of 2^22 elements."""

import json

import numpy as np
from nnlib import Context, Tensor, load_numpy_weights, nn

VOCAB, DIM, CLASSES, BATCH, BAG = 32, 8, 4, 16, 5


class Bag:
    def __init__(self):
        self.emb, self.head = nn.Embedding(VOCAB, DIM), nn.Linear(DIM, CLASSES)

    def __call__(self, tokens: Tensor) -> Tensor:
        return self.head(self.emb(tokens).mean(1))


def train(rng) -> tuple[list[float], Tensor]:
    """Eight SGD steps on one batch of bags whose class is their first token mod CLASSES; the losses and the last
    scores."""
    model = Bag()
    load_numpy_weights(model, seed=7)
    opt = nn.optim.SGD(nn.state.get_parameters(model), lr=0.5, momentum=0.9)
    tokens = rng.integers(0, VOCAB, (BATCH, BAG)).astype(np.int32)
    losses, scores = [], None
    for _ in range(8):
        with Context(TRAINING=1):
            scores, loss = step(model, opt, tokens)
        losses.append(loss)
    return losses, scores


def step(model, opt, tokens) -> tuple[Tensor, float]:
    """One SGD step on a batch of bags; (the scores, the loss before the step)."""
    labels = (tokens[:, 0] % CLASSES).astype(np.int32)
    opt.zero_grad()
    scores = model(Tensor(tokens))
    loss = scores.cross_entropy(Tensor(labels))
    loss.backward()
    value = loss.item()  # before step(): realized after it, tinygrad would give the new weights' loss
    scores.realize()
    opt.step()
    return scores, value


def main() -> dict:
    """Every result as lists (the test compares them with tinygrad's)."""
    rng = np.random.default_rng(11)
    losses, scores = train(rng)
    s = Tensor(scores.numpy())
    values, indices = s.topk(2)
    out = {"losses": losses, "cumsum": s.cumsum(1).numpy().tolist(), "argmax": s.argmax(1).numpy().tolist(),
           "topk_values": values.numpy().tolist(), "topk_indices": indices.numpy().tolist(),
           "sorted": s.sort(0)[0].numpy().tolist()}
    a = Tensor(rng.integers(-100, 100, (4, 6)).astype(np.int8))
    b = Tensor(rng.integers(0, 200, (4, 6)).astype(np.uint8))
    h = Tensor(rng.standard_normal((4, 6)).astype(np.float16))
    out["int8_uint8"] = (a + b).numpy().tolist()                          # promotes to int16
    out["int8_half"] = (a * h).numpy().astype(np.float32).tolist()        # promotes to float16
    out["bf16"] = (h.cast("bfloat16") * 3).cast("float32").numpy().tolist()
    out["dtypes"] = [str((a + b).numpy().dtype), str((a * h).numpy().dtype)]
    x = Tensor(np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5))
    chain = x.permute(3, 1, 0, 2).reshape(5, 3, 8)[:, ::-1, 1::3].pad(((0, 0), (1, 0), (0, 2))).flip(0)
    out["movement"] = chain.expand(2, 5, 4, 5).sum(0).numpy().tolist()
    big = Tensor(rng.standard_normal(1 << 22).astype(np.float32))
    out["sum_2_22"] = big.sum().item()
    return out


if __name__ == "__main__":
    print(json.dumps(main()))
